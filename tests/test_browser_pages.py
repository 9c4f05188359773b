"""Every page in a real browser: no Content-Security-Policy violation, no console error."""

import pytest

from scorecards import services
from tests.browsing import log_in
from tests.factories import UserFactory, fill, finalized_games

pytestmark = pytest.mark.browser

# Runs before any page script and outside the page's CSP, so it sees every violation.
WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


@pytest.fixture
def world():
    organizer = UserFactory(username="olga", display_name="Olga", is_staff=True, is_superuser=True)
    ana = UserFactory(username="ana", display_name="Ana")
    ben = UserFactory(username="ben", display_name="Ben")
    playing = services.scorecard_create(organizer=organizer, players=[ana, ben])
    seat = playing.seats.get(player=ana)
    services.box_write(
        scorecard_id=playing.pk, seat_id=seat.pk, box="yahtzee", value="50", was="", author=ana
    )
    done = services.scorecard_create(organizer=organizer, players=[ana, ben])
    fill(done)
    services.scorecard_finalize(scorecard_id=done.pk)
    finalized_games([ana, ben], 6)
    return {"organizer": organizer, "ana": ana, "ben": ben, "playing": playing, "seat": seat}


def pages(world):
    playing, seat, ana = world["playing"], world["seat"], world["ana"]
    card = f"/tarjetas/{playing.pk}/"
    return {
        "olga": [
            "/",
            "/perfil/",
            "/contrasena/",
            "/contrasena/cambiada/",
            "/tarjetas/nueva/",
            f"/tarjetas/nueva/orden/?p={ana.pk}&p={world['ben'].pk}",
            f"/tarjetas/nueva/orden/?p={ana.pk}&p={world['ben'].pk}&t=20&t=20",
            card,
            f"{card}casilla/{seat.pk}/ones/",
            f"{card}casilla/{seat.pk}/chance/?dados=12345",
            f"{card}yahtzee-extra/{seat.pk}/?cara=3",
            f"{card}descartar/",
            "/historial/",
            "/historial/?desde=2026-13-01",
            f"/jugadores/{ana.pk}/",
            "/clasificacion/",
            "/admin/",
            "/admin/accounts/user/",
            "/admin/accounts/user/add/",
            f"/admin/accounts/user/{ana.pk}/change/",
            "/admin/scorecards/scorecard/",
            f"/admin/scorecards/scorecard/{playing.pk}/change/",
        ],
        "ana": [card, "/historial/", f"/jugadores/{ana.pk}/"],
    }


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_loads_without_csp_violations_or_console_errors(browser, server, world, scheme):
    problems = []
    for username, paths in pages(world).items():
        context = browser.new_context(
            viewport={"width": 390, "height": 844}, base_url=server, color_scheme=scheme
        )
        context.add_init_script(WATCH_CSP)
        page = context.new_page()
        errors = []
        page.on(
            "console", lambda msg, errors=errors: msg.type == "error" and errors.append(msg.text)
        )
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.goto("/entrar/")
        log_in(page, username)
        for path in paths:
            errors.clear()
            response = page.goto(path)
            page.wait_for_load_state("networkidle")
            violations = page.evaluate("window.__csp")
            if response.status != 200 or errors or violations:
                problems.append((username, path, response.status, errors[:], violations))
        context.close()
    assert problems == []


def test_the_log_in_page_is_clean_for_a_visitor(browser, server):
    context = browser.new_context(base_url=server)
    context.add_init_script(WATCH_CSP)
    page = context.new_page()
    errors = []
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    page.goto("/entrar/")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__csp") == []
    assert errors == []
    context.close()
