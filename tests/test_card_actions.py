"""«Deshacer», «Finalizar y guardar resultados» and «Descartar tarjeta»: what each does, who
may do it, and the methods and log-in every write needs."""

import re

import pytest
from django.urls import reverse

from scorecards import services
from scorecards.models import Change, Scorecard, Seat
from tests.factories import UserFactory, fill, seat_of
from tests.screens import HTMX, card_page, finalize, version_of, write

pytestmark = pytest.mark.django_db


# «Deshacer»


def test_undo_restores_the_latest_change_then_the_one_before(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "ones", "3")
    write(org_client, card, seat, "ones", "4", was="3")
    undo = reverse("undo", args=[card.pk])
    response = org_client.post(undo, {"version": version_of(card)})
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert seat_of(card, ana).ones == 3
    org_client.post(undo, {"version": version_of(card)})
    assert seat_of(card, ana).ones is None
    response = org_client.post(undo, {"version": version_of(card)}, headers=HTMX)
    assert response.status_code == 409
    assert "No hay nada que deshacer." in response.text
    assert Change.objects.filter(kind="undo").count() == 2


def test_an_undo_from_the_current_page_answers_with_what_it_restored(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    org_client.post(reverse("joker", args=[card.pk, seat.pk]), {"face": "3", "box": "threes"})
    response = org_client.post(reverse("undo", args=[card.pk]), {"version": 2}, headers=HTMX)
    assert response["HX-Reswap"] == "none"
    assert response["X-Dados-Base"] == "2"
    assert f'<td id="c{seat.pk}-threes" hx-swap-oob="true">' in response.text
    assert '<tr id="row-yahtzee_bonuses" class="sum" hx-swap-oob="true">' in response.text
    assert "<bdi>Olga</bdi> deshizo un cambio: Treses de <bdi>Ana</bdi>, 15 → sin anotar;" in (
        response.text
    )
    assert "Bonus Yahtzee de <bdi>Ana</bdi>, 1 → 0" in response.text
    seat.refresh_from_db()
    assert (seat.threes, seat.yahtzee_bonuses) == (None, 0)
    # Said beside «Deshacer» too, where the organizer is looking.
    assert (
        '<p id="undo-status" hx-swap-oob="innerHTML">Deshecho: Treses de <bdi>Ana</bdi>, '
        "15 → sin anotar; Bonus Yahtzee de <bdi>Ana</bdi>, 1 → 0</p>"
    ) in response.text


def test_what_an_undo_undid_is_said_until_the_next_change(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "ones", "3")
    org_client.post(reverse("undo", args=[card.pk]), {"version": 1})
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    said = re.search(r'<p id="undo-status"[^>]*>(.*?)</p>', page, re.S)[1]
    assert said == "Deshecho: Unos de <bdi>Ana</bdi>, 3 → sin anotar"
    answer = write(org_client, card, seat, "twos", "4", htmx=True)
    assert '<p id="undo-status" hx-swap-oob="innerHTML"></p>' in answer.text


def test_the_undo_button_is_disabled_until_there_is_a_change(org_client, card, ana):
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert '<button type="submit" id="undo-button" disabled aria-describedby="undo-last">' in page
    write(org_client, card, seat_of(card, ana), "ones", "3")
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert '<button type="submit" id="undo-button" aria-describedby="undo-last">' in page


def test_undo_refuses_when_the_card_changed_since_it_was_seen(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "ones", "3")
    seen = version_of(card)
    write(org_client, card, seat, "twos", "4")
    response = org_client.post(reverse("undo", args=[card.pk]), {"version": seen}, headers=HTMX)
    assert response.status_code == 409
    assert "La tarjeta ha cambiado desde que la viste: revisa antes de deshacer." in response.text
    assert seat_of(card, ana).twos == 4
    org_client.post(reverse("undo", args=[card.pk]), {"version": version_of(card)})
    assert seat_of(card, ana).twos is None


@pytest.mark.parametrize("sent", [{}, {"version": ""}, {"version": "1.0"}, {"version": "x"}])
def test_undo_without_the_version_it_was_based_on_changes_nothing(org_client, card, ana, sent):
    """A replayed or hand-made undo that does not say which version it saw is refused,
    not let through the stale check."""
    write(org_client, card, seat_of(card, ana), "ones", "3")
    message = "No sabemos qué versión de la tarjeta estás viendo: recárgala y vuelve a deshacer."
    response = org_client.post(reverse("undo", args=[card.pk]), sent, headers=HTMX)
    assert response.status_code == 400
    assert message in response.text
    assert "<html" not in response.text
    response = org_client.post(reverse("undo", args=[card.pk]), sent)
    assert response.status_code == 302
    assert message in org_client.get(response.url).text
    assert seat_of(card, ana).ones == 3
    assert version_of(card) == 1
    assert not Change.objects.filter(kind="undo").exists()


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_undoes(client, card, ana, who, status):
    services.box_write(
        scorecard_id=card.pk,
        seat_id=seat_of(card, ana).pk,
        box="ones",
        value="3",
        was="",
        author=card.organizer,
    )
    client.force_login(ana if who == "player" else UserFactory())
    assert client.post(reverse("undo", args=[card.pk])).status_code == status
    assert client.post(reverse("undo", args=[card.pk]), headers=HTMX).status_code == status
    assert seat_of(card, ana).ones == 3


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
@pytest.mark.parametrize("htmx", [False, True])
def test_a_malformed_joker_or_undo_is_still_answered_by_who_asks(
    client, card, ana, who, status, htmx
):
    """As a box write is: a stranger gets 404 and a player 403 whatever they sent, not a
    message about the data (and, without htmx, a redirect to a card they cannot see)."""
    seat = seat_of(card, ana)
    client.force_login(ana if who == "player" else UserFactory())
    headers = HTMX if htmx else {}
    joker = client.post(reverse("joker", args=[card.pk, seat.pk]), {"face": "9"}, headers=headers)
    undo = client.post(reverse("undo", args=[card.pk]), {"version": "abc"}, headers=headers)
    assert (joker.status_code, undo.status_code) == (status, status)


# «Finalizar y guardar resultados»


def test_finalize_lists_what_is_missing_per_player(org_client, card, ana):
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
    )
    assert response.status_code == 409
    assert "Aún no se puede finalizar." in response.text
    assert "Para finalizar falta:" in response.text
    assert "<strong><bdi>Ana</bdi></strong>: 13 casillas sin anotar." in response.text
    assert '<section class="problems"' in response.text
    assert not Scorecard.objects.get(pk=card.pk).is_finalized


