"""The whole seed flow in a real browser: Debian's Chromium driven by Playwright, phone-sized."""

import re
from pathlib import Path

import pytest

from scorecards.labels import box_name
from scorecards.models import Scorecard
from scorecards.rules import Category
from tests.browsing import log_in, misalignment, screenshot
from tests.factories import PASSWORD, UserFactory, make_scorecard

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).parent / "artifacts"

BOXES = [box_name(category) for category in Category]  # the Spanish page


@pytest.fixture
def phone(browser, server):
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, base_url=server, locale="es-ES"
    )
    page = context.new_page()
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    yield page
    context.close()


def enter(page, box, player, value):
    """Tap a box, tap a value in the picker, and wait for the card to show it."""
    page.locator(f'a.cell[aria-label^="{box} — {player}:"]').click()
    page.locator("#picker-dialog[open]").wait_for()
    if value == "":
        page.locator("#picker").get_by_role("button", name="Sin anotar").click()
        shown = "sin anotar"
    else:
        page.locator(f'#picker button[name="value"][value="{value}"]').first.click()
        shown = str(value)
    page.locator(f'a.cell[aria-label="{box} — {player}: {shown}"]').wait_for()
    page.locator("#picker-dialog[open]").wait_for(state="detached")


def test_the_seed_flow_on_a_phone(phone):
    page = phone
    UserFactory(username="olga", display_name="Olga")
    for username, name in (("ana", "Ana"), ("ben", "Ben"), ("carla", "Carla")):
        UserFactory(username=username, display_name=name)

    log_in(page, "olga")
    page.get_by_role("link", name="Tarjeta de puntos").first.click()
    # Olga plays, so she comes ticked; tonight she only keeps the card.
    assert page.get_by_label("Olga", exact=True).is_checked()
    page.get_by_label("Olga", exact=True).uncheck()
    for name in ("Ana", "Ben", "Carla"):
        page.get_by_label(name).check()
    page.get_by_role("button", name="Continuar: orden en la mesa").click()
    page.get_by_role("button", name="Crear tarjeta").click()
    page.wait_for_url(re.compile(r"/tarjetas/\d+/$"))

    ana = [3, 6, 9, None, 15, 18, 20, 0, 25, 30, 0, 50, 22]  # Cuatros comes from the joker
    ben = [0, 4, 6, 8, 10, 12, 15, 0, 0, 30, 40, 0, 20]
    # A correction to «Sin anotar» and an undo on the way.
    enter(page, "Unos", "Ben", 1)
    enter(page, "Unos", "Ben", "")
    enter(page, "Libre (Chance)", "Carla", 25)
    page.get_by_role("button", name="Deshacer").click()
    page.locator('a.cell[aria-label="Libre (Chance) — Carla: sin anotar"]').wait_for()

    for box, a, b in zip(BOXES, ana, ben, strict=True):
        if a is not None:
            enter(page, box, "Ana", a)
        enter(page, box, "Ben", b)
        enter(page, box, "Carla", b)

    # Ana's second Yahtzee, five fours: the joker order offers only Cuatros.
    open_joker(page, "Ana")
    page.get_by_role("link", name="Cinco 4").click()
    choices = page.locator('#picker button[name="box"]')
    choices.first.wait_for()
    assert choices.count() == 1
    choices.first.click()
    page.locator('a.cell[aria-label="Cuatros — Ana: 20"]').wait_for()

    # Finalizing asks first, with each player's total and position.
    page.get_by_role("link", name="Finalizar y guardar resultados").click()
    dialog = page.locator("#picker-dialog[open]")
    dialog.wait_for()
    assert dialog.locator("tbody tr").all_inner_texts() == [
        "1º\tAna\t353",
        "2º\tBen\t145",
        "2º\tCarla\t145",
    ]
    # Each heading lines up with its column, and the button stands clear of the table.
    aligned = misalignment(dialog.locator("table.standings"))
    assert max(aligned) <= 2, aligned
    table = dialog.locator("table.standings").bounding_box()
    button = dialog.get_by_role("button", name="Finalizar y guardar resultados").bounding_box()
    assert button["y"] - (table["y"] + table["height"]) >= 16, (table, button)
    screenshot(page, ARTIFACTS / "finalize-confirm-390.png")
    dialog.get_by_role("button", name="Finalizar y guardar resultados").click()
    page.get_by_text("presencial").first.wait_for()
    assert page.locator(".result").inner_text() == "Gana Ana con 353"
    card = Scorecard.objects.get()
    assert card.is_finalized
    seats = {s.player.display_name: (s.total, s.place) for s in card.seats.all()}
    assert seats == {"Ana": (353, 1), "Ben": (145, 2), "Carla": (145, 2)}
    assert page.errors == []

    for username, total, place in (("ana", 353, 1), ("ben", 145, 2), ("carla", 145, 2)):
        page.context.clear_cookies()
        log_in(page, username)
        page.goto("/historial/")
        row = page.locator(".history li").first
        assert "presencial" in row.inner_text()
        assert f"Tu total {total} · {place}º de 3" in row.inner_text()
    assert page.errors == []


