"""The card in the organizer's hand, at 360 px on uvicorn, with the network cut in Chromium
(tests.browsing.go_offline): taps show at once and are kept until the server has them, each
taken exactly once; a reload without a network shows the card with them; a conflict is
shown with both values; another user on the same browser never sends them."""

import contextlib
import re
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from tests.browsing import go_offline, go_online, kept_writes, screenshot
from tests.liveserver import django_script, query

pytestmark = [pytest.mark.browser, pytest.mark.server]
ARTIFACTS = Path(__file__).parent / "artifacts"

SEED = """
import json, sys
from accounts.models import User
from scorecards.services import scorecard_create

def user(name, **extra):
    return User.objects.create_user(name, password=sys.argv[1], display_name=name.title(), **extra)

olga, ana, ben = (user(n) for n in ("olga", "ana", "ben"))
olga.is_staff = True
olga.save()
physical = scorecard_create(organizer=olga, players=[ana, ben])
digital = scorecard_create(organizer=olga, players=[ana, ben], mode="digital")
seats = {seat.player.username: seat.pk for seat in physical.seats.all()}
print(json.dumps({"physical": physical.pk, "digital": digital.pk, "seats": seats}))
"""

BOXES = re.compile(r".*/casilla/.*")  # the box writes' addresses

# Ten boxes: the upper section of both players.
TEN = [
    (player, box, value)
    for player in ("ana", "ben")
    for box, value in (("ones", 3), ("twos", 6), ("threes", 9), ("fours", 12), ("fives", 15))
]


def cell(page, player, box):
    return page.locator(f"#c{page.seats[player]}-{box} a.cell")


def tap(page, player, box, value):
    cell(page, player, box).click()
    page.locator(f'#picker-dialog button[name="value"][value="{value}"]').click()


def kept_pages(page):
    """The addresses of the pages the service worker keeps for a reload offline."""
    return page.evaluate(
        "caches.open('dados-pages').then(c => c.keys())"
        ".then(r => r.map(q => new URL(q.url).pathname))"
    )


def changes(site, card):
    server, seeded = site
    return query(
        server.db, "SELECT count(*) FROM scorecards_change WHERE scorecard_id = %s", seeded[card]
    )[0][0]


