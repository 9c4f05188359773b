"""The bench's own logic (bench/run.py's verdict), its floor views (bench/views.py) and
how its digital phones play (bench/pages.py, through the app's own answers).

No timing here: `make bench` measures, these only check what it concludes from numbers.
"""

import random
from argparse import Namespace
from collections import Counter
from urllib.parse import urlencode

import pytest
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client
from django.urls import NoReverseMatch, reverse

from bench.pages import Turn, hidden, keep, move, read_turn
from bench.run import BUDGET_MS, FLOORS, combine, headline, misses, table
from bench.seed import tables
from scorecards.models import Change, Roll, Scorecard
from scorecards.rules import Category
from tests.factories import UserFactory

HTMX = {"HX-Request": "true"}
FORM = "application/x-www-form-urlencoded"


def _run(p95, errors=0, floor_p95=5, roll_p95=20):
    stats = {
        "box write": {"count": 60, "errors": errors, "p50": 8, "p95": p95, "p99": p95 + 1},
        "roll": {"count": 90, "errors": 0, "p50": 12, "p95": roll_p95, "p99": roll_p95 + 1},
        "roll, refused (409)": {"count": 1, "errors": 0, "p50": 9, "p95": 9, "p99": 9},
        FLOORS["read"]: {"count": 60, "errors": 0, "p50": 4, "p95": floor_p95, "p99": 9},
        FLOORS["write"]: {"count": 60, "errors": 0, "p50": 6, "p95": 30, "p99": 40},
    }
    return {
        "seconds": 60.0,
        "stats": {**stats, "create card": {"count": 50, "errors": 1}},
        "errors": [],
        "generator": {"cpu": 0.2, "late_p99_ms": 2.0, "schedule": 1.0},
        "machine": {"busy": 0.7, "server": 1.1, "database": 0.0, "others": 0.0, "disk": 0.1,
                    "loadavg": ["2.0", "1.0", "0.5"], "cores": 2},
    }  # fmt: skip


def test_the_verdict_is_on_the_median_run_and_every_error():
    held = combine([_run(40), _run(BUDGET_MS + 500), _run(60)])
    assert held["rows"]["box write"]["p95"] == 60
    assert held["rows"]["box write"]["rps"] == 1.0
    assert "create card" not in held["rows"]  # the warm-up's requests are not reported
    assert misses(held) == []
    missed = combine([_run(40), _run(BUDGET_MS + 1), _run(BUDGET_MS + 2)])
    assert misses(missed) == ["box write: p95 101 ms, 0 errors"]
    assert misses(combine([_run(40, errors=1), _run(40), _run(40)])) != []


def test_a_slow_floor_is_reported_not_judged():
    assert misses(combine([_run(40, floor_p95=BUDGET_MS * 3)])) == []


def test_each_run_says_what_the_floors_and_the_servers_did_that_minute():
    # A run not counted or counted, in a line: its worst request beside the floors', and
    # the CPU per table of the servers and of the load generator.
    line = headline(_run(150, floor_p95=120), tables=100)
    assert line.startswith("worst p95 150 ms (box write), the floors' 120 / 30 ms (GET / write)")
    assert "servers 1.10 cores (0.0110 a table), the generator 0.20 (0.0020)" in line


def test_the_floors_are_only_in_the_benchs_own_urls(db, client, django_user_model, settings):
    for name in ("bench_floor_get", "bench_floor_write"):
        with pytest.raises(NoReverseMatch):
            reverse(name)
    settings.ROOT_URLCONF = "bench.urls"
    url = reverse("bench_floor_write")
    assert client.post(url).status_code == 302  # to the log-in page
    user = django_user_model.objects.create_user("suelo", password="x")
    client.force_login(user)
    django_user_model.objects.filter(pk=user.pk).update(last_login=None)
    assert client.get(reverse("bench_floor_get")).content == b"ok"
    assert client.post(url).content == b"ok"  # the one row it writes
    user.refresh_from_db()
    assert user.last_login is not None


