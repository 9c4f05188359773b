"""«Añadir invitado»: a friend without an account plays tonight, ticked on the new card, and
keeps their games once the admin gives them a log-in."""

import re
import threading
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import GUESTS_PER_DAY
from scorecards import services
from scorecards.models import Scorecard
from tests.factories import UserFactory, fill
from tests.screens import HTMX

pytestmark = pytest.mark.django_db
User = get_user_model()


def add_guest(client, name, ticks=(), htmx=False, **extra):
    data = {"invitado": name, "p": [p.pk for p in ticks], "modo": "presencial", **extra}
    return client.post(reverse("guest_add"), data, headers=HTMX if htmx else {})


def ticked(response) -> set[int]:
    """The players ticked on the page, by id."""
    return {int(pk) for pk in re.findall(r'name="p" value="(\d+)" checked', response.text)}


def guests():
    return list(User.objects.filter(added_by__isnull=False))


# Adding one


def test_a_guest_is_a_player_ticked_beside_the_others(org_client, organizer, ana, ben):
    response = add_guest(org_client, "  Pepe   Ruiz ", ticks=[organizer, ana])
    pepe = User.objects.get(display_name="Pepe Ruiz")  # kept as any name is
    assert response.status_code == 302
    assert response.url == reverse("scorecard_new") + f"?p={organizer.pk}&p={ana.pk}&p={pepe.pk}"
    page = org_client.get(response.url)
    assert ticked(page) == {organizer.pk, ana.pk, pepe.pk}  # Ben stays unticked
    assert "Pepe Ruiz juega como invitado: ya está marcado." in page.text.replace(
        "\u2068", ""
    ).replace("\u2069", "")
    listed = re.search(rf'value="{pepe.pk}" checked> (.*?)</label>', page.text).group(1)
    assert listed == '<bdi>Pepe Ruiz</bdi> <span class="badge">invitado</span>'
    assert '<span class="badge">invitado</span>' not in re.search(
        rf'value="{ana.pk}" checked> (.*?)</label>', page.text
    ).group(1)
    assert pepe.added_by == organizer
    assert pepe.plays
    assert pepe.is_active
    assert pepe.is_guest
    assert not pepe.has_usable_password()
    assert pepe.username == "invitado-pepe-ruiz"


def test_a_guest_keeps_the_digital_mode_and_gets_a_free_username(org_client, organizer):
    UserFactory(username="invitado-oscar", display_name="Otro nombre")
    response = add_guest(org_client, "Óscar", modo="digital")
    oscar = User.objects.get(display_name="Óscar")
    assert oscar.username == "invitado-oscar-2"
    assert response.url.endswith(f"?p={oscar.pk}&modo=digital")


def test_with_htmx_the_whole_page_comes_back_with_the_guest_ticked(org_client, ana):
    response = add_guest(org_client, "Pepe", ticks=[ana], htmx=True)
    pepe = User.objects.get(display_name="Pepe")
    assert response["HX-Redirect"] == reverse("scorecard_new") + f"?p={ana.pk}&p={pepe.pk}"


def test_the_guest_plays_a_card_and_it_is_theirs(org_client, organizer, ana):
    add_guest(org_client, "Pepe")
    pepe = User.objects.get(display_name="Pepe")
    response = org_client.post(
        reverse("scorecard_create"), {"p": [ana.pk, pepe.pk], "token": str(uuid.uuid4())}
    )
    card = Scorecard.objects.get()
    assert response.url == reverse("scorecard", args=[card.pk])
    assert [s.player for s in card.seats.all()] == [ana, pepe]


# Without JavaScript: the form above carries the ticks to a page that confirms


def test_without_javascript_the_name_is_checked_then_confirmed(org_client, organizer, ana):
    page = org_client.get(
        reverse("scorecard_new"), {"p": [ana.pk], "modo": "presencial", "invitado": "Pepe"}
    )
    assert page.status_code == 200
    assert not guests()  # a GET creates nobody
    confirm = re.search(
        r'<form method="post" action="/tarjetas/nueva/invitado/".*?</form>', page.text, re.S
    ).group(0)
    assert 'name="csrfmiddlewaretoken"' in confirm
    assert f'<input type="hidden" name="p" value="{ana.pk}">' in confirm
    assert '<input type="hidden" name="invitado" value="Pepe">' in confirm
    assert "¿Añadir a <bdi>Pepe</bdi> como invitado?" in confirm
    response = add_guest(org_client, "Pepe", ticks=[ana])
    assert ticked(org_client.get(response.url)) == {
        ana.pk,
        User.objects.get(display_name="Pepe").pk,
    }