def test_an_inconsistent_card_cannot_be_finalized(org_client, card, ana):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ana).pk).update(yahtzee=0, yahtzee_bonuses=1)
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, follow=True
    )
    assert "Aún no se puede finalizar." in response.text
    assert "la casilla Yahtzee no tiene 50" in response.text
    assert not Scorecard.objects.get(pk=card.pk).is_finalized


def test_finalize_stores_totals_positions_and_locks_the_card(org_client, card, ana, ben):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(chance=23)
    response = org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    page = org_client.get(response.url).text
    assert "Resultados guardados. La partida ya está en el historial." in page
    assert "<td>1º</td><td>1º</td>" not in page
    a, b = seat_of(card, ana), seat_of(card, ben)
    assert (a.total, a.place, b.total, b.place) == (245, 2, 246, 1)
    response = write(org_client, card, a, "ones", "", was="3", htmx=True)
    assert response.status_code == 409
    assert seat_of(card, ana).ones == 3


def test_finalize_from_htmx_reloads_the_whole_page(org_client, card):
    fill(card)
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("scorecard", args=[card.pk])
    assert Scorecard.objects.get(pk=card.pk).is_finalized


def test_ties_share_a_position(org_client, card):
    fill(card)
    org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    assert [s.place for s in card.seats.all()] == [1, 1]
    assert "<td>1º</td><td>1º</td>" in card_page(org_client, card)


