"""One card for every phone, at 360 px, served by uvicorn as in production: the organizer, a
player who only watches and the turn's player get the same sheet, and each page shows its
viewer their own controls and no one else's, with JavaScript and without. The organizer's
picker opens from the page, with no request."""

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browsing import log_in, screenshot
from tests.test_browser_pages import AXE, serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.server]
ARTIFACTS = Path(__file__).parent / "artifacts"  # each phone's screen, to look at

SEED = """
import json, sys
from accounts.models import User
from scorecards.services import scorecard_create

def user(name):
    return User.objects.create_user(name, password=sys.argv[1], display_name=name.title())

olga, ana, ben = (user(n) for n in ("olga", "ana", "ben"))
physical = scorecard_create(organizer=olga, players=[ana, ben])
digital = scorecard_create(organizer=olga, players=[ana, ben], mode="digital")
print(json.dumps({"physical": physical.pk, "digital": digital.pk}))
"""


@pytest.fixture
def phones(browser, site):
    """Opens a card on a phone of its own: 360 px, with JavaScript or without."""
    server, cards = site
    contexts = []

    def open_phone(username, card, *, javascript=True):
        context = browser.new_context(
            viewport={"width": 360, "height": 740},
            base_url=server.base,
            java_script_enabled=javascript,
        )
        if javascript and AXE.exists():
            context.add_init_script(path=str(AXE))
        contexts.append(context)
        page = context.new_page()
        page.asked = []  # (method, path) of every request the page made
        page.on("request", lambda r: page.asked.append((r.method, r.url.split(server.base)[1])))
        log_in(page, username)
        page.goto(f"/tarjetas/{cards[card]}/")
        page.card = cards[card]
        return page

    yield open_phone
    for context in contexts:
        context.close()


def cell_links(page):
    """The box links this phone's viewer can reach (the accessibility tree's)."""
    return page.get_by_role("link", name=re.compile(r"^(Unos|Doses|Bonus Yahtzee) — ")).count()


def sheet_html(page):
    return page.locator("#sheet").evaluate("e => e.outerHTML")


@pytest.mark.parametrize("javascript", [True, False])
def test_each_phone_shows_its_viewer_their_own_controls(phones, javascript):
    # Ana's turn (the first seat): Olga organizes, Ben only watches.
    olga, ana, ben = (
        phones(name, "physical", javascript=javascript) for name in ("olga", "ana", "ben")
    )
    if not javascript:
        # The same sheet for all three, byte for byte (with JavaScript, htmx marks it up).
        assert sheet_html(olga) == sheet_html(ana) == sheet_html(ben)
    # Olga: every box's link, «Deshacer» and what is missing to finalize.
    assert cell_links(olga) == 6
    expect(olga.get_by_role("button", name="↶ Deshacer")).to_be_visible()
    expect(olga.locator("#sheet-problems")).to_be_visible()
    expect(olga.get_by_text("Se actualiza sola.")).to_be_hidden()
    expect(olga.locator("#turn").get_by_text("le toca a Ana")).to_be_visible()
    # Ana is told it is her turn; Ben who plays.
    expect(ana.locator("#turn").get_by_text("te toca a ti")).to_be_visible()
    expect(ana.locator("#turn").get_by_text("le toca a Ana")).to_be_hidden()
    expect(ben.locator("#turn").get_by_text("le toca a Ana")).to_be_visible()
    expect(ben.locator("#turn").get_by_text("te toca a ti")).to_be_hidden()
    for watcher in (ana, ben):
        assert cell_links(watcher) == 0
        assert watcher.get_by_role("button", name="↶ Deshacer").count() == 0
        expect(watcher.locator("#sheet-problems")).to_be_hidden()
        expect(watcher.get_by_text("Se actualiza sola.")).to_be_visible()
        # Each value is still read out, as text.
        expect(watcher.get_by_text("Unos — Ana: sin anotar")).to_be_attached()
    if not javascript:
        # The organizer writes and undoes without JavaScript: the picker is a page, and
        # «Deshacer», in the shared sheet, sends the token its page gives it.
        olga.get_by_role("link", name="Unos — Ana: sin anotar").click()
        olga.locator('button[name="value"][value="3"]').click()
        expect(olga.get_by_role("link", name="Unos — Ana: 3")).to_be_visible()
        olga.get_by_role("button", name="↶ Deshacer").click()
        expect(olga.get_by_role("link", name="Unos — Ana: sin anotar")).to_be_visible()
    for name, page in (("organizer", olga), ("turn", ana), ("watcher", ben)):
        ARTIFACTS.mkdir(exist_ok=True)
        screenshot(page, ARTIFACTS / f"one-card-{name}-{'js' if javascript else 'nojs'}-360.png")
        if javascript and AXE.exists():
            assert serious_violations(page) == []