def test_the_name_field_and_its_button_belong_to_the_new_card_form(org_client):
    page = org_client.get(reverse("scorecard_new")).text
    assert re.search(r'<input type="text" id="guest-name" name="invitado" form="new-card"', page)
    button = re.search(r'<button type="submit" form="new-card"[^>]*>Añadir invitado', page)
    assert 'formaction="/tarjetas/nueva/"' in button.group(0)
    assert 'hx-post="/tarjetas/nueva/invitado/"' in button.group(0)
    # An empty name sent along with «Buscar» or «Continuar» is no guest at all.
    searched = org_client.get(reverse("scorecard_new"), {"q": "a", "invitado": " "}).text
    assert "¿Añadir a" not in searched
    assert "guest-error" not in searched


# A name another player shows


@pytest.mark.parametrize("name", ["ana garcía", "ANA GARCIA", "Ana  García", "Аna García"])  # noqa: RUF001
def test_a_name_like_a_players_offers_that_player(org_client, organizer, name):
    ana = UserFactory(username="anag", display_name="Ana García")
    response = add_guest(org_client, name, ticks=[organizer])
    assert response.status_code == 400
    assert not guests()
    assert "Ya hay un jugador que se llama «Ana García»" in response.text
    assert "¿Es <bdi>Ana García</bdi>?" in response.text
    offer = re.search(
        r'<a class="button" href="([^"]+)">Sí, marcar a <bdi>Ana García', response.text
    )
    url = offer.group(1).replace("&amp;", "&")
    assert url == reverse("scorecard_new") + f"?p={organizer.pk}&p={ana.pk}"
    assert ticked(org_client.get(url)) == {organizer.pk, ana.pk}


def test_the_offer_comes_by_htmx_as_the_guest_part_alone(org_client, ana):
    response = add_guest(org_client, "ANA", htmx=True)
    assert response.status_code == 400
    assert "<html" not in response.text
    assert response.text.lstrip().startswith('<section class="guest stack" id="guest"')
    assert "¿Es <bdi>Ana</bdi>?" in response.text
    assert not guests()


def test_a_name_like_someone_who_cannot_play_is_refused_without_an_offer(org_client):
    UserFactory(display_name="Admin", plays=False)
    UserFactory(display_name="Ida", is_active=False)
    for name in ["admin", "IDA"]:
        response = add_guest(org_client, name)
        assert response.status_code == 400
        assert "Ya hay un jugador que se llama" in response.text
        assert "¿Es " not in response.text
    assert not guests()


# Bad input


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "Escribe el nombre del invitado."),
        ("   ", "Escribe el nombre del invitado."),
        ("x" * 61, "Este valor debe tener como mucho 60 caracteres (tiene 61)."),
        ("Pe\u200bpe", "caracteres invisibles o de control (U+200B)"),
        ("Pepe\u202e", "caracteres invisibles o de control (U+202E)"),
        ("Pe\x00pe", "Los caracteres nulos no están permitidos."),
    ],
)
@pytest.mark.parametrize("htmx", [False, True])
def test_a_bad_name_is_refused_and_nobody_is_added(org_client, ana, name, message, htmx):
    response = add_guest(org_client, name, ticks=[ana], htmx=htmx)
    assert response.status_code == 400
    assert message in response.text
    assert 'aria-invalid="true"' in response.text
    assert ("<html" in response.text) is not htmx
    if not htmx:
        assert ticked(response) == {ana.pk}  # the ticks stay
    assert not guests()


def test_junk_ticks_are_not_carried(org_client, ana):
    gone = UserFactory(is_active=False)
    resting = UserFactory(plays=False)
    response = org_client.post(
        reverse("guest_add"),
        {"invitado": "Pepe", "p": [str(ana.pk), "x", "-3", str(gone.pk), str(resting.pk), "99999"]},
    )
    pepe = User.objects.get(display_name="Pepe")
    assert response.url == reverse("scorecard_new") + f"?p={ana.pk}&p={pepe.pk}"


# Ten a day


