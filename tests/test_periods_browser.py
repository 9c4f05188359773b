"""«Clasificación» by period on a 360 px phone: «Este mes» is chosen with a tap, the address
keeps it, the mode links keep it, and every filter control fits the screen."""

from datetime import datetime, time, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, finalized_games

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"

# Every control of the statistics' filters, each a tap target.
CONTROLS = ".mode-filter a, .period-filter a, .period-dates input, .period-dates button"


def unranked_games(page) -> list[str]:
    return page.locator(".game-list li").all_inner_texts()


def test_this_month_is_chosen_on_a_phone_and_kept_in_the_address(server, browser):
    UserFactory(username="miron", display_name="Mirón")
    ana = UserFactory(username="ana", display_name="Ana")
    ben = UserFactory(username="ben", display_name="Ben")
    first_of_month = timezone.localdate().replace(day=1)
    # One game this month and two in the last days of the month before.
    finalized_games([ana, ben], 1, start=timezone.now())
    before = timezone.make_aware(datetime.combine(first_of_month - timedelta(days=3), time(12)))
    finalized_games([ana, ben], 2, start=before)
    context = browser.new_context(viewport={"width": 360, "height": 740}, base_url=server)
    page = context.new_page()
    log_in(page, "miron")
    page.goto("/clasificacion/")
    assert unranked_games(page)[0].startswith("Ben · 3 partidas")

    page.get_by_role("link", name="Este mes").click()
    page.wait_for_url("**/clasificacion/?periodo=mes")
    assert page.get_by_role("link", name="Este mes").get_attribute("aria-current") == "page"
    assert unranked_games(page)[0].startswith("Ben · 1 partida,")
    day = f"{first_of_month.day}/{first_of_month.month}/{first_of_month.year}"
    assert page.get_by_text(f"Solo partidas finalizadas desde el {day}.").is_visible()
    screenshot(page, ARTIFACTS / "ranking-this-month-360.png", full_page=True)

    # Nothing of the filters wider than the phone, nor any control beyond its edges or
    # under a tap's height.
    sizes = page.evaluate(
        """(selector) => ({
            page: document.documentElement.scrollWidth,
            boxes: [...document.querySelectorAll(selector)].map((e) => {
                const r = e.getBoundingClientRect();
                return [e.textContent.trim() || e.name, r.left, r.right, r.height];
            }),
        })""",
        CONTROLS,
    )
    assert sizes["page"] <= 360
    # Each filter's three links in one row.
    for nav in (".mode-filter", ".period-filter"):
        tops = page.locator(f"{nav} a").evaluate_all("as => as.map(a => a.offsetTop)")
        assert len(set(tops)) == 1, nav
    assert len(sizes["boxes"]) == 9
    for name, left, right, height in sizes["boxes"]:
        assert left >= 0, name
        assert right <= 360, name
        assert height >= 44, name

    # The mode keeps the period, and the period links keep the mode.
    page.get_by_role("link", name="Digital").click()
    page.wait_for_url("**/clasificacion/?modalidad=digital&periodo=mes")
    assert page.get_by_text("Nadie tiene 5 partidas finalizadas en ese periodo.").is_visible()
    page.get_by_role("link", name="Siempre").click()
    page.wait_for_url("**/clasificacion/?modalidad=digital")

    # A bad pair of dates, sent from the phone's form: said, and every date shown.
    page.goto("/clasificacion/?desde=2026-05-02&hasta=2026-05-01")
    alert = page.get_by_role("alert").inner_text()
    assert "«Desde» no puede ser posterior a «Hasta». Se muestran todas las fechas." in alert
    assert unranked_games(page)[0].startswith("Ben · 3 partidas")
    screenshot(page, ARTIFACTS / "ranking-bad-dates-360.png", full_page=True)

    # The player's page has the same filters, and the same fit.
    page.get_by_role("link", name="Ana").click()
    page.get_by_role("link", name="Este año").click()
    page.wait_for_url(f"**/jugadores/{ana.pk}/?periodo=anio")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    screenshot(page, ARTIFACTS / "player-this-year-360.png", full_page=True)
    context.close()
