"""The hot hand-written queries run as prepared statements on PostgreSQL (dados.prepared)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from dados import prepared
from scorecards.models import Scorecard, Seat
from tests.factories import make_scorecard

on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="prepared statements are PostgreSQL's"
)


def test_placeholders_are_numbered_for_postgresql():
    assert prepared._numbered("SELECT %s, %s FROM t WHERE id = %s") == (
        "SELECT $1, $2 FROM t WHERE id = $3"
    )
    assert prepared._numbered("SELECT 1") == "SELECT 1"


def _server_statements() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'dados%%'")
        return {name for (name,) in cursor.fetchall()}


def _write_and_look(client, card, box, value, version, was=""):
    seat = card.seats.first()
    response = client.post(
        reverse("box", args=[card.pk, seat.pk, box]),
        {"value": value, "was": was, "version": version, "answer": "cells"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert client.get(reverse("scorecard", args=[card.pk])).status_code == 200
    return getattr(Seat.objects.get(pk=seat.pk), box)


@pytest.fixture
def written(transactional_db, client, django_user_model):
    """A card whose organizer wrote one box, outside any transaction of the test."""
    organizer = django_user_model.objects.create_user("olga", password="x")
    card = make_scorecard(organizer, n=2)
    client.force_login(organizer)
    assert _write_and_look(client, card, "ones", "2", card.version) == 2
    return card


@on_postgres
def test_outside_a_transaction_the_card_and_its_writes_are_prepared_once(client, written):
    card = written
    statements = _server_statements()
    # the write of that box (with the card it read), the card page's card and its log
    assert len(statements) >= 3
    with CaptureQueriesContext(connection) as queries:
        # the same box again, corrected: the same statements
        assert _write_and_look(client, card, "ones", "4", card.version + 1, was="2") == 4
    sql = [query["sql"] for query in queries.captured_queries]
    assert not [s for s in sql if s.startswith("PREPARE") and "scorecards_seat s" in s]
    assert any(s.startswith("EXECUTE dados_") for s in sql)
    assert _server_statements() == statements
    assert Scorecard.objects.get(pk=card.pk).version == card.version + 2


@on_postgres
def test_the_prepared_statements_are_planned_once_not_per_execution(client, written):
    card = written
    for n in range(8):  # PostgreSQL's default plans the first five executions anew
        was, value = ("2", "3") if n % 2 == 0 else ("3", "2")
        assert _write_and_look(client, card, "ones", value, card.version + 1 + n, was=was)
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone() == ("force_generic_plan",)
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE name LIKE 'dados%%' AND statement LIKE '%%INSERT INTO%%'"
        )
        plans = cursor.fetchall()
    assert plans
    assert all(generic >= 8 and custom == 0 for generic, custom in plans)


@on_postgres
def test_statements_the_server_forgot_are_prepared_again(client, written):
    card = written
    with connection.cursor() as cursor:
        cursor.execute("DISCARD ALL")  # what a connection pooler's reset does
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone() == ("auto",)
    assert _server_statements() == set()
    assert _write_and_look(client, card, "twos", "4", card.version + 1) == 4
    assert _server_statements()
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone() == ("force_generic_plan",)


def test_inside_a_transaction_and_on_sqlite_queries_run_as_written(db, django_user_model):
    organizer = django_user_model.objects.create_user("olga", password="x")
    card = make_scorecard(organizer, n=2)
    with CaptureQueriesContext(connection) as queries:
        assert Scorecard.objects.with_seats(card.pk).pk == card.pk
    assert not any("PREPARE" in q["sql"] or "EXECUTE" in q["sql"] for q in queries.captured_queries)


class _ForgetfulCursor:
    """A cursor on a server that has forgotten every prepared statement by the time it is
    used, as behind a connection pooler in transaction mode."""

    def __init__(self, cursor):
        self.cursor = cursor
        self.db = cursor.db

    def execute(self, sql, params=None):
        if sql.startswith("EXECUTE"):
            self.cursor.execute("DEALLOCATE ALL")
        return self.cursor.execute(sql, params)

    def fetchall(self):
        return self.cursor.fetchall()


@on_postgres
def test_a_connection_whose_statements_keep_vanishing_stops_preparing(transactional_db):
    sql = "SELECT %s + 1"
    with connection.cursor() as cursor:
        forgetful = _ForgetfulCursor(cursor)
        prepared.execute(forgetful, sql, [41])
        assert forgetful.fetchall() == [(42,)]
        assert prepared._prepared(connection, cursor) is None
    with CaptureQueriesContext(connection) as queries, connection.cursor() as cursor:
        prepared.execute(cursor, sql, [1])
        assert cursor.fetchall() == [(2,)]
    assert [q["sql"] for q in queries.captured_queries] == ["SELECT 1 + 1"]


@on_postgres
def test_a_statement_a_migration_made_stale_is_prepared_anew(transactional_db):
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE dados_t (id integer)")
        cursor.execute("INSERT INTO dados_t VALUES (1)")
        prepared.execute(cursor, "SELECT * FROM dados_t WHERE id = %s", [1])
        assert cursor.fetchall() == [(1,)]
        cursor.execute("ALTER TABLE dados_t ADD COLUMN x integer DEFAULT 7")
        prepared.execute(cursor, "SELECT * FROM dados_t WHERE id = %s", [1])
        assert cursor.fetchall() == [(1, 7)]
    with connection.cursor() as cursor:
        assert prepared._prepared(connection, cursor)  # still preparing
