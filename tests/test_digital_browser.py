"""A whole digital game in a real browser: two players, each on their own 360 px phone,
the server's dice scripted. Ana creates the card and the app's dice say she starts; then
each plays their own turns while the other's phone follows them live: a hold, an extra
Yahtzee with the joker order, scratched boxes, and the last box that ends the game."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from scorecards.models import Roll, Scorecard
from tests.browsing import log_in, screenshot
from tests.dice import Scripted

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
TAP = 44

# Each player's turns in order: the box, what it scores, and the dice of each roll (one
# roll a turn but for Ana's first, played by hand in the test).
ANA = [
    ("twos", 8, None),
    ("yahtzee", 50, ["55555"]),
    ("fours", 20, ["44444"]),  # an extra Yahtzee: the joker order offers only Cuatros
    ("ones", 3, ["11123"]),
    ("threes", 9, ["33312"]),
    ("fives", 15, ["55523"]),
    ("sixes", 18, ["66612"]),
    ("three_of_a_kind", 27, ["66654"]),
    ("small_straight", 30, ["12346"]),
    ("four_of_a_kind", 0, ["12346"]),  # scratched
    ("full_house", 25, ["33222"]),
    ("large_straight", 40, ["23456"]),
    ("chance", 26, ["66554"]),
]
BEN = [
    ("ones", 2, ["11234"]),
    ("twos", 4, ["22134"]),
    ("threes", 6, ["33124"]),
    ("fours", 8, ["44123"]),
    ("fives", 10, ["55123"]),
    ("sixes", 12, ["66123"]),
    ("three_of_a_kind", 12, ["33312"]),
    ("four_of_a_kind", 9, ["22221"]),
    ("full_house", 0, ["12346"]),  # scratched
    ("small_straight", 30, ["12341"]),
    ("large_straight", 40, ["12345"]),
    ("yahtzee", 0, ["12346"]),  # scratched
    ("chance", 16, ["12346"]),
]
# Ana: 73 above and its 35, 198 below, and the extra Yahtzee's 100. Ben: 42 and 107.
ANA_TOTAL, BEN_TOTAL = 406, 149


@pytest.fixture
def phone(browser, server):
    """A phone of its own for a player, logged in; closed (and its polling stopped) after
    the test, before the live server goes."""
    contexts = []

    def open_phone(username):
        context = browser.new_context(
            viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
        )
        contexts.append(context)
        page = context.new_page()
        errors = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.errors = errors
        log_in(page, username)
        return page

    yield open_phone
    for context in contexts:
        context.close()


def _shot(page, name, **options):
    screenshot(page, ARTIFACTS / name, **options)


def _fits_a_phone(page):
    """Nothing overflows sideways, the dice are big and in one row, and what a thumb taps
    is at least 44 px."""
    sizes = page.evaluate(
        """() => {
        const box = e => { const r = e.getBoundingClientRect();
                           return {x: r.x, y: r.y, w: r.width, h: r.height}; };
        // What this phone shows (the sheet holds the others' parts too, hidden).
        const all = s => [...document.querySelectorAll(s)]
            .filter(e => e.getClientRects().length).map(box);
        return {page: document.documentElement.scrollWidth,
                viewport: document.documentElement.clientWidth,
                dice: all('#turn .die'),
                taps: all('#turn button:not(.die), #turn .choices label')};
    }"""
    )
    assert sizes["page"] <= sizes["viewport"], sizes
    dice = sizes["dice"]
    assert len(dice) == 5
    assert len({round(d["y"]) for d in dice}) == 1, dice  # one row
    assert min(min(d["w"], d["h"]) for d in dice) >= TAP, dice
    assert max(d["x"] + d["w"] for d in dice) <= sizes["viewport"], dice
    assert all(t["h"] >= TAP for t in sizes["taps"]), sizes["taps"]


def _title(page, text):
    expect(page.locator("#turn-title")).to_have_text(text, use_inner_text=True)


def _roll(page, number, faces, queued, *, keyboard=False):
    """Tap «Tirar» with the server's next dice queued, and see them."""
    Scripted.faces[:] = queued
    if keyboard:
        page.get_by_role("button", name="Tirar").press("Enter")
    else:
        page.get_by_role("button", name="Tirar").click()
    expect(page.locator("#roll-count")).to_contain_text(f"Tirada {number} de 3")
    expect(page.locator("#turn button.die")).to_have_text(list(faces))
    assert Scripted.faces == []


def _choice(page, box):
    return page.locator(f'#turn .choices li:has(input[value="{box}"])')


