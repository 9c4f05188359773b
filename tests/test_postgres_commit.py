"""On PostgreSQL a box write made in a request commits while its answer is built
(dados.postgresql): the COMMIT is answered before the request's answer leaves, and
before anything else uses the connection."""

import threading
import time

import pytest
from django.db import OperationalError, connection
from django.test import Client
from django.urls import reverse

from dados.durable import synced_before_answer
from scorecards import services, sheet
from scorecards.models import Change, Seat
from tests.factories import make_scorecard

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="dados.postgresql"),
    pytest.mark.django_db(transaction=True),  # the write's own transaction, as in production
]


@pytest.fixture
def card(django_user_model):
    organizer = django_user_model.objects.create_user("olga", password="x")
    return make_scorecard(organizer, n=2)


def _seat(card):
    return card.seats.order_by("order").first()


def _write(card, value, was=None):
    return services.box_write(
        scorecard_id=card.pk,
        seat_id=_seat(card).pk,
        box="chance",
        value=str(value),
        was="" if was is None else str(was),
        author=card.organizer,
    )


def _post(client, card, value, was="", version=None):
    client.force_login(card.organizer)
    return client.post(
        reverse("box", args=[card.pk, _seat(card).pk, "chance"]),
        {
            "value": value,
            "was": was,
            "version": card.version if version is None else version,
            "answer": "cells",
        },
        headers={"HX-Request": "true"},
    )


def _stored(card):
    return Seat.objects.get(pk=_seat(card).pk).chance


def test_the_answer_is_built_while_the_commit_is_on_its_way(client, card, monkeypatch):
    seen = []
    render = sheet.written_html

    def watched(*args):
        seen.append(connection._commit_pending)
        return render(*args)

    monkeypatch.setattr(sheet, "written_html", watched)
    response = _post(client, card, "20")
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert seen == [True]  # COMMIT sent, its answer not read yet
    assert not connection._commit_pending  # read before the answer left
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert _stored(card) == 20
    assert Change.objects.filter(scorecard=card).count() == 1


def test_outside_a_request_the_write_commits_at_once(card):
    assert not connection.commits_later()
    _write(card, 20)
    assert not connection._commit_pending
    assert _stored(card) == 20


def test_any_other_use_of_the_connection_reads_the_commit_first(card):
    with synced_before_answer():
        _write(card, 20)
        assert connection._commit_pending
        assert _stored(card) == 20  # a query: the COMMIT's answer came first
        assert not connection._commit_pending
        _write(card, 25, was=20)
        assert connection._commit_pending
        connection.close()  # closing reads it too: nothing is lost
        assert not connection._commit_pending
    assert _stored(card) == 25


@pytest.fixture
def refused_commits(card, monkeypatch):
    """Every box write's COMMIT refused by the server, as a failed disk would have it."""
    from dados.postgresql.base import DatabaseWrapper

    send = DatabaseWrapper.commit_later

    def failing(self):
        # A row whose deferred foreign key cannot hold: the server refuses the COMMIT.
        self.connection.execute(
            "INSERT INTO scorecards_change (scorecard_id, author_id, created_at, kind, items)"
            " VALUES (999999999, %s, now(), 'box', '[]')",
            [card.organizer_id],
        )
        send(self)

    monkeypatch.setattr(DatabaseWrapper, "commit_later", failing)
    return monkeypatch


def test_a_commit_that_fails_fails_the_request_and_writes_nothing(card, refused_commits):
    client = Client(raise_request_exception=False)
    response = _post(client, card, "20")
    assert response.status_code == 500
    assert response["X-Frame-Options"] == "DENY"  # the error page has every page's headers
    assert "default-src 'self'" in response["Content-Security-Policy"]
    refused_commits.undo()
    assert _stored(card) is None
    assert not Change.objects.filter(scorecard=card).exists()
    assert _post(client, card, "20").status_code == 200  # the connection still works
    assert _stored(card) == 20


def test_a_failed_commit_read_early_still_fails_the_request_at_its_end(card, refused_commits):
    def request(then):
        with synced_before_answer():
            _write(card, 20)
            assert connection._commit_pending
            then()

    def query_caught():
        with pytest.raises(OperationalError, match="the commit failed"):
            _stored(card)

    with pytest.raises(OperationalError, match="the commit failed"):
        request(query_caught)  # a view that caught it cannot answer 200
    with pytest.raises(OperationalError, match="the commit failed"):
        request(connection.close)  # closing reads the answer, and keeps the failure
    refused_commits.undo()
    assert _stored(card) is None
    assert not Change.objects.filter(scorecard=card).exists()


def test_other_threads_run_while_the_commit_is_awaited(card):
    """The wait for the COMMIT's answer lets go of the GIL: in a threaded worker the other
    requests go on meanwhile."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$;"
            " CREATE CONSTRAINT TRIGGER test_slow_commit AFTER INSERT ON scorecards_change"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_slow_commit()"
        )
    ticks, done = [], threading.Event()

    def heartbeat():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    try:
        with synced_before_answer():
            _write(card, 20)
            assert connection._commit_pending
            beats = threading.Thread(target=heartbeat)
            beats.start()
            began = time.monotonic()
        waited = time.monotonic() - began
    finally:
        done.set()
        beats.join()
        with connection.cursor() as cursor:
            cursor.execute(
                "DROP TRIGGER test_slow_commit ON scorecards_change;"
                " DROP FUNCTION test_slow_commit()"
            )
    assert waited >= 0.4  # the COMMIT was slow …
    assert len([t for t in ticks if t <= began + waited]) >= 10  # … and the thread ran
    assert _stored(card) == 20


def test_a_forgotten_prepared_statement_is_prepared_again_inside_the_transaction(card):
    with synced_before_answer():
        _write(card, 20)
    connection.connection.execute("DEALLOCATE ALL")  # as a pooler's reset does
    with synced_before_answer():
        _write(card, 25, was=20)
        assert connection._commit_pending
    assert _stored(card) == 25
    assert Change.objects.filter(scorecard=card).count() == 2


def test_a_stale_write_is_refused_and_its_empty_transaction_ends(client, card):
    assert _post(client, card, "20").status_code == 200
    response = _post(client, card, "30", was="", version=card.version)  # saw it blank
    assert response.status_code == 409
    assert not connection._commit_pending
    assert connection.connection.info.transaction_status.name == "IDLE"
    assert _stored(card) == 20
    assert Change.objects.filter(scorecard=card).count() == 1
