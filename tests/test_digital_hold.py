"""Dice held between two rolls of a digital turn (turns.turn_hold, the «guardar» page):
stored on the card for the other phones to see, by whoever may roll, for the dice of the
last roll only; the roll still keeps what its own request says."""

import re

import pytest
from django.http import Http404
from django.test import Client
from django.urls import reverse

from scorecards import turns
from scorecards.models import Change, Roll
from tests.factories import UserFactory
from tests.screens import Viewer, seen
from tests.test_digital import (
    HTMX,
    digital_card,
    now,
    queue,
    refused,
    roll,
    roll_view,
    score,
    state,
    turn_section,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def digital(organizer, ana, ben):
    return digital_card(organizer, [ana, ben])


def hold(card, author, keep, *, shown=None, version=None):
    """Dice held as the card page sends them: the version and the dice it shows."""
    current = now(card)
    if shown is None:
        shown = current.turn_rolls[-1][0] if current.turn_rolls else ""
    return turns.turn_hold(
        scorecard_id=card.pk,
        author=author,
        version=current.version if version is None else version,
        shown=shown,
        keep=[str(position) for position in keep],
    ).scorecard


def hold_view(client, card, keep, *, htmx=True, version=None, shown=None):
    current = now(card)
    data = {
        "version": current.version if version is None else version,
        "dados": (current.turn_rolls[-1][0] if current.turn_rolls else "")
        if shown is None
        else shown,
        "guardar": [str(p) for p in keep],
    }
    return client.post(reverse("hold", args=[card.pk]), data, headers=HTMX if htmx else {})


def watched_dice(html) -> list[str]:
    """The dice a watcher's phone shows (.dice.not-player), as they are read out."""
    group = re.search(r'<div class="dice not-player" id="watched-dice".*?</div>', html, re.S)[0]
    return re.findall(r'<span class="die(?: held)?" role="img" aria-label="([^"]+)"', group)


def ben_sees(ben):
    return Viewer(me=str(ben.pk), manager=False, part=True, every_turn=False)


# The service


def test_a_hold_stores_the_dice_held_and_moves_the_version(scripted, digital, ana):
    queue("31456")
    roll(digital, ana)
    before = state(digital)
    after = hold(digital, ana, [4, 1])
    assert (after.version, after.turn_held) == (before["version"] + 1, "14")
    assert now(digital).turn_held == "14"
    # Nothing else: the rolls, the boxes, the change log and the stored rolls are as they were.
    assert state(digital) == before | {"version": before["version"] + 1}
    hold(digital, ana, [])
    assert now(digital).turn_held == ""


def test_holding_the_same_dice_again_moves_nothing(scripted, digital, ana):
    queue("31456")
    roll(digital, ana)
    hold(digital, ana, [2, 5])
    before = state(digital)
    assert hold(digital, ana, [5, 2, 5]).version == before["version"]
    assert state(digital) == before


def test_all_five_may_be_held_between_taps(scripted, digital, ana):
    """Tapping the five dice on the way to releasing one is no roll: only «Tirar» refuses it."""
    queue("31456")
    roll(digital, ana)
    assert hold(digital, ana, range(1, 6)).turn_held == "12345"
    refused(lambda: roll(digital, ana, range(1, 6)), 409, "Has guardado los cinco dados")


def test_the_organizer_holds_for_any_seat_and_the_others_may_not(
    scripted, digital, organizer, ana, ben
):
    queue("31456")
    roll(digital, ana)
    assert hold(digital, organizer, [3]).turn_held == "3"
    before = state(digital)
    refused(lambda: hold(digital, ben, [1]), 409, "Ahora le toca a \u2068Ana\u2069")
    staff = UserFactory(is_staff=True)
    refused(lambda: hold(digital, staff, [1]), 409, "No juegas en esta tarjeta")
    with pytest.raises(Http404):
        hold(digital, UserFactory(), [1])
    assert state(digital) == before


def test_a_physical_card_holds_nothing(card, ana):
    before = state(card)
    refused(lambda: hold(card, ana, [1], shown="12345"), 409, "Esta tarjeta es de dados físicos")
    assert state(card) == before


@pytest.mark.parametrize("junk", ["0", "6", "a", "11", "", "\u0661", "-1", "\x00"])
def test_junk_positions_are_refused(scripted, digital, ana, junk):
    queue("31456")
    roll(digital, ana)
    before = state(digital)
    refused(lambda: hold(digital, ana, ["2", junk]), 400, "Los dados guardados no son válidos.")
    assert state(digital) == before


@pytest.mark.parametrize("shown", ["54321", "", "3145", "314566", "31457"])
def test_dice_other_than_the_last_rolls_are_refused(scripted, digital, ana, shown):
    queue("31456")
    roll(digital, ana)
    before = state(digital)
    refused(
        lambda: hold(digital, ana, [1], shown=shown),
        409,
        "Los dados guardados no son los de la última tirada",
    )
    assert state(digital) == before


def test_nothing_is_held_before_the_first_roll_nor_after_the_last(scripted, digital, ana):
    before = state(digital)
    refused(lambda: hold(digital, ana, [1]), 409, "Tira los dados antes de guardar alguno.")
    refused(lambda: hold(digital, ana, []), 409, "Tira los dados antes de guardar alguno.")
    assert state(digital) == before
    queue("11111", "22222", "33333")
    for _ in range(3):
        roll(digital, ana)
    before = state(digital)
    refused(lambda: hold(digital, ana, [1]), 409, "Ya has tirado 3 veces: elige una casilla.")
    assert state(digital) == before


@pytest.mark.parametrize("version", ["", "x", "-1", "\u0663", "9" * 10, "1.0"])
def test_a_hold_without_a_version_is_refused(scripted, digital, ana, version):
    queue("31456")
    roll(digital, ana)
    before = state(digital)
    refused(
        lambda: hold(digital, ana, [1], version=version),
        400,
        "No sabemos qué tirada estás viendo",
    )
    assert state(digital) == before


def test_a_hold_on_an_older_view_is_refused(scripted, digital, ana):
    queue("31456")
    roll(digital, ana)
    seen_version = now(digital).version
    hold(digital, ana, [1])
    before = state(digital)
    refused(lambda: hold(digital, ana, [2], version=seen_version), 409, "La tarjeta ha cambiado")
    assert state(digital) == before


def test_the_roll_keeps_what_it_sends_whatever_was_held(scripted, digital, ana):
    """A hold lost on its way changes nothing of the roll: the page's positions decide,
    and the new roll starts with its own held set."""
    queue("31456", "2222")
    roll(digital, ana)
    hold(digital, ana, [1, 2])
    after = roll(digital, ana, [3])
    assert after.turn_rolls[-1][:2] == ["22422", "3"]
    assert after.turn_held == "3"


def test_a_score_ends_the_turn_with_nothing_held(scripted, digital, ana):
    queue("31456")
    roll(digital, ana)
    hold(digital, ana, [1, 3])
    after = score(digital, ana, "chance")
    assert (after.turn_rolls, after.turn_held) == ([], "")
    assert list(Roll.objects.values_list("dice", "kept")) == [("31456", "")]
    assert Change.objects.get().items[0][1:] == ["chance", None, 19]


# The page


def test_a_hold_from_htmx_answers_with_the_version_and_the_watchers_dice(
    scripted, ana_client, digital
):
    queue("31456")
    roll_view(ana_client, digital)  # version 1
    response = hold_view(ana_client, digital, [1, 4])
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert response["X-Dados-Base"] == "1"
    html = response.text
    # The page's version and its forms', which «Tirar» and «Anotar» send next.
    assert 'id="sheet-version" name="version" form="undo-form" value="2" hx-swap-oob="true"' in html
    assert '<input type="hidden" id="roll-version" name="version" value="2" hx-swap-oob' in html
    assert '<input type="hidden" id="score-version" name="version" value="2" hx-swap-oob' in html
    assert watched_dice(html) == [
        "Dado 1: 3, guardado",
        "Dado 2: 1",
        "Dado 3: 4",
        "Dado 4: 5, guardado",
        "Dado 5: 6",
    ]
    assert 'id="watched-dice" role="group" aria-label="Dados" hx-swap-oob="true"' in html
    # Not the turn, nor the dice the player taps: those show the taps, some still on their way.
    assert 'id="turn"' not in html
    assert "<button" not in html
    assert now(digital).turn_held == "14"
    # The same dice again: nothing moved, nothing to swap.
    response = hold_view(ana_client, digital, [4, 1])
    assert (response.status_code, response.content) == (204, b"")
    assert now(digital).version == 2


def test_the_watchers_see_the_dice_held_in_the_patch_and_the_sheet(
    scripted, client, digital, ana, ben
):
    queue("31456")
    roll(digital, ana)
    hold(digital, ana, [2])
    hold(digital, ana, [2, 5])
    client.force_login(ben)
    live = reverse("scorecard_live", args=[digital.pk])
    held = ["Dado 1: 3", "Dado 2: 1, guardado", "Dado 3: 4", "Dado 4: 5", "Dado 5: 6, guardado"]
    # From the version before the holds (the roll's), and from the one between them.
    for since in (1, 2):
        response = client.get(live, {"version": since}, headers=HTMX)
        assert response["HX-Reswap"] == "none"
        turn = seen(turn_section(response.text), ben_sees(ben))
        assert watched_dice(turn) == held
        assert '<span class="die held" role="img" aria-label="Dado 2: 1, guardado">1</span>' in turn
    # The whole sheet, for a page that opens now, and its own dice for Ana.
    assert watched_dice(client.get(reverse("scorecard", args=[digital.pk])).text) == held
    ana_page = Client()
    ana_page.force_login(ana)
    page = ana_page.get(reverse("scorecard", args=[digital.pk])).text
    assert re.findall(r'id="die-(\d)" aria-pressed="true"', page) == ["2", "5"]
    assert re.findall(r'name="guardar" value="(\d)">', page) == ["2", "5"]


def test_a_roll_after_holds_is_not_refused_and_keeps_its_own_positions(
    scripted, ana_client, digital
):
    """The page's «Tirar» waits for its holds (hx-sync) and sends the version the last
    one moved to (its answer's roll-version); the positions it sends are the roll's."""
    queue("31456", "22")
    roll_view(ana_client, digital)
    hold_view(ana_client, digital, [1])
    hold_view(ana_client, digital, [1, 3])
    hold_view(ana_client, digital, [1, 3, 4])
    # Sent with the version from before the holds' answers, it would be refused: the page
    # shows a card that has moved on since. That is why the page waits for them.
    before = state(digital)
    response = roll_view(ana_client, digital, [1, 3, 4], version=1)
    assert response.status_code == 409
    assert "La tarjeta ha cambiado desde que la viste" in response.text
    assert state(digital) == before
    response = roll_view(ana_client, digital, [1, 3, 4], version=4)
    assert response.status_code == 200
    assert response["X-Dados-Base"] == "4"
    assert now(digital).turn_rolls[-1][:2] == ["32452", "134"]
    turn = turn_section(response.text)
    assert re.findall(r'id="die-(\d)" aria-pressed="true"', turn) == ["1", "3", "4"]


def test_the_hold_page_refuses_what_the_service_refuses(scripted, client, digital, ana, ben):
    queue("31456")
    client.force_login(ana)
    response = hold_view(client, digital, [1])
    assert response.status_code == 409
    assert "Tira los dados antes de guardar alguno." in response.text
    assert '<div id="sheet">' in response.text
    roll_view(client, digital)
    before = state(digital)
    for data, status in (
        ({"version": "1", "dados": "31456", "guardar": ["7"]}, 400),
        ({"version": "1", "dados": "31456", "guardar": ["\u0663"]}, 400),
        ({"dados": "31456", "guardar": ["1"]}, 400),
        ({"version": "1", "dados": "65431", "guardar": ["1"]}, 409),
        ({"version": "0", "dados": "31456", "guardar": ["1"]}, 409),
    ):
        response = client.post(reverse("hold", args=[digital.pk]), data, headers=HTMX)
        assert response.status_code == status, data
        assert 'role="alert"' in response.text
    client.force_login(ben)
    response = hold_view(client, digital, [1])
    assert response.status_code == 409
    assert "Ahora le toca a" in response.text
    client.force_login(UserFactory())
    assert hold_view(client, digital, [1]).status_code == 404
    assert client.get(reverse("hold", args=[digital.pk])).status_code == 405
    assert state(digital) == before


def test_a_hold_without_htmx_goes_back_to_the_card(scripted, ana_client, digital):
    queue("31456")
    roll_view(ana_client, digital)
    response = hold_view(ana_client, digital, [2], htmx=False)
    assert (response.status_code, response["Location"]) == (
        302,
        reverse("scorecard", args=[digital.pk]),
    )
    assert now(digital).turn_held == "2"


def test_the_card_page_sends_a_tap_and_waits_for_it_before_rolling(
    scripted, ana_client, digital, ana
):
    """What dados.js's taps need from the turn: one element that sends what the roll form
    holds, after whatever the roll form has on its way; «Anotar» waits for them too."""
    queue("31456")
    roll_view(ana_client, digital)
    page = ana_client.get(reverse("scorecard", args=[digital.pk])).text
    hold_element = re.search(r'<div id="hold" hidden [^>]*>', page)[0]
    assert f'hx-post="{reverse("hold", args=[digital.pk])}"' in hold_element
    assert 'hx-include="#roll-form"' in hold_element
    assert 'hx-sync="#roll-form:queue last"' in hold_element
    assert 'hx-trigger="dice-held"' in hold_element
    score_form = re.search(r'<form method="post" id="score-form"[^>]*>', page)[0]
    assert 'hx-sync="#roll-form:queue last"' in score_form
    # Before the first roll there is nothing to hold.
    fresh = digital_card(digital.organizer, [ana])
    assert 'id="hold"' not in ana_client.get(reverse("scorecard", args=[fresh.pk])).text


# The session, the user, the card locked, its seats and the version moved, between the
# transaction's savepoint and its release: nothing of the sheet is read or rendered.
HOLD_QUERIES = 7


def test_a_hold_stays_within_a_query_budget(
    scripted, ana_client, digital, django_assert_max_num_queries
):
    queue("31456")
    roll_view(ana_client, digital)
    url = reverse("hold", args=[digital.pk])
    data = {"version": 1, "dados": "31456", "guardar": ["1", "2"]}
    with django_assert_max_num_queries(HOLD_QUERIES):
        response = ana_client.post(url, data, headers=HTMX)
    assert response["X-Dados-Base"] == "1"
