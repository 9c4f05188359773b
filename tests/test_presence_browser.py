"""Who is at the table, in a digital game on 360 px phones served by uvicorn as in
production: a phone that loses its stream is seen gone by the others within a few seconds,
and back when it is; the organizer's «Tirar por» is quiet while its player follows the card
on their own phone; and a roll refused because the other phone rolled first says who did."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browsing import go_offline, go_online, log_in, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.server]
SHOTS = Path(__file__).parent / "artifacts"

SEED = """
import json, sys
from accounts.models import User
from scorecards.services import scorecard_create

def user(name, display):
    return User.objects.create_user(name, password=sys.argv[1], display_name=display)

olga = user("olga", "Olga")
ana = user("ana", "Ana")
maxi = user("maxi", "Maximiliano Fernández-Villaverde")
card = scorecard_create(organizer=olga, players=[ana, maxi, olga], mode="digital")
ids = {"olga": olga.pk, "ana": ana.pk, "maxi": maxi.pk}
print(json.dumps({"digital": card.pk, "ids": ids}))
"""

# The accent of «Tirar», and a quiet button's surface (dados.css, light scheme).
PRIMARY = "rgb(164, 35, 27)"
QUIET = "rgb(255, 255, 255)"


@pytest.fixture
def phones(browser, site):
    server, seeded = site
    contexts = []

    def open_phone(username, *, frozen=False):
        context = browser.new_context(
            viewport={"width": 360, "height": 740}, base_url=server.base, locale="es-ES"
        )
        contexts.append(context)
        if frozen:
            # A page that hears nothing more from the card: its stream and its poll are
            # answered «nothing new», as two taps racing the same change would find it.
            context.route(re.compile(r"/(eventos|vivo)/"), lambda route: route.fulfill(status=204))
        page = context.new_page()
        log_in(page, username)
        page.goto(f"/tarjetas/{seeded['digital']}/")
        page.ids = seeded["ids"]
        return page

    yield open_phone
    for context in contexts:
        context.close()


def heading(page, name):
    """The mark before a player's name in the card's headings: ● follows, ○ does not."""
    th = page.locator("#row-players th[title]", has_text=name).first
    return th.evaluate("th => getComputedStyle(th, '::before').content")


def here(page, *names):
    """data-here as the page holds it with exactly these players following."""
    ids = sorted(page.ids[name] for name in names)
    return re.compile("^" + " ".join(str(pk) for pk in ids) + "$")


def test_a_phone_that_loses_its_stream_is_seen_gone_and_back(phones):
    olga = phones("olga")
    ana = phones("ana")
    maxi = phones("maxi")
    for page in (olga, ana, maxi):
        expect(page.locator(".card-page")).to_have_attribute(
            "data-here", here(page, "olga", "ana", "maxi"), timeout=5000
        )
    assert "●" in heading(ana, "Maximiliano")
    away = ana.locator(f"#presence .away-{ana.ids['maxi']}")
    expect(away).to_be_hidden()
    SHOTS.mkdir(exist_ok=True)
    screenshot(ana, SHOTS / "presence-all-following-360.png")

    # Maximiliano's phone loses the network: Ana's and Olga's see it within a few seconds.
    go_offline(maxi.context)
    for page in (olga, ana):
        expect(page.locator(".card-page")).to_have_attribute(
            "data-here", here(page, "olga", "ana"), timeout=10000
        )
    assert "○" in heading(ana, "Maximiliano")
    assert "●" in heading(ana, "Ana")
    expect(away).to_be_visible()  # for screen readers: «Maximiliano …: sin conexión.»
    expect(away).to_have_text("Maximiliano Fernández-Villaverde: sin conexión.")
    # His own page knows nothing of the table while it has no stream: no marks at all.
    expect(maxi.locator(".card-page")).not_to_have_attribute("data-here", re.compile(".*"))
    screenshot(ana, SHOTS / "presence-one-gone-360.png")

    # Back on the network: seen again.
    go_online(maxi.context)
    for page in (olga, ana, maxi):
        expect(page.locator(".card-page")).to_have_attribute(
            "data-here", here(page, "olga", "ana", "maxi"), timeout=10000
        )
    assert "●" in heading(ana, "Maximiliano")


def test_tirar_por_is_quiet_while_its_player_follows_and_primary_when_not(phones):
    olga = phones("olga")
    ana = phones("ana")
    button = olga.get_by_role("button", name="Tirar por Ana")
    expect(button).to_be_visible()
    expect(olga.locator(".card-page")).to_have_attribute(
        "data-here", here(olga, "olga", "ana"), timeout=5000
    )
    expect(button).to_have_css("background-color", QUIET)
    # Ana's own «Tirar» stays the page's primary action.
    expect(ana.get_by_role("button", name="Tirar", exact=True)).to_have_css(
        "background-color", PRIMARY
    )
    SHOTS.mkdir(exist_ok=True)
    screenshot(olga, SHOTS / "presence-tirar-por-quiet-360.png")
    ana.close()  # her phone leaves the card
    expect(button).to_have_css("background-color", PRIMARY, timeout=10000)
    screenshot(olga, SHOTS / "presence-tirar-por-primary-360.png")


def test_a_roll_refused_because_the_organizer_rolled_says_who(phones):
    ana = phones("ana", frozen=True)
    olga = phones("olga")
    olga.get_by_role("button", name="Tirar por Ana").click()
    expect(olga.locator("#roll-count")).to_contain_text("Tirada 1 de 3")
    faces = olga.locator("#turn button.die").all_inner_texts()
    # Ana's page still shows the turn before Olga's roll, and she taps «Tirar».
    expect(ana.locator("#roll-count")).to_contain_text("Aún no has tirado.")
    ana.get_by_role("button", name="Tirar", exact=True).click()
    # The name isolated, as every name in a message is (accounts.names.isolate_text).
    expect(ana.locator("#sheet-alert [role=alert]")).to_have_text(
        "Ha tirado \u2068Olga\u2069 por ti: mira tus dados."
    )
    # What she is shown is the dice Olga rolled, not a roll of her own.
    expect(ana.locator("#turn button.die")).to_have_text(faces)
    expect(ana.locator("#roll-count")).to_contain_text("Tirada 1 de 3")
    SHOTS.mkdir(exist_ok=True)
    screenshot(ana, SHOTS / "presence-roll-refused-360.png", full_page=True)