def test_a_digital_turn_is_judged_like_a_box_write():
    summary = combine([_run(40, roll_p95=BUDGET_MS + 1)])
    assert misses(summary) == ["roll: p95 101 ms, 0 errors"]
    assert summary["rows"]["roll, refused (409)"]["count"] == 1  # counted apart, not an error
    args = Namespace(duration=60, digital=0.5, server=None)
    lines = table("SQLite", 4, {**summary, "retried": 0}, args).splitlines()
    assert "4 tables (24 phones, 2 of them digital)" in lines[1]
    assert "| roll | 90 | 0 | 1.5 | 12 | 101 | 102 | 2.0x |" in lines  # p50 ÷ the write floor's


def _streamed(run, *, p95, behind=0):
    delivery = {"count": 300, "p50": 120, "p95": p95, "p99": p95 + 10}
    run["streams"] = {
        "open_mean": 27.0, "open_max": 27, "phones": 30, "streaming_phones": 27,
        "shared_hit": 60, "shared_miss": 40, "shared_sheet": 0,
        "delivery_stream": delivery, "delivery_poll": {**delivery, "p95": 2700},
        "delivery_event": delivery, "undelivered": 0, "behind": behind,
        "behind_examples": ["table 1 seat 2 (stream): shows 3 of card 9, at 4"] if behind else [],
        "memory_mb": [250.0, 255.0, 260.0], "memory_streams": [27, 27],
        "memory_per_stream_kb": 190.0,
    }  # fmt: skip
    return run


def test_the_stream_is_judged_on_its_delivery_and_on_every_phone_ending_up_to_date():
    held = combine([_streamed(_run(40), p95=300), _streamed(_run(40), p95=900)] * 2)
    assert held["streams"]["delivery_stream"]["p95"] == 600  # the median of the runs'
    assert misses(held) == ["delivery to stream phones: p95 600 ms"]
    assert misses(combine([_streamed(_run(40), p95=300)])) == []
    lost = combine([_streamed(_run(40), p95=300), _streamed(_run(40), p95=300, behind=1)])
    assert misses(lost) == ["1 phones did not end at their card's last version"]
    args = Namespace(duration=60, digital=0.5, server=None)
    lines = table("SQLite, stream", 5, {**lost, "retried": 0}, args, "stream").splitlines()
    assert "MISSES" in lines[1]
    assert any("60% from the shared cache" in line for line in lines)
    assert any("190 KiB per open stream" in line for line in lines)
    assert "- behind: table 1 seat 2 (stream): shows 3 of card 9, at 4" in lines


def test_every_phone_of_the_club_night_is_a_person_of_its_own(db, django_user_model):
    """Past the seeded players, newcomers: a user holds one table's streams, not twelve
    (the server refuses a user's ninth), as at a real club."""
    club = UserFactory.create_batch(5)
    night = tables(3, floors=2)
    seated = [pk for table in night["tables"] for pk in table["users"]]
    assert len(seated) == len(set(seated)) == 18
    assert seated[:5] == [u.pk for u in club]
    assert django_user_model.objects.count() == 20
    floors = [int(SessionStore(key)[SESSION_KEY]) for key in night["floor_sessions"]]
    assert len(floors) == 2
    assert not set(floors) & set(seated)


def test_a_phone_holds_the_most_common_face_and_scores_the_best_box():
    assert keep("35365") == ["2", "5"]  # the higher face of two pairs
    assert keep("66662") == ["1", "2", "3", "4"]
    assert keep("12345") == ["5"]
    rolling = Turn(seat=0, version="7", dice="24224", roll=True, boxes={"twos": 6})
    assert move(rolling) == (
        "roll",
        [
            ("version", "7"),
            ("dados", "24224"),
            ("guardar", "1"),
            ("guardar", "3"),
            ("guardar", "4"),
        ],
    )
    assert move(Turn(seat=0, version="3", roll=True)) == ("roll", [("version", "3"), ("dados", "")])
    five = Turn(seat=0, version="9", dice="44444", roll=True, boxes={"fours": 20, "yahtzee": 50})
    assert move(five) == ("score", [("version", "9"), ("casilla", "yahtzee")])
    tied = Turn(seat=0, version="9", dice="12346", boxes={"chance": 16, "threes": 3, "sixes": 16})
    assert move(tied) == ("score", [("version", "9"), ("casilla", "chance")])
    assert move(Turn(seat=1, version="9", dice="12346")) is None  # another phone's turn


