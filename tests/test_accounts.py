import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


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


@pytest.mark.parametrize("method", ["get", "post"])
def test_htmx_after_the_session_ended_sends_the_whole_page_to_log_in(client, method):
    """A live card's poll (or a write) once the session has ended: not the log-in page
    swapped into the card, but the browser sent to log in, and back to the card after."""
    from urllib.parse import quote

    from tests.factories import make_scorecard

    card = make_scorecard(UserFactory(), n=2)
    page = f"/tarjetas/{card.pk}/"
    url = reverse("scorecard_live", args=[card.pk]) + "?version=0"
    if method == "post":
        seat = card.seats.first()
        url = reverse("box", args=[card.pk, seat.pk, "chance"])
    headers = {"HX-Request": "true", "HX-Current-URL": f"http://testserver{page}"}
    response = getattr(client, method)(
        url, {"value": "20"} if method == "post" else {}, headers=headers
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"{reverse('login')}?next={quote(page)}"
    assert response.content == b""
    # Without the page's address, or with another site's, to the home page; a plain
    # request keeps its redirect.
    headers["HX-Current-URL"] = f"https://elsewhere.example{page}"
    response = getattr(client, method)(url, headers=headers)
    assert response["HX-Redirect"] == f"{reverse('login')}?next=/"
    del headers["HX-Current-URL"]
    response = getattr(client, method)(url, headers=headers)
    assert response["HX-Redirect"] == f"{reverse('login')}?next=/"
    assert client.get(url).status_code == 302


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
