"""«Compartir» on a 360 px phone, in a real browser: a player makes the link, sends it (the
phone's share sheet, or a copy), and someone logged out opens the final card."""

import io
import re
from pathlib import Path

import pytest
from PIL import Image

from scorecards import services
from scorecards.models import Share
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, fill
from tests.test_browser_pages import AXE, WATCH_CSP, serious_violations

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
PHONE = {"width": 360, "height": 740}
# A phone's share sheet, as the Web Share API gives it: what it was handed, kept.
SHARE_SHEET = "navigator.share = (data) => { window.__shared = data; return Promise.resolve(); };"


@pytest.fixture
def game(db):
    """A finished game Olga organized for Ana, Ben and Carla: Ben wins."""
    olga = UserFactory(username="usr-olga", display_name="Olga")
    players = [
        UserFactory(username=f"usr-{name.lower()}", display_name=name)
        for name in ("Ana", "Ben", "Carla")
    ]
    card = services.scorecard_create(organizer=olga, players=players)
    fill(card)
    card.seats.filter(player=players[1]).update(chance=30)
    card.seats.filter(player=players[2]).update(chance=9, yahtzee=0)
    services.scorecard_finalize(scorecard_id=card.pk, author=olga)
    return card


def _phone(browser, server, username, **options):
    context = browser.new_context(viewport=PHONE, base_url=server, **options)
    page = context.new_page()
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    log_in(page, username)
    return context, page, errors


def _make_the_link(page, card) -> str:
    page.goto(f"/tarjetas/{card.pk}/")
    make = page.locator("#share").get_by_role("button", name="Compartir")
    make.scroll_into_view_if_needed()
    assert make.bounding_box()["height"] >= 44
    make.click()
    address = page.locator("#share-address")
    address.wait_for()
    return address.input_value()


def test_a_player_shares_the_game_and_anyone_opens_it_logged_out(browser, server, game, settings):
    settings.SITE_URL = server
    context, page, errors = _phone(
        browser, server, "usr-ana", permissions=["clipboard-read", "clipboard-write"]
    )
    visitor = browser.new_context(viewport=PHONE, base_url=server)
    try:
        link = _make_the_link(page, game)
        token = Share.objects.get(scorecard=game).token
        assert link == f"{server}/compartida/{token}/"
        # Without the Web Share API (this desktop Chromium): «Compartir» copies the link.
        send = page.locator("#share button[data-share]")
        assert send.is_visible()
        assert send.inner_text() == "Compartir"
        assert send.bounding_box()["height"] >= 44
        field = page.locator("#share-address").bounding_box()
        assert field["x"] + field["width"] <= 360
        send.click()
        page.locator("#share button[data-share]", has_text="Enlace copiado").wait_for()
        assert page.evaluate("navigator.clipboard.readText()") == link
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        screenshot(page.locator("#share"), ARTIFACTS / "share-360-card-control.png")
        assert errors == []

        # Logged out, on another phone: the final card, read-only.
        reader = visitor.new_page()
        reader.add_init_script(WATCH_CSP)
        reader.add_init_script(path=str(AXE))
        reader_errors = []
        reader.on(
            "console", lambda msg: reader_errors.append(msg.text) if msg.type == "error" else None
        )
        response = reader.goto(link)
        assert response.status == 200
        assert reader.locator("h1").inner_text().startswith("Partida de Dados del ")
        assert reader.locator(".result").inner_text() == "Gana Ben con 253"
        assert reader.locator(".places li .name").all_inner_texts() == ["Ben", "Ana", "Carla"]
        assert reader.locator("#row-total td").all_inner_texts() == ["245", "253", "182"]
        assert reader.locator("a").count() == 0
        assert reader.locator("form, nav, script").count() == 0
        assert "usr-" not in reader.content()
        assert reader.evaluate("document.documentElement.scrollWidth") <= 360
        assert reader.evaluate("window.__csp") == []
        assert serious_violations(reader) == []
        assert reader_errors == []
        screenshot(reader, ARTIFACTS / "share-360-shared-page.png", full_page=True)

        # What a chat shows for the link: its picture.
        picture = reader.request.get(f"{link}imagen.png")
        assert picture.status == 200
        image = Image.open(io.BytesIO(picture.body()))
        assert image.size == (1200, 630)
        (ARTIFACTS / "share-og-image.png").write_bytes(picture.body())

        # «Dejar de compartir»: the link is gone, page and picture.
        page.locator("#share").get_by_role("button", name="Dejar de compartir").click()
        page.locator("#share form[action$='/compartir/']").wait_for()
        assert page.locator("#share-address").count() == 0
        assert reader.goto(link).status == 404
        assert reader.request.get(f"{link}imagen.png").status == 404
    finally:
        context.close()
        visitor.close()


def test_on_a_phone_with_a_share_sheet_compartir_hands_it_the_link(browser, server, game, settings):
    settings.SITE_URL = server
    context, page, errors = _phone(browser, server, "usr-carla")
    context.add_init_script(SHARE_SHEET)
    try:
        link = _make_the_link(page, game)
        page.locator("#share button[data-share]").click()
        page.wait_for_function("window.__shared !== undefined")
        shared = page.evaluate("window.__shared")
        assert shared == {"title": "Partida de Dados", "url": link}
        # Handed to the share sheet, not copied.
        assert page.locator("#share button[data-share]").inner_text() == "Compartir"
        assert errors == []
    finally:
        context.close()


def test_the_page_of_a_game_in_play_loads_no_share_module(browser, server, game):
    olga = game.organizer
    card = services.scorecard_create(organizer=olga, players=[p.player for p in game.seats.all()])
    context, page, _errors = _phone(browser, server, "usr-olga")
    try:
        asked = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto(f"/tarjetas/{card.pk}/")
        assert page.locator("#share").count() == 0
        assert not [url for url in asked if re.search(r"/js/share\.", url)]
    finally:
        context.close()
