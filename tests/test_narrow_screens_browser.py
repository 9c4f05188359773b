"""«Historial», a player's «Cara a cara», «Clasificación» and the finalize confirmation on
the narrowest phones: long names, badges and six rivals, and still no sideways scroll."""

import re
from pathlib import Path

import pytest

from scorecards import services
from tests.browsing import log_in, misalignment, screenshot, table_fit
from tests.factories import UserFactory, fill, finalized_games

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
WIDTHS = [320, 360, 390]

LONG_NAMES = [
    "Maximiliano Fernández de Castellanos",
    "Bartolomé Esteban Murillo",
    "María de los Ángeles Villalobos",
    "Guadalupe Concepción Ortiz",
    "Hermenegildo Zubizarreta",
    "Inmaculada Peñalver Rodríguez",
]

# What sticks out of the page on the right, to say which element made it scroll.
WIDER = """() => [...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .filter((e) => !e.closest('.table-scroll, .visually-hidden'))
    .map((e) => e.tagName + '.' + e.className + ' ' + (e.textContent || '').trim().slice(0, 30))"""


def sideways(page) -> dict:
    return page.evaluate(
        """(wider) => ({
            page: document.documentElement.scrollWidth,
            inner: window.innerWidth,
            wider: eval(wider)(),
        })""",
        WIDER,
    )


@pytest.fixture
def club():
    me = UserFactory(username="maxi", display_name=LONG_NAMES[0])
    rivals = [
        UserFactory(username=f"r{i}", display_name=name) for i, name in enumerate(LONG_NAMES[1:])
    ]
    rivals.append(UserFactory(username="r6", display_name="wenceslao_ybarra_quintanilla"))
    # Six rivals, each met in a game of seven, which I organized; and one another organized.
    finalized_games([me, *rivals], 3)
    finalized_games([me, rivals[0]], 1, organizer=rivals[1])
    services.scorecard_create(organizer=me, players=[me, *rivals[:3]])
    return me, rivals


def phone(browser, server, width):
    context = browser.new_context(viewport={"width": width, "height": 740}, base_url=server)
    page = context.new_page()
    log_in(page, "maxi")
    return page


@pytest.mark.parametrize("width", WIDTHS)
def test_history_with_long_names_and_badges_fits_a_phone(server, browser, club, width):
    page = phone(browser, server, width)
    page.goto("/historial/")
    screenshot(page, ARTIFACTS / f"history-long-names-{width}.png", full_page=True)
    assert page.locator(".game .badge", has_text="organizaste").count() == 3
    fit = sideways(page)
    assert fit["page"] <= fit["inner"], fit
    # Every game's link keeps a tap's height however its badges wrap.
    heights = page.locator(".game-link").evaluate_all(
        "links => links.map(a => a.getBoundingClientRect().height)"
    )
    assert min(heights) >= 44
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_head_to_head_with_six_rivals_fits_a_phone(server, browser, club, width):
    me, _rivals = club
    page = phone(browser, server, width)
    page.goto(f"/jugadores/{me.pk}/")
    table = page.locator("#head-to-head")
    table.scroll_into_view_if_needed()
    screenshot(page, ARTIFACTS / f"head-to-head-{width}.png", full_page=True)
    screenshot(table, ARTIFACTS / f"head-to-head-table-{width}.png")
    assert table.locator("tbody tr").count() == 6
    fit = sideways(page)
    assert fit["page"] <= fit["inner"], fit
    # The whole table in the screen's width: no column cut off, nothing to scroll.
    box = table_fit(table)
    assert box["right"] <= width
    assert box["scroll"] <= box["width"]
    # Letters on the screen, the words for a screen reader.
    assert table.locator("thead .short").all_inner_texts() == ["PJ", "G", "P", "E"]
    for name in ["Rival", "Partidas", "Gana", "Pierde", "Empata"]:
        assert table.get_by_role("columnheader", name=name, exact=True).count() == 1
    assert page.get_by_text(
        "PJ: partidas jugadas juntos; G: gana; P: pierde; E: empata."
    ).is_visible()
    # A rival's name, however long, is a link a tap high.
    heights = table.locator("tbody a").evaluate_all(
        "links => links.map(a => a.getBoundingClientRect().height)"
    )
    assert min(heights) >= 44
    page.context.close()


def test_head_to_head_speaks_english_on_a_phone(server, browser, club):
    me, _rivals = club
    page = phone(browser, server, 360)
    page.context.add_cookies([{"name": "django_language", "value": "en", "url": server}])
    page.goto(f"/jugadores/{me.pk}/")
    table = page.locator("#head-to-head")
    assert table.locator("thead .short").all_inner_texts() == ["P", "W", "L", "T"]
    for name in ["Opponent", "Games", "Wins", "Losses", "Ties"]:
        assert table.get_by_role("columnheader", name=name, exact=True).count() == 1
    assert page.get_by_text("P: games played together; W: wins; L: losses; T: ties.").is_visible()
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_ranking_filling_up_fits_a_phone_best_first(server, browser, club, width):
    page = phone(browser, server, width)
    page.goto("/clasificacion/")
    screenshot(page, ARTIFACTS / f"ranking-filling-up-{width}.png", full_page=True)
    rows = page.locator(".unranked li").all_inner_texts()
    averages = [float(re.search(r"media (\d+,\d)", row)[1].replace(",", ".")) for row in rows]
    assert len(rows) == 7
    assert averages == sorted(averages, reverse=True)
    assert all("para entrar" in row for row in rows)
    heights = page.locator(".unranked a").evaluate_all(
        "links => links.map(a => a.getBoundingClientRect().height)"
    )
    assert min(heights) >= 44
    fit = sideways(page)
    assert fit["page"] <= fit["inner"], fit
    page.context.close()


