"""Pages reached without the card's dialog (a link opened as its own page) work with
JavaScript on as they do without it: what htmx would put in the card's sheet or picker,
absent here, is left to the browser."""

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
def olga_phone(browser, server):
    olga = UserFactory(username="olga", display_name="Olga")
    players = [UserFactory(username=n.lower(), display_name=n) for n in ("Ana", "Ben")]
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
    )
    page = context.new_page()
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    log_in(page, "olga")
    yield page, olga, players
    context.close()


def test_the_finalize_confirmations_own_page_finalizes_with_javascript_on(olga_phone):
    page, olga, players = olga_phone
    card = services.scorecard_create(organizer=olga, players=players)
    fill(card)
    page.goto(f"/tarjetas/{card.pk}/finalizar/")
    assert page.evaluate("typeof htmx") == "object"  # JavaScript is on
    screenshot(page, ARTIFACTS / "finalize-own-page-360.png")
    page.get_by_role("button", name="Finalizar y guardar resultados").click()
    page.wait_for_url(re.compile(rf"/tarjetas/{card.pk}/$"))
    assert "Resultados guardados. La partida ya está en el historial." in page.inner_text(
        ".messages"
    )
    assert Scorecard.objects.get(pk=card.pk).is_finalized
    assert page.errors == []


def test_a_boxs_own_page_writes_the_box_with_javascript_on(olga_phone):
    page, olga, players = olga_phone
    card = services.scorecard_create(organizer=olga, players=players)
    seat = card.seats.get(player__username="ana")
    page.goto(f"/tarjetas/{card.pk}/casilla/{seat.pk}/twos/")
    screenshot(page, ARTIFACTS / "box-own-page-360.png")
    page.locator('button[name="value"][value="6"]').click()
    page.wait_for_url(re.compile(rf"/tarjetas/{card.pk}/$"))
    seat.refresh_from_db()
    assert seat.twos == 6
    assert page.errors == []
