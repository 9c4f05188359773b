"""A card nobody has started, and «Crear tarjeta» again for the same table, on a 360 px
phone: the question, and both answers."""

import re
from pathlib import Path

import pytest

from scorecards.models import Scorecard
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
CARD = re.compile(r"/tarjetas/\d+/$")


@pytest.mark.parametrize("width", [320, 360, 390])
def test_a_new_who_starts_for_the_same_table_asks_to_continue_or_discard(server, browser, width):
    olga = UserFactory(username="olga", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana Isabel de la Fuente")
    ben = UserFactory(username="ben", display_name="Bartolomé Esteban Murillo")
    context = browser.new_context(viewport={"width": width, "height": 740}, base_url=server)
    page = context.new_page()
    log_in(page, "olga")
    page.get_by_role("link", name="Tarjeta de puntos").first.click()
    for player in (ana, ben):
        page.get_by_label(player.display_name).check()
    page.get_by_role("button", name="Continuar: orden en la mesa").click()
    page.get_by_role("button", name="Crear tarjeta").click()
    page.wait_for_url(CARD)
    first = page.url

    # Back, a new «¿Quién empieza?» (Ben starts), and «Crear tarjeta».
    page.go_back()
    page.get_by_label("Suma de Olga").fill("18")
    page.get_by_label(f"Suma de {ana.display_name}").fill("12")
    page.get_by_label(f"Suma de {ben.display_name}").fill("25")
    page.get_by_role("button", name="Decidir quién empieza").click()
    page.get_by_role("button", name="Crear tarjeta").click()
    heading = page.get_by_role("heading", name="¿Seguir con la tarjeta en juego?")
    heading.wait_for()
    screenshot(page, ARTIFACTS / f"unstarted-card-question-{width}.png", full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    for control in (
        page.get_by_role("link", name="Seguir con esa tarjeta"),
        page.get_by_role("button", name="Descartarla y empezar de nuevo"),
    ):
        box = control.bounding_box()
        assert box["height"] >= 44
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= width
    assert Scorecard.objects.count() == 1

    # «Seguir con esa tarjeta»: the card made first, as it was.
    page.get_by_role("link", name="Seguir con esa tarjeta").click()
    page.wait_for_url(first)
    assert Scorecard.objects.count() == 1

    # Again, and «Descartarla y empezar de nuevo»: a new card in the new order; the old
    # one gone.
    page.goto(f"/tarjetas/nueva/orden/?p={ben.pk}&p={ana.pk}&p={olga.pk}")
    page.get_by_role("button", name="Crear tarjeta").click()
    page.get_by_role("button", name="Descartarla y empezar de nuevo").click()
    page.wait_for_url(CARD)
    assert page.url != first
    card = Scorecard.objects.get()
    assert [seat.player for seat in card.seats.all()] == [ben, ana, olga]
    context.close()
