"""«Récords», a player's personal bests and a game's record message on a 360 px phone."""

from pathlib import Path

import pytest

from tests.browsing import log_in, screenshot
from tests.factories import UserFactory
from tests.test_stats import column, play

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture
def phone(browser, server):
    context = browser.new_context(viewport={"width": 360, "height": 740}, base_url=server)
    page = context.new_page()
    yield page
    context.close()


def _width(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth")


def test_records_fit_a_phone_with_their_holders_and_games(phone):
    ana, ben = (UserFactory(username=n.lower(), display_name=n) for n in ("Ana", "Ben"))
    big = {"bonuses": 2, "sixes": 24}
    games = [
        play(column(ana), column(ben, chance=12)),
        play(column(ana, **big), column(ben, ones=0)),
        play(column(ana), column(ben, **big)),
    ]
    in_play = play(column(ana, bonuses=3, sixes=24, fives=25), column(ben), finalize=False)
    log_in(phone, "ana")
    phone.goto("/records/")
    best = phone.locator("#record-best_game")
    assert "451 puntos" in best.inner_text()
    # The tie names both, each with the game's date as a link to it.
    holders = best.locator(".holders li")
    assert holders.count() == 2
    assert "Ana" in holders.nth(0).inner_text()
    assert "Ben" in holders.nth(1).inner_text()
    for link in best.locator(".holders a").all():
        assert link.bounding_box()["height"] >= 44
    assert "Antes: 245 puntos" in best.inner_text()
    assert _width(phone) <= 360
    screenshot(phone, ARTIFACTS / "records-360.png", full_page=True)

    phone.goto(f"/tarjetas/{games[1].pk}/")
    said = phone.locator(".records-set")
    assert said.is_visible()
    assert "¡Récord del club: 451, el mejor de la historia!" in said.inner_text()
    assert _width(phone) <= 360
    screenshot(phone, ARTIFACTS / "records-360-game.png")

    phone.goto(f"/tarjetas/{in_play.pk}/finalizar/")
    assert "¡Récord del club: 561, el mejor de la historia!" in phone.inner_text(".records-set")
    screenshot(phone, ARTIFACTS / "records-360-finalize.png", full_page=True)

    phone.goto(f"/jugadores/{ana.pk}/")
    assert "Mejor racha de victorias" in phone.inner_text(".stats")
    assert _width(phone) <= 360
    best = phone.get_by_role("link", name="451")
    assert best.bounding_box()["height"] >= 44
    screenshot(phone, ARTIFACTS / "records-360-player.png", full_page=True)
