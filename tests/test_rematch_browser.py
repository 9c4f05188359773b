"""«Revancha» and «Seguir en el móvil» on a 360 px phone, in a real browser."""

import re
from pathlib import Path

import pytest

from scorecards import services
from scorecards.models import Scorecard
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, fill

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture
def table(db):
    olga = UserFactory(username="olga", display_name="Olga")
    players = [
        UserFactory(username=name.lower(), display_name=name) for name in ("Ana", "Ben", "Carla")
    ]
    return olga, players


def _phone(browser, server, username, **options):
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, **options
    )
    page = context.new_page()
    log_in(page, username)
    return context, page


def _no_sideways_scroll(page) -> dict:
    return page.evaluate(
        "() => ({page: document.documentElement.scrollWidth, viewport: window.innerWidth})"
    )


def test_a_player_taps_revancha_and_the_organizer_enters_the_first_box(browser, server, table):
    """Ana taps «Revancha» on her phone; Olga, who scored the game on hers, taps it too and
    scores the new card: the rematch is still hers."""
    olga, players = table
    finished = services.scorecard_create(organizer=olga, players=players)
    fill(finished)
    services.scorecard_finalize(scorecard_id=finished.pk, author=olga)
    context, page = _phone(browser, server, "ana")
    olga_context, olga_page = _phone(browser, server, "olga")
    try:
        page.goto(f"/tarjetas/{finished.pk}/")
        olga_page.goto(f"/tarjetas/{finished.pk}/")
        button = page.get_by_role("button", name="Revancha")
        assert button.bounding_box()["height"] >= 44
        screenshot(page, ARTIFACTS / "rematch-360-finished.png")
        button.click()
        page.wait_for_url(re.compile(r"/tarjetas/\d+/$"))
        new = Scorecard.objects.get(rematch_of=finished)
        assert new.organizer == olga
        assert page.url.endswith(f"/tarjetas/{new.pk}/")
        assert page.inner_text(".messages") == (
            "Revancha: nueva tarjeta con los mismos jugadores; la organiza \u2068Olga\u2069."
        )
        heads = page.locator("#row-players th .long").all_inner_texts()
        assert heads == ["Ben", "Carla", "Ana"]
        assert "le toca a Ben" in page.inner_text("#turn")
        # Ana follows it: no box is hers to write.
        assert page.locator("a.cell:visible").count() == 0
        assert _no_sideways_scroll(page)["page"] <= 360
        screenshot(page, ARTIFACTS / "rematch-360-new-card-player.png")

        olga_page.get_by_role("button", name="Revancha").click()
        olga_page.wait_for_url(re.compile(rf"/tarjetas/{new.pk}/$"))
        assert "Ya había una revancha de esta partida: es esta." in olga_page.inner_text(
            ".messages"
        )
        olga_page.locator('a.cell[aria-label="Unos — Ben: sin anotar"]').click()
        olga_page.locator("#picker-dialog[open]").wait_for()
        olga_page.locator('#picker button[name="value"][value="3"]').first.click()
        olga_page.locator('a.cell[aria-label="Unos — Ben: 3"]').wait_for()
        screenshot(olga_page, ARTIFACTS / "rematch-360-new-card-organizer.png")
        # On the server, and on Ana's phone, which follows the card.
        assert new.seats.get(player__username="ben").ones == 3
        page.locator("span.cell.not-manager:visible", has_text="Unos — Ben: 3").wait_for()
    finally:
        context.close()
        olga_context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_qr_code_opens_in_place_and_fits_a_360_px_phone(
    browser, server, table, scheme, settings
):
    settings.SITE_URL = server  # served on localhost: the page says other phones cannot open it
    olga, players = table
    card = services.scorecard_create(organizer=olga, players=players)
    context, page = _phone(
        browser,
        server,
        "ben",
        color_scheme=scheme,
        permissions=["clipboard-read", "clipboard-write"],
    )
    try:
        page.goto(f"/tarjetas/{card.pk}/")
        assert page.locator(".qr-code").count() == 0  # asked for only when opened
        summary = page.locator("#follow-phone summary")
        assert summary.inner_text() == "Seguir en el móvil"
        assert summary.bounding_box()["height"] >= 44
        asked = []
        page.on(
            "request", lambda request: asked.append(request.url) if "/qr/" in request.url else None
        )
        summary.click()
        code = page.locator("#follow-qr svg.qr-code")
        code.wait_for()
        box = code.bounding_box()
        # Big enough for a camera across the table, square, inside the screen.
        assert box["width"] >= 200
        assert abs(box["width"] - box["height"]) < 1
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 360
        fits = _no_sideways_scroll(page)
        assert fits["page"] <= fits["viewport"] == 360
        address = page.locator("#card-address")
        assert address.input_value() == f"{server}/tarjetas/{card.pk}/"
        field = address.bounding_box()
        assert field["x"] + field["width"] <= 360
        screenshot(page.locator("#follow-phone"), ARTIFACTS / f"follow-phone-360-{scheme}.png")
        copy = page.get_by_role("button", name="Copiar")
        copy.click()
        page.get_by_role("button", name="Copiada").wait_for()
        assert page.evaluate("navigator.clipboard.readText()") == address.input_value()
        # Closed and opened again: the same code, not asked for twice.
        summary.click()
        summary.click()
        page.locator("#follow-phone[open]").wait_for()
        assert code.is_visible()
        assert asked == [f"{server}/tarjetas/{card.pk}/qr/"]
    finally:
        context.close()
