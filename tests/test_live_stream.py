"""The live card's stream (scorecards.live, views.scorecard_events) served by uvicorn as in
production: who may open it, what a write, a finalize or a discard sends on it, bad
versions, a restart, the limit per user, a write on one app server heard on another, and
who follows a digital card told to the phones of both."""

import copy
import json
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote

import pytest
from django.db import connection

from scorecards import live, presence, sheets
from tests.liveserver import (
    BIN,
    HOST,
    AppServer,
    Browser,
    database_copy,
    django_script,
    query,
    run,
    seeded_template,
    server_env,
    template_database,
)

pytestmark = pytest.mark.server

POSTGRES = connection.vendor == "postgresql"
PASSWORD = "clave-de-prueba-2026"

SEED = """
import json, sys
from accounts.models import User
from scorecards.services import scorecard_create

def user(name):
    return User.objects.create_user(name, password=sys.argv[1], display_name=name.title())

olga, ana, ben, sara = (user(n) for n in ("olga", "ana", "ben", "sara"))
card = scorecard_create(organizer=olga, players=[ana, ben])
print(json.dumps({"card": card.pk, "seats": [s.pk for s in card.seats.order_by("order")]}))
"""

FINISH = """
import sys
from scorecards.models import Scorecard, Seat
from scorecards.services import scorecard_finalize
card = Scorecard.objects.get(pk=int(sys.argv[1]))
Seat.objects.filter(scorecard=card).update(
    ones=3, twos=6, threes=9, fours=12, fives=15, sixes=18, three_of_a_kind=20,
    four_of_a_kind=20, full_house=25, small_straight=30, large_straight=40, yahtzee=50,
    chance=20,
)
scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
"""

WRITE = """
import sys
from scorecards.models import Scorecard
from scorecards.services import box_write
card = Scorecard.objects.get(pk=int(sys.argv[1]))
box_write(scorecard_id=card.pk, seat_id=card.seats.order_by("order")[0].pk, box=sys.argv[2],
          value=sys.argv[3], was="", author=card.organizer)
"""

MANY = """
import sys
from scorecards.models import Scorecard
from scorecards.services import box_write
from scorecards.rules import Category
card = Scorecard.objects.get(pk=int(sys.argv[1]))
seats = list(card.seats.order_by("order"))
cells = [(seat, box) for box in Category for seat in seats][: int(sys.argv[2])]
for seat, box in cells:
    box_write(scorecard_id=card.pk, seat_id=seat.pk, box=box.value, value="0", was="",
              author=card.organizer)
"""

DIGITAL = """
import json
from accounts.models import User
from scorecards.services import scorecard_create

players = [User.objects.get(username=name) for name in ("ana", "ben")]
card = scorecard_create(
    organizer=User.objects.get(username="olga"), players=players, mode="digital"
)
print(json.dumps({"card": card.pk}))
"""

ROLL = """
import sys
from scorecards.models import Scorecard
from scorecards.turns import turn_roll
card = Scorecard.objects.get(pk=int(sys.argv[1]))
turn_roll(scorecard_id=card.pk, author=card.seats.order_by("order")[0].player, version="0",
          shown="", keep=[])
"""


@pytest.fixture(scope="module")
def template_db(tmp_path_factory):
    """Migrated once per module; every test serves a copy of it."""
    with template_database(
        "dados_stream_template", tmp_path_factory.mktemp("stream"), POSTGRES
    ) as template:
        yield template


@pytest.fixture(scope="module")
def seeded(template_db, tmp_path_factory):
    """The template with SEED's table, seeded once per module (its four passwords hashed as
    in production take a second): what every test's copy starts from, and what SEED made."""
    folder = tmp_path_factory.mktemp("seeded")
    with seeded_template(template_db, folder, POSTGRES, "dados_stream_seeded", SEED, PASSWORD) as s:
        yield s


@pytest.fixture
def db_url(seeded, tmp_path):
    with database_copy(seeded[0], tmp_path, POSTGRES, "dados_stream") as db:
        yield db


@pytest.fixture
def table(seeded, db_url):
    return copy.deepcopy(seeded[1])  # its own, for each test


@pytest.fixture
def app(db_url, table, tmp_path):
    server = AppServer(db=db_url, log=tmp_path / "uvicorn.log", workers=1, asgi=True)
    server.start()
    yield server
    server.stop()