def test_a_player_sees_the_organizers_entry_live_without_reloading(browser, server):
    from scorecards.services import scorecard_create

    organizer = UserFactory(username="olga", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana")
    card = scorecard_create(organizer=organizer, players=[ana, UserFactory(display_name="Ben")])
    pages = []
    for username in ("olga", "ana"):
        context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=server)
        page = context.new_page()
        log_in(page, username)
        page.goto(f"/tarjetas/{card.pk}/")
        pages.append(page)
    organizer_page, player_page = pages
    player_page.evaluate("window.stillTheSamePage = true")
    assert player_page.locator("a.cell:visible").count() == 0

    enter(organizer_page, "Cincos", "Ana", 20)
    player_page.locator(".cell", has_text="Cincos — Ana: 20").wait_for(timeout=6000)
    assert player_page.evaluate("window.stillTheSamePage") is True
    assert player_page.locator("tr.total td").first.inner_text() == "20"
    for page in pages:
        page.context.close()


SHEET_STATE = """() => {
    const visible = (el) => el.offsetParent !== null;
    return {
        table: document.querySelector("#sheet table").innerText,
        cells: [...document.querySelectorAll("#sheet a.cell")]
            .map((a) => a.getAttribute("aria-label")),
        recent: [...document.querySelectorAll("#recent-changes > li")].filter(visible)
            .map((li) => li.innerText.replace(/^\\d\\d:\\d\\d:\\d\\d/, "")),
        empty_hint: [...document.querySelectorAll(".changes .hint")].some(visible),
        problems: document.querySelector("#sheet-problems").innerText,
        version: document.querySelector("#sheet-version").value,
        undo: document.querySelector("#undo-button").disabled,
        poll: document.querySelector("#sheet-poll").getAttribute("hx-get"),
        alert: document.querySelector("#sheet-alert").innerText,
    };
}"""


def test_the_page_patched_by_writes_is_the_card_a_reload_shows(phone):
    """Writes answer with only what changed: the page must end up as a fresh load."""
    from scorecards.services import scorecard_create

    page = phone
    organizer = UserFactory(username="olga", display_name="Olga")
    players = [UserFactory(display_name=name) for name in ("Ana", "Ben")]
    card = scorecard_create(organizer=organizer, players=players)
    log_in(page, "olga")
    page.goto(f"/tarjetas/{card.pk}/")
    answers = []

    def answered(response):
        if response.request.method == "POST":
            answers.append(response.headers.get("hx-reswap"))

    page.on("response", answered)
    fresh = page.evaluate(SHEET_STATE)
    assert fresh["undo"] is True
    assert fresh["empty_hint"] is True

    enter(page, "Yahtzee", "Ana", 50)
    for box, value in (("Unos", 3), ("Doses", 6), ("Treses", 9), ("Cuatros", 12), ("Seises", 30)):
        enter(page, box, "Ben", value)
    enter(page, "Doses", "Ben", "")  # a correction
    open_joker(page, "Ana")
    page.get_by_role("link", name="Cinco 5").click()
    page.locator('#picker button[name="box"][value="fives"]').click()
    page.locator('a.cell[aria-label="Cincos — Ana: 25"]').wait_for()
    page.get_by_role("button", name="Deshacer").click()
    page.locator('a.cell[aria-label="Cincos — Ana: sin anotar"]').wait_for()
    enter(page, "Libre (Chance)", "Ana", 24)

    # Every write (eight boxes, the joker, the undo) was answered with only what changed.
    assert answers == ["none"] * 10
    patched = page.evaluate(SHEET_STATE)
    assert len(patched["recent"]) == 5  # the sixth and older are hidden, as a reload shows
    assert patched["undo"] is False
    assert patched["empty_hint"] is False
    page.reload()
    reloaded = page.evaluate(SHEET_STATE)
    assert patched == reloaded
    card.refresh_from_db()
    assert reloaded["version"] == str(card.version)
    assert "Ana: 24" in " ".join(reloaded["cells"])
    assert page.errors == []


def one_write_in(page):
    """The organizer's page of a one-player card, at version 1."""
    organizer = UserFactory(username="olga", display_name="Olga")
    card = make_scorecard(organizer, [UserFactory(display_name="Ana")])
    log_in(page, "olga")
    page.goto(f"/tarjetas/{card.pk}/")
    enter(page, "Unos", "Ana", 3)
    return page


