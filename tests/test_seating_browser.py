"""«Orden en la mesa» on a 360 px phone (issue 58, item 5): the organizer taps the players in
the order they sit, one page load in all; without JavaScript the ↑/↓ links still work."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from scorecards.models import Scorecard
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).parent / "artifacts"
NAMES = ["Ana", "Berto", "Carla", "Dani", "Elena", "Fermín"]


@pytest.fixture
def club(db):
    UserFactory(username="olga", display_name="Olga")
    return [UserFactory(username=name.lower(), display_name=name) for name in NAMES]


@pytest.fixture
def order_page(server, browser):
    """The organizer's «Orden en la mesa» for these players on a 360 px phone."""
    contexts = []

    def open_page(players, *, javascript=True, query=""):
        context = browser.new_context(
            viewport={"width": 360, "height": 740},
            base_url=server,
            locale="es-ES",
            java_script_enabled=javascript,
        )
        contexts.append(context)
        page = context.new_page()
        log_in(page, "olga")
        ids = "&".join(f"p={p.pk}" for p in players)
        page.goto(f"/tarjetas/nueva/orden/?{ids}{query}")
        return page

    yield open_page
    for context in contexts:
        context.close()


def seating(page) -> list[str]:
    """The players as the page lists them, in order."""
    return [
        re.sub(r"^\d+\.\s*", "", text)
        for text in page.locator(".seating .seat-name").all_text_contents()
    ]


def created(page):
    page.get_by_role("button", name="Crear tarjeta").click()
    page.wait_for_url(re.compile(r"/tarjetas/\d+/$"))
    card = Scorecard.objects.get(pk=int(page.url.rstrip("/").split("/")[-1]))
    return [seat.player.name for seat in card.seats.order_by("order")]


@pytest.mark.parametrize("query", ["", "&modo=digital"], ids=["physical", "digital"])
def test_six_players_are_seated_in_six_taps_or_fewer(order_page, club, query):
    page = order_page(club, query=query)
    loads = []
    page.on("framenavigated", lambda frame: loads.append(frame.url))
    expect(page.locator("#seat-taps-hint")).to_be_visible()
    wanted = ["Fermín", "Carla", "Ana", "Elena", "Berto", "Dani"]
    # A tap taken back (a mistake): tapped again, its number goes.
    page.get_by_role("button", name="Berto", exact=True).click()
    expect(page.get_by_role("button", name="1 Berto")).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="1 Berto").click()
    expect(page.get_by_role("button", name="Berto", exact=True)).to_have_attribute(
        "aria-pressed", "false"
    )
    assert loads == []
    # Five taps: the sixth player sits in the seat left.
    for n, name in enumerate(wanted[:-1], start=1):
        if n == 4:
            SHOTS.mkdir(exist_ok=True)
            screenshot(page, SHOTS / "seating-tapping-360.png")
        page.get_by_role("button", name=name, exact=True).click()
        if n < 5:
            expect(page.get_by_role("button", name=f"{n} {name}")).to_be_visible()
    page.wait_for_load_state()
    expect(page.locator(".seating .seat-tap").first).to_contain_text("Fermín")
    assert len(loads) == 1, loads  # one page load for the whole seating
    names = page.locator(".seating .seat-tap").all_text_contents()
    assert [n.strip() for n in names] == wanted
    screenshot(page, SHOTS / f"seating-done-360-{'digital' if query else 'physical'}.png")
    assert created(page) == wanted


def test_without_javascript_the_arrows_still_seat_them(order_page, club):
    page = order_page(club[:3], javascript=False)
    expect(page.locator(".seating .seat-tap").first).to_be_hidden()
    assert seating(page) == ["Ana", "Berto", "Carla"]
    page.get_by_role("link", name=re.compile("^Bajar a .?Ana.?$")).click()
    assert seating(page) == ["Berto", "Ana", "Carla"]
    page.get_by_role("link", name=re.compile("^Subir a .?Carla.?$")).click()
    assert seating(page) == ["Berto", "Carla", "Ana"]
    SHOTS.mkdir(exist_ok=True)
    screenshot(page, SHOTS / "seating-no-js-360.png")
    assert created(page) == ["Berto", "Carla", "Ana"]