def test_finalizing_twice_is_refused(org_client, card):
    fill(card)
    org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
    )
    assert response.status_code == 409
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in response.text


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_finalizes(client, card, ana, who, status):
    fill(card)
    client.force_login(ana if who == "player" else UserFactory())
    assert (
        client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)}).status_code
        == status
    )
    assert (
        client.post(
            reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
        ).status_code
        == status
    )
    assert not Scorecard.objects.get(pk=card.pk).is_finalized


def test_staff_may_finalize_any_card(client, card):
    fill(card)
    client.force_login(UserFactory(is_staff=True))
    assert (
        client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)}).status_code
        == 302
    )
    assert Scorecard.objects.get(pk=card.pk).is_finalized


def test_the_game_appears_in_every_players_history(client, card, ana, ben):
    finalize(card)
    for player in (ana, ben):
        client.force_login(player)
        response = client.get(reverse("history"))
        assert "presencial" in response.text
        assert "Tu total <strong>245</strong> · 1º de 2" in response.text


# «Descartar tarjeta»


def test_discard_asks_first_and_then_deletes(org_client, card):
    page = org_client.get(reverse("discard", args=[card.pk]))
    assert page.status_code == 200
    assert "¿Descartar esta tarjeta?" in page.text
    assert Scorecard.objects.exists()
    response = org_client.post(reverse("discard", args=[card.pk]))
    assert response.status_code == 302
    assert response.url == reverse("home")
    assert "Tarjeta descartada." in org_client.get(response.url).text
    assert not Scorecard.objects.exists()


def test_a_card_with_an_undone_change_can_be_discarded(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    response = org_client.post(reverse("undo", args=[card.pk]), {"version": version_of(card)})
    assert response.status_code == 302
    assert Change.objects.filter(undoes__isnull=False).count() == 1
    assert org_client.post(reverse("discard", args=[card.pk])).status_code == 302
    assert not Scorecard.objects.exists()
    assert not Change.objects.exists()


def test_a_finalized_card_cannot_be_discarded(org_client, card):
    finalize(card)
    response = org_client.post(reverse("discard", args=[card.pk]), headers=HTMX)
    assert response.status_code == 409
    response = org_client.get(reverse("discard", args=[card.pk]))
    assert response.status_code == 302
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in card_page(org_client, card)
    assert Scorecard.objects.filter(pk=card.pk).exists()


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_discards(client, card, ana, who, status):
    client.force_login(ana if who == "player" else UserFactory())
    assert client.get(reverse("discard", args=[card.pk])).status_code == status
    assert client.post(reverse("discard", args=[card.pk])).status_code == status
    assert Scorecard.objects.filter(pk=card.pk).exists()


# Methods and log-in for every write


@pytest.mark.parametrize("name", ["undo"])  # a GET of finalize asks for confirmation
def test_writes_reject_get(org_client, card, name):
    assert org_client.get(reverse(name, args=[card.pk])).status_code == 405


def test_discard_takes_get_and_post_only(org_client, card):
    assert org_client.put(reverse("discard", args=[card.pk])).status_code == 405
    assert Scorecard.objects.exists()


@pytest.mark.parametrize("name", ["undo", "finalize", "discard", "box", "joker"])
def test_anonymous_writes_are_sent_to_log_in(client, card, ana, name):
    seat = seat_of(card, ana)
    args = {"box": [card.pk, seat.pk, "ones"], "joker": [card.pk, seat.pk]}.get(name, [card.pk])
    response = client.post(reverse(name, args=args), {"value": "3"})
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))
    # From htmx (the page, its outbox): 401, and the log-in that comes back to the card.
    response = client.post(reverse(name, args=args), {"value": "3"}, headers=HTMX)
    assert response.status_code == 401
    assert response["X-Dados-Login"] == f"{reverse('login')}?next=/tarjetas/{card.pk}/"
    assert seat_of(card, ana).ones is None
    assert Scorecard.objects.exists()
