"""A player's phone following the card by the poll (the test's server holds no stream)
loses the network: the page says «Sin conexión», and the console stays quiet, since a poll
that cannot be answered without a network is what the page expects."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from scorecards import services
from tests.browsing import go_offline, go_online, log_in, screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).parent / "artifacts"


def test_a_follower_offline_is_told_so_and_the_console_stays_quiet(browser, server):
    olga = UserFactory(username="olga", display_name="Olga")
    players = [UserFactory(username=n.lower(), display_name=n) for n in ("Ana", "Ben")]
    card = services.scorecard_create(organizer=olga, players=players)
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
    )
    ana = context.new_page()
    said = []
    ana.on("console", lambda msg: said.append(f"{msg.type}: {msg.text}"))
    ana.on("pageerror", lambda error: said.append(f"pageerror: {error}"))
    try:
        log_in(ana, "ana")
        ana.goto(f"/tarjetas/{card.pk}/")
        # Polled: every 3 s.
        with ana.expect_response(lambda response: "/vivo/" in response.url, timeout=10000):
            pass
        go_offline(context)
        message = ana.locator("#net-error")
        expect(message).to_have_text(
            "Sin conexión: la tarjeta puede no estar al día.", timeout=10000
        )
        # Several polls' worth of time without a network.
        ana.wait_for_timeout(10000)
        screenshot(ana, ARTIFACTS / "follower-offline-360.png")
        go_online(context)
        expect(message).to_be_hidden(timeout=10000)
        # Back: the next poll is answered.
        with ana.expect_response(lambda response: "/vivo/" in response.url, timeout=10000):
            pass
        assert [line for line in said if not line.startswith(("log:", "info:", "debug:"))] == []
    finally:
        context.close()
