"""The card at the table, in a real browser: six players on a 360 px phone, whose turn it
is, and a finish that asks first and announces the result."""

from pathlib import Path

import pytest

from scorecards import services
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, enter, full_card

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
# Twelve characters each.
NAMES = [
    "Anabel Gómez",
    "Bartolomé Ru",
    "Carlota Pére",
    "Dionisio San",
    "Estefanía Gi",
    "Florentino R",
    "Guillermo Ab",
    "Herminia Paz",
]
# Twelve letters and no space: the heading's short name is the whole of it.
ONE_WORD_NAMES = [
    "Bartolomeo12",
    "Wilhelmina12",
    "Maximiliano1",
    "Evangelina12",
    "Constantino1",
    "Bernardina12",
]


@pytest.fixture
def olga(db):
    return UserFactory(username="olga", display_name="Olga")


def _table(server, browser, olga, n, *, scheme="light", who="olga", names=NAMES, width=360):
    """A card of n players, a few boxes written, seen on a phone 740 px high (360 wide)."""
    players = [UserFactory(username=f"p{i}", display_name=names[i]) for i in range(n)]
    card = services.scorecard_create(organizer=olga, players=players)
    seats = list(card.seats.all())
    # The first player has used Yahtzee (the old «+ Yahtzee adicional» widened the table).
    enter(card, seats[0], olga, yahtzee=50, sixes=24)
    enter(card, seats[1], olga, ones=0, chance=23)
    context = browser.new_context(
        viewport={"width": width, "height": 740}, base_url=server, color_scheme=scheme
    )
    page = context.new_page()
    log_in(page, who)
    page.goto(f"/tarjetas/{card.pk}/")
    return card, page