def browser(app, username=None) -> Browser:
    phone = Browser(HOST, app.port)
    if username:
        phone.log_in(username, PASSWORD)
    return phone


def events_url(table, version=None) -> str:
    query = "" if version is None else f"?version={version}"
    return f"/tarjetas/{table['card']}/eventos/{query}"


def write_box(organizer, table, box, value, version):
    seat = table["seats"][0]
    answer = organizer.post(
        f"/tarjetas/{table['card']}/casilla/{seat}/{box}/",
        {"value": value, "was": "", "version": version},
        htmx=True,
    )
    assert answer.status == 200, answer.body[:500]
    return answer


def test_a_write_reaches_every_open_stream_of_the_card_at_once(app, table):
    olga, ana, ben = browser(app, "olga"), browser(app, "ana"), browser(app, "ben")
    streams = [phone.stream(events_url(table, 0)) for phone in (ana, ben, olga)]
    for stream in streams:
        assert stream.status == 200
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert stream.headers["Cache-Control"] == "no-cache"
        assert stream.headers["X-Accel-Buffering"] == "no"
        assert "gzip" not in stream.headers.get("Content-Encoding", "")
    try:
        write_box(olga, table, "sixes", "24", 0)  # Ana's: the turn passes to Ben
        answered = time.monotonic()
        heard = [stream.next_named("patch") for stream in streams]
        for event in heard:
            assert event.id == "1"
            assert event.at - answered < 0.5 + live.EVERY
        # The same patch for everyone, from the version the page showed: the one its
        # poll would get, which the write rendered for its own answer.
        patches = {event.data for event in heard}
        assert len(patches) == 1
        watcher = json.loads(patches.pop())
        assert watcher["base"] == 0
        assert 'id="sheet-version" name="version" form="undo-form" value="1"' in watcher["html"]
        assert ">24<" in watcher["html"]
        # Whose turn it is, for the page to say «te toca a ti» to Ben, «le toca a Ben» to
        # the others; the organizer's controls, for her page to show.
        assert "le toca a <bdi>Ben</bdi>" in watcher["html"]
        assert "te toca a ti" in watcher["html"]
        assert 'class="cell only-manager' in watcher["html"]
    finally:
        for stream in streams:
            stream.close()
    # The same bytes as the poll's answer (the poll finds it in the cache).
    polled = ana.get(f"/tarjetas/{table['card']}/vivo/?version=0", htmx=True)
    assert polled.headers["x-dados-shared"] == "hit"  # uvicorn sends names lowercased
    assert polled.body == watcher["html"]


def test_a_page_behind_hears_at_once_and_a_reconnect_says_what_it_heard(app, table):
    olga, ana = browser(app, "olga"), browser(app, "ana")
    write_box(olga, table, "ones", "3", 0)
    write_box(olga, table, "twos", "6", 1)
    stream = ana.stream(events_url(table, 0))
    heard = stream.next_named("patch")
    assert (heard.id, json.loads(heard.data)["base"]) == ("2", 0)
    stream.close()
    # EventSource reconnects to the same address, with the last id it heard.
    stream = ana.stream(events_url(table, 0), last_event_id=1)
    heard = stream.next_named("patch")
    assert (heard.id, json.loads(heard.data)["base"]) == ("2", 1)
    assert ">3<" not in json.loads(heard.data)["html"]  # only what changed after 1
    stream.close()


def test_a_page_too_far_behind_is_told_to_ask_for_the_whole_sheet(app, table, db_url):
    django_script(db_url, MANY, str(table["card"]), str(sheets.PATCH_LIMIT + 1))
    ana = browser(app, "ana")
    stream = ana.stream(events_url(table, 0))
    heard = stream.next_named("patch", "version")
    assert (heard.name, heard.id) == ("version", str(sheets.PATCH_LIMIT + 1))
    stream.close()
    # From one change behind, the patch.
    stream = ana.stream(events_url(table, sheets.PATCH_LIMIT))
    assert stream.next_named("patch", "version").name == "patch"
    stream.close()