def test_the_organizers_page_does_not_poll_while_a_write_is_on_its_way(phone):
    """A live refresh never lands between a write and its answer."""
    page = one_write_in(phone)

    page.locator('a.cell[aria-label^="Doses — Ana:"]').click()
    page.locator("#picker-dialog[open]").wait_for()
    polls = []
    page.on(
        "request", lambda request: polls.append(request.url) if "/vivo/" in request.url else None
    )
    held = []
    page.context.route("**/casilla/**", lambda route: held.append(route))  # hold the write
    page.locator('#picker button[name="value"][value="6"]').click()
    for _ in range(100):  # route handlers run while the page waits
        if held:
            break
        page.wait_for_timeout(50)
    page.wait_for_timeout(4000)  # longer than the poll's 3 s
    assert polls == []
    held[0].fulfill(response=held[0].fetch())
    page.locator("#picker-dialog[open]").wait_for(state="detached")
    # The answer's version, swapped in tens of milliseconds after the picker closes.
    page.locator('#sheet-version[value="2"]').wait_for(state="attached", timeout=2000)
    page.wait_for_timeout(3500)
    assert polls  # polling goes on once the write is answered
    patched = page.evaluate(SHEET_STATE)
    page.context.unroute("**/casilla/**")
    page.reload()
    assert page.evaluate(SHEET_STATE) == patched
    assert page.errors == []


def test_a_tap_never_waits_for_the_write_before_it(phone):
    """A write on its way holds nothing up: the next box's picker opens at once, and both
    writes reach the server, in order, each once."""
    page = one_write_in(phone)
    held = []
    page.context.route(
        "**/casilla/**",
        lambda route: held.append(route) if route.request.method == "POST" else route.continue_(),
    )
    page.locator('a.cell[aria-label^="Doses — Ana:"]').click()
    page.locator('#picker button[name="value"][value="6"]').click()
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    page.locator('a.cell[aria-label^="Treses — Ana:"]').click()
    page.locator("#picker-dialog[open]").wait_for()
    page.locator('#picker button[name="value"][value="9"]').click()
    assert page.locator("a.cell.unsent").count() == 2
    held[0].fulfill(response=held[0].fetch())
    for _ in range(100):
        if len(held) == 2:
            break
        page.wait_for_timeout(50)
    held[1].fulfill(response=held[1].fetch())
    page.locator('a.cell[aria-label="Treses — Ana: 9"]').wait_for()
    page.locator('a.cell[aria-label="Doses — Ana: 6"]').wait_for()
    assert page.locator('#sheet-version[value="3"]').count() == 1
    assert page.errors == []


def test_a_poll_answer_that_arrives_after_a_write_is_dropped(phone):
    """A poll sent before a write, answered after it, would put the older card back."""
    page = one_write_in(phone)
    held = []
    page.context.route("**/vivo/**", lambda route: held.append(route))  # hold the next poll
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    enter(page, "Doses", "Ana", 6)
    page.locator('#sheet-version[value="2"]').wait_for(state="attached")
    answer = held[0].fetch()  # made now, for the version the page had when it asked
    assert answer.headers["x-dados-base"] == "1"
    written = page.evaluate(SHEET_STATE)
    held[0].fulfill(response=answer)
    page.wait_for_timeout(300)
    assert page.evaluate(SHEET_STATE) == written
    assert len(written["recent"]) == 2  # not three: the poll's entry was not added again
    page.context.unroute("**/vivo/**")
    page.reload()
    assert page.evaluate(SHEET_STATE) == written
    assert page.errors == []


@pytest.mark.parametrize("who", ["organizer", "player"])
def test_a_six_player_card_does_not_scroll_sideways_on_a_small_phone(browser, server, who):
    """The table scrolls inside its own box; the page itself stays 360 px wide, for the
    organizer's sheet (cells are links) and a player's (cells with hidden labels)."""
    organizer = UserFactory(username="olga", display_name="Olga")
    players = [
        UserFactory(username=f"p{n}", display_name=f"Jugadora con nombre largo {n}")
        for n in range(6)
    ]
    card = make_scorecard(organizer, players)
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
    )
    page = context.new_page()
    log_in(page, "olga" if who == "organizer" else "p0")
    page.goto(f"/tarjetas/{card.pk}/")
    table, box = page.evaluate(
        "[document.querySelector('table.sheet').scrollWidth,"
        " document.querySelector('.sheet-scroll').clientWidth]"
    )
    assert table <= box  # six columns fit: nothing to scroll, even with long names
    assert page.evaluate("document.documentElement.scrollWidth") == 360
    context.close()


def _card_page(browser, server, username, card, width=360):
    context = browser.new_context(
        viewport={"width": width, "height": 740}, base_url=server, locale="es-ES"
    )
    page = context.new_page()
    log_in(page, username)
    page.goto(f"/tarjetas/{card.pk}/")
    return page