def test_the_eleventh_guest_of_a_day_is_refused(org_client, organizer, ana):
    for n in range(GUESTS_PER_DAY):
        assert add_guest(org_client, f"Invitado {n}").status_code == 302
    response = add_guest(org_client, "Once", ticks=[ana])
    assert response.status_code == 400
    assert (
        "Ya has añadido 10 invitados hoy, el máximo por día: si alguien más juega, pide a la"
        " administración que lo registre." in response.text
    )
    assert ticked(response) == {ana.pk}
    assert len(guests()) == GUESTS_PER_DAY
    assert not User.objects.filter(display_name="Once").exists()
    # Another account may still add theirs, and so may this one tomorrow.
    other = Client()
    other.force_login(ana)
    assert add_guest(other, "Once").status_code == 302
    User.objects.filter(added_by=organizer).update(date_joined=timezone.now() - timedelta(days=1))
    assert add_guest(org_client, "Doce").status_code == 302


# Two at once


QUIMERAS = ["Quimera", "quimera", "QUIMERA", "Quiméra", "Quimera ", "Qu\u0131mera"]


def test_six_guests_with_one_name_at_once_make_one(transactional_db, monkeypatch):
    """Six organizers add «Quimera» in six spellings at the same moment: each request's form
    finds no Quimera before any is added, so only the check made under the lock of
    services.guest_add, one request after another, can keep the name to one player."""
    organizers = [UserFactory(username=f"org{i}", display_name=f"Org {i}") for i in range(6)]
    clients = []
    for organizer in organizers:
        client = Client()
        client.force_login(organizer)
        clients.append(client)
    # Every form has checked its name before any guest is added.
    add, checked = services.guest_add, threading.Barrier(len(QUIMERAS))

    def add_once_all_checked(**kwargs):
        checked.wait(10)
        return add(**kwargs)

    monkeypatch.setattr(services, "guest_add", add_once_all_checked)
    answers = {}

    def request(client, name):
        try:
            answers[name] = add_guest(client, name)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=request, args=pair) for pair in zip(clients, QUIMERAS, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (quimera,) = guests()
    assert User.objects.count() == len(organizers) + 1
    made = [name for name, response in answers.items() if response.status_code == 302]
    assert len(made) == 1
    for name, response in answers.items():
        if name not in made:
            assert response.status_code == 400
            assert f"Ya hay un jugador que se llama «{quimera.name}»" in response.text
            # The page offers to tick the Quimera who was just added instead.
            assert f"p={quimera.pk}" in response.text


def test_the_name_is_checked_again_where_the_guest_is_added(ana):
    """services.guest_add itself refuses a name another player shows, whoever asks."""
    services.guest_add(added_by=ana, name="Quimera")
    with pytest.raises(services.NameTaken) as refused:
        services.guest_add(added_by=UserFactory(), name="QUIMÉRA")
    assert refused.value.player.display_name == "Quimera"
    assert "Ya hay un jugador que se llama «Quimera»" in refused.value.message
    assert [g.display_name for g in guests()] == ["Quimera"]


# Who may


def test_a_logged_out_visitor_adds_nobody(client):
    response = add_guest(client, "Pepe")
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))
    assert not guests()


def test_a_get_adds_nobody(org_client):
    assert org_client.get(reverse("guest_add"), {"invitado": "Pepe"}).status_code == 405
    assert not guests()


def test_anyone_who_may_create_a_card_may_add_one(client, ana):
    admin = UserFactory(display_name="Admin", is_staff=True, is_superuser=True, plays=False)
    for who in (ana, admin):
        client.force_login(who)
        assert add_guest(client, f"Amigo de {who.name}").status_code == 302
    assert {g.added_by for g in guests()} == {ana, admin}


def test_a_player_with_a_temporary_password_adds_nobody(client, ana):
    ana.set_temporary_password()
    ana.save()
    client.force_login(ana)
    response = add_guest(client, "Pepe")
    assert response.url == reverse("password_change")
    assert not guests()


def test_without_a_csrf_token_nobody_is_added(ana):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ana)
    assert add_guest(client, "Pepe").status_code == 403
    assert not guests()


# A guest's log-in


@pytest.fixture
def pepe(ana):
    return services.guest_add(added_by=ana, name="Pepe")


