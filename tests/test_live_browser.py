"""Two phones on one card, served by uvicorn as in production: the second phone shows the
first one's write without a reload and without polling while its stream is open, keeps
its focus, scroll and announcements, and polls again where the stream cannot open."""

import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browsing import log_in, screenshot
from tests.liveserver import django_script

pytestmark = [pytest.mark.browser, pytest.mark.server]
ARTIFACTS = Path(__file__).parent / "artifacts"  # the two phones' screens, to look at

SEED = """
import json, sys
from accounts.models import User
from scorecards.services import scorecard_create

def user(name):
    return User.objects.create_user(name, password=sys.argv[1], display_name=name.title())

olga, ana, ben, carla = (user(n) for n in ("olga", "ana", "ben", "carla"))
players = [ana, ben, carla, olga]
physical = scorecard_create(organizer=olga, players=players)
digital = scorecard_create(organizer=olga, players=[ana, ben], mode="digital")
print(json.dumps({"physical": physical.pk, "digital": digital.pk}))
"""


@pytest.fixture
def phones(browser, site):
    server, cards = site
    contexts = []

    def open_phone(username, card, *, block_stream=False, idle_first=False):
        context = browser.new_context(viewport={"width": 360, "height": 740}, base_url=server.base)
        contexts.append(context)
        if block_stream:
            # As a proxy that will not pass a stream would: the request never answers.
            context.route("**/eventos/**", lambda route: route.abort())
        if idle_first:
            # As the server does IDLE_LIMIT after a stream opened: «idle», and its end.
            context.route(
                "**/eventos/**",
                lambda route: route.fulfill(content_type="text/event-stream", body=IDLE),
                times=1,
            )
        page = context.new_page()
        page.asked = []  # (when, path) of every live request the page made
        page.on(
            "request",
            lambda r: page.asked.append((time.monotonic(), r.url.split(server.base)[1])),
        )
        log_in(page, username)
        page.goto(f"/tarjetas/{cards[card]}/")
        return page

    yield open_phone
    for context in contexts:
        context.close()


def polls(page, since):
    return [path for at, path in page.asked if at >= since and "/vivo/" in path]


def streams(page):
    return [path for _, path in page.asked if "/eventos/" in path]


def write(page, box, player, value):
    page.locator(f'a.cell[aria-label^="{box} — {player}:"]').click()
    page.locator("#picker-dialog[open]").wait_for()
    page.locator(f'#picker button[name="value"][value="{value}"]').first.click()
    page.locator(f'a.cell[aria-label="{box} — {player}: {value}"]').wait_for()
    return time.monotonic()


def test_the_second_phone_shows_a_write_pushed_keeping_focus_and_scroll(phones):
    olga = phones("olga", "physical")
    ana = phones("ana", "physical")
    ana.wait_for_timeout(500)
    assert streams(ana) == [f"/tarjetas/{ana.url.split('/')[-2]}/eventos/?version=0"]
    ana.evaluate("window.sameDocument = true")
    # Ana looks at the right of the table (her phone is narrow) with the focus on a link.
    ana.locator(".sheet-scroll").evaluate("el => { el.scrollLeft = 60; }")
    left = ana.locator(".sheet-scroll").evaluate("el => el.scrollLeft")
    history = ana.get_by_role("link", name="Historial").first
    history.focus()
    # With the stream open, the page does not ask every 3 s.
    ana.wait_for_timeout(1000)
    quiet_from = time.monotonic()
    ana.wait_for_timeout(6500)
    assert polls(ana, quiet_from) == []

    for box, value, total in (("Unos", "3", "3"), ("Doses", "6", "9")):
        answered = write(olga, box, "Ana", value)
        # Ana's column (the first) adds the box up.
        expect(ana.locator("tr.total td").first).to_have_text(total, timeout=2000)
        delay = time.monotonic() - answered
        assert delay < 1.0, delay
    assert ana.evaluate("window.sameDocument") is True
    expect(history).to_be_focused()
    assert ana.locator(".sheet-scroll").evaluate("el => el.scrollLeft") == left
    # One stream all along, and no request: each write's patch came in its event.
    assert len(streams(ana)) == 1
    assert polls(ana, quiet_from) == []
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(olga, ARTIFACTS / "live-physical-organizer-360.png")
    screenshot(ana, ARTIFACTS / "live-physical-second-phone-360.png")


