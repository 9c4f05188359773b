import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

KEY = "0f8e2a34-5b6c-4d7e-8f90-a1b2c3d4e5f6"


def test_the_ui_shows_the_display_name_not_the_username(ana_client):
    response = ana_client.get(reverse("home"))
    assert response.status_code == 200
    assert "Ana" in response.text
    assert "Cerrar sesión" in response.text
    assert ">ana<" not in response.text


def test_a_player_without_display_name_is_shown_by_username():
    assert str(UserFactory(username="pepe", display_name="")) == "pepe"


def test_home_requires_log_in(client):
    response = client.get(reverse("home"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_htmx_after_the_session_ended_sends_the_whole_page_to_log_in(client):
    """A live card's poll once the session has ended: not the log-in page swapped into the
    card, but the browser sent to log in, and back to the card after. (A write is answered
    401 instead: the tests below.)"""
    from urllib.parse import quote

    from tests.factories import make_scorecard

    card = make_scorecard(UserFactory(), n=2)
    page = f"/tarjetas/{card.pk}/"
    url = reverse("scorecard_live", args=[card.pk]) + "?version=0"
    headers = {"HX-Request": "true", "HX-Current-URL": f"http://testserver{page}"}
    response = client.get(url, headers=headers)
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"{reverse('login')}?next={quote(page)}"
    assert response.content == b""
    # Without the page's address, or with another site's, to the home page; a plain
    # request keeps its redirect.
    headers["HX-Current-URL"] = f"https://elsewhere.example{page}"
    response = client.get(url, headers=headers)
    assert response["HX-Redirect"] == f"{reverse('login')}?next=/"
    del headers["HX-Current-URL"]
    response = client.get(url, headers=headers)
    assert response["HX-Redirect"] == f"{reverse('login')}?next=/"
    assert client.get(url).status_code == 302


# A write from a session that has ended: 401, and where to log in (dados.middleware)

ENDED = "Tu sesión ha terminado: entra otra vez."


def end_session(client, user, how):
    """End the session client holds for user, the way how says."""
    from datetime import timedelta

    from django.contrib.sessions.models import Session
    from django.utils import timezone

    if how == "logged out":
        client.post(reverse("logout"))
    elif how == "password changed":
        user.set_password("otra-clave-distinta-2026")
        user.save()
    elif how == "deactivated":
        user.is_active = False
        user.save()
    else:
        past = timezone.now() - timedelta(seconds=1)
        Session.objects.filter(session_key=client.session.session_key).update(expire_date=past)


def card_writes(card):
    """Every write the card page sends, to Ana's column: (url, data)."""
    from scorecards.labels import BONUS_BOX

    seat = card.seats.get(player__username="ana")
    return {
        "box": (reverse("box", args=[card.pk, seat.pk, "chance"]), {"value": "20", "was": ""}),
        "bonus": (reverse("box", args=[card.pk, seat.pk, BONUS_BOX]), {"value": "1"}),
        "joker": (reverse("joker", args=[card.pk, seat.pk]), {"face": "4", "box": "fours"}),
        "undo": (reverse("undo", args=[card.pk]), {"version": "1"}),
    }


def card_state(card):
    from scorecards.models import Change, Scorecard

    seats = list(card.seats.order_by("pk").values_list("chance", "fours", "yahtzee_bonuses"))
    return Scorecard.objects.get(pk=card.pk).version, seats, Change.objects.count()


@pytest.mark.parametrize("how", ["logged out", "password changed", "deactivated", "expired"])
@pytest.mark.parametrize("write", ["box", "bonus", "joker", "undo"])
def test_a_write_from_htmx_after_the_session_ended_is_401_with_where_to_log_in(
    client, organizer, card, how, write
):
    from tests.factories import enter

    enter(card, card.seats.get(player__username="ana"), organizer, yahtzee=50)
    client.force_login(organizer)
    end_session(client, organizer, how)
    before = card_state(card)
    url, data = card_writes(card)[write]
    response = client.post(url, data, headers={"HX-Request": "true", "Idempotency-Key": KEY})
    assert response.status_code == 401
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.text == ENDED
    # Back to the card once logged in, whatever page or worker sent it.
    assert response["X-Dados-Login"] == f"/entrar/?next=/tarjetas/{card.pk}/"
    assert "HX-Redirect" not in response
    assert card_state(card) == before


@pytest.mark.parametrize("write", ["box", "undo"])
def test_a_plain_form_after_the_session_ended_is_still_sent_to_log_in(
    client, organizer, card, write
):
    client.force_login(organizer)
    end_session(client, organizer, "logged out")
    before = card_state(card)
    url, data = card_writes(card)[write]
    response = client.post(url, data)
    assert response.status_code == 302
    assert response.url == f"/entrar/?next={url}"
    assert "X-Dados-Login" not in response
    assert card_state(card) == before


def test_another_write_from_htmx_returns_to_the_page_that_sent_it(client, ana):
    client.force_login(ana)
    end_session(client, ana, "logged out")
    url, page = reverse("scorecard_create"), "/tarjetas/nueva/orden/"
    headers = {"HX-Request": "true", "Referer": f"http://testserver{page}?p=1&p=2"}
    response = client.post(url, {"p": ["1", "2"]}, headers=headers)
    assert response.status_code == 401
    assert response.text == ENDED
    assert response["X-Dados-Login"] == f"/entrar/?next={page}"
    # Another site's page is no way back: the write's own address.
    headers["Referer"] = f"https://elsewhere.example{page}"
    response = client.post(url, {"p": ["1", "2"]}, headers=headers)
    assert response["X-Dados-Login"] == f"/entrar/?next={url}"
    del headers["Referer"]
    assert client.post(url, headers=headers)["X-Dados-Login"] == f"/entrar/?next={url}"


def test_a_write_without_a_session_says_so_in_english_too(client, card):
    from django.conf import settings

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    url, data = card_writes(card)["box"]
    response = client.post(url, data, headers={"HX-Request": "true"})
    assert response.status_code == 401
    assert response.text == "Your session has ended: log in again."


def test_home_lists_my_cards_in_progress_to_follow_live(ana_client, ana, ben):
    from scorecards import services
    from tests.factories import fill, make_scorecard

    playing = make_scorecard(UserFactory(display_name="Olga"), [ana, ben])
    finished = make_scorecard(players=[ana, ben])
    fill(finished)
    services.scorecard_finalize(scorecard_id=finished.pk, author=finished.organizer)
    others = make_scorecard(players=[ben, UserFactory(display_name="Carla")])
    response = ana_client.get(reverse("home"))
    assert "En juego" in response.text
    assert f'href="/tarjetas/{playing.pk}/"' in response.text
    assert f'href="/tarjetas/{finished.pk}/"' not in response.text
    assert f'href="/tarjetas/{others.pk}/"' not in response.text
    assert "Todas las tarjetas en juego" not in response.text
    # The newest three, and the way to the rest.
    newer = [make_scorecard(players=[ana, ben]) for _ in range(3)]
    response = ana_client.get(reverse("home"))
    for card in newer:
        assert f'href="/tarjetas/{card.pk}/"' in response.text
    assert f'href="/tarjetas/{playing.pk}/"' not in response.text
    assert f'href="{reverse("history")}">Todas las tarjetas en juego' in response.text
    for card in [playing, *newer]:
        card.delete()
    assert "En juego" not in ana_client.get(reverse("home")).text


def test_the_login_page_is_in_spanish(client):
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert '<html lang="es">' in response.text
    assert "Nombre de usuario" in response.text
    assert "Contraseña" in response.text
    assert "width=device-width" in response.text


def test_it_logs_in_and_changes_the_session_key(client, ana):
    client.get(reverse("login"))
    before = client.session.session_key
    response = client.post(reverse("login"), {"username": "ana", "password": PASSWORD})
    assert response.status_code == 302
    assert response.url == reverse("home")
    assert client.session[SESSION_KEY] == str(ana.pk)
    assert client.session.session_key != before


def test_a_wrong_password_gets_a_spanish_message(client, ana):
    response = client.post(reverse("login"), {"username": "ana", "password": "nope"})
    assert response.status_code == 200
    assert "Escribe un nombre de usuario y una contraseña correctos" in response.text
    assert SESSION_KEY not in client.session


def test_an_inactive_player_cannot_log_in(client):
    UserFactory(username="ido", is_active=False)
    response = client.post(reverse("login"), {"username": "ido", "password": PASSWORD})
    assert response.status_code == 200
    assert SESSION_KEY not in client.session


def test_log_out_ends_the_session_on_the_server(ana_client):
    from django.contrib.sessions.models import Session

    key = ana_client.session.session_key
    response = ana_client.post(reverse("logout"))
    assert response.status_code == 302
    assert response.url == reverse("login")
    assert not Session.objects.filter(session_key=key).exists()
    assert ana_client.get(reverse("home")).status_code == 302


@pytest.mark.parametrize("engine", ["db", "cached_db"])
def test_ending_a_players_sessions_logs_them_out_at_once_whatever_the_engine(
    client, settings, engine
):
    # Production reads sessions through the shared cache (dados.settings); the admin's
    # deactivation and new password end them there too, not only in the database.
    settings.SESSION_ENGINE = f"django.contrib.sessions.backends.{engine}"
    ana = UserFactory()
    client.force_login(ana)
    assert client.get(reverse("profile")).status_code == 200  # read, and so cached
    assert ana.end_sessions() == 1
    assert client.get(reverse("profile")).status_code == 302


def test_log_out_rejects_get(ana_client):
    assert ana_client.get(reverse("logout")).status_code == 405


def test_password_change_works(ana_client, ana):
    response = ana_client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "otra-clave-bien-larga-42",
            "new_password2": "otra-clave-bien-larga-42",
        },
    )
    assert response.status_code == 302
    ana.refresh_from_db()
    assert ana.check_password("otra-clave-bien-larga-42")


