"""«Pantalla del club» on a 1920 by 1080 TV, opened by a screen link: eight tables of six
fit without scrolling, a write on one card shows within a poll, and more than eight
tables turn pages by themselves."""

import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from scorecards.models import Screen
from scorecards.views import screen as screen_views
from tests.browsing import screenshot
from tests.factories import UserFactory, enter, make_scorecard, seat_of
from tests.test_stats import column, play

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).parent / "artifacts"

NAMES = [
    "Ana", "Berto", "Carla", "Maximiliano", "Concepción", "Dani", "Eva", "Fermín",
    "Gloria", "Héctor", "Inés", "Javier", "Lucía", "Manolo", "Nuria", "Óscar",
]  # fmt: skip
# Each table's boxes so far, one round a player: Unos to Cuatros, then Libre.
ROUNDS = [("ones", 3), ("twos", 6), ("threes", 9), ("fours", 12), ("chance", 23)]


@pytest.fixture
def tv_page(browser, server, monkeypatch):
    monkeypatch.setattr(screen_views, "PAGE_EVERY_MS", 2500)
    context = browser.new_context(viewport={"width": 1920, "height": 1080}, base_url=server)
    page = context.new_page()
    page.errors = []
    page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
    yield page
    context.close()


def table_in_play(players, rounds):
    """A card whose players have played `rounds` rounds, and the next one's first boxes."""
    card = make_scorecard(players[0], players)
    seats = list(card.seats.order_by("order"))
    for seat in seats:
        for box, value in ROUNDS[:rounds]:
            setattr(seat, box, value)
        seat.save()
    return card


def fits(page) -> dict:
    return page.evaluate(
        """() => ({
            height: document.documentElement.scrollHeight, inner: window.innerHeight,
            width: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
            bottom: Math.max(...[...document.querySelectorAll('.table:not([hidden]), .record')]
                .map((e) => e.getBoundingClientRect().bottom)),
        })"""
    )


def test_eight_tables_fit_a_tv_and_follow_a_write_and_more_turn_pages(tv_page):
    people = [UserFactory(username=f"login_{n.lower()}", display_name=n) for n in NAMES]
    cards = [table_in_play([people[(t * 2 + i) % 16] for i in range(6)], t % 5) for t in range(8)]
    # Tonight: three games, the last of them a club record.
    play(column(people[0]), column(people[1], chance=12))
    play(column(people[2]), column(people[3]))
    play(column(people[4]), column(people[5], bonuses=2, sixes=24))
    tv = Screen.objects.create(name="Tele del salón")

    tv_page.goto(f"/pantalla/{tv.token}/")
    tables = tv_page.locator(".table")
    expect(tables).to_have_count(8)
    for n in range(8):
        expect(tables.nth(n)).to_be_visible()
    size = fits(tv_page)
    assert size["height"] <= size["inner"], size
    assert size["width"] <= size["innerWidth"], size
    assert size["bottom"] <= 1080, size
    # Read from three metres: a player's line is at least 30 px high.
    name = tables.first.locator(".name").first
    assert name.bounding_box()["height"] >= 30
    assert "451 puntos" in tv_page.inner_text(".record")
    assert "Gana" in tv_page.inner_text(".results")
    assert "login_" not in tv_page.content()
    screenshot(tv_page, ARTIFACTS / "screen-1920-eight-tables.png")

    # A write on one card, through the services, as the organizer's phone makes it.
    card = cards[1]
    seat = card.seats.get(order=0)
    before = tables.nth(1).locator(".total").first.inner_text()
    started = time.monotonic()
    enter(card, seat_of(card, seat.player), card.organizer, fives=25)
    expect(tables.nth(1).locator(".total").first).to_have_text(str(int(before) + 25), timeout=6000)
    assert time.monotonic() - started < 5  # a poll every 3 s, and the board rendered once

    # Three more tables: eleven, eight on the first page, then the other three.
    for t in range(3):
        table_in_play([people[t], people[t + 8]], 1)
    expect(tables).to_have_count(11, timeout=6000)
    expect(tv_page.locator(".table:not([hidden])")).to_have_count(8)
    expect(tv_page.locator(".board-page")).to_have_text(" · Página 1 de 2")
    expect(tv_page.locator(".board-page")).to_have_text(" · Página 2 de 2", timeout=5000)
    expect(tv_page.locator(".table:not([hidden])")).to_have_count(3)
    size = fits(tv_page)
    assert size["height"] <= size["inner"], size
    screenshot(tv_page, ARTIFACTS / "screen-1920-page-two.png")
    assert tv_page.errors == []

    # Withdrawn, the link answers 404, and the screen, at its next poll, shows it.
    Screen.objects.filter(pk=tv.pk).update(active=False)
    expect(tv_page.locator(".board")).to_have_count(0, timeout=6000)
    assert tv_page.goto(f"/pantalla/{tv.token}/").status == 404
