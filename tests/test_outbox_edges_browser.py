"""Where «Nothing typed is ever lost» broke, on uvicorn in Chromium at 360 px: a session
that ends while boxes wait, a joker reached through «Con dados», five of a kind after a 50,
the cells while a long sync catches up, and the pages a log-out leaves behind."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browsing import go_offline, go_online, kept_writes, log_in, screenshot
from tests.liveserver import django_script, query
from tests.test_outbox_browser import SEED, cell, changes, changes_within, sync, tap

pytestmark = [pytest.mark.browser, pytest.mark.server]
ARTIFACTS = Path(__file__).parent / "artifacts"
SEED = SEED  # the module's, for the site fixture
BONUS = "#c{}-yahtzee_bonuses a.cell"

END_SESSIONS = """
import sys
from accounts.models import User
olga = User.objects.get(username="olga")
olga.set_password(sys.argv[1] + "-new")
olga.save()
"""


def log_in_again(page):
    """Olga's log-in with the password END_SESSIONS gave her, on the log-in page."""
    page.fill("#id_username", "olga")
    page.fill("#id_password", "x-new")
    page.get_by_role("button", name="Entrar").click()


def written(site, box):
    server, seeded = site
    return query(
        server.db,
        "SELECT count(*) FROM scorecards_change WHERE scorecard_id = %s AND items LIKE %s",
        seeded["physical"],
        f'%"{box}"%',
    )[0][0]


def test_a_box_kept_while_the_session_ends_elsewhere_waits_for_the_log_in(phones, site):
    server, seeded = site
    olga = phones("olga")
    go_offline(olga.context)
    tap(olga, "ana", "twos", 6)
    tap(olga, "ben", "twos", 4)
    # Her password is changed on another phone: every session of hers ends.
    django_script(server.db, END_SESSIONS, "x")
    go_online(olga.context)
    olga.evaluate("window.dispatchEvent(new Event('online'))")
    status = olga.locator("#outbox-status")
    expect(status).to_have_text(
        "Tu sesión ha terminado: entra otra vez para enviar 2 casillas pendientes"
    )
    expect(cell(olga, "ana", "twos")).to_have_text("6")
    expect(olga.locator("#outbox-login")).to_be_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(olga, ARTIFACTS / "outbox-session-ended-360.png", full_page=True)
    assert kept_writes(olga) == 2
    assert written(site, "twos") == 0
    # «Entrar» logs in and comes back to the card, which sends them, each once.
    olga.locator("#outbox-login").click()
    log_in_again(olga)
    expect(olga).to_have_url(re.compile(rf"/tarjetas/{seeded['physical']}/$"))
    expect(olga.locator("a.cell.unsent")).to_have_count(0)
    expect(cell(olga, "ben", "twos")).to_have_text("4")
    # Sent by the page or by the worker's Background Sync (registered as the page left
    # for the log-in), whichever holds the outbox's lock first: each box once.
    deadline = olga.evaluate("Date.now()") + 10000
    while written(site, "twos") < 2 and olga.evaluate("Date.now()") < deadline:
        olga.wait_for_timeout(100)
    assert written(site, "twos") == 2
    olga.reload()
    olga.wait_for_timeout(500)
    assert written(site, "twos") == 2
    assert kept_writes(olga) == 0


def test_background_sync_keeps_the_boxes_of_an_ended_session_until_the_log_in(phones, site):
    server, seeded = site
    olga = phones("olga")
    go_offline(olga.context)
    tap(olga, "ana", "ones", 3)
    tap(olga, "ben", "twos", 4)
    olga.goto("/sin-conexion/")  # the card's page is gone: only the worker can send them
    django_script(server.db, END_SESSIONS, "x")
    go_online(olga.context)
    sync(olga)
    olga.wait_for_timeout(1500)
    assert changes(site, "physical") == 0  # refused for the session, kept
    # Logged in again (a new CSRF token): the worker sends them with the current one.
    olga.goto("/entrar/")
    log_in_again(olga)
    olga.wait_for_url(re.compile(r"/$"))
    assert kept_writes(olga) == 2
    sync(olga)
    assert changes_within(olga, site, 2) == 2
    olga.goto(f"/tarjetas/{seeded['physical']}/")
    expect(cell(olga, "ben", "twos")).to_have_text("4")
    expect(olga.locator("a.cell.unsent")).to_have_count(0)
    assert changes(site, "physical") == 2


