"""What the table sees, by choice (issue 59, item 5), on 360 px phones: with the totals
hidden, a player's phone shows the boxes and no sum or position until the end, and all of
them after; the organizer's shows everything, and turning the choice off or on mid-game
reaches the players' phones without a reload. «Ritmo del bonus» beside each upper sum."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from scorecards import services
from scorecards.models import Scorecard
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, enter, fill

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).parent / "artifacts"
# The rows a player does not see while the totals are hidden.
TOTAL_ROWS = ("#row-upper", "#row-upper_bonus", "#row-lower", "#row-total", "#row-place")
# A page polls every 3 s on this test server (no stream): a change shows within two polls.
DELIVERY = 8000


@pytest.fixture
def people(db):
    olga = UserFactory(username="olga", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana")
    ben = UserFactory(username="ben", display_name="Ben")
    carla = UserFactory(username="carla", display_name="Carla")
    return olga, [ana, ben, carla]


@pytest.fixture
def phone(server, browser):
    """A 360 px phone, in Spanish, logged in as username and showing the card; the errors
    its console reports are kept in page.errors."""
    contexts = []

    def open_phone(username, card):
        context = browser.new_context(
            viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
        )
        contexts.append(context)
        page = context.new_page()
        page.errors = []
        page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
        log_in(page, username)
        page.goto(f"/tarjetas/{card.pk}/")
        return page

    yield open_phone
    for context in contexts:
        context.close()


def totals_hidden(page):
    for row in TOTAL_ROWS:
        expect(page.locator(row)).to_be_hidden()
    # Nor read out: no row a screen reader could reach is named for a sum or a position.
    for name in ("Suma superior", "Total", "Posición"):
        expect(page.get_by_role("rowheader", name=name, exact=True)).to_have_count(0)


def totals_shown(page, timeout=5000):
    for row in TOTAL_ROWS:
        expect(page.locator(row)).to_be_visible(timeout=timeout)


def test_a_players_phone_shows_no_total_until_the_end(phone, people):
    olga, players = people
    card = services.scorecard_create(organizer=olga, players=players, hide_totals=True)
    seats = list(card.seats.all())
    enter(card, seats[0], olga, ones=3, fours=16, chance=22)
    enter(card, seats[1], olga, twos=8, full_house=25)
    enter(card, seats[2], olga, sixes=24)
    anas = phone("ana", card)
    olgas = phone("olga", card)

    # Ana: every box, the bonus line, and none of the sums or positions.
    expect(anas.locator("#row-ones")).to_be_visible()
    expect(anas.locator("#row-chance")).to_be_visible()
    expect(anas.locator("#row-yahtzee_bonuses")).to_be_visible()
    expect(anas.get_by_role("cell", name="Libre (Chance) — Ana: 22")).to_be_visible()
    totals_hidden(anas)
    expect(
        anas.get_by_text("Los totales y las posiciones se verán al final de la partida.")
    ).to_be_visible()
    assert "Total" not in anas.locator("main").inner_text()
    screenshot(anas, SHOTS / "table-settings-player-hidden.png", full_page=True)

    # Olga, who organizes: everything, and that the players do not see it.
    totals_shown(olgas)
    expect(olgas.locator("#row-total td").first).to_have_text("41")
    expect(
        olgas.get_by_text("Los jugadores no ven los totales ni las posiciones hasta el final.")
    ).to_be_visible()
    screenshot(olgas, SHOTS / "table-settings-organizer.png", full_page=True)

    # Mid-game, Olga shows the totals after all: Ana's phone follows without a reload...
    olgas.get_by_role("link", name="Lo que ve la mesa").click()
    expect(olgas.get_by_label("Ocultar totales hasta el final")).to_be_checked()
    screenshot(olgas, SHOTS / "table-settings-page.png", full_page=True)
    olgas.get_by_label("Ocultar totales hasta el final").uncheck()
    olgas.get_by_role("button", name="Guardar").click()
    expect(olgas.get_by_text("Guardado lo que ve la mesa.")).to_be_visible()
    totals_shown(anas, timeout=DELIVERY)
    # ... and hides them again.
    olgas.get_by_role("link", name="Lo que ve la mesa").click()
    olgas.get_by_label("Ocultar totales hasta el final").check()
    olgas.get_by_role("button", name="Guardar").click()
    expect(olgas.get_by_text("Guardado lo que ve la mesa.")).to_be_visible()
    expect(anas.locator("#row-total")).to_be_hidden(timeout=DELIVERY)
    totals_hidden(anas)
    totals_shown(olgas)

    # The end: every phone shows every total and place.
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=olga)
    totals_shown(anas, timeout=DELIVERY)
    expect(anas.locator("#row-place td").first).to_have_text("1º")
    expect(anas.locator("#sheet .result")).to_be_visible()
    screenshot(anas, SHOTS / "table-settings-player-finished.png", full_page=True)
    assert anas.errors == []
    assert olgas.errors == []


def test_the_bonus_pace_is_beside_each_upper_sum(phone, people):
    olga, players = people
    # Six players: the narrowest columns a phone shows.
    players += [UserFactory(username=f"p{n}", display_name=f"Jugadora {n}") for n in range(3)]
    card = services.scorecard_create(organizer=olga, players=players, show_bonus_pace=True)
    seats = list(card.seats.all())
    enter(card, seats[0], olga, twos=8)  # four 2s: +2
    enter(card, seats[1], olga, threes=6, ones=0)  # -3, and a scratch: -3
    # Carla: nothing written above yet.
    enter(card, seats[3], olga, fours=20, fives=25)  # +8 +10
    enter(card, seats[4], olga, fours=20, fives=25, sixes=30, threes=15)  # +8 +10 +12 +6
    expected = ["8 +2", "6 \u22126", "0", "45 +18", "90 +36", "0"]
    for username in ("olga", "ben"):
        page = phone(username, card)
        upper = page.locator("#row-upper td")
        for n, shown in enumerate(expected):
            # Each sum, and its pace, which a screen reader names.
            words = shown.replace(" ", " Ritmo del bonus: ")
            expect(upper.nth(n)).to_have_text(words)
        pace = upper.nth(4).locator(".pace")
        expect(pace).to_be_visible()
        assert pace.evaluate("e => e.lastChild.textContent") == "+36"
        # Under the sum, within its column: the sheet does not scroll sideways.
        cell, mark = upper.nth(4).bounding_box(), pace.bounding_box()
        assert cell["x"] <= mark["x"]
        assert mark["x"] + mark["width"] <= cell["x"] + cell["width"]
        fit = page.locator(".sheet-scroll").evaluate("e => e.scrollWidth <= e.clientWidth")
        assert fit
        screenshot(page.locator("#sheet table"), SHOTS / f"table-settings-pace-{username}.png")
        assert page.errors == []


def test_the_choices_are_made_with_the_card(phone, people):
    olga, players = people
    ana, ben = players[:2]
    page = phone("olga", services.scorecard_create(organizer=olga, players=[ben]))
    page.goto(f"/tarjetas/nueva/orden/?p={ana.pk}")
    page.get_by_label("Ocultar totales hasta el final").check()
    screenshot(page, SHOTS / "table-settings-order.png", full_page=True)
    page.get_by_role("button", name="Crear tarjeta").click()
    page.wait_for_url("**/tarjetas/*/")
    made = Scorecard.objects.order_by("-pk").first()
    assert (made.hide_totals, made.show_bonus_pace) == (True, False)
    assert page.errors == []
