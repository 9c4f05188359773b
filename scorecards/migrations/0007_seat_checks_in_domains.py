"""PostgreSQL: the seat's checks move into a domain per column; the card's trigger runs
only for a finalized card.

PostgreSQL reads every CHECK constraint of a table from its stored text and plans it
again for each statement that writes a row of it: the seat's 31 checks cost a box write
about 0.12 ms of the server's time (bench/RESULTS.md). A domain's checks are read and
planned once per connection, and only the written column's are evaluated. So each
checked column of the seat gets a domain of its own (dados_seat_<column>) holding the
very constraints the table had, under the same names: what is refused, and the name in
the error, stay the same. Django's model state is unchanged; SQLite keeps its table
checks, which it compiles once per prepared statement.

A later migration that changes one of these columns' type on PostgreSQL replaces its
domain and with it its checks: tests/test_scorecards.py checks that the database still
refuses every impossible value.

The card's trigger refuses to change a finalized card; its WHEN now says so, and
PostgreSQL skips the trigger function for a card in progress (every write bumps its
version). The whole set it leaves is scorecards.triggers.AT_0007.
"""

import functools
import re

from django.db import migrations

from scorecards import triggers

SEAT = "scorecards_seat"
DOMAIN = "dados_seat_{column}"


def _on_postgres(step):
    """A RunPython step that SQLite skips: its checks and triggers stay as they are."""

    @functools.wraps(step)
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            step(apps, schema_editor)

    return run


def _rows(schema_editor, sql, params=()):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _swap(definition, old, new):
    """A check's text with one name for the checked value replaced by another."""
    return re.sub(rf"(?<![\w\"]){re.escape(old)}(?![\w\"])", new, definition)


@_on_postgres
def checks_into_domains(apps, schema_editor):
    quote = schema_editor.quote_name
    checks = _rows(
        schema_editor,
        "SELECT a.attname, quote_ident(a.attname), format_type(a.atttypid, a.atttypmod), c.conname,"
        " pg_get_constraintdef(c.oid) FROM pg_constraint c"
        " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]"
        " WHERE c.conrelid = %s::regclass AND c.contype = 'c' AND cardinality(c.conkey) = 1"
        " ORDER BY a.attnum, c.conname",
        [SEAT],
    )
    columns = {}
    for column, as_written, kind, name, definition in checks:
        columns.setdefault(column, (as_written, kind, []))[2].append((name, definition))
    alters = []
    for column, (as_written, kind, constraints) in columns.items():
        domain = quote(DOMAIN.format(column=column))
        body = " ".join(
            f"CONSTRAINT {quote(name)} {_swap(definition, as_written, 'VALUE')}"
            for name, definition in constraints
        )
        schema_editor.execute(f"CREATE DOMAIN {domain} AS {kind} {body}")
        alters += [f"DROP CONSTRAINT {quote(name)}" for name, _definition in constraints]
        alters.append(f"ALTER COLUMN {quote(column)} TYPE {domain}")
    if alters:
        schema_editor.execute(f"ALTER TABLE {SEAT} {', '.join(alters)}")


@_on_postgres
def domains_into_checks(apps, schema_editor):
    quote = schema_editor.quote_name
    domains = _rows(
        schema_editor,
        "SELECT a.attname, quote_ident(a.attname), t.typname,"
        " format_type(t.typbasetype, t.typtypmod), c.conname,"
        " pg_get_constraintdef(c.oid) FROM pg_attribute a"
        " JOIN pg_type t ON t.oid = a.atttypid AND t.typtype = 'd'"
        " JOIN pg_constraint c ON c.contypid = t.oid"
        " WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped"
        " ORDER BY a.attnum, c.conname",
        [SEAT],
    )
    alters, names = [], set()
    for column, as_written, domain, kind, name, definition in domains:
        if domain != DOMAIN.format(column=column):
            continue
        if domain not in names:
            names.add(domain)
            alters.append(f"ALTER COLUMN {quote(column)} TYPE {kind}")
        check = _swap(definition, "VALUE", as_written)
        alters.append(f"ADD CONSTRAINT {quote(name)} {check}")
    if alters:
        schema_editor.execute(f"ALTER TABLE {SEAT} {', '.join(alters)}")
    for domain in sorted(names):
        schema_editor.execute(f"DROP DOMAIN {quote(domain)}")


def _card_trigger(schema_editor, statement):
    schema_editor.execute("DROP TRIGGER scorecard_finalized ON scorecards_scorecard")
    schema_editor.execute(statement)


@_on_postgres
def card_trigger_when_finalized(apps, schema_editor):
    _card_trigger(schema_editor, triggers.CARD_TRIGGER_WHEN_FINALIZED)


@_on_postgres
def card_trigger_always(apps, schema_editor):
    _card_trigger(schema_editor, triggers.CARD_TRIGGER_ALWAYS)


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0006_change_items_inline")]

    operations = [
        migrations.RunPython(checks_into_domains, domains_into_checks),
        migrations.RunPython(card_trigger_when_finalized, card_trigger_always),
    ]
