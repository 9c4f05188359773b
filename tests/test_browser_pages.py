"""Every page in a real browser: no CSP violation, no console error, no serious a11y issue."""

import random
from pathlib import Path

import pytest

from scorecards import services, turns
from scorecards.dice import who_starts
from scorecards.forms import order_query
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, fill, finalized_games
from tests.po import spanish_phrases

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = Path(__file__).resolve().parent / "artifacts"
SPANISH = spanish_phrases()
VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}

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
        scorecard_id=playing.pk,
        seat_id=seat.pk,
        box="yahtzee",
        value="50",
        was="",
        author=organizer,
    )
    done = services.scorecard_create(organizer=organizer, players=[ana, ben])
    fill(done)
    services.scorecard_finalize(scorecard_id=done.pk, author=done.organizer)
    finalized_games([ana, ben], 6)
    digital = services.scorecard_create(organizer=organizer, players=[ana, ben], mode="digital")
    digital = turns.turn_roll(
        scorecard_id=digital.pk, author=ana, version=digital.version, shown="", keep=[]
    ).scorecard
    # Two dice held, the others rolled again: the dice and the free boxes show.
    turns.turn_roll(
        scorecard_id=digital.pk,
        author=ana,
        version=digital.version,
        shown=digital.turn_rolls[-1][0],
        keep=["1", "2"],
    )
    return {
        "organizer": organizer,
        "ana": ana,
        "ben": ben,
        "playing": playing,
        "seat": seat,
        "done": done,
        "digital": digital,
        "digital_done": play_through(organizer, [ana, ben]),
    }


def play_through(organizer, players):
    """A whole digital game, every turn one roll and its first free box: finalized."""
    from scorecards import rules

    card = services.scorecard_create(organizer=organizer, players=players, mode="digital")
    while not card.is_finalized:
        card = turns.turn_roll(
            scorecard_id=card.pk, author=organizer, version=card.version, shown="", keep=[]
        ).scorecard
        seat = card.seats.order_by("order")[rules.turn(s.filled for s in card.seats.all())[1]]
        faces = [int(face) for face in card.turn_rolls[-1][0]]
        box = next(iter(rules.choices(faces, seat.scores)))
        card = turns.turn_score(
            scorecard_id=card.pk, author=organizer, version=card.version, box=box
        ).scorecard
    return card


def pages(world):
    playing, seat, ana = world["playing"], world["seat"], world["ana"]
    card = f"/tarjetas/{playing.pk}/"
    ids = [ana.pk, world["ben"].pk]
    # «¿Quién empieza?» decided by the app's dice, each player's shown.
    rolled = order_query(ids, "digital", rolled=who_starts(ids, rng=random.Random(5)))
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
            f"{card}casilla/{seat.pk}/yahtzee_bonuses/",
            f"{card}yahtzee-extra/{seat.pk}/?cara=3",
            f"{card}finalizar/",
            f"{card}descartar/",
            f"/tarjetas/{world['done'].pk}/",
            "/tarjetas/nueva/?modo=digital",
            f"/tarjetas/nueva/orden/?p={ana.pk}&p={world['ben'].pk}&modo=digital",
            f"/tarjetas/nueva/orden/?p={ana.pk}&p={world['ben'].pk}&modo=digital&s=12,12&s=20,9",
            f"/tarjetas/nueva/orden/?{rolled}",
            f"/tarjetas/{world['digital'].pk}/",
            f"/tarjetas/{world['digital_done'].pk}/",
            "/historial/",
            "/historial/?desde=2026-13-01",
            f"/jugadores/{ana.pk}/",
            "/clasificacion/",
            "/clasificacion/?modalidad=digital&periodo=mes&hasta=2026-13-01",
            "/admin/",
            "/admin/accounts/user/",
            "/admin/accounts/user/add/",
            "/admin/accounts/user/importar/",
            f"/admin/accounts/user/{ana.pk}/change/",
            f"/admin/accounts/user/{ana.pk}/contrasena-temporal/",
            "/admin/scorecards/scorecard/",
            f"/admin/scorecards/scorecard/{playing.pk}/change/",
        ],
        # Error pages too: a card that does not exist, a box only the organizer may write.
        "ana": [
            card,
            f"/tarjetas/{world['digital'].pk}/",
            f"/tarjetas/{world['digital_done'].pk}/",
            f"/tarjetas/{world['done'].pk}/",
            "/historial/",
            f"/jugadores/{ana.pk}/",
            ("/tarjetas/999999/", 404),
            (f"{card}casilla/{seat.pk}/ones/", 403),
        ],
        # Watching a digital turn: the dice, read-only.
        "ben": [f"/tarjetas/{world['digital'].pk}/"],
    }


def serious_violations(page):
    """axe-core's serious and critical findings on the current page."""
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]


# Every pair of scheme, size and language meets in one of four rounds of every page, rather
# than all eight triples: only a fault that needs all three at once could slip by, and each
# round costs the test loop 20 s.
ROUNDS = [
    ("light", "phone", "es"),
    ("dark", "phone", "en"),
    ("light", "desktop", "en"),
    ("dark", "desktop", "es"),
]


@pytest.mark.parametrize(("scheme", "viewport", "language"), ROUNDS)
def test_every_page_is_clean_and_accessible(browser, server, world, scheme, viewport, language):
    if not AXE.exists():
        pytest.fail("axe-core is missing: run `make test` (it runs npm ci)")
    problems = []
    for username, paths in pages(world).items():
        context = browser.new_context(
            viewport=VIEWPORTS[viewport], base_url=server, color_scheme=scheme
        )
        context.add_init_script(WATCH_CSP)
        context.add_init_script(path=str(AXE))
        context.add_cookies([{"name": "django_language", "value": language, "url": server}])
        page = context.new_page()
        errors = []
        page.on(
            "console", lambda msg, errors=errors: msg.type == "error" and errors.append(msg.text)
        )
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.goto("/entrar/")
        log_in(page, username)
        for path in paths:
            path, status = path if isinstance(path, tuple) else (path, 200)
            errors.clear()
            response = page.goto(path)
            # The browser reports an error status in the console; the page itself is checked.
            loaded = f"Failed to load resource: the server responded with a status of {status}"
            errors[:] = [e for e in errors if status == 200 or not e.startswith(loaded)]
            violations = page.evaluate("window.__csp")
            a11y = serious_violations(page)
            untranslated = []
            if language == "en":
                text = page.inner_text("body")
                untranslated = [phrase for phrase in SPANISH if phrase in text]
            # On a phone only the card's table may scroll sideways, inside its own box.
            sideways = (
                viewport == "phone"
                and not path.startswith("/admin/")
                and page.evaluate(
                    "document.documentElement.scrollWidth > document.documentElement.clientWidth"
                )
            )
            if (
                response.status != status
                or errors
                or violations
                or a11y
                or untranslated
                or sideways
            ):
                problems.append(
                    (username, path, response.status, errors[:], violations, a11y, untranslated)
                    + (("scrolls sideways",) if sideways else ())
                )
            if viewport == "phone" and username == "olga":
                SHOTS.mkdir(exist_ok=True)
                name = path.strip("/").replace("/", "_").split("?")[0] or "inicio"
                screenshot(page, SHOTS / f"{language}-{scheme}-{name}.png", full_page=True)
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
