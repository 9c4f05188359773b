"""«Añadir invitado» on a 360 px phone: with htmx in one tap, without JavaScript in two,
and a card made with the guest."""

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from scorecards.models import Scorecard
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser
SHOTS = Path(__file__).parent / "artifacts"


def phone(browser, server, **options):
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, **options
    )
    return context, context.new_page()


def no_sideways_scroll(page):
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("javascript", [True, False])
def test_a_guest_is_added_and_plays_a_card(browser, server, javascript):
    organizer = UserFactory(username="olga", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana")
    UserFactory(username="ben", display_name="Ben")
    context, page = phone(browser, server, java_script_enabled=javascript)
    SHOTS.mkdir(exist_ok=True)
    log_in(page, "olga")
    page.goto("/tarjetas/nueva/")
    assert page.get_by_label("Olga").is_checked()  # the organizer plays: ticked already
    page.get_by_label("Ana").check()
    page.get_by_label("Nombre del invitado").fill("Pepe")
    page.get_by_role("button", name="Añadir invitado").click()
    if not javascript:
        page.wait_for_url(re.compile(r"invitado=Pepe"))
        screenshot(page, str(SHOTS / "confirm.png"), full_page=True)
        assert page.get_by_text("¿Añadir a Pepe como invitado?").is_visible()
        page.get_by_role("button", name="Añadir invitado").click()
    page.get_by_text(re.compile(r"Pepe\W* juega como invitado: ya está marcado\.")).wait_for()
    screenshot(page, str(SHOTS / f"added-js-{javascript}.png"), full_page=True)
    assert no_sideways_scroll(page)
    pepe = get_user_model().objects.get(display_name="Pepe")
    assert page.locator(f'input[name="p"][value="{pepe.pk}"]').is_checked()
    assert page.get_by_label("Ana").is_checked()
    assert page.get_by_label("Olga").is_checked()
    assert not page.get_by_label("Ben").is_checked()
    assert page.locator("label", has_text="Pepe").locator(".badge").inner_text() == "invitado"
    button = page.get_by_role("button", name="Añadir invitado").bounding_box()
    assert button["height"] >= 44

    page.get_by_role("button", name="Continuar: orden en la mesa").click()
    page.get_by_role("button", name="Crear tarjeta").click()
    page.wait_for_url(re.compile(r"/tarjetas/\d+/$"))
    card = Scorecard.objects.get()
    assert {s.player for s in card.seats.all()} == {organizer, ana, pepe}
    context.close()


def test_a_name_like_a_players_offers_them(browser, server):
    UserFactory(username="olga", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana García")
    context, page = phone(browser, server)
    log_in(page, "olga")
    page.goto("/tarjetas/nueva/")
    page.get_by_label("Nombre del invitado").fill("ana garcia")
    page.get_by_role("button", name="Añadir invitado").click()
    offer = page.get_by_role("link", name="Sí, marcar a Ana García")
    offer.wait_for()
    screenshot(page, str(SHOTS / "offer.png"), full_page=True)
    assert no_sideways_scroll(page)
    assert page.get_by_label("Nombre del invitado").get_attribute("aria-invalid") == "true"
    offer.click()
    page.wait_for_url(re.compile(rf"p={ana.pk}"))
    assert page.get_by_label("Ana García").is_checked()
    assert page.get_by_label("Olga").is_checked()
    assert get_user_model().objects.filter(added_by__isnull=False).count() == 0
    context.close()
