"""A player's phone following the card loses the network: the page says «Sin conexión», and
the console stays quiet, since a poll or a stream that fails without a network is what
the page expects (uvicorn, the card's stream, Chromium at 360 px)."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browsing import go_offline, go_online, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.server]
ARTIFACTS = Path(__file__).parent / "artifacts"

SEED = """
import json, sys
from accounts.models import User
from scorecards.services import scorecard_create

def user(name):
    return User.objects.create_user(name, password=sys.argv[1], display_name=name.title())

olga, ana, ben = (user(n) for n in ("olga", "ana", "ben"))
physical = scorecard_create(organizer=olga, players=[ana, ben])
seats = {seat.player.username: seat.pk for seat in physical.seats.all()}
print(json.dumps({"physical": physical.pk, "seats": seats}))
"""


def test_a_follower_offline_is_told_so_and_the_console_stays_quiet(phones):
    ana = phones("ana")
    said = []
    ana.on("console", lambda msg: said.append(f"{msg.type}: {msg.text}"))
    ana.on("pageerror", lambda error: said.append(f"pageerror: {error}"))
    # Following by the stream first.
    ana.wait_for_function("!!document.querySelector('[sse-connect]')")
    go_offline(ana.context)
    message = ana.locator("#net-error")
    expect(message).to_have_text("Sin conexión: la tarjeta puede no estar al día.", timeout=15000)
    # Several polls' worth of time without a network (one every 3 s).
    ana.wait_for_timeout(10000)
    screenshot(ana, ARTIFACTS / "follower-offline-360.png")
    go_online(ana.context)
    expect(message).to_be_hidden(timeout=15000)
    assert [line for line in said if not line.startswith(("log:", "info:", "debug:"))] == []