def _score(page, box, points):
    """See what the box scores beside it, tap it and «Anotar»."""
    choice = _choice(page, box)
    expect(choice.locator(".choice-score")).to_have_text(str(points))
    if points == 0:
        # A box the dice only scratch is folded apart, under a summary that says so.
        scratches = page.locator("#turn .scratch-choices")
        expect(scratches.locator("summary")).to_have_text("Tachar una casilla (0 puntos)")
        if scratches.get_attribute("open") is None:
            expect(choice).to_be_hidden()
            scratches.locator("summary").click()
        expect(choice).to_be_visible()
    choice.locator("label").click()
    assert choice.locator("input").is_checked()
    page.get_by_role("button", name="Anotar").click()


def _boxes_clear_of_the_bar(page):
    """The boxes the dice score in first, those they only scratch folded apart; opened, a
    keyboard goes through every box, and none of them is ever under «Anotar»'s sticky bar,
    which stays in sight."""
    scoring = page.locator("#turn .score-form fieldset > .choices input")
    expect(scoring.first).to_be_visible()
    assert all(int(score) > 0 for score in scoring.locator("xpath=../strong").all_inner_texts())
    scratches = page.locator("#turn .scratch-choices")
    expect(scratches.locator(".choices")).to_be_hidden()
    _shot(page, "digital-boxes-360.png")
    scratches.locator("summary").click()
    radios = page.locator("#turn .score-form input[type=radio]")
    radios.first.focus()
    for step in range(radios.count()):
        if step:
            page.keyboard.press("ArrowDown")
        spot = page.evaluate(
            """() => {
            const label = document.activeElement.closest('label').getBoundingClientRect();
            const bar = document.querySelector('#turn .score-bar').getBoundingClientRect();
            const hit = document.elementFromPoint(label.x + 8, label.y + label.height / 2);
            return {top: label.top, bottom: label.bottom, bar: bar.top, barEnd: bar.bottom,
                    height: window.innerHeight, hit: !!hit && hit.closest('label') !== null};
        }"""
        )
        assert spot["top"] >= 0, (step, spot)
        assert spot["bottom"] <= spot["bar"], (step, spot)
        assert spot["barEnd"] <= spot["height"], (step, spot)
        assert spot["hit"], (step, spot)
    expect(radios.last).to_be_focused()
    expect(page.get_by_role("button", name="Anotar")).to_be_in_viewport()
    _shot(page, "digital-boxes-open-360.png")