def test_a_digital_turns_forms_and_dice_come_in_the_events(app, table, db_url):
    card = json.loads(django_script(db_url, DIGITAL, "").strip().splitlines()[-1])
    url = f"/tarjetas/{card['card']}/eventos/?version=0"
    olga, ana, ben = browser(app, "olga"), browser(app, "ana"), browser(app, "ben")
    streams = [phone.stream(url) for phone in (ana, olga, ben)]
    try:
        django_script(db_url, ROLL, str(card["card"]))
        heard = [stream.next_named("patch", "version") for stream in streams]
        assert [(event.name, event.id) for event in heard] == [("patch", "1")] * 3
        # One patch for all three: the turn's forms, for Ana and the organizer, who may play
        # any seat; without a CSRF token (htmx sends the page's); the dice, for Ben.
        assert len({event.data for event in heard}) == 1
        html = json.loads(heard[0].data)["html"]
        assert '<span class="only-mine">Tirar</span>' in html
        assert "Tirar por <bdi>Ana</bdi>" in html
        assert '<div class="only-player">' in html
        assert html.count('<span class="die"') == 5
        assert "csrfmiddlewaretoken" not in html
    finally:
        for stream in streams:
            stream.close()


@pytest.mark.parametrize("version", ["abc", "-1", "1.0", "", "9999999999", "3", "ñ"])
def test_a_malformed_or_future_version_is_refused_and_changes_nothing(app, table, version):
    ana = browser(app, "ana")
    answer = ana.stream(events_url(table) + "?version=" + quote(version))
    try:
        assert answer.status == 400
        assert answer.response.read().decode() == "Esa versión de la tarjeta no existe."
    finally:
        answer.close()
    seen = ana.get(f"/tarjetas/{table['card']}/vivo/?version=0", htmx=True)
    assert seen.status == 204  # still at version 0


def test_who_may_open_a_cards_stream(app, table):
    stranger = browser(app, "sara").stream(events_url(table, 0))
    assert stranger.status == 404
    stranger.close()
    logged_out = browser(app).stream(events_url(table, 0))
    assert logged_out.status == 302
    assert logged_out.headers["Location"].startswith("/entrar/?next=/tarjetas/")
    logged_out.close()
    missing = browser(app, "ana").stream(f"/tarjetas/{table['card'] + 1000}/eventos/?version=0")
    assert missing.status == 404
    missing.close()
    post = browser(app, "ana").post(events_url(table, 0))
    assert post.status == 405


def test_a_finalized_card_ends_its_streams_with_the_finished_card(app, table, db_url):
    ana = browser(app, "ana")
    stream = ana.stream(events_url(table, 0))
    try:
        django_script(db_url, FINISH, str(table["card"]))
        heard = stream.next_named("version", "end")
        assert heard.name == "version"
        final = heard.id
        assert stream.next_named("version", "end").name == "end"
        assert stream.next() is None  # the server closed it
    finally:
        stream.close()
    # A browser that reconnects anyway is told there is nothing more (204: do not retry).
    again = ana.stream(events_url(table, 0), last_event_id=final)
    assert again.status == 204
    again.close()
    # A page still behind hears the last version, then the end.
    behind = ana.stream(events_url(table, 0))
    assert behind.next_named("version").id == final
    assert behind.next_named("version", "end").name == "end"
    behind.close()


def test_a_discarded_card_ends_its_streams(app, table):
    olga, ana = browser(app, "olga"), browser(app, "ana")
    stream = ana.stream(events_url(table, 0))
    try:
        olga.get(f"/tarjetas/{table['card']}/descartar/")
        assert olga.post(f"/tarjetas/{table['card']}/descartar/").status == 302
        assert stream.next_named("version", "end").name == "end"
        assert stream.next() is None
    finally:
        stream.close()
    gone = ana.stream(events_url(table, 0))
    assert gone.status == 404
    gone.close()


def test_after_a_restart_the_stream_reconnects_and_catches_up(app, table, db_url):
    ana = browser(app, "ana")
    stream = ana.stream(events_url(table, 0))
    assert stream.status == 200
    app.stop()
    # The stream ends with the server (cut off or closed: nothing more arrives).
    try:
        while stream.next() is not None:
            pass
    except (ConnectionError, TimeoutError):
        pass
    stream.close()
    # While it is down, a write lands by another way (another app server, say).
    django_script(db_url, WRITE, str(table["card"]), "fives", "15")
    app.start()
    again = ana.stream(events_url(table, 0), last_event_id=0)
    assert again.next_named("patch").id == "1"
    again.close()