def test_a_joker_through_con_dados_then_three_more_boxes(phones, site):
    olga = phones("olga")
    tap(olga, "ana", "yahtzee", 50)
    expect(cell(olga, "ana", "yahtzee")).to_have_text("50")
    expect(olga.locator("a.cell.unsent")).to_have_count(0)
    cell(olga, "ana", "threes").click()
    olga.locator("#picker .with-dice summary").click()
    for _ in range(5):
        olga.locator("#picker .faces a", has_text="3").click()
    olga.get_by_role("link", name="Yahtzee adicional", exact=True).click()
    # The joker's step inside the dialog, the picker still there for the next tap.
    expect(olga.locator("#picker-dialog[open] #picker-title")).to_contain_text("Yahtzee adicional")
    olga.locator("#picker .choices button[value=threes]").click()
    expect(cell(olga, "ana", "threes")).to_have_text("15")
    expect(olga.locator(BONUS.format(olga.seats["ana"]))).to_have_text("100")
    for player, box, value in (("ben", "ones", 2), ("ana", "fours", 8), ("ben", "sixes", 24)):
        tap(olga, player, box, value)
        expect(cell(olga, player, box)).to_have_text(str(value))
    expect(olga.locator("a.cell.unsent")).to_have_count(0)


def test_fifteen_in_treses_after_a_50_asks_whether_it_was_an_extra_yahtzee(phones, site):
    olga = phones("olga")
    tap(olga, "ana", "yahtzee", 50)
    expect(olga.locator("a.cell.unsent")).to_have_count(0)
    cell(olga, "ana", "threes").click()
    olga.locator('#picker-dialog .values button[value="15"]').click()
    ask = olga.locator("#picker-ask")
    expect(ask).to_be_visible()
    expect(ask).to_contain_text("¿Fue un Yahtzee adicional?")
    screenshot(olga, ARTIFACTS / "picker-asks-extra-yahtzee-360.png")
    olga.get_by_role("button", name="Sí: +100 y 15 en Treses").click()
    expect(cell(olga, "ana", "threes")).to_have_text("15")
    expect(olga.locator(BONUS.format(olga.seats["ana"]))).to_have_text("100")
    # Ben has no 50: his 15 is written at once. «No» writes Ana's 20 alone.
    tap(olga, "ben", "threes", 15)
    expect(cell(olga, "ben", "threes")).to_have_text("15")
    cell(olga, "ana", "fours").click()
    olga.locator('#picker-dialog .values button[value="20"]').click()
    olga.get_by_role("button", name="No: solo 20 en Cuatros").click()
    expect(cell(olga, "ana", "fours")).to_have_text("20")
    expect(olga.locator(BONUS.format(olga.seats["ana"]))).to_have_text("100")


NINETEEN = [
    (player, box, value)
    for player in ("ana", "ben")
    for box, value in (
        ("ones", 2),
        ("twos", 4),
        ("threes", 6),
        ("fours", 8),
        ("fives", 10),
        ("sixes", 12),
        ("three_of_a_kind", 20),
        ("four_of_a_kind", 21),
        ("full_house", 25),
        ("chance", 22),
    )
][:19]


def test_after_a_nineteen_box_sync_no_kept_cell_blinks_blank(phones, site):
    olga = phones("olga")
    go_offline(olga.context)
    for player, box, value in NINETEEN:
        tap(olga, player, box, value)
    expect(olga.locator("a.cell.unsent")).to_have_count(19)
    # Every time a kept cell shows «·» while the sync catches up, it is recorded.
    olga.evaluate(
        """cells => { window.blanks = [];
        new MutationObserver(() => cells.forEach(id => {
            const link = document.querySelector('#' + id + ' a.cell');
            if (link && link.textContent.trim() === '·') window.blanks.push(id);
        })).observe(document.getElementById('card-stream'),
            {subtree: true, childList: true, characterData: true}); }""",
        [f"c{olga.seats[p]}-{b}" for p, b, _ in NINETEEN],
    )
    go_online(olga.context)
    olga.evaluate("window.dispatchEvent(new Event('online'))")
    expect(olga.locator("a.cell.unsent")).to_have_count(0, timeout=20000)
    expect(olga.locator("#outbox")).to_be_hidden()
    olga.wait_for_timeout(1500)
    assert olga.evaluate("window.blanks") == []
    for player, box, value in NINETEEN:
        expect(cell(olga, player, box)).to_have_text(str(value))
    expect(olga.locator("#net-error")).to_be_hidden()


