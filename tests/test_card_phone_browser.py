"""The card on a 360 px phone (issue 58, item 4): «Deshacer» within the thumb's reach, the
viewer's own column marked, the names given the labels' room, no «Seguir en el móvil» on a
finished card, and a physical card's changes read out to those who follow it."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from scorecards import services
from scorecards.models import Scorecard
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, enter, fill

pytestmark = pytest.mark.browser

SHOTS = Path(__file__).parent / "artifacts"
NAMES = [
    "Maximiliano Fernández-Villaverde",
    "Lucía Navarro",
    "Olga Ruiz",
    "Íñigo Sáez",
    "María José Pérez",
    "Guillermo Abad",
]


@pytest.fixture
def olga(db):
    return UserFactory(username="olga", display_name="Olga")


def table(olga, n, mode=Scorecard.PRESENCIAL):
    players = [UserFactory(username=f"p{i}", display_name=NAMES[i]) for i in range(n)]
    return services.scorecard_create(organizer=olga, players=players, mode=mode)


@pytest.fixture
def phone(server, browser):
    """A 360 px phone, in Spanish, logged in as username and showing the card."""
    contexts = []

    def open_phone(username, card):
        context = browser.new_context(
            viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
        )
        contexts.append(context)
        page = context.new_page()
        log_in(page, username)
        page.goto(f"/tarjetas/{card.pk}/")
        return page

    yield open_phone
    for context in contexts:
        context.close()


def on_screen(page, locator) -> bool:
    box = locator.bounding_box()
    height = page.viewport_size["height"]
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def uncovered(locator) -> bool:
    """Whether what is drawn at the middle of the element is the element itself."""
    return locator.evaluate(
        """e => { const r = e.getBoundingClientRect();
        const there = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return e.contains(there); }"""
    )


def test_deshacer_is_on_screen_while_the_last_rows_are(phone, olga):
    card = table(olga, 6)
    seats = list(card.seats.all())
    enter(card, seats[0], olga, ones=3)
    enter(card, seats[1], olga, full_house=25)
    page = phone("olga", card)
    undo = page.get_by_role("button", name="↶ Deshacer")
    # With the words of the change it would undo.
    expect(page.locator("#undo-last")).to_have_text(
        "Último cambio: Full de Lucía Navarro, sin anotar → 25"
    )
    assert undo.get_attribute("aria-describedby") == "undo-last"
    for row in ("#row-ones", "#row-yahtzee", "#row-total", "#row-place"):
        page.locator(row).evaluate("r => r.scrollIntoView({block: 'end'})")
        page.wait_for_timeout(100)
        assert on_screen(page, page.locator(row)), row
        # The row is not under the bar: a cell scrolled into view can be tapped.
        assert uncovered(page.locator(f"{row} td").last), row
        assert on_screen(page, undo), row
        assert uncovered(undo), row
    page.locator("#row-ones").evaluate("r => r.scrollIntoView({block: 'center'})")
    SHOTS.mkdir(exist_ok=True)
    screenshot(page, SHOTS / "undo-bar-360.png")
    # It still undoes, and says what it undid where it is.
    undo.click()
    expect(page.locator("#undo-status")).to_have_text(
        "Deshecho: Full de Lucía Navarro, 25 → sin anotar"
    )
    assert on_screen(page, page.locator("#undo-status"))
    screenshot(page, SHOTS / "undo-bar-undone-360.png")


def test_a_followers_own_column_is_marked_by_their_page(phone, olga):
    card = table(olga, 6)
    olga_ruiz = phone("p2", card)
    heads = olga_ruiz.locator("#row-players th")
    after = "h => getComputedStyle(h, '::after').content"
    assert "tú" in heads.nth(3).evaluate(after)
    assert [heads.nth(i).evaluate(after) for i in (1, 2, 4, 5, 6)] == ["none"] * 5
    tinted = "c => getComputedStyle(c).backgroundColor"
    cells = olga_ruiz.locator("#row-ones td")
    mine, theirs = cells.nth(2), cells.nth(1)
    assert mine.evaluate(tinted) != theirs.evaluate(tinted)
    # The sheet, everyone's, says nothing of it.
    assert "tú" not in olga_ruiz.locator("#sheet").evaluate("s => s.outerHTML")
    SHOTS.mkdir(exist_ok=True)
    screenshot(olga_ruiz, SHOTS / "own-column-360.png")
    # The organizer, who has no seat, has no column of their own.
    organizer = phone("olga", card)
    heads = organizer.locator("#row-players th")
    assert all(heads.nth(i).evaluate(after) == "none" for i in range(7))


def heading_mark(page, name):
    th = page.locator("#row-players th[title]", has_text=name[:4]).first
    return th.evaluate("th => getComputedStyle(th, '::before').content")


@pytest.mark.parametrize(
    ("n", "mode"), [(3, Scorecard.PRESENCIAL), (6, Scorecard.PRESENCIAL), (6, Scorecard.DIGITAL)]
)
def test_the_names_have_the_labels_room_on_a_phone(phone, olga, n, mode):
    """On a digital card too, where each name carries whether its phone follows (●/○)."""
    card = table(olga, n, mode)
    page = phone("p1", card)
    if mode == Scorecard.DIGITAL:
        # As a stream's «presence» leaves it (this server has no streams, so no page rule
        # turns a ○ into a ●, which takes the same room): every name carries its mark.
        here = " ".join(
            str(UserFactory._meta.model.objects.get(username=f"p{i}").pk) for i in range(n // 2)
        )
        page.evaluate("here => document.querySelector('.card-page').dataset.here = here", here)
        assert "○" in heading_mark(page, NAMES[0])
    SHOTS.mkdir(exist_ok=True)
    screenshot(page, SHOTS / f"names-{n}-players-{mode}-360.png")
    # Every name's heading shows all of its letters: none cut («Maximil…»).
    cut = page.eval_on_selector_all(
        "#row-players th:not(.box-col) .short",
        "spans => spans.filter(s => s.closest('th').scrollWidth > s.closest('th').clientWidth"
        " || s.getBoundingClientRect().width > s.closest('th').clientWidth + 0.5)"
        ".map(s => s.textContent)",
    )
    assert cut == []
    width = page.locator(".sheet-scroll").evaluate("e => e.clientWidth")
    labels = page.locator("#row-players th.box-col").bounding_box()["width"]
    assert labels <= 0.2 * width, (labels, width)
    # The box labels short on screen, whole for screen readers; none clipped.
    assert page.locator("#row-small_straight .short").inner_text() == "Esc. peq."
    assert page.get_by_role("rowheader", name="Escalera pequeña").count() == 1
    clipped = page.eval_on_selector_all(
        ".sheet tbody th",
        "hs => hs.filter(h => h.scrollWidth > h.clientWidth).map(h => h.textContent)",
    )
    assert clipped == []
    fits = page.locator(".sheet-scroll").evaluate("e => e.scrollWidth - e.clientWidth")
    assert fits == 0


def test_a_finished_card_offers_no_seguir_en_el_movil(phone, olga):
    card = table(olga, 2)
    fill(card)
    card.version += 1
    card.save(update_fields=["version"])
    lucia = phone("p1", card)
    expect(lucia.locator("#follow-phone")).to_be_visible()
    services.scorecard_finalize(scorecard_id=card.pk, author=olga)
    expect(lucia.locator("#sheet .result")).to_be_visible(timeout=8000)
    expect(lucia.locator("#follow-phone")).to_be_hidden()
    SHOTS.mkdir(exist_ok=True)
    screenshot(lucia, SHOTS / "finished-no-follow-360.png")


def test_a_physical_cards_followers_hear_each_change_once(phone, olga):
    card = table(olga, 2)
    seats = list(card.seats.all())
    maxi, lucia = phone("p0", card), phone("p1", card)
    organizer = phone("olga", card)
    for page in (maxi, lucia):
        # Every text the live region is given, as a screen reader would hear it.
        page.evaluate(
            """() => { window.said = [];
            const status = document.getElementById('turn-status');
            new MutationObserver(() => window.said.push(status.textContent))
            .observe(status, {childList: true, characterData: true, subtree: true}); }"""
        )
    enter(card, seats[0], olga, ones=3)
    status = lucia.get_by_role("status").filter(has_text="anotó")
    expect(status).to_have_text(
        "Olga anotó 3 en Unos de Maximiliano Fernández-Villaverde. Ronda 1 de 13 · te toca a ti",
        timeout=8000,
    )
    expect(maxi.locator("#turn-status")).to_have_text(
        "Olga anotó 3 en Unos de Maximiliano Fernández-Villaverde. "
        "Ronda 1 de 13 · le toca a Lucía Navarro",
        timeout=8000,
    )
    # Polls that bring nothing new say nothing again.
    lucia.wait_for_timeout(7000)
    assert lucia.evaluate("window.said.filter(Boolean).length") == 1
    # The organizer, who made the change, is not told of it: a live region not shown is
    # not read out.
    expect(organizer.locator("#turn-status")).to_be_hidden()
    assert organizer.locator("#turn-status").evaluate("s => getComputedStyle(s).display") == "none"


def test_the_players_qr_panel_leaves_the_servers_hint_to_the_organizer(
    phone, server, olga, settings
):
    settings.SITE_URL = server  # localhost: the other phones cannot open it
    card = table(olga, 2)
    for who, said in (("p1", "avisa a quien organiza"), ("olga", "make run HOST=0.0.0.0")):
        page = phone(who, card)
        page.locator("#follow-phone summary").click()
        notice = page.locator("#follow-qr .alert")
        expect(notice).to_contain_text(said)
        if who == "p1":
            assert "make run" not in notice.inner_text()
        SHOTS.mkdir(exist_ok=True)
        screenshot(page, SHOTS / f"qr-panel-{'player' if who == 'p1' else 'organizer'}-360.png")