def _first_turn_with_a_hold(ana, ben):
    """Ana rolls three times, holding her two 2s; Ben's phone follows the dice."""
    _roll(ana, 1, "22513", [2, 2, 5, 1, 3])
    assert ana.locator("#turn button.die[aria-pressed=false]").count() == 5
    expect(ana.get_by_role("button", name="Dado 1: 2", exact=True)).to_be_visible()
    for position in (1, 2):
        ana.get_by_role("button", name=f"Dado {position}: 2", exact=True).click()
    for position in (1, 2):
        held = ana.get_by_role("button", name=f"Dado {position}: 2, guardado", exact=True)
        expect(held).to_have_attribute("aria-pressed", "true")
    assert ana.locator("#turn button.die[aria-pressed=false]").count() == 3
    # Ben's phone shows them held before Ana rolls again (here by its poll, every 2 s).
    for position in (1, 2):
        held = ben.get_by_role("img", name=f"Dado {position}: 2, guardado", exact=True)
        expect(held).to_be_visible(timeout=4000)
    _fits_a_phone(ana)
    # Thirteen boxes outgrow the screen, but «Anotar» is in reach without scrolling.
    assert ana.locator("#turn .choices li").count() == 13
    assert ana.get_by_role("button", name="Anotar").bounding_box()["y"] + TAP <= 740
    _shot(ana, "digital-held-360.png")
    ana.emulate_media(color_scheme="dark")
    _shot(ana, "digital-held-360-dark.png")
    ana.emulate_media(color_scheme="light")
    # The smallest phones still in use are 320 px wide: the dice shrink to fit, still a tap.
    ana.set_viewport_size({"width": 320, "height": 568})
    _fits_a_phone(ana)
    # The header's links have a row of their own, under the account's menu: nothing
    # overlaps (tests/test_header_ui.py measures every link).
    links_end = ana.locator(".site-nav a").last.bounding_box()
    menu = ana.locator(".site-user summary").bounding_box()
    assert menu["y"] + menu["height"] <= links_end["y"]
    _shot(ana, "digital-held-320.png")
    ana.set_viewport_size({"width": 360, "height": 740})
    _boxes_clear_of_the_bar(ana)

    # Ben watches, and his phone has no «Tirar»: it follows Ana's dice without reloading.
    ben.evaluate("() => { window.sameDocument = true; }")
    _roll(ana, 2, "22264", [2, 6, 4], keyboard=True)
    # The answer replaced the turn: the focus is still on «Tirar», not lost to the page.
    expect(ana.get_by_role("button", name="Tirar")).to_be_focused()
    # The held dice kept their faces and stay held for the next roll.
    for position in (1, 2):
        held = ana.get_by_role("button", name=f"Dado {position}: 2, guardado", exact=True)
        expect(held).to_have_attribute("aria-pressed", "true")
    for position, face in ((3, 2), (4, 6), (5, 4)):
        expect(
            ana.get_by_role("button", name=f"Dado {position}: {face}", exact=True)
        ).to_be_visible()
    expect(ben.get_by_role("img", name="Dado 1: 2, guardado", exact=True)).to_be_visible()
    for position, face in ((2, "2, guardado"), (3, 2), (4, 6), (5, 4)):
        expect(ben.get_by_role("img", name=f"Dado {position}: {face}", exact=True)).to_be_visible()
    assert ben.evaluate("() => window.sameDocument") is True
    # A screen reader on either phone hears the new dice once, from outside the swap.
    expect(ben.locator("#turn-status")).to_have_text("Tirada 2 de 3: 2 2 2 6 4")
    expect(ana.locator("#turn-status")).to_have_text("Tirada 2 de 3: 2 2 2 6 4")
    assert ben.get_by_role("button", name="Tirar").count() == 0
    assert ben.locator("#turn form:visible").count() == 0
    _shot(ben, "digital-watching-360.png")

    _roll(ana, 3, "22262", [2, 6, 2])
    expect(ana.locator("#roll-count")).to_have_text("Tirada 3 de 3")
    # No rolls left: no «Tirar», and the dice can no longer be held or released.
    assert ana.get_by_role("button", name="Tirar").count() == 0
    assert ana.locator("#turn button.die:disabled").count() == 5
    # «Tirar» went with the last roll: the focus moved to the boxes, not to the page.
    expect(ana.locator("#turn .score-form input[type=radio]").first).to_be_focused()
    _fits_a_phone(ana)


def _turn(page, number, box, points, rolls):
    """One player's ordinary turn on their phone: roll, see the boxes, score one."""
    _title(page, f"Ronda {number} de 13 · te toca a ti")
    for n, faces in enumerate(rolls, start=1):
        _roll(page, n, faces, [int(face) for face in faces])
    _score(page, box, points)


def _joker_turn(ana, ben):
    """Ana's second five of a kind, her 50 in Yahtzee already written."""
    _title(ana, "Ronda 3 de 13 · te toca a ti")
    _roll(ana, 1, "44444", [4, 4, 4, 4, 4])
    expect(ana.locator("#turn .message")).to_have_text(
        "¡Yahtzee adicional! +100 de bonus, y el comodín solo permite estas casillas."
    )
    # The joker order: her Cuatros is free, so it is the only box offered.
    offered = ana.locator("#turn .choices input").evaluate_all("es => es.map(e => e.value)")
    assert offered == ["fours"]
    _fits_a_phone(ana)
    _shot(ana, "digital-joker-360.png")
    _score(ana, "fours", 20)
    expect(ana.locator("#row-yahtzee_bonuses td").first).to_have_text("100")
    expect(ana.locator("#recent-changes li").first).to_contain_text(
        "Ana anotó un Yahtzee adicional de Ana: 20 en Cuatros (+100 de bonus)"
    )
    expect(ben.locator("#row-yahtzee_bonuses td").first).to_have_text("100")
    expect(ben.locator("#row-yahtzee_bonuses td").nth(1)).to_have_text("0")