class Stream:
    """One seeded generator for every roll (dice.source() makes a source for each)."""

    generator = random.Random(7)

    def randint(self, low, high):
        return Stream.generator.randint(low, high)


def test_the_digital_phones_play_a_whole_game_as_the_bench_does(db, settings):
    """bench/load.py's digital table, two phones through the test client: the organizer
    creates the card from the order page's form; the phone whose turn it is rolls and
    scores with what the last answer showed it, the other follows through the poll; the
    last box ends the game (HX-Redirect) and the poll shows the other phone it is over."""
    settings.DICE_SOURCE = "tests.test_bench.Stream"
    Stream.generator.seed(7)
    players = [UserFactory(), UserFactory()]
    phones = []
    for player in players:
        phones.append(Client())
        phones[-1].force_login(player)
    query = urlencode([("p", p.pk) for p in players] + [("modo", "digital")])
    order = phones[0].get(f"{reverse('scorecard_order')}?{query}").content.decode()
    form = order[order.index(f'action="{reverse("scorecard_create")}"') :]
    created = phones[0].post(
        reverse("scorecard_create"), urlencode(hidden(form[: form.index("</form>")])), FORM
    )
    card = Scorecard.objects.get()
    assert created.url == reverse("scorecard", args=[card.pk])
    assert card.is_digital
    assert list(card.seats.values_list("player", flat=True)) == [p.pk for p in players]
    page = reverse("scorecard", args=[card.pk])
    turns = [read_turn(phone.get(page).content.decode()) for phone in phones]
    assert [t.seat for t in turns] == [0, 0]
    # «Tirar» is in everyone's sheet (the same for all); the turn's phone plays it.
    assert turns[0].roll
    assert turns[1].roll
    sent, statuses = Counter(), Counter()
    for step in range(len(Category) * len(players) * 8):  # a tap a second, a poll every 2 s
        if all(t.over for t in turns):
            break
        for i, phone in enumerate(phones):
            turn = turns[i]
            if turn.seat == i and (action := move(turn)) is not None:
                kind, fields = action
                answer = phone.post(
                    reverse(kind, args=[card.pk]), urlencode(fields), FORM, headers=HTMX
                )
                sent[kind] += 1
                statuses[answer.status_code] += 1
                if "HX-Redirect" in answer:  # the last box: the page loads the card
                    answer = phone.get(answer["HX-Redirect"])
                else:
                    assert answer["X-Dados-Base"] == turn.version  # a patch on what it showed
            elif not turn.over and step % 2 == 0:
                answer = phone.get(
                    reverse("scorecard_live", args=[card.pk]), {"version": turn.shown}, headers=HTMX
                )
                statuses[answer.status_code] += 1
                sent["poll patch"] += "X-Dados-Base" in answer
            else:
                continue
            if answer.status_code == 200:
                turns[i] = read_turn(answer.content.decode(), turn.seat)
                assert turns[i] is not None
    card.refresh_from_db()
    assert card.is_finalized
    assert all(t.over for t in turns)  # the other phone saw it through its poll
    assert set(statuses) <= {200, 204}  # no refusal: only the turn's phone acted
    assert sent["score"] == len(Category) * len(players)
    assert sent["poll patch"] > sent["score"]  # the polls followed the rolls with patches
    assert Roll.objects.filter(scorecard=card).count() == sent["roll"]
    assert Roll.objects.filter(scorecard=card).exclude(kept="").exists()  # dice were held
    seats = {seat.pk: seat.player_id for seat in card.seats.all()}
    assert all(seats[c.items[0][0]] == c.author_id for c in Change.objects.filter(scorecard=card))