def test_one_user_cannot_hold_an_unbounded_number_of_streams(app, table):
    ana = browser(app, "ana")
    held = [ana.stream(events_url(table, 0)) for _ in range(live.MAX_PER_USER)]
    try:
        assert [s.status for s in held] == [200] * live.MAX_PER_USER
        refused = ana.stream(events_url(table, 0))
        assert refused.status == 429
        assert refused.response.read().decode() == "Demasiadas tarjetas abiertas a la vez."
        refused.close()
        # Another user is not held back by Ana's streams.
        other = browser(app, "ben").stream(events_url(table, 0))
        assert other.status == 200
        other.close()
    finally:
        for stream in held:
            stream.close()
    # Closed streams count no more (the server notices within a heartbeat at the latest).
    deadline = time.monotonic() + live.HEARTBEAT + 5
    while True:
        again = ana.stream(events_url(table, 0))
        status = again.status
        again.close()
        if status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status == 200


def test_simultaneous_opens_cannot_pass_the_limit_per_user(app, table):
    ana = browser(app, "ana")
    opens = 3 * live.MAX_PER_USER
    with ThreadPoolExecutor(max_workers=opens) as pool:
        streams = list(pool.map(lambda _: ana.stream(events_url(table, 0)), range(opens)))
    try:
        statuses = sorted(stream.status for stream in streams)
        assert statuses == [200] * live.MAX_PER_USER + [429] * (opens - live.MAX_PER_USER)
    finally:
        for stream in streams:
            stream.close()


DEACTIVATE = """
import sys
from accounts.models import User
User.objects.filter(username=sys.argv[1]).update(is_active=False)
"""


def _log_out(app, ana, db_url):
    assert ana.post("/salir/").status == 302


def _deactivate(app, ana, db_url):
    django_script(db_url, DEACTIVATE, "ana")


def _change_password_elsewhere(app, ana, db_url):
    other = browser(app, "ana")
    changed = other.post(
        "/contrasena/",
        {
            "old_password": PASSWORD,
            "new_password1": "otra-clave-bien-larga-42",
            "new_password2": "otra-clave-bien-larga-42",
        },
    )
    assert changed.status == 302, changed.body[:500]


@pytest.mark.parametrize("ended", [_log_out, _deactivate, _change_password_elsewhere])
def test_a_stream_sends_nothing_more_once_its_session_has_ended(app, table, db_url, ended):
    ana, ben, olga = browser(app, "ana"), browser(app, "ben"), browser(app, "olga")
    streams = {"ana": ana.stream(events_url(table, 0)), "ben": ben.stream(events_url(table, 0))}
    try:
        ended(app, ana, db_url)
        write_box(olga, table, "fives", "15", 0)
        # Ben, still logged in, hears the write; Ana's page is sent to log in, and her
        # stream ends without it.
        assert streams["ben"].next_named("patch").id == "1"
        told = streams["ana"].next_named("patch", "version", "login")
        assert told.name == "login"
        assert told.data == f"/entrar/?next={quote(f'/tarjetas/{table["card"]}/')}"
        assert streams["ana"].next() is None
    finally:
        for stream in streams.values():
            stream.close()


def test_a_stream_whose_session_ended_says_so_at_its_next_heartbeat(app, table):
    ana = browser(app, "ana")
    stream = ana.stream(events_url(table, 0), timeout=live.HEARTBEAT + 10)
    try:
        assert stream.next().data == ""  # retry
        assert ana.post("/salir/").status == 302
        started = time.monotonic()
        told = stream.next_named("patch", "version", "login")
        assert told.name == "login"
        assert told.at - started < live.HEARTBEAT + 2
        assert stream.next() is None
    finally:
        stream.close()


def test_two_app_servers_share_one_render_of_a_patch_in_the_database_cache(table, db_url, tmp_path):
    shared = {"CACHE": "database"}  # the default: the tests' is each process's memory
    # Made by migrate, as on any deployment (scorecards.apps).
    run([BIN / "python", "manage.py", "migrate", "--noinput"], server_env(db_url) | shared)
    servers = [
        AppServer(db=db_url, log=tmp_path / f"{n}.log", workers=1, asgi=True, env=shared)
        for n in ("one", "two")
    ]
    for server in servers:
        server.start()
    try:
        # The write renders its answer's patch and keeps it for everyone.
        written = write_box(browser(servers[0], "olga"), table, "ones", "3", 0)
        poll = f"/tarjetas/{table['card']}/vivo/?version=0"
        first = browser(servers[0], "ana").get(poll, htmx=True)
        second = browser(servers[1], "ana").get(poll, htmx=True)
        assert first.status == 200, (first.status, first.body[:300])
        assert first.headers["x-dados-shared"] == "hit"
        assert second.headers["x-dados-shared"] == "hit"  # rendered by the other process
        assert second.body == first.body == written.body
    finally:
        for server in servers:
            server.stop()


