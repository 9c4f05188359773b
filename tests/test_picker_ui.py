"""The box picker on a 360 px phone: where focus lands, what tells «0» from «Sin anotar»,
and «Con dados» reading as something that opens."""

from pathlib import Path

import pytest

from scorecards import services
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
HINT = "Usa cero para tachar una casilla y «Sin anotar» para dejarla pendiente."


def _card_page(browser, server, scheme):
    organizer = UserFactory(username="olga", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana")
    card = services.scorecard_create(organizer=organizer, players=[ana])
    seat = card.seats.get()
    for box, value in (("ones", "0"), ("fours", "12")):
        services.box_write(
            scorecard_id=card.pk, seat_id=seat.pk, box=box, value=value, was="", author=organizer
        )
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, color_scheme=scheme
    )
    page = context.new_page()
    log_in(page, "olga")
    page.goto(f"/tarjetas/{card.pk}/")
    return context, page


def _focused(page) -> dict:
    return page.evaluate(
        """() => { const e = document.activeElement;
        return {id: e.id, text: e.textContent.trim(), value: e.getAttribute('value')}; }"""
    )


def _open(page, label):
    page.locator(f'a.cell[aria-label="{label}"]').click()
    page.locator("#picker-dialog[open] #picker-title").wait_for()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_blank_box_opens_on_its_title_with_the_difference_said(server, browser, scheme):
    context, page = _card_page(browser, server, scheme)
    _open(page, "Doses — Ana: sin anotar")
    # Not on «Sin anotar», which would look like the suggested answer.
    assert _focused(page) == {"id": "picker-title", "text": "Doses — Ana", "value": None}
    hint = page.locator("#picker-scratch-hint")
    assert hint.is_visible()
    assert hint.inner_text() == HINT
    # Under the choices it explains, «0 tachar» and «Sin anotar».
    buttons = page.locator("#picker .values-extra").bounding_box()
    assert hint.bounding_box()["y"] >= buttons["y"] + buttons["height"]
    # «Con dados» is closed, and its marker says it opens.
    details = page.locator("#picker details.with-dice")
    summary = details.locator("summary")
    marker = "e => getComputedStyle(e, '::before').content"
    assert details.evaluate("d => d.open") is False
    assert summary.evaluate(marker).startswith('"▸"')
    assert not page.locator("#picker .faces").is_visible()
    screenshot(page, ARTIFACTS / f"picker-360-{scheme}.png")
    summary.click()
    assert details.evaluate("d => d.open") is True
    assert summary.evaluate(marker).startswith('"▾"')
    assert page.locator("#picker .faces").is_visible()
    # Tapping a face keeps the focus among the dice, not back at the title.
    page.locator('#picker a.face[aria-label="Dado 2"]').click()
    page.locator("#picker .hint", has_text="(1 de 5)").wait_for()
    assert "face" in page.evaluate("document.activeElement.className")
    screenshot(page, ARTIFACTS / f"picker-360-dice-{scheme}.png")
    context.close()


def test_a_written_box_opens_on_its_score(server, browser):
    context, page = _card_page(browser, server, "light")
    _open(page, "Cuatros — Ana: 12")
    assert _focused(page)["value"] == "12"
    page.keyboard.press("Escape")
    _open(page, "Unos — Ana: 0")
    assert _focused(page)["value"] == "0"
    assert page.locator("#picker-scratch-hint").inner_text() == HINT
    context.close()


def test_chance_has_no_zero_and_no_hint_about_it(server, browser):
    context, page = _card_page(browser, server, "light")
    _open(page, "Libre (Chance) — Ana: sin anotar")
    assert page.locator("#picker .scratch").count() == 0
    assert page.locator("#picker-scratch-hint").count() == 0
    assert _focused(page)["id"] == "picker-title"
    context.close()