def test_back_after_a_log_out_shows_none_of_the_previous_user_s_pages(browser, site):
    server, _seeded = site
    # Playwright turns the back/forward cache off; real Chrome has it on.
    chrome = browser.browser_type.launch(
        executable_path="/usr/bin/chromium",
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        ignore_default_args=["--disable-back-forward-cache"],
    )
    try:
        page = chrome.new_page(viewport={"width": 360, "height": 740}, base_url=server.base)
        log_in(page, "olga")
        page.goto("/perfil/")
        expect(page.locator("h1")).to_be_visible()
        page.goto("/historial/")
        page.locator("#logout-form button").evaluate("b => b.form.requestSubmit()")
        page.wait_for_url(re.compile(r"/entrar/"))
        # Restored from the cache, a page fires no load: wait for the address alone.
        page.go_back(wait_until="commit")
        expect(page).to_have_url(re.compile(r"/entrar/"))
        page.wait_for_load_state()
        assert "Olga" not in page.locator("header").inner_text()
    finally:
        chrome.close()


def test_after_the_admin_s_log_out_offline_no_card_is_kept(phones, site):
    _server, seeded = site
    olga = phones("olga")
    olga.reload()  # seen once under the worker: kept
    olga.goto("/admin/")
    with olga.expect_navigation():
        olga.locator("form[action$='/admin/logout/']").evaluate("f => f.requestSubmit()")
    expect(olga).to_have_url(re.compile(r"/entrar/"))
    go_offline(olga.context)
    olga.goto(f"/tarjetas/{seeded['physical']}/")
    expect(olga.locator("a.cell")).to_have_count(0)
    assert "Olga" not in olga.content()


def test_a_roll_that_did_not_go_through_says_so_until_the_next_roll(phones, site):
    ana = phones("ana", card="digital")
    refused = re.compile(r".*/tirar/$")
    ana.context.route(refused, lambda route: route.abort())
    ana.get_by_role("button", name="Tirar", exact=True).click()
    alert = ana.locator("#net-error")
    expect(alert).to_have_text(re.compile("no se ha guardado nada"))
    # A poll that finds no network does not say its own words over the roll's.
    polls = re.compile(r".*/vivo/.*")
    ana.context.route(polls, lambda route: route.abort())
    ana.evaluate("htmx.trigger('#sheet-poll', 'card-moved')")
    ana.wait_for_timeout(2500)
    expect(alert).to_have_text(re.compile("no se ha guardado nada"))
    ana.context.unroute(refused)
    ana.context.unroute(polls)
    ana.get_by_role("button", name="Tirar", exact=True).click()
    expect(ana.locator("#roll-count")).to_contain_text("Tirada 1 de 3")
    expect(alert).to_be_hidden()


# Every EventSource the page opens, for a test to drop: Chromium's offline mode leaves an
# open stream open, where a phone's lost Wi-Fi ends it.
SOURCES = """window.sources = [];
const Native = window.EventSource;
window.EventSource = class extends Native {
    constructor(...args) { super(...args); window.sources.push(this); }
};"""


def test_a_stream_that_dropped_opens_again_when_the_network_is_back(phones, site):
    ana = phones("ana", card="digital")
    ana.add_init_script(SOURCES)
    ana.reload()
    opened = []
    ana.on("request", lambda r: opened.append(r.url) if "/eventos/" in r.url else None)
    expect(ana.locator("#card-stream[sse-connect]")).to_have_count(1)
    ana.wait_for_function("window.sources.length === 1")
    go_offline(ana.context)
    # Dropped three times in a minute: closed, and the poll says the card may be behind.
    for _ in range(3):
        ana.evaluate("window.sources[0].dispatchEvent(new Event('error'))")
    expect(ana.locator("#card-stream[sse-connect]")).to_have_count(0)
    expect(ana.locator("#net-error")).to_have_text(re.compile("puede no estar al día"))
    before = len(opened)
    go_online(ana.context)
    ana.evaluate("window.dispatchEvent(new Event('online'))")
    expect(ana.locator("#card-stream[sse-connect]")).to_have_count(1)
    expect(ana.locator("#net-error")).to_be_hidden()
    deadline = ana.evaluate("Date.now()") + 5000
    while len(opened) == before and ana.evaluate("Date.now()") < deadline:
        ana.wait_for_timeout(100)
    assert len(opened) > before