@pytest.mark.skipif(not POSTGRES, reason="PostgreSQL's pool of connections: its pass")
def test_open_streams_hold_no_database_connection(table, db_url, tmp_path):
    # A pool of two connections: were each stream to keep its request's, the third could
    # not open (it would wait for the pool, and the page's request after it too).
    small = AppServer(
        db=db_url, log=tmp_path / "small.log", workers=1, asgi=True,
        env={"DATABASE_POOL_SIZE": "2"},
    )  # fmt: skip
    small.start()
    held = []
    try:
        ana, ben = browser(small, "ana"), browser(small, "ben")
        for phone in (ana, ben, ana, ben, ana, ben):
            held.append(phone.stream(events_url(table, 0), timeout=5))
        assert [stream.status for stream in held] == [200] * 6
        assert ana.get(f"/tarjetas/{table['card']}/").status == 200
        write_box(browser(small, "olga"), table, "ones", "3", 0)
        for stream in held:
            assert stream.next_named("patch").id == "1"
    finally:
        for stream in held:
            stream.close()
        small.stop()


@pytest.mark.skipif(not POSTGRES, reason="two app servers share PostgreSQL: its pass")
def test_a_write_on_one_app_server_reaches_a_stream_on_another(app, table, db_url, tmp_path):
    other = AppServer(db=db_url, log=tmp_path / "other.log", workers=1, asgi=True)
    other.start()
    try:
        olga = browser(app, "olga")
        stream = browser(other, "ana").stream(events_url(table, 0))
        write_box(olga, table, "threes", "9", 0)
        answered = time.monotonic()
        heard = stream.next_named("patch")
        assert heard.id == "1"
        assert heard.at - answered < 0.5 + live.EVERY
        stream.close()
    finally:
        other.stop()


# Who follows a digital card (scorecards.presence), between two app servers


def told(stream, data, within=10.0):
    """The stream's «presence» event that says `data`, skipping earlier ones."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        event = stream.next_named("presence")
        assert event is not None, "the stream ended"
        if event.data == data:
            return event
    raise AssertionError(f"not told {data!r} within {within} s")


def test_two_app_servers_tell_each_others_phones_who_follows_a_digital_card(
    table, db_url, tmp_path
):
    shared = {"CACHE": "database"}  # the default: the tests' is each process's memory
    run([BIN / "python", "manage.py", "migrate", "--noinput"], server_env(db_url) | shared)
    card = json.loads(django_script(db_url, DIGITAL).strip().splitlines()[-1])["card"]
    ids = dict(query(db_url, "SELECT username, id FROM accounts_user"))
    servers = [
        AppServer(db=db_url, log=tmp_path / f"{n}.log", workers=1, asgi=True, env=shared)
        for n in ("one", "two")
    ]
    for server in servers:
        server.start()
    path = f"/tarjetas/{card}/eventos/?version=0"
    streams = []
    try:
        streams.append(browser(servers[0], "ana").stream(path))
        streams.append(browser(servers[1], "ben").stream(path))
        ana, ben = streams
        both = " ".join(str(pk) for pk in sorted([ids["ana"], ids["ben"]]))
        told(ana, both)
        told(ben, both)
        # Ben's phone leaves: Ana's, on the other server, is told within a few seconds.
        ben.close()
        closed = time.monotonic()
        gone = told(ana, str(ids["ana"]))
        assert gone.at - closed < presence.GRACE + 2 * presence.EVERY + 1.5
        # Olga follows too, but plays no seat: nothing to say of her.
        streams.append(browser(servers[1], "olga").stream(path))
        ana.conn.sock.settimeout(3 * presence.EVERY)
        with pytest.raises(TimeoutError):
            ana.next_named("presence")
    finally:
        for stream in streams:
            stream.close()
        for server in servers:
            server.stop()