def test_password_change_with_a_wrong_old_password_changes_nothing(ana_client, ana):
    response = ana_client.post(
        reverse("password_change"),
        {"old_password": "mal", "new_password1": "x-y-z-1234567", "new_password2": "x-y-z-1234567"},
    )
    assert response.status_code == 200
    assert "contraseña antigua" in response.text.lower()
    ana.refresh_from_db()
    assert ana.check_password(PASSWORD)


def test_there_is_no_sign_up_page(client):
    assert client.get("/registro/").status_code == 404


def test_bootstrap_admin_creates_one_admin_with_a_random_password(capsys):
    call_command("bootstrap_admin")
    out = capsys.readouterr().out
    password = out.split("contraseña:")[1].split()[0]
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser
    assert admin.is_staff
    assert admin.check_password(password)
    assert len(password) >= 12
    # It administers without playing, under a person's name, not the header's menu entry.
    assert admin.plays is False
    assert admin.name == "Admin"
    assert "/admin/" in out
    assert "«Juega»" in out

    call_command("bootstrap_admin")
    assert capsys.readouterr().out == ""
    assert get_user_model().objects.count() == 1


def test_bootstrap_admin_passwords_differ_between_databases(capsys):
    call_command("bootstrap_admin")
    first = capsys.readouterr().out.split("contraseña:")[1].split()[0]
    get_user_model().objects.all().delete()
    call_command("bootstrap_admin")
    second = capsys.readouterr().out.split("contraseña:")[1].split()[0]
    assert first != second