def open_joker(page, name):
    """«+ Yahtzee adicional», from the player's Yahtzee box."""
    page.locator(f'a.cell[aria-label^="Yahtzee — {name}: "]').click()
    page.locator("#picker-dialog[open]").wait_for()
    page.locator("#picker").get_by_role("link", name="+ Yahtzee adicional").click()
    page.get_by_role("heading", name=f"Yahtzee adicional — {name}").wait_for()


def _six_players(organizer, n=6):
    players = [UserFactory(username=f"p{i}", display_name=f"Jugadora {i}") for i in range(n)]
    return make_scorecard(organizer, players), players


def test_a_live_refresh_keeps_the_table_scrolled_where_it_was(browser, server):
    """A player scrolled to their own column stays there when the card refreshes."""
    from scorecards import services

    organizer = UserFactory(username="olga", display_name="Olga")
    card, players = _six_players(organizer, n=9)  # more than fit: the table scrolls
    page = _card_page(browser, server, "p8", card)
    page.evaluate("document.querySelector('.sheet-scroll').scrollLeft = 100")
    seat = card.seats.get(player=players[8])
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="chance", value="20", was="", author=organizer
    )
    page.locator(".cell", has_text="Libre (Chance) — Jugadora 8: 20").wait_for(timeout=6000)
    assert page.evaluate("document.querySelector('.sheet-scroll').scrollLeft") == 100
    page.context.close()


def test_a_player_whose_session_ended_logs_in_again_and_is_back_on_the_card(browser, server):
    organizer = UserFactory(username="olga", display_name="Olga")
    card, _players = _six_players(organizer)
    page = _card_page(browser, server, "p0", card)
    page.context.clear_cookies(name="sessionid")  # logged out elsewhere, or reset
    page.wait_for_url(re.compile(r"/entrar/\?next="), timeout=6000)  # the whole page
    assert page.locator("header").count() == 1
    page.locator("#id_username").fill("p0")
    page.locator("#id_password").fill(PASSWORD)
    page.locator("main form button[type=submit]").click()
    page.wait_for_url(re.compile(rf"/tarjetas/{card.pk}/$"))
    page.locator("#sheet").wait_for()
    page.context.close()


def test_a_discarded_card_says_so_and_stops_asking(browser, server):
    from scorecards import services

    organizer = UserFactory(username="olga", display_name="Olga")
    card, _players = _six_players(organizer)
    page = _card_page(browser, server, "p0", card)
    services.scorecard_discard(scorecard_id=card.pk, author=card.organizer)
    message = page.locator("#net-error")
    message.wait_for(timeout=6000)
    assert message.inner_text() == "Esta tarjeta ya no existe: se descartó."
    assert page.locator("#sheet-poll").count() == 0  # no request every 3 s any more
    page.context.close()


def test_a_write_from_an_expired_page_says_it_expired(browser, server):
    """After logging in again elsewhere, an open card's forms carry an old CSRF token:
    «Deshacer» is refused for that, and the page says so, not «No tienes permiso»."""
    from scorecards import services

    organizer = UserFactory(username="olga", display_name="Olga")
    card, players = _six_players(organizer)
    seat = card.seats.get(player=players[0])
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="ones", value="3", was="", author=organizer
    )
    page = _card_page(browser, server, "olga", card)
    page.context.add_cookies([{"name": "csrftoken", "value": "a" * 32, "url": server}])
    page.get_by_role("button", name="Deshacer").click()
    message = page.locator("#net-error")
    message.wait_for()
    assert message.inner_text() == (
        "La página caducó: recárgala para seguir. No se ha guardado nada."
    )
    seat.refresh_from_db()
    assert seat.ones == 3
    page.context.close()


def test_back_to_the_order_page_and_create_again_goes_to_the_same_card(phone):
    page = phone
    UserFactory(username="olga", display_name="Olga")
    for username, name in (("ana", "Ana"), ("ben", "Ben")):
        UserFactory(username=username, display_name=name)
    log_in(page, "olga")
    page.get_by_role("link", name="Tarjeta de puntos").first.click()
    for name in ("Ana", "Ben"):
        page.get_by_label(name).check()
    page.get_by_role("button", name="Continuar: orden en la mesa").click()
    page.get_by_role("button", name="Crear tarjeta").click()
    page.wait_for_url(re.compile(r"/tarjetas/\d+/$"))
    first = page.url
    page.go_back()
    page.get_by_role("button", name="Crear tarjeta").click()
    page.wait_for_url(re.compile(r"/tarjetas/\d+/$"))
    assert page.url == first
    assert Scorecard.objects.count() == 1
    assert page.errors == []