def test_each_phone_keeps_its_own_controls_after_a_pushed_patch(phones):
    olga, ana, ben = (phones(name, "physical") for name in ("olga", "ana", "ben"))
    ben.wait_for_timeout(300)
    ben.locator(".sheet-scroll").evaluate("el => { el.scrollLeft = 40; }")
    left = ben.locator(".sheet-scroll").evaluate("el => el.scrollLeft")
    history = ben.get_by_role("link", name="Historial").first
    history.focus()
    olga.get_by_role("link", name="Unos — Ana: sin anotar").click()
    olga.locator('#picker button[name="value"][value="3"]').click()
    expect(olga.get_by_role("link", name="Unos — Ana: 3")).to_be_visible()
    # The turn passes to Ben: his phone says so, Ana's says whose it is, and neither
    # shows a control that is Olga's.
    expect(ben.locator("#turn").get_by_text("te toca a ti")).to_be_visible(timeout=3000)
    expect(ana.locator("#turn").get_by_text("le toca a Ben")).to_be_visible(timeout=3000)
    for watcher in (ana, ben):
        expect(watcher.locator("#row-total td").first).to_have_text("3")
        assert cell_links(watcher) == 0
        assert watcher.get_by_role("button", name="↶ Deshacer").count() == 0
    expect(history).to_be_focused()
    assert ben.locator(".sheet-scroll").evaluate("el => el.scrollLeft") == left
    assert cell_links(olga) == 6


def test_the_organizers_picker_opens_with_no_request(phones):
    olga = phones("olga", "physical")
    olga.wait_for_timeout(300)
    before = len(olga.asked)
    started = time.monotonic()
    olga.get_by_role("link", name="Doses — Ana: sin anotar").click()
    expect(olga.locator("#picker-dialog")).to_be_visible()
    opened = time.monotonic() - started
    assert olga.asked[before:] == [], olga.asked[before:]
    # A blank box: focus on its title; its values, rules.py's, with «0 tachar» and «Sin
    # anotar» marked as what it holds.
    expect(olga.locator("#picker-title")).to_be_focused()
    expect(olga.locator("#picker-title")).to_have_text("Doses — Ana")
    values = olga.locator("#picker .values button").all_inner_texts()
    assert values == ["2", "4", "6", "8", "10"]
    expect(olga.locator("#picker .scratch")).to_be_visible()
    expect(olga.locator('#picker .clear[aria-pressed="true"]')).to_be_visible()
    expect(olga.locator("#picker .hint").first).to_have_text("Ahora: sin anotar")
    # Nothing of the Yahtzee's or the bonus line's: Ana has no Yahtzee, and this is Doses.
    assert olga.locator("#picker .joker-offer, #picker .alert-error").count() == 0
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(olga, ARTIFACTS / "one-card-picker-360.png")
    # Its write is the one request.
    olga.locator('#picker button[name="value"][value="4"]').click()
    expect(olga.get_by_role("link", name="Doses — Ana: 4", exact=True)).to_be_visible()
    assert [m for m, path in olga.asked[before:] if "/casilla/" in path] == ["POST"]
    expect(olga.locator("#picker-dialog")).to_be_hidden()
    # A written box opens on its value, still with no request.
    before = len(olga.asked)
    olga.get_by_role("link", name="Doses — Ana: 4").click()
    expect(olga.locator('#picker .values button[aria-pressed="true"]')).to_be_focused()
    expect(olga.locator("#picker .hint").first).to_have_text("Ahora: 4")
    assert olga.asked[before:] == []
    olga.keyboard.press("Escape")
    # The bonus line without a 50 in Yahtzee: the server's word, and no value above 0.
    olga.get_by_role("link", name="Bonus Yahtzee — Ana: 0 \u00d7 100").click()
    expect(olga.locator("#picker .alert-error")).to_have_text(
        "Ana no tiene 50 en Yahtzee: sin ellos no hay bonus de Yahtzee."
    )
    assert olga.locator("#picker .values button[disabled]").count() == 12  # 1 to 12
    expect(olga.locator("#picker .values button").first).to_have_attribute("value", "0")
    expect(olga.locator("#picker .values button").nth(1)).to_contain_text("+100")
    assert olga.locator("#picker .with-dice").count() == 0
    assert olga.asked[before:] == []
    # «Con dados» still asks the server for the score.
    olga.keyboard.press("Escape")
    olga.get_by_role("link", name="Treses — Ana: sin anotar").click()
    olga.locator("#picker details.with-dice summary").click()
    for face in "33312":
        olga.locator(f'#picker a.face[aria-label="Dado {face}"]').click()
        olga.wait_for_timeout(150)
    expect(olga.locator("#picker .proposal button")).to_have_text("Anotar 9")
    print(f"picker opened in {opened * 1000:.0f} ms")


