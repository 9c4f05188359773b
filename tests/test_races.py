"""Real concurrency: threads with their own database connections, committed data."""

import threading
import time
import uuid

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from scorecards import services
from scorecards.models import Scorecard, Seat
from scorecards.services import Refused
from tests.factories import UserFactory, enter, fill, logged_items, make_scorecard


def _at_once(target, args_list):
    """target(*args) for each args in its own thread, all started together; waits for all."""
    threads = [threading.Thread(target=target, args=args) for args in args_list]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_writes_to_different_boxes_are_all_kept(transactional_db):
    organizer = UserFactory()
    card = make_scorecard(organizer, n=4)
    seats = list(card.seats.all())
    errors = []

    def writer(seat):
        try:
            enter(card, seat, organizer, ones=1, twos=2, threes=3)
        except Exception as error:
            errors.append(error)
        finally:
            connection.close()

    _at_once(writer, [(s,) for s in seats])
    assert errors == []
    assert len(logged_items()) == 12
    assert Scorecard.objects.get(pk=card.pk).version == 12


def test_two_finalize_requests_racing_give_exactly_one_success(flushable_db):
    organizer = UserFactory()
    card = make_scorecard(organizer, n=3)
    fill(card)
    barrier = threading.Barrier(2)
    outcomes = []

    def finalize():
        try:
            barrier.wait()
            services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
            outcomes.append("ok")
        except Refused as refused:
            outcomes.append(refused.status)
        finally:
            connection.close()

    _at_once(finalize, [(), ()])
    assert sorted(outcomes, key=str) == [409, "ok"]
    assert Scorecard.objects.get(pk=card.pk).is_finalized
    assert [s.place for s in Seat.objects.filter(scorecard=card)] == [1, 1, 1]


def test_two_requests_with_one_token_at_once_make_one_card(transactional_db, ana, ben):
    """The second waits for the first's unique index entry, fails on it and answers
    with the first one's card."""
    organizer = UserFactory(username="olga")
    token = uuid.uuid4()
    barrier = threading.Barrier(2)
    made = []

    def create():
        barrier.wait()
        try:
            made.append(
                services.scorecard_create(organizer=organizer, players=[ana, ben], token=token)
            )
        finally:
            connection.close()

    _at_once(create, [(), ()])
    assert len(made) == 2
    assert made[0].pk == made[1].pk == Scorecard.objects.get().pk
    assert Seat.objects.count() == 2


on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="SQLite has no row locks"
)


def _another_device_holds_the_card(card, seat, box, value):
    """A thread whose transaction writes a box and the card's version and holds them
    until released: (thread, holding, release)."""
    holding, release = threading.Event(), threading.Event()

    def other_device():
        try:
            with transaction.atomic():
                Seat.objects.filter(pk=seat.pk).update(**{box: value})
                Scorecard.objects.filter(pk=card.pk).update(version=F("version") + 1)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    thread = threading.Thread(target=other_device)
    thread.start()
    assert holding.wait(10)
    return thread, release


def _write_while_held(card, seat, box, value, organizer, held):
    """The box write from another thread, started while `held` holds the card: it waits
    for the card's row lock (select_for_update); then `held` commits."""
    thread_of_other, release = held
    result = {}

    def writer():
        try:
            result["card"] = services.box_write(
                scorecard_id=card.pk,
                seat_id=seat.pk,
                box=box,
                value=value,
                was="",
                author=organizer,
            ).scorecard
        except Refused as refused:
            result["refused"] = refused
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        waiting = 0
        for _ in range(200):  # until the write waits for the other's lock
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE wait_event_type = 'Lock' AND datname = current_database()"
                )
                waiting = cursor.fetchone()[0]
            if waiting:
                break
            time.sleep(0.05)
        assert waiting == 1
    finally:
        release.set()
        thread_of_other.join(10)
        thread.join(10)
    return result