@pytest.mark.parametrize("password", ["", "x", "!", "una-contraseña-de-prueba"])
def test_a_guest_cannot_log_in(client, pepe, password):
    hashed = User.objects.get(pk=pepe.pk).password
    for attempt in (password, hashed):
        response = client.post(reverse("login"), {"username": pepe.username, "password": attempt})
        assert response.status_code == 200
        if attempt:
            assert "Escribe un nombre de usuario y una contraseña correctos" in response.text
        assert SESSION_KEY not in client.session


def test_the_admin_lists_and_filters_guests(client, pepe, ana):
    staff = UserFactory(display_name="Admin", is_staff=True, is_superuser=True, plays=False)
    client.force_login(staff)
    changelist = reverse("admin:accounts_user_changelist")
    page = client.get(changelist).text
    assert "Por invitado" in page
    assert re.search(r"<th[^>]*column-guest[^>]*>.*?invitado", page, re.S)
    yes = client.get(changelist, {"invitado": "si"}).text
    assert ">Pepe<" in yes
    assert ">Ana<" not in yes
    no = client.get(changelist, {"invitado": "no"}).text
    assert ">Ana<" in no
    assert ">Pepe<" not in no
    change = client.get(reverse("admin:accounts_user_change", args=[pepe.pk])).text
    assert "Invitado por" in change
    assert ">Ana<" in change


def test_once_the_admin_gives_a_log_in_the_guest_finds_their_games(client, organizer, pepe, ana):
    card = services.scorecard_create(organizer=organizer, players=[ana, pepe])
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    staff = UserFactory(display_name="Admin", is_staff=True, is_superuser=True, plays=False)
    client.force_login(staff)
    response = client.post(
        reverse("admin:accounts_user_changelist"),
        {"action": "temporary_password", "_selected_action": [pepe.pk]},
        follow=True,
    )
    temporary = response.text.split("<code>")[1].split("</code>")[0]
    assert f"(<bdi>{pepe.username}</bdi>)" in response.text
    pepe.refresh_from_db()
    assert pepe.must_change_password
    assert not pepe.is_guest  # no longer listed as one
    assert (
        ">Pepe<"
        not in client.get(reverse("admin:accounts_user_changelist"), {"invitado": "si"}).text
    )

    guest = Client()
    guest.post(reverse("login"), {"username": pepe.username, "password": temporary})
    guest.post(
        reverse("password_change"),
        {"new_password1": "mi-clave-nueva-2026", "new_password2": "mi-clave-nueva-2026"},
    )
    history = guest.get(reverse("history"))
    assert history.status_code == 200
    assert reverse("scorecard", args=[card.pk]) in history.text
    assert "presencial" in history.text
    assert guest.get(reverse("scorecard", args=[card.pk])).status_code == 200
    mine = guest.get(reverse("player", args=[pepe.pk]))
    assert mine.status_code == 200
    assert "Pepe" in mine.text
    assert "Pepe" in guest.get(reverse("ranking")).text


# The organizer, ticked


def test_the_organizer_comes_ticked_if_they_play(client, organizer, ana):
    client.force_login(organizer)
    assert ticked(client.get(reverse("scorecard_new"))) == {organizer.pk}
    # Once the form is sent, its ticks are what counts: unticked stays unticked.
    assert ticked(client.get(reverse("scorecard_new"), {"q": "", "modo": "presencial"})) == set()
    assert ticked(client.get(reverse("scorecard_new"), {"p": [ana.pk]})) == {ana.pk}
    admin = UserFactory(display_name="Admin", is_staff=True, plays=False)
    client.force_login(admin)
    assert ticked(client.get(reverse("scorecard_new"))) == set()


# Query budget


@pytest.mark.parametrize("n", [2, 12])
def test_the_new_card_page_costs_the_same_for_any_number_of_players_and_guests(
    org_client, organizer, django_assert_num_queries, n
):
    for i in range(n):
        UserFactory(display_name=f"Jugador {i:02}")
    for i in range(min(n, GUESTS_PER_DAY)):
        services.guest_add(added_by=organizer, name=f"Invitado {i:02}")
    # session, user; the players who may sit, with whether each is a guest
    with django_assert_num_queries(3):
        page = org_client.get(reverse("scorecard_new"))
    assert page.text.count('<span class="badge">invitado</span>') == min(n, 10)
    # the name checked against every player's: one more
    with django_assert_num_queries(4):
        org_client.get(reverse("scorecard_new"), {"invitado": "Nuevo"})