def test_a_watcher_who_shows_the_organizers_link_is_refused_and_changes_nothing(phones):
    ana = phones("ana", "physical")
    ana.evaluate("document.querySelector('.card-page').classList.add('manager')")
    link = ana.get_by_role("link", name="Unos — Ana: sin anotar")
    expect(link).to_be_visible()
    with ana.expect_response(re.compile(r"/casilla/")) as answer:
        link.click()
    assert answer.value.status == 403
    ana.goto(f"/tarjetas/{ana.card}/")
    expect(ana.locator("#row-total td").first).to_have_text("0")


def test_a_digital_turn_shows_its_forms_to_whoever_plays_it(phones):
    olga, ana, ben = (phones(name, "digital") for name in ("olga", "ana", "ben"))
    expect(ana.get_by_role("button", name="Tirar", exact=True)).to_be_visible()
    expect(ana.get_by_text("Aún no has tirado.")).to_be_visible()
    expect(olga.get_by_role("button", name="Tirar por Ana")).to_be_visible()
    expect(olga.get_by_text("Aún no ha tirado.")).to_be_visible()
    assert ben.get_by_role("button", name=re.compile("^Tirar")).count() == 0
    ana.get_by_role("button", name="Tirar", exact=True).click()
    # Ben sees the dice, as pictures, and no form; Olga may still play for Ana.
    expect(ben.get_by_role("img", name=re.compile(r"^Dado 1: \d$"))).to_be_visible(timeout=3000)
    assert ben.get_by_role("radio").count() == 0
    expect(olga.get_by_role("button", name="Anotar por Ana")).to_be_visible(timeout=3000)
    expect(ana.get_by_role("button", name="Anotar", exact=True)).to_be_visible()
    for name, page in (("organizer", olga), ("turn", ana), ("watcher", ben)):
        screenshot(page, ARTIFACTS / f"one-card-digital-{name}-360.png")
        if AXE.exists():
            assert serious_violations(page) == []


def test_deshacer_says_what_it_undid_beside_it(phones):
    olga, ana = phones("olga", "physical"), phones("ana", "physical")
    olga.get_by_role("link", name="Unos — Ana: sin anotar").click()
    olga.locator('#picker button[name="value"][value="3"]').click()
    expect(olga.get_by_role("link", name="Unos — Ana: 3")).to_be_visible()
    olga.get_by_role("button", name="↶ Deshacer").click()
    said = olga.get_by_role("status").filter(has_text="Deshecho:")
    expect(said).to_have_text("Deshecho: Unos de Ana, 3 → sin anotar")
    # Beside the button, in its bar, not only further down in «Últimos cambios».
    button = olga.get_by_role("button", name="↶ Deshacer").bounding_box()
    box = said.bounding_box()
    assert box["x"] >= button["x"] + button["width"], (button, box)
    assert abs(box["y"] + box["height"] / 2 - button["y"] - button["height"] / 2) < 22
    assert said.evaluate("s => s.closest('#undo-bar') !== null")
    screenshot(olga, ARTIFACTS / "one-card-undone-360.png")
    # Ana's phone follows the card, and the organizer's word is not hers.
    expect(ana.locator("#row-total td").first).to_have_text("0", timeout=3000)
    expect(ana.locator("#undo-status")).to_be_hidden()
    # The next write clears it.
    olga.get_by_role("link", name="Doses — Ana: sin anotar").click()
    olga.locator('#picker button[name="value"][value="4"]').click()
    expect(olga.locator("#undo-status")).to_have_text("")


