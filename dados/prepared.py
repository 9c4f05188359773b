"""The app's hand-written hot queries as prepared statements on PostgreSQL.

Django leaves psycopg's prepared statements off (they break transaction-pooling
connection poolers) and binds parameters on the client, so PostgreSQL plans every
query anew. The card query plans in 0.14 ms and runs in 0.05 ms; prepared once per
connection it takes 0.13 ms instead of 0.30 in all, and a box write's one statement
0.21 ms instead of 0.36 (bench/RESULTS.md).

Only outside transactions, where a statement that fails fails on its own: one the
server no longer knows (someone ran DEALLOCATE, a pooler reset the connection) is
prepared again, and one whose plan a migration made stale is prepared anew. If the
server forgets them again at once (a pooler in transaction mode hands over another
server connection every time), that connection stops preparing and runs plain SQL.
Inside a transaction, queries run as they are. A statement may open a transaction of
its own (begin=True: the box write, dados.postgresql): BEGIN goes in the same message,
and one that fails is rolled back before it is prepared again.

A connection that prepares also plans them once: plan_cache_mode = force_generic_plan.
Every one of them finds its rows by key, so the plan is the same whatever the values.
It also applies to the triggers' and foreign keys' queries. Under the benchmark's
writes, PostgreSQL's cached plans took 3.2 % of its CPU with the default and 1.4 % with
this setting, and in-process a box write went from 2.06 and 2.18 ms to 1.89 and 1.87 ms
(bench/RESULTS.md).

On SQLite, whose driver keeps its own statement cache, they go straight to the driver
unless queries are being logged (DEBUG, or a test counting them): Django's cursor
rewrites the placeholders of every statement anew, and each of a write's five
statements pays for it.
"""

import functools
import hashlib
import sqlite3

from django.db import DatabaseError

UNKNOWN_STATEMENT = "26000"  # invalid_sql_statement_name
DUPLICATE_STATEMENT = "42P05"  # duplicate_prepared_statement
STALE_PLAN = "0A000"  # a migration changed a column: "cached plan must not change result type"


def execute(cursor, sql, params, *, begin=False) -> None:
    """cursor.execute(sql, params) with %s placeholders, prepared where it pays.

    With begin (PostgreSQL, outside transactions) the statement opens a transaction,
    which the caller ends; the cursor holds the statement's rows. A statement that fails
    rolls it back.
    """
    connection = cursor.db
    if connection.vendor == "sqlite":
        if connection.queries_logged or connection.execute_wrappers:
            cursor.execute(sql, params)
        else:
            connection.validate_no_broken_transaction()
            with connection.wrap_database_errors:
                sqlite3.Cursor.execute(cursor.cursor, _qmark(sql), params)
        return
    names = None
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        names = _prepared(connection, cursor)
    if names is None:
        _run(cursor, sql, params, begin)
        return
    name = "dados_" + hashlib.blake2b(sql.encode(), digest_size=8).hexdigest()
    call = f"EXECUTE {name}({', '.join(['%s'] * len(params))})" if params else f"EXECUTE {name}"
    for _attempt in range(2):
        if name not in names:
            try:
                cursor.execute(f"PREPARE {name} AS {_numbered(sql)}")
            except DatabaseError as error:
                if _state(error) != DUPLICATE_STATEMENT:
                    raise
            names.add(name)
        try:
            _run(cursor, call, params, begin)
            return
        except DatabaseError as error:
            if _state(error) == STALE_PLAN:
                cursor.execute(f"DEALLOCATE {name}")
                names.discard(name)
            elif _state(error) == UNKNOWN_STATEMENT:
                # The server forgot them (a pooler's DISCARD ALL resets settings too):
                # plan once and prepare again.
                names.clear()
                _plan_once(cursor)
            else:
                raise
    # Forgotten again at once: a pooler hands this connection another server connection
    # each time. Plain SQL on this connection from now on.
    _stop_preparing(connection)
    _run(cursor, sql, params, begin)


def _run(cursor, sql, params, begin) -> None:
    if not begin:
        cursor.execute(sql, params)
        return
    try:
        cursor.execute(f"BEGIN; {sql}", params)
    except BaseException:
        cursor.db.rollback_own()
        raise
    cursor.nextset()  # past BEGIN's answer, to the statement's rows


def _prepared(connection, cursor) -> set[str] | None:
    """The statements prepared on this database connection (not on an earlier one), or
    None if preparing does not work on it."""
    raw = connection.connection
    known = getattr(connection, "_dados_prepared", None)
    if known is None or known[0] is not raw:
        _plan_once(cursor)
        known = connection._dados_prepared = (raw, set())
    return known[1]


def _plan_once(cursor) -> None:
    cursor.execute("SET plan_cache_mode = force_generic_plan")


def _stop_preparing(connection) -> None:
    connection._dados_prepared = (connection.connection, None)


@functools.lru_cache(maxsize=128)
def _qmark(sql: str) -> str:
    """%s placeholders as SQLite's ?, as Django's SQLite cursor does on every call."""
    return sql.replace("%s", "?")


def _numbered(sql: str) -> str:
    """%s placeholders as PostgreSQL's $1, $2 …"""
    parts = sql.split("%s")
    return "".join(
        part + (f"${n}" if n < len(parts) else "") for n, part in enumerate(parts, start=1)
    )


def _state(error) -> str | None:
    return getattr(error.__cause__, "sqlstate", None)