@on_postgres
def test_a_write_that_waited_for_another_devices_lock_reads_the_card_it_left(
    transactional_db,
):
    organizer = UserFactory()
    card = make_scorecard(organizer, n=2)
    ana, ben = card.seats.order_by("order")
    held = _another_device_holds_the_card(card, ben, "ones", 3)
    result = _write_while_held(card, ana, "twos", "4", organizer, held)
    # read once the other committed: another box, so it is made after the other one
    assert result["card"].version == card.version + 2
    assert Seat.objects.get(pk=ana.pk).twos == 4
    assert Seat.objects.get(pk=ben.pk).ones == 3
    assert [(seat, box, new) for seat, box, _old, new in logged_items()] == [(ana.pk, "twos", 4)]


@on_postgres
def test_a_write_to_a_box_another_device_changed_while_it_waited_is_refused(
    transactional_db,
):
    organizer = UserFactory()
    card = make_scorecard(organizer, n=2)
    ana = card.seats.order_by("order").first()
    held = _another_device_holds_the_card(card, ana, "twos", 6)
    result = _write_while_held(card, ana, "twos", "4", organizer, held)
    assert result["refused"].status == 409
    assert "cambió mientras tanto" in result["refused"].message
    assert Seat.objects.get(pk=ana.pk).twos == 6
    assert logged_items() == []
    assert Scorecard.objects.get(pk=card.pk).version == card.version + 1


def test_two_players_tapping_revancha_at_once_make_one_card(flushable_db, ana, ben):
    """Each asks whether the game has a rematch, then makes one: the database's unique
    index (scorecard_rematch_once) lets one card in, and the other tap answers with it."""
    organizer = UserFactory(username="olga")
    finished = make_scorecard(organizer, [ana, ben])
    fill(finished)
    services.scorecard_finalize(scorecard_id=finished.pk, author=organizer)
    barrier = threading.Barrier(2)
    answers = []

    def tap(user):
        barrier.wait()
        try:
            answers.append(services.scorecard_rematch(scorecard_id=finished.pk, user=user))
        finally:
            connection.close()

    _at_once(tap, [(ana,), (ben,)])
    rematch = Scorecard.objects.get(rematch_of=finished)
    assert [answer.scorecard.pk for answer in answers] == [rematch.pk] * 2
    assert sorted(answer.made for answer in answers) == [False, True]
    assert list(rematch.seats.values_list("player", flat=True)) == [ben.pk, ana.pk]
    assert rematch.organizer == organizer  # whichever tap won
    assert Scorecard.objects.count() == 2


def test_a_tap_that_found_no_rematch_and_lost_the_race_gets_the_winners(flushable_db, ana, ben):
    """The other tap's card is in, not yet committed, when this one looks: it sees none,
    waits on the unique index to add its own, fails there and answers with the other's."""
    organizer = UserFactory(username="olga")
    finished = make_scorecard(organizer, [ana, ben])
    fill(finished)
    services.scorecard_finalize(scorecard_id=finished.pk, author=organizer)
    holding, release = threading.Event(), threading.Event()

    def other_tap():
        try:
            with transaction.atomic():
                Scorecard.objects.create(organizer=ben, rematch_of_id=finished.pk)
                holding.set()
                release.wait(10)
        finally:
            connection.close()

    result = {}

    def this_tap():
        try:
            with CaptureQueriesContext(connection) as queries:
                result["answer"] = services.scorecard_rematch(scorecard_id=finished.pk, user=ana)
            result["sql"] = [query["sql"] for query in queries.captured_queries]
        finally:
            connection.close()

    other = threading.Thread(target=other_tap)
    other.start()
    assert holding.wait(10)
    tapping = threading.Thread(target=this_tap)
    tapping.start()
    time.sleep(0.5)  # it has looked (a few milliseconds) and waits to insert
    release.set()
    other.join(10)
    tapping.join(10)
    winner = Scorecard.objects.get(rematch_of=finished)
    assert winner.organizer == ben
    assert result["answer"] == (winner, False)
    # It did try to make its own, and the index refused it.
    assert any(sql.startswith('INSERT INTO "scorecards_scorecard"') for sql in result["sql"])
    assert Scorecard.objects.count() == 2