def test_the_django_admin_registers_players(admin_client):
    response = admin_client.post(
        reverse("admin:accounts_user_add"),
        {
            "username": "luis",
            "display_name": "Luis",
            "password1": "clave-de-luis-2026",
            "password2": "clave-de-luis-2026",
            "password_mode": "elegir",
        },
    )
    assert response.status_code == 302, response.text[:2000]
    assert get_user_model().objects.get(username="luis").display_name == "Luis"


def test_every_page_loads_htmx_without_a_cdn_and_under_a_nonce_csp(ana_client):
    response = ana_client.get(reverse("home"))
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in csp
    assert "unsafe-eval" not in csp
    assert "unsafe-inline" not in csp
    nonce = csp.split("'nonce-")[1].split("'")[0]
    assert f'nonce="{nonce}"' in response.text
    assert '<script src="/static/django_htmx/htmx-2.min.' in response.text
    assert "unpkg" not in response.text
    assert "hx-on" not in response.text
    assert '"X-CSRFToken"' in response.text


# The organizer's writes check the session and the user as every page does


def write_chance(client, card, value="20"):
    seat = card.seats.first()
    url = reverse("box", args=[card.pk, seat.pk, "chance"])
    return client.post(url, {"value": value, "was": ""})


def chance_of(card):
    return card.seats.first().chance


@pytest.fixture
def organizer_client(client, ana):
    client.force_login(ana)
    return client


