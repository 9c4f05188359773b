"""Real concurrency: threads with their own database connections, committed data."""

import threading

from django.db import connection

from scorecards import services
from scorecards.models import ChangeItem, Scorecard, Seat
from scorecards.services import Refused
from tests.factories import UserFactory, enter, fill, make_scorecard


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

    threads = [threading.Thread(target=writer, args=(s,)) for s in seats]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert ChangeItem.objects.count() == 12
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
            services.scorecard_finalize(scorecard_id=card.pk)
            outcomes.append("ok")
        except Refused as refused:
            outcomes.append(refused.status)
        finally:
            connection.close()

    threads = [threading.Thread(target=finalize) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes, key=str) == [409, "ok"]
    assert Scorecard.objects.get(pk=card.pk).is_finalized
    assert [s.place for s in Seat.objects.filter(scorecard=card)] == [1, 1, 1]