# The delivery budget for a tap to show on the other phones: the stream's tick (a quarter
# of a second, scorecards.live.EVERY), the write and the swap, with room for a busy machine.
HOLD_SEEN_WITHIN = 1.2


def watch_pressed(page):
    """Record every change of the turn's dice as this page shows them, and mark the dice
    themselves: a tap's own answer, or the stream, must neither put a state back nor
    replace them."""
    page.evaluate(
        """() => {
        window.pressed = [];
        document.querySelectorAll('#turn button.die').forEach(die => {
            die.dataset.tapped = 'here';
            new MutationObserver(() => window.pressed.push(
                die.id + '=' + die.getAttribute('aria-pressed'))
            ).observe(die, {attributes: true, attributeFilter: ['aria-pressed']});
        });
    }"""
    )


def held_for(page):
    return page.locator('#turn button.die[aria-pressed="true"]').evaluate_all(
        "dice => dice.map(d => d.id.slice(4)).join('')"
    )


def test_a_watcher_sees_the_dice_held_as_the_player_taps_them(phones):
    ana, ben = phones("ana", "digital"), phones("ben", "digital")
    ana.get_by_role("button", name="Tirar", exact=True).click()
    expect(ana.locator("#roll-count")).to_contain_text("Tirada 1 de 3")
    faces = ana.locator("#turn button.die").all_inner_texts()
    watched = ben.locator("#watched-dice .die")
    expect(watched).to_have_text(faces, timeout=3000)
    expect(ben.locator("#watched-dice .die.held")).to_have_count(0)

    # One tap: Ben's phone shows the die held, by its look and by its name.
    started = time.monotonic()
    ana.locator("#die-1").click()
    held = ben.get_by_role("img", name=f"Dado 1: {faces[0]}, guardado", exact=True)
    expect(held).to_be_visible(timeout=HOLD_SEEN_WITHIN * 1000)
    seen_after = time.monotonic() - started
    expect(held).to_have_class("die held")
    assert seen_after < HOLD_SEEN_WITHIN, seen_after
    print(f"a hold seen on the watcher's phone in {seen_after * 1000:.0f} ms")
    ARTIFACTS.mkdir(exist_ok=True)
    ben.locator("#turn").scroll_into_view_if_needed()
    screenshot(ben, ARTIFACTS / "one-card-digital-watcher-held-360.png")

    # Rapid taps on a slow network, each sent before the one before is answered: Ana's
    # dice show every tap at once and nothing else, and the last taps are what is held.
    cdp = ana.context.new_cdp_session(ana)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 400, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    watch_pressed(ana)
    for position in (2, 3, 2, 4):
        ana.locator(f"#die-{position}").click()
    assert held_for(ana) == "134"
    for position in (1, 3, 4):
        expect(
            ben.get_by_role("img", name=re.compile(rf"^Dado {position}: \d, guardado$"))
        ).to_be_visible(timeout=4000)
    expect(ben.locator("#watched-dice .die.held")).to_have_count(3)
    ana.wait_for_timeout(500)  # every answer is back
    assert ana.evaluate("() => window.pressed") == [
        "die-2=true",
        "die-3=true",
        "die-2=false",
        "die-4=true",
    ]
    assert ana.locator('#turn button.die[data-tapped="here"]').count() == 5
    assert held_for(ana) == "134"

    # A tap and «Tirar» at once: the roll waits for the hold, is not refused, and keeps
    # the four dice tapped.
    ana.locator("#die-5").click()
    ana.get_by_role("button", name="Tirar", exact=True).click()
    expect(ana.locator("#roll-count")).to_contain_text("Tirada 2 de 3", timeout=5000)
    expect(ana.locator("#sheet-alert")).to_be_empty()
    expect(ana.locator("#net-error")).to_be_hidden()
    kept = [faces[0], *faces[2:]]
    assert held_for(ana) == "1345"
    assert [ana.locator(f"#die-{p}").inner_text() for p in (1, 3, 4, 5)] == kept
    expect(ben.locator("#roll-count")).to_contain_text("Tirada 2 de 3", timeout=3000)
    expect(ben.locator("#watched-dice .die.held")).to_have_count(4)