def _fits(page) -> dict:
    return page.evaluate(
        """() => {
        const box = document.querySelector('.sheet-scroll');
        const table = box.querySelector('table');
        return {table: table.scrollWidth, box: box.clientWidth,
                page: document.documentElement.scrollWidth, viewport: window.innerWidth};
    }"""
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_six_players_fit_a_360_px_phone(server, browser, olga, scheme):
    _card, page = _table(server, browser, olga, 6, scheme=scheme)
    screenshot(page, ARTIFACTS / f"table-6-players-360-{scheme}.png", full_page=True)
    screenshot(page, ARTIFACTS / f"table-6-players-360-{scheme}-screen.png")
    fits = _fits(page)
    assert fits["table"] <= fits["box"], fits
    assert fits["page"] <= fits["viewport"], fits
    # Every cell is a thumb's height, and every column at least 44 px wide.
    heights = page.eval_on_selector_all(
        ".sheet tbody td", "cells => cells.map(c => c.getBoundingClientRect().height)"
    )
    assert len(heights) == 19 * 6
    assert min(heights) >= 44
    widths = page.eval_on_selector_all(
        ".sheet thead th:not(.box-col)", "hs => hs.map(h => h.getBoundingClientRect().width)"
    )
    assert min(widths) >= 44
    # Short headings and box labels on screen, the whole ones in what is read out.
    heading = page.locator(".sheet thead th").nth(2)
    # The first names whole, broken between syllables where the column is too narrow
    # (labels.breakable); an ellipsis only where a syllable is wider than the column.
    assert heading.locator(".short").inner_text().replace("\xad", "") == "Bartolomé"
    assert heading.evaluate("h => getComputedStyle(h).textOverflow") == "ellipsis"
    assert page.get_by_role("columnheader", name="Bartolomé Ru").count() == 1
    assert page.get_by_role("rowheader", name="Escalera pequeña").count() == 1
    assert page.locator("#row-small_straight .short").inner_text() == "Esc. peq."
    clipped = page.eval_on_selector_all(
        ".sheet tbody th",
        "hs => hs.filter(h => h.scrollWidth > h.clientWidth).map(h => h.textContent)",
    )
    assert clipped == []
    # The header's links have a row of their own, under the account's (tests/test_header_ui.py).
    assert page.locator(".site-header").bounding_box()["height"] <= 2 * 44 + 4
    nav, menu = page.locator(".site-nav").bounding_box(), page.locator(".site-user").bounding_box()
    assert menu["y"] + menu["height"] <= nav["y"]


@pytest.mark.parametrize("width", [320, 360, 390])
@pytest.mark.parametrize("who", ["olga", "p5"])  # the organizer's links, a player's numbers
def test_six_one_word_names_of_twelve_letters_fit_the_narrowest_phones(
    server, browser, olga, width, who
):
    _card, page = _table(server, browser, olga, 6, who=who, names=ONE_WORD_NAMES, width=width)
    screenshot(page, ARTIFACTS / f"table-6-one-word-names-{width}-{who}.png")
    fits = _fits(page)
    assert fits["table"] <= fits["box"], fits
    assert fits["page"] <= fits["viewport"], fits
    assert page.locator(".sheet-scroll").evaluate("e => e.scrollWidth - e.clientWidth") == 0
    # Each name whole on screen, broken between syllables inside its own column...
    headings = page.locator(".sheet thead th:not(.box-col)")
    for i, name in enumerate(ONE_WORD_NAMES):
        heading = headings.nth(i)
        shown = heading.locator(".short")
        assert shown.inner_text().replace("\xad", "") == name
        assert heading.evaluate("h => getComputedStyle(h).textOverflow") == "ellipsis"
        column, text = heading.bounding_box(), shown.bounding_box()
        assert column["x"] - 0.5 <= text["x"], name
        whole = text["x"] + text["width"] <= column["x"] + column["width"] + 0.5
        # From 360 px each fits whole; on a 320 px phone a syllable may not: its first
        # letters, then the ellipsis.
        assert whole or (width < 360 and text["x"] <= column["x"] + 1), name
        assert column["x"] + column["width"] <= fits["box"] + 0.5, name
        # ...the whole name in what is read out and in the heading's tooltip.
        assert heading.get_attribute("title") == name
        read = f"{name} (le toca)" if "turn" in (heading.get_attribute("class") or "") else name
        assert page.get_by_role("columnheader", name=read, exact=True).count() == 1


def test_a_players_read_only_card_fits_too(server, browser, olga):
    _card, page = _table(server, browser, olga, 6, who="p3")
    fits = _fits(page)
    assert fits["table"] <= fits["box"], fits
    # Read-only cells are numbers on the sheet, not buttons.
    cell = page.locator("#row-sixes span.cell").first
    assert cell.evaluate("e => getComputedStyle(e).backgroundColor") == "rgba(0, 0, 0, 0)"
    assert page.locator(".sheet a.cell:visible").count() == 0
    assert page.locator("#turn").inner_text() == "Ronda 1 de 13 · le toca a Carlota Pére"
    screenshot(page, ARTIFACTS / "table-6-players-360-player.png")


def test_more_players_scroll_behind_an_opaque_box_column(server, browser, olga):
    _card, page = _table(server, browser, olga, 8)
    assert page.locator(".scroll-hint").is_visible()
    scroller = page.locator(".sheet-scroll")
    scroller.evaluate("e => e.scrollLeft = e.scrollWidth")
    left = scroller.evaluate("e => e.scrollLeft")
    assert left > 0
    # Whatever scrolled under the box column, the column's label is what shows there.
    for row in ("yahtzee", "yahtzee_bonuses", "total"):
        th = page.locator(f"#row-{row} th")
        th.scroll_into_view_if_needed()
        box = th.bounding_box()
        for x in (1, box["x"] + box["width"] - 4):  # the screen's edge, the column's
            hit = page.evaluate(
                "([x, y]) => document.elementFromPoint(x, y).closest('th')?.parentElement.id",
                [x, box["y"] + box["height"] / 2],
            )
            assert hit == f"row-{row}"
    # A write from the last column keeps the table where it was.
    page.locator('a.cell[aria-label="Unos — Herminia Paz: sin anotar"]').click()
    page.locator('#picker button[name="value"][value="3"]').click()
    page.locator('a.cell[aria-label="Unos — Herminia Paz: 3"]').wait_for()
    assert scroller.evaluate("e => e.scrollLeft") == left
    screenshot(page, ARTIFACTS / "table-8-players-360-scrolled.png")


def test_the_card_says_whose_turn_it_is_and_follows_the_writes(server, browser, olga):
    _card, page = _table(server, browser, olga, 3)
    turn = page.locator("#turn")
    assert turn.inner_text() == "Ronda 1 de 13 · le toca a Carlota Pére"
    assert page.locator("thead th.turn").get_attribute("title") == "Carlota Pére"
    page.locator('a.cell[aria-label="Trío — Carlota Pére: sin anotar"]').click()
    page.locator('#picker button[name="value"][value="0"]').click()
    page.locator('a.cell[aria-label="Trío — Carlota Pére: 0"]').wait_for()
    assert turn.inner_text() == "Ronda 2 de 13 · le toca a Carlota Pére"
    page.locator('a.cell[aria-label="Póquer — Carlota Pére: sin anotar"]').click()
    page.locator('#picker button[name="value"][value="0"]').click()
    page.locator('a.cell[aria-label="Póquer — Carlota Pére: 0"]').wait_for()
    assert turn.inner_text() == "Ronda 3 de 13 · le toca a Anabel Gómez"
    assert page.locator("thead th.turn").get_attribute("title") == "Anabel Gómez"
    # A hint, not a rule: any column can still be written.
    page.locator('a.cell[aria-label="Full — Bartolomé Ru: sin anotar"]').click()
    page.locator('#picker button[name="value"][value="25"]').click()
    page.locator('a.cell[aria-label="Full — Bartolomé Ru: 25"]').wait_for()
    assert (
        "Olga anotó 25 en Full de Bartolomé Ru"
        in page.locator("#recent-changes li").first.inner_text()
    )


def test_the_bonus_picker_shows_points_and_needs_a_50(server, browser, olga):
    _card, page = _table(server, browser, olga, 2)
    # Bartolomé has no Yahtzee: more bonuses are refused before anything is sent.
    page.get_by_role("link", name="Bonus Yahtzee — Bartolomé Ru: 0 \u00d7 100").click()
    dialog = page.locator("#picker-dialog[open]")
    dialog.wait_for()
    assert "no tiene 50 en Yahtzee" in dialog.inner_text()
    assert dialog.locator('button[name="value"][value="1"]').is_disabled()
    page.keyboard.press("Escape")
    # Anabel has 50: each extra Yahtzee shows what it adds, and the extra Yahtzee's own
    # picker is one tap away.
    page.get_by_role("link", name="Bonus Yahtzee — Anabel Gómez: 0 \u00d7 100").click()
    dialog.wait_for()
    assert dialog.locator('button[name="value"][value="2"]').inner_text().split() == ["2", "+200"]
    dialog.get_by_role("link", name="+ Yahtzee adicional").click()
    page.get_by_role("heading", name="Yahtzee adicional — Anabel Gómez").wait_for()
    assert page.locator(".sheet .joker-link").count() == 0


def test_finalizing_asks_first_then_announces_the_result(server, browser, olga):
    card, page = _table(server, browser, olga, 2)
    seats = list(card.seats.all())
    pending = page.locator("#finalize-action button")
    assert pending.is_disabled()
    assert "Faltan 22 casillas" in pending.inner_text()
    enter(
        card,
        seats[0],
        olga,
        **{k: v for k, v in full_card(chance=30).items() if k not in ("yahtzee", "sixes")},
    )
    enter(
        card,
        seats[1],
        olga,
        **{k: v for k, v in full_card().items() if k not in ("ones", "chance")},
    )
    page.reload()
    page.get_by_role("link", name="Finalizar y guardar resultados").click()
    dialog = page.locator("#picker-dialog[open]")
    dialog.wait_for()
    first, second = (seat.totals.total for seat in card.seats.all())
    assert first > second
    rows = dialog.locator("tbody tr").all_inner_texts()
    assert rows == [f"1º\tAnabel Gómez\t{first}", f"2º\tBartolomé Ru\t{second}"]
    screenshot(page, ARTIFACTS / "finalize-confirm-360.png")
    dialog.get_by_role("button", name="Finalizar y guardar resultados").click()
    result = page.locator(".result")
    result.wait_for()
    assert result.inner_text() == f"Gana Anabel Gómez con {first}"
    card.refresh_from_db()
    assert card.is_finalized
    assert page.locator("#turn, #finalize-action, .sheet a.cell").count() == 0
    screenshot(page, ARTIFACTS / "finalized-card-360.png", full_page=True)


@pytest.mark.parametrize(("width", "where"), [(360, "menu"), (1024, "header")])
def test_staff_reach_the_admin_from_the_header(server, browser, olga, width, where):
    olga.is_staff = True
    olga.save()
    context = browser.new_context(viewport={"width": width, "height": 740}, base_url=server)
    page = context.new_page()
    log_in(page, "olga")
    links = page.get_by_role("link", name="Administración")
    if where == "menu":
        assert links.count() == 0 or not links.first.is_visible()
        page.locator(".site-user summary").click()
    assert links.count() == 1  # the one visible
    assert links.first.get_attribute("href") == "/admin/"
    # One row on a computer; on a phone the links take a second.
    rows = 2 if where == "menu" else 1
    assert page.locator(".site-header").bounding_box()["height"] <= rows * 44 + 6
    context.close()