@pytest.fixture
def ranked_club():
    """Seven players with names of 14 letters and no space, each with enough games to be
    ranked."""
    players = [UserFactory(username=f"h{i}", display_name=f"Hildegardina5{i}") for i in range(7)]
    UserFactory(username="maxi", display_name="Maxi")
    finalized_games(players, 12)
    return players


@pytest.mark.parametrize("width", WIDTHS)
def test_the_ranking_with_long_names_fits_a_phone(server, browser, ranked_club, width):
    page = phone(browser, server, width)
    page.goto("/clasificacion/")
    table = page.locator("table.ranking")
    screenshot(page, ARTIFACTS / f"ranking-long-names-{width}.png", full_page=True)
    assert table.locator("tbody tr").count() == 7
    fit = sideways(page)
    assert fit["page"] <= fit["inner"], fit
    # Every column on the screen, «Vict.» too: nothing to scroll sideways.
    box = table_fit(table)
    assert box["right"] <= width, box
    assert box["scroll"] <= box["width"], box
    # Abbreviations on the screen, the words for a screen reader.
    assert table.locator("thead .short").all_inner_texts() == ["Pos.", "PJ", "G"]
    for name in ["Posición", "Jugador", "Media", "Partidas", "Victorias"]:
        assert table.get_by_role("columnheader", name=name, exact=True).count() == 1, name
    assert page.get_by_text("PJ: partidas jugadas; G: partidas ganadas.").is_visible()
    # A name, however it wraps, is a link a tap high.
    heights = table.locator("tbody a").evaluate_all(
        "links => links.map(a => a.getBoundingClientRect().height)"
    )
    assert min(heights) >= 44
    page.context.close()


def test_the_ranking_speaks_english_on_a_phone(server, browser, ranked_club):
    page = phone(browser, server, 320)
    page.context.add_cookies([{"name": "django_language", "value": "en", "url": server}])
    page.goto("/clasificacion/")
    table = page.locator("table.ranking")
    assert table.locator("thead .short").all_inner_texts() == ["Pos.", "P", "W"]
    for name in ["Position", "Player", "Average", "Games", "Wins"]:
        assert table.get_by_role("columnheader", name=name, exact=True).count() == 1, name
    assert page.get_by_text("P: games played; W: games won.").is_visible()
    box = table_fit(table)
    assert box["scroll"] <= box["width"], box
    page.context.close()


def test_the_ranking_spells_its_headings_out_on_a_wide_screen(server, browser, ranked_club):
    page = phone(browser, server, 1024)
    page.goto("/clasificacion/")
    headings = page.locator("table.ranking thead th").all_inner_texts()
    assert headings == ["Posición", "Jugador", "Media", "Partidas", "Victorias"]
    assert not page.get_by_text("PJ: partidas jugadas; G: partidas ganadas.").is_visible()
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_finalize_confirmation_fits_a_phone(server, browser, ranked_club, width):
    organizer = ranked_club[0]
    card = services.scorecard_create(organizer=organizer, players=ranked_club[:6])
    fill(card, chance=7)
    page = browser.new_context(viewport={"width": width, "height": 740}, base_url=server).new_page()
    log_in(page, organizer.username)
    page.goto(f"/tarjetas/{card.pk}/")
    page.get_by_role("link", name="Finalizar y guardar resultados").click()
    dialog = page.locator("#picker-dialog[open]")
    dialog.wait_for()
    table = dialog.locator("table.standings")
    screenshot(page, ARTIFACTS / f"finalize-six-players-{width}.png")
    assert table.locator("tbody tr").count() == 6
    # The whole table inside the dialog: the totals are not cut off.
    box = dialog.evaluate(
        "d => ({scroll: d.scrollWidth, width: d.clientWidth,"
        " table: d.querySelector('table').getBoundingClientRect().right,"
        " inside: d.getBoundingClientRect().right})"
    )
    assert box["scroll"] <= box["width"], box
    assert box["table"] <= box["inside"], box
    # Each heading over its column.
    aligned = misalignment(table)
    assert max(aligned) <= 2, aligned
    assert table.locator("thead .short").all_inner_texts() == ["Pos."]
    for name in ["Posición", "Jugador", "Total"]:
        assert table.get_by_role("columnheader", name=name, exact=True).count() == 1, name
    page.context.close()