def test_ten_boxes_entered_offline_survive_a_reload_and_are_each_taken_once(phones, site):
    olga = phones("olga")
    # Seen once online under the worker: the page is kept for a reload without a network.
    olga.reload()
    go_offline(olga.context)
    for player, box, value in TEN:
        tap(olga, player, box, value)
        expect(cell(olga, player, box)).to_have_text(str(value))
    # One too many: «Deshacer» takes it back out of the outbox, never sent.
    tap(olga, "ben", "sixes", 18)
    expect(olga.locator("a.cell.unsent")).to_have_count(11)
    olga.get_by_role("button", name="↶ Deshacer").click()
    expect(olga.locator("#undo-status")).to_have_text("Quitado sin enviar: Seises — Ben, 18")
    expect(cell(olga, "ben", "sixes")).to_have_text("·")
    expect(olga.locator("a.cell.unsent")).to_have_count(10)
    expect(olga.locator("#outbox-status")).to_have_text(
        "Sin conexión: 10 casillas pendientes de enviar"
    )
    expect(cell(olga, "ana", "threes")).to_have_attribute(
        "aria-label", "Treses — Ana: 9, pendiente de enviar"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(olga, ARTIFACTS / "outbox-offline-360.png", full_page=True)
    assert changes(site, "physical") == 0

    olga.reload()  # still offline: the page kept, and the writes kept over it
    expect(olga.locator("a.cell.unsent")).to_have_count(10)
    expect(cell(olga, "ben", "fives")).to_have_text("15")
    screenshot(olga, ARTIFACTS / "outbox-offline-reloaded-360.png", full_page=True)

    go_online(olga.context)
    expect(olga.locator("a.cell.unsent")).to_have_count(0, timeout=10000)
    expect(olga.locator("#outbox")).to_be_hidden()
    assert changes(site, "physical") == 10
    ana_sum = olga.locator("#row-upper td").nth(0)
    expect(ana_sum).to_have_text("45")
    ben = phones("ben")
    for player, box, value in TEN:
        expect(ben.locator(f"#c{ben.seats[player]}-{box} span.cell")).to_contain_text(str(value))


def test_a_write_whose_answer_is_lost_is_sent_again_and_taken_once(phones, site):
    olga = phones("olga")
    lost = []

    def cut_on_the_way_back(route):
        response = route.fetch()  # the server takes the write
        lost.append(response.status)
        # and its answer never arrives (unless the page stopped waiting first)
        with contextlib.suppress(PlaywrightError):
            route.abort("internetdisconnected")

    # On the context: the page's requests pass through its service worker.
    olga.context.route(BOXES, cut_on_the_way_back)
    tap(olga, "ana", "ones", 3)
    expect(olga.locator("#outbox-status")).to_have_text(
        "Sin conexión: 1 casilla pendiente de enviar"
    )
    # Taken each time it was sent (the page retries when its stream opens, say).
    assert lost
    assert set(lost) == {200}
    assert changes(site, "physical") == 1
    olga.context.unroute(BOXES)
    olga.evaluate("window.dispatchEvent(new Event('online'))")
    expect(olga.locator("a.cell.unsent")).to_have_count(0, timeout=10000)
    expect(cell(olga, "ana", "ones")).to_have_text("3")
    expect(olga.locator(".outbox-conflicts li")).to_have_count(0)
    assert changes(site, "physical") == 1


def test_deshacer_while_the_write_is_on_its_way_undoes_that_write_once_answered(phones, site):
    olga = phones("olga")
    tap(olga, "ana", "twos", 6)
    expect(cell(olga, "ana", "twos")).not_to_have_class(re.compile("unsent"), timeout=10000)
    held = []

    def hold_the_answer(route):
        held.append((route, route.fetch()))  # the server takes it; its answer waits

    olga.context.route(BOXES, hold_the_answer)
    tap(olga, "ana", "ones", 3)
    for _ in range(250):  # until the server has taken it (5 s at most)
        if held:
            break
        olga.wait_for_timeout(20)
    assert held
    olga.get_by_role("button", name="↶ Deshacer").click()
    # Sent now, the undo would get there first and undo Doses: it waits for the answer.
    olga.wait_for_timeout(500)
    assert changes(site, "physical") == 2
    route, response = held[0]
    route.fulfill(response=response)
    said = olga.locator("#undo-status")
    expect(said).to_have_text("Deshecho: Unos de Ana, 3 → sin anotar")
    expect(cell(olga, "ana", "ones")).to_have_text("·")
    expect(cell(olga, "ana", "twos")).to_have_text("6")
    assert changes(site, "physical") == 3
    olga.context.unroute(BOXES)


def test_deshacer_right_after_a_tap_offline_takes_it_back_and_nothing_is_sent(phones, site):
    olga = phones("olga")
    go_offline(olga.context)
    # The tap and «Deshacer» at once, before the outbox has stored the write.
    olga.evaluate(
        """() => {
            document.querySelector('a.cell[aria-label^="Unos — Ana:"]').click();
            document.querySelector('#picker-dialog button[name="value"][value="3"]').click();
            document.getElementById("undo-button").click();
        }"""
    )
    expect(olga.locator("#undo-status")).to_have_text("Quitado sin enviar: Unos — Ana, 3")
    expect(cell(olga, "ana", "ones")).to_have_text("·")
    go_online(olga.context)
    olga.evaluate("window.dispatchEvent(new Event('online'))")
    olga.wait_for_timeout(1000)
    assert changes(site, "physical") == 0
    assert kept_writes(olga) == 0


# Ana's box, written by Olga on another device (the server's own write, as a page's).
ELSEWHERE = """
import sys
from accounts.models import User
from scorecards.services import box_write

card, seat, box, value, was = sys.argv[1:]
olga = User.objects.get(username="olga")
box_write(scorecard_id=int(card), seat_id=int(seat), box=box, value=value, was=was, author=olga)
"""


def write_elsewhere(site, box, *, value, was):
    server, seeded = site
    card, seat = str(seeded["physical"]), str(seeded["seats"]["ana"])
    django_script(server.db, ELSEWHERE, card, seat, box, value, was)


def test_a_conflict_shows_both_values_and_the_organizers_choice(phones, site):
    olga = phones("olga")
    go_offline(olga.context)
    tap(olga, "ana", "ones", 3)
    tap(olga, "ana", "twos", 6)
    # Meanwhile the box is written on another device.
    write_elsewhere(site, "ones", value="4", was="")
    go_online(olga.context)
    olga.evaluate("window.dispatchEvent(new Event('online'))")
    conflict = olga.locator(".outbox-conflicts li")
    expect(conflict).to_have_text(
        re.compile(r"Unos — Ana: otro móvil anotó 4 antes; tu 3 no se ha anotado\.")
    )
    expect(cell(olga, "ana", "twos")).not_to_have_class(re.compile("unsent"), timeout=10000)
    expect(cell(olga, "ana", "ones")).to_have_text("4")
    screenshot(olga, ARTIFACTS / "outbox-conflict-360.png", full_page=True)
    conflict.get_by_role("button", name="Volver a anotar").click()
    expect(conflict).to_have_count(0)
    expect(cell(olga, "ana", "ones")).to_have_text("3")
    expect(cell(olga, "ana", "ones")).not_to_have_class(re.compile("unsent"))
    assert changes(site, "physical") == 3

    # «Descartar» drops it: the server's value stays.
    go_offline(olga.context)
    tap(olga, "ana", "ones", 2)
    write_elsewhere(site, "ones", value="1", was="3")
    go_online(olga.context)
    olga.evaluate("window.dispatchEvent(new Event('online'))")
    expect(conflict).to_have_count(1)
    conflict.get_by_role("button", name="Descartar").click()
    expect(olga.locator("#outbox")).to_be_hidden()
    expect(cell(olga, "ana", "ones")).to_have_text("1")
    assert changes(site, "physical") == 4


def test_another_user_on_the_same_browser_never_sends_the_first_ones_writes(phones, site):
    olga = phones("olga")
    go_offline(olga.context)
    tap(olga, "ana", "ones", 3)
    # Back online, but the writes find no server: they stay kept.
    olga.context.route(BOXES, lambda route: route.abort("internetdisconnected"))
    go_online(olga.context)
    olga.reload()
    expect(olga.locator("a.cell.unsent")).to_have_count(1)
    # Log-out with a write kept asks first.
    asked = []
    olga.on("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    olga.locator(".site-user summary").click()
    olga.get_by_role("button", name="Cerrar sesión").click()
    olga.wait_for_url(re.compile(r"/entrar/"))
    assert len(asked) == 1
    assert "pendientes de enviar" in asked[0]
    assert kept_pages(olga) == []
    olga.context.unroute(BOXES)
    ana = phones("ana", context=olga.context)
    ana.wait_for_timeout(1500)
    assert changes(site, "physical") == 0
    expect(ana.locator("a.cell.unsent")).to_have_count(0)
    expect(ana.locator(".unsent")).to_have_count(0)


def test_without_a_network_the_alert_stays_put_while_taps_are_kept(phones, site):
    olga = phones("olga")
    go_offline(olga.context)
    # The card's poll finds no network and says so, above the card.
    olga.evaluate("htmx.trigger('#sheet-poll', 'card-moved', {version: 999})")
    alert = olga.locator("#net-error")
    expect(alert).to_have_text("Sin conexión: la tarjeta puede no estar al día.")
    top = olga.locator("#sheet").bounding_box()["y"]
    for box, value in (("ones", 3), ("twos", 6)):
        tap(olga, "ana", box, value)
        expect(cell(olga, "ana", box)).to_have_text(str(value))
        expect(olga.locator("#outbox-status")).to_contain_text("Sin conexión")
        # Its try to send finds no network either: the alert stays, and the card with it.
        olga.wait_for_timeout(300)
        expect(alert).to_be_visible()
        assert olga.locator("#sheet").bounding_box()["y"] == top
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot(olga, ARTIFACTS / "outbox-offline-bar-360.png")
    go_online(olga.context)
    olga.evaluate("window.dispatchEvent(new Event('online'))")
    expect(olga.locator("a.cell.unsent")).to_have_count(0, timeout=10000)
    expect(alert).to_be_hidden()  # an answer: the network is back
    assert changes(site, "physical") == 2


def test_digital_play_offline_says_it_needs_the_network_and_queues_nothing(phones, site):
    olga = phones("olga", card="digital")
    go_offline(olga.context)
    olga.get_by_role("button", name=re.compile("Tirar")).click()
    expect(olga.locator("#net-error")).to_have_text(re.compile("necesita conexión"))
    go_online(olga.context)
    assert kept_writes(olga) == 0


def test_the_service_worker_keeps_only_the_card_pages_seen(phones, site):
    _server, seeded = site
    olga = phones("olga")
    olga.reload()  # under the worker
    card = f"/tarjetas/{seeded['physical']}/"
    olga.goto("/admin/")
    olga.goto("/historial/")
    # An answer to a POST (the language switch, a navigation).
    olga.get_by_role("button", name="English").click()
    olga.wait_for_load_state()
    assert kept_pages(olga) == [card]
    # A card page the server marks no-store is not kept either.
    other = f"/tarjetas/{seeded['digital']}/"
    olga.context.route(
        re.compile(f".*{other}$"),
        lambda route: route.fulfill(
            response=route.fetch(), headers={"Cache-Control": "private, no-store"}
        ),
    )
    olga.goto(other)
    expect(olga.locator("#sheet")).to_be_visible()
    assert kept_pages(olga) == [card]
    # The static files, by the names the pages load them by, in one cache.
    static = olga.evaluate(
        "caches.keys().then(names => names.filter(n => n.startsWith('dados-static-')))"
    )
    assert len(static) == 1
    css = olga.locator("link[rel=stylesheet]").get_attribute("href")
    assert re.search(r"dados\.[0-9a-f]{12}\.css$", css)
    kept = olga.evaluate(
        f"caches.open('{static[0]}').then(c => c.keys()).then(r => r.map(q => q.url))"
    )
    assert any(url.endswith(css) for url in kept)
    go_offline(olga.context)
    olga.goto(card)
    expect(olga.locator("#sheet")).to_be_visible()
    # A page never seen offline: the offline page, with a way back.
    olga.goto("/clasificacion/")
    expect(olga.get_by_role("heading", level=1)).to_have_text(re.compile("Sin conexión|Offline"))
    expect(
        olga.get_by_role("link", name=re.compile("Volver a intentarlo|Try again"))
    ).to_be_visible()
    screenshot(olga, ARTIFACTS / "outbox-offline-page-360.png")


def test_background_sync_sends_the_writes_kept_with_the_card_closed(phones, site):
    olga = phones("olga")
    go_offline(olga.context)
    tap(olga, "ana", "ones", 3)
    tap(olga, "ben", "twos", 4)
    # What needs the server says so, instead of failing.
    olga.get_by_role("link", name="Descartar tarjeta").click()
    expect(olga.locator("#net-error")).to_have_text(re.compile("necesita conexión"))
    olga.goto("/sin-conexion/")  # the card's page is gone: it can no longer send them
    assert changes(site, "physical") == 0
    go_online(olga.context)
    sync(olga)
    assert changes_within(olga, site, 2) == 2
    olga.goto(f"/tarjetas/{site[1]['physical']}/")
    expect(cell(olga, "ben", "twos")).to_have_text("4")
    expect(olga.locator("a.cell.unsent")).to_have_count(0)


def changes_within(page, site, wanted, seconds=10):
    """The card's changes once there are `wanted`, or after `seconds`."""
    deadline = page.evaluate("Date.now()") + seconds * 1000
    while changes(site, "physical") < wanted and page.evaluate("Date.now()") < deadline:
        page.wait_for_timeout(100)
    return changes(site, "physical")


def sync(olga):
    """The browser's Background Sync, as Chromium fires it when the network is back."""
    cdp = olga.context.new_cdp_session(olga)
    registrations = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda e: registrations.extend(e["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    olga.wait_for_timeout(200)
    origin = olga.evaluate("location.origin")
    registration = next(r for r in registrations if not r["isDeleted"])
    cdp.send(
        "ServiceWorker.dispatchSyncEvent",
        {
            "origin": origin,
            "registrationId": registration["registrationId"],
            "tag": "dados-outbox",
            "lastChance": False,
        },
    )