def test_the_second_phone_sees_the_dice_of_a_digital_roll_and_hears_them(phones):
    ana = phones("ana", "digital")
    ben = phones("ben", "digital")
    ben.evaluate("window.sameDocument = true")
    ana.wait_for_timeout(1000)
    ana.get_by_role("button", name="Tirar").click()
    expect(ana.locator("#roll-count")).to_contain_text("Tirada 1 de 3")
    answered = time.monotonic()
    faces = ana.locator("#turn button.die").all_inner_texts()
    expect(ben.locator("#turn .die:visible")).to_have_text(faces, timeout=2000)
    assert time.monotonic() - answered < 1.0
    # Ben's screen reader hears the roll, as Ana's does.
    expect(ben.locator("#turn-status")).to_have_text(
        "Tirada 1 de 3: " + " ".join(faces), timeout=2000
    )
    assert ben.evaluate("window.sameDocument") is True
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(ana, ARTIFACTS / "live-digital-turn-player-360.png")
    screenshot(ben, ARTIFACTS / "live-digital-second-phone-360.png")


def test_the_next_player_plays_from_the_forms_the_stream_brought(phones):
    ana = phones("ana", "digital")
    ben = phones("ben", "digital")
    olga = phones("olga", "digital")  # the organizer, who may play any seat
    ana.wait_for_timeout(1000)
    quiet_from = time.monotonic()
    # Olga's forms follow Ana's dice, and Ben's phone gets his turn's forms, each in an
    # event: no poll, no reload.
    ana.get_by_role("button", name="Tirar").click()
    # Her dice once her roll's answer is in (read before, they were none yet).
    expect(ana.locator("#roll-count")).to_contain_text("Tirada 1 de 3")
    faces = ana.locator("#turn button.die").all_inner_texts()
    expect(olga.locator("#turn button.die")).to_have_text(faces, timeout=2000)
    expect(olga.get_by_role("button", name="Tirar por Ana")).to_be_visible()
    ana.locator("#turn input[name='casilla']").first.check()
    ana.get_by_role("button", name="Anotar").click()
    expect(ben.get_by_role("button", name="Tirar", exact=True)).to_be_visible(timeout=2000)
    expect(olga.get_by_role("button", name="Tirar por Ben")).to_be_visible(timeout=2000)
    assert polls(ben, quiet_from) == []
    assert polls(olga, quiet_from) == []
    # Ben rolls from those forms (htmx sends the page's CSRF token) and Ana sees his dice.
    ben.get_by_role("button", name="Tirar", exact=True).click()
    expect(ben.locator("#roll-count")).to_contain_text("Tirada 1 de 3")
    faces = ben.locator("#turn button.die").all_inner_texts()
    expect(ana.locator("#turn .die:visible")).to_have_text(faces, timeout=2000)
    assert polls(ben, quiet_from) == []


def test_a_phone_whose_stream_is_blocked_polls_as_before(phones):
    olga = phones("olga", "physical")
    ana = phones("ana", "physical", block_stream=True)
    since = time.monotonic()
    ana.wait_for_timeout(7000)
    # Every 3 s, as without streams.
    assert len(polls(ana, since)) >= 2
    write(olga, "Cincos", "Ana", "20")
    expect(ana.locator("tr.total td").first).to_have_text("20", timeout=6000)


DEACTIVATE = """
from accounts.models import User
User.objects.filter(username="ana").update(is_active=False)
"""


def test_a_phone_whose_player_was_deactivated_goes_to_log_in_at_the_next_change(phones, site):
    server, cards = site
    olga = phones("olga", "physical")
    ana = phones("ana", "physical")
    ana.wait_for_timeout(500)
    assert len(streams(ana)) == 1
    django_script(server.db, DEACTIVATE)
    write(olga, "Cincos", "Ana", "20")
    # Sent to log in by her stream, as a poll's answer would (HX-Redirect), and no poll.
    ana.wait_for_url(f"**/entrar/?next=/tarjetas/{cards['physical']}/", timeout=3000)
    assert not [path for _, path in ana.asked if "/vivo/" in path]
    expect(ana.locator("#id_username")).to_be_visible()


IDLE = "retry: 2000\n\nevent: idle\ndata: \n\n"


def test_a_stream_ended_idle_opens_again_when_its_viewer_touches_the_page(phones):
    olga = phones("olga", "physical")
    ana = phones("ana", "physical", idle_first=True)
    ana.wait_for_timeout(1000)
    # The first stream ended idle: the page polls, and opens none until Ana is back.
    assert len(streams(ana)) == 1
    write(olga, "Cincos", "Ana", "20")
    expect(ana.locator("tr.total td").first).to_have_text("20", timeout=6000)
    assert len(streams(ana)) == 1
    ana.locator("h1").click()
    ana.wait_for_timeout(500)
    # From the version the page shows, and that stream brings the next change.
    assert streams(ana)[1].endswith("/eventos/?version=1")
    since = time.monotonic()
    write(olga, "Seises", "Ana", "30")
    expect(ana.locator("tr.total td").first).to_have_text("50", timeout=2000)
    assert polls(ana, since + 0.5) == []