def test_the_organizers_write_is_theirs(organizer_client, ana):
    from scorecards.models import Change
    from tests.factories import make_scorecard

    card = make_scorecard(ana, n=2)
    assert write_chance(organizer_client, card).status_code == 302
    assert chance_of(card) == 20
    assert Change.objects.get(scorecard=card).author == ana


def test_a_write_after_the_password_changed_elsewhere_logs_out(organizer_client, ana):
    from tests.factories import make_scorecard

    card = make_scorecard(ana, n=2)
    ana.set_password("otra-contraseña-nueva")
    ana.save()
    response = write_chance(organizer_client, card)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert chance_of(card) is None
    assert SESSION_KEY not in organizer_client.session  # flushed, as Django does


def test_a_deactivated_organizers_write_is_refused(organizer_client, ana):
    from tests.factories import make_scorecard

    card = make_scorecard(ana, n=2)
    get_user_model().objects.filter(pk=ana.pk).update(is_active=False)
    response = write_chance(organizer_client, card)
    assert response["Location"].startswith(reverse("login"))
    assert chance_of(card) is None


def test_an_organizer_with_a_temporary_password_must_change_it_first(organizer_client, ana):
    from tests.factories import make_scorecard

    card = make_scorecard(ana, n=2)
    get_user_model().objects.filter(pk=ana.pk).update(must_change_password=True)
    for response in (
        write_chance(organizer_client, card),
        organizer_client.get(reverse("box", args=[card.pk, card.seats.first().pk, "chance"])),
    ):
        assert response.status_code == 302
        assert response["Location"] == reverse("password_change")
    assert chance_of(card) is None


def test_a_staff_member_who_is_no_longer_staff_cannot_write(client):
    from tests.factories import make_scorecard

    staff = UserFactory(is_staff=True)
    card = make_scorecard(UserFactory(), n=2)
    client.force_login(staff)
    assert write_chance(client, card).status_code == 302
    assert chance_of(card) == 20
    get_user_model().objects.filter(pk=staff.pk).update(is_staff=False)
    assert write_chance(client, card, "21").status_code == 404  # a stranger to the card
    assert chance_of(card) == 20


def test_a_write_with_an_expired_session_logs_in_again(organizer_client, ana):
    from datetime import timedelta

    from django.contrib.sessions.models import Session
    from django.utils import timezone

    from tests.factories import make_scorecard

    card = make_scorecard(ana, n=2)
    key = organizer_client.session.session_key
    Session.objects.filter(pk=key).update(expire_date=timezone.now() - timedelta(seconds=1))
    response = write_chance(organizer_client, card)
    assert response["Location"].startswith(reverse("login"))
    assert chance_of(card) is None


# A temporary password (accounts.middleware.PasswordChangeRequiredMiddleware)


@pytest.fixture
def temporary_client(client, ana):
    get_user_model().objects.filter(pk=ana.pk).update(must_change_password=True)
    client.force_login(ana)
    return client


def test_a_temporary_password_sends_an_address_no_view_matches_to_the_change(temporary_client):
    response = temporary_client.get("/no-existe/")
    assert response.status_code == 302
    assert response.url == reverse("password_change")
    assert "Tu contraseña es temporal" in temporary_client.get(response.url).text


def test_a_temporary_password_sends_the_live_cards_poll_to_the_change(temporary_client, ana):
    from tests.factories import make_scorecard

    card = make_scorecard(UserFactory(), [ana, UserFactory()])
    poll = reverse("scorecard_live", args=[card.pk]) + f"?version={card.version}"
    response = temporary_client.get(poll, headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("password_change")  # the whole page goes
    assert response.content == b""


def test_a_temporary_password_still_lets_one_change_it_or_log_out(temporary_client, ana):
    assert temporary_client.get(reverse("password_change")).status_code == 200
    response = temporary_client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "otra-clave-bien-larga-42",
            "new_password2": "otra-clave-bien-larga-42",
        },
    )
    assert response.url == reverse("password_change_done")
    ana.refresh_from_db()
    assert not ana.must_change_password
    assert temporary_client.get(reverse("home")).status_code == 200
    get_user_model().objects.filter(pk=ana.pk).update(must_change_password=True)
    response = temporary_client.post(reverse("logout"))
    assert response.url == reverse("login")
    assert SESSION_KEY not in temporary_client.session