def test_two_phones_play_a_whole_digital_game(phone, ana, ben, scripted):
    ana_page = phone("ana")
    # Ana organizes a game with the app's dice for her and Ben; the dice say who starts.
    ana_page.get_by_role("link", name="Tarjeta de puntos").first.click()
    ana_page.get_by_label("Con dados virtuales").check()
    ana_page.get_by_label("Ana", exact=True).check()
    ana_page.get_by_label("Ben", exact=True).check()
    ana_page.get_by_role("button", name="Continuar: orden en la mesa").click()
    scripted[:] = [6, 6, 5, 6, 6, 1, 2, 3, 1, 2]  # Ana 29, Ben 9
    ana_page.get_by_role("button", name="Tirar los dados para decidirlo").click()
    expect(ana_page.get_by_role("status")).to_have_text(
        "Empieza Ana y el turno sigue alrededor de la mesa."
    )
    # The dice each rolled, beside their sum, read out one by one.
    rolled = ana_page.locator(".who-rolled li")
    expect(rolled).to_have_text(["Ana: 6 6 5 6 6, suma 29", "Ben: 1 2 3 1 2, suma 9"])
    expect(ana_page.locator(".who-rolled .rolled")).to_match_aria_snapshot(
        '- list:\n  - listitem:\n    - strong: "Ana: 6 6 5 6 6, suma 29"\n'
        '  - listitem: "Ben: 1 2 3 1 2, suma 9"'
    )
    expect(rolled.first.locator(".mini-die")).to_have_count(5)
    assert ana_page.evaluate(
        "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )
    _shot(ana_page, "digital-who-starts-360.png")
    assert scripted == []
    ana_page.get_by_role("button", name="Crear tarjeta").click()
    ana_page.wait_for_url(re.compile(r"/tarjetas/\d+/$"))
    card = Scorecard.objects.get()
    assert card.mode == Scorecard.DIGITAL
    assert [seat.player for seat in card.seats.all()] == [ana, ben]
    expect(ana_page.locator("#sheet .hint .badge")).to_have_text("digital")
    expect(ana_page.locator("#roll-count")).to_have_text("Aún no has tirado.", use_inner_text=True)

    # Ben, on his own phone, finds the card on his home page.
    ben_page = phone("ben")
    ben_page.get_by_role("region", name="En juego").get_by_role("link").click()
    ben_page.wait_for_url(f"**/tarjetas/{card.pk}/")
    _title(ben_page, "Ronda 1 de 13 · Turno de Ana")
    assert ben_page.get_by_role("button", name="Tirar").count() == 0

    _title(ana_page, "Ronda 1 de 13 · te toca a ti")
    _first_turn_with_a_hold(ana_page, ben_page)
    _score(ana_page, "twos", 8)
    _title(ana_page, "Ronda 1 de 13 · Turno de Ben")
    # Ben's phone says the turn passed to him, though nobody has rolled yet.
    expect(ben_page.locator("#turn-status")).to_have_text("Ronda 1 de 13 · te toca a ti")
    # Ana organizes: she may play Ben's turn from her phone, and her button says so.
    expect(ana_page.get_by_role("button", name="Tirar por Ben")).to_be_visible()
    for number, (a, b) in enumerate(zip(ANA, BEN, strict=True), start=1):
        if number == 3:
            _joker_turn(ana_page, ben_page)
        elif number > 1:
            _turn(ana_page, number, *a)
        _turn(ben_page, number, *b)
    # The 26th box ended the game: Ben's phone was sent to the finished card.
    expect(ben_page.get_by_text("Partida terminada. Ya está en el historial.")).to_be_visible()

    card.refresh_from_db()
    assert card.is_finalized
    assert [seat.total for seat in card.seats.all()] == [ANA_TOTAL, BEN_TOTAL]
    # Every roll is kept with its turn: Ana's first turn had three, holding dice 1 and 2.
    assert Roll.objects.filter(scorecard=card).count() == 28
    first = Roll.objects.filter(scorecard=card, round=1, seat__player=ana).order_by("number")
    assert [(r.dice, r.kept) for r in first] == [("22513", ""), ("22264", "12"), ("22262", "12")]

    # Ana's phone was following: its poll brings the finished card, and says who won.
    expect(ana_page.locator("#turn-status")).to_have_text(f"Gana Ana con {ANA_TOTAL}")
    for name, page in (("ana", ana_page), ("ben", ben_page)):
        expect(page.locator(".result")).to_have_text(f"Gana Ana con {ANA_TOTAL}")
        expect(page.locator("#sheet .hint .badge")).to_have_text("digital")
        assert page.locator("#turn, #sheet-poll").count() == 0
        expect(page.locator("#row-yahtzee_bonuses td").first).to_have_text("100")
        page.locator(".changes summary").click()
        log = page.locator(".changes details li")
        expect(log.first).to_contain_text("Tiradas:")
        expect(log.filter(has_text="guarda 2 2 → 2 2 2 6 4")).to_have_count(1)
        assert page.evaluate(
            "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        _shot(page, f"digital-finished-{name}-360.png", full_page=True)

        # Both histories list the game, with its mode.
        page.goto("/historial/")
        game = page.locator(f'a.game-link[href="/tarjetas/{card.pk}/"]')
        expect(game.locator(".badge").first).to_have_text("digital")
        assert page.errors == []
