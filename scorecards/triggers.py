"""The SQL of the triggers by which the database keeps a finalized card as it was.

AT_<migration> is the whole set as that migration left it. The migrations import the sets
they create and drop, so a set that a migration has run is never edited: a change is a new
set and a new migration. CURRENT is the newest set; tests/conftest.py drops it for a flush
and creates it again.
"""

from dataclasses import dataclass

MESSAGE = "scorecard is finalized"
LOG_APPEND_ONLY = "the change log is append-only"
ROLLS_APPEND_ONLY = "the rolls are append-only"


@dataclass(frozen=True)
class Triggers:
    """A set of triggers: the statements that create it and that drop it, by database."""

    create_sql: dict[str, tuple[str, ...]]
    drop_sql: dict[str, tuple[str, ...]]

    def create(self, schema_editor):
        for statement in self.create_sql[schema_editor.connection.vendor]:
            schema_editor.execute(statement)

    def drop(self, schema_editor):
        for statement in self.drop_sql[schema_editor.connection.vendor]:
            schema_editor.execute(statement)


# 0002_finalized_triggers: the card, its seats, its changes and their items.

# How each protected table finds the card a row belongs to.
CARD_OF = {
    "seat": "{row}.scorecard_id",
    "change": "{row}.scorecard_id",
    "changeitem": "(SELECT scorecard_id FROM scorecards_change WHERE id = {row}.change_id)",
}
ROW_OPS = (("INSERT", "NEW"), ("UPDATE", "OLD"), ("DELETE", "OLD"))

_SQLITE_0002 = [
    *[
        f"""
        CREATE TRIGGER scorecard_finalized_no_{op.lower()} BEFORE {op} ON scorecards_scorecard
        WHEN OLD.finalized_at IS NOT NULL
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
        """
        for op in ("UPDATE", "DELETE")
    ],
    *[
        f"""
        CREATE TRIGGER {table}_finalized_no_{op.lower()} BEFORE {op} ON scorecards_{table}
        WHEN (SELECT finalized_at FROM scorecards_scorecard
              WHERE id = {card.format(row=row)}) IS NOT NULL
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
        """
        for table, card in CARD_OF.items()
        for op, row in ROW_OPS
    ],
    # The change log is append-only: rows may only go with a discarded card.
    f"""
    CREATE TRIGGER changeitem_no_update BEFORE UPDATE ON scorecards_changeitem
    BEGIN SELECT RAISE(ABORT, '{LOG_APPEND_ONLY}'); END;
    """,
]

_SQLITE_DROP_0002 = [
    "DROP TRIGGER IF EXISTS scorecard_finalized_no_update;",
    "DROP TRIGGER IF EXISTS scorecard_finalized_no_delete;",
    *[
        f"DROP TRIGGER IF EXISTS {table}_finalized_no_{op.lower()};"
        for table in CARD_OF
        for op, _ in ROW_OPS
    ],
    "DROP TRIGGER IF EXISTS changeitem_no_update;",
]

_POSTGRES_0002 = [
    f"""
    CREATE FUNCTION dados_refuse_finalized() RETURNS trigger AS $$
    DECLARE
        row_card bigint;
        done timestamptz;
    BEGIN
        IF TG_TABLE_NAME = 'scorecards_scorecard' THEN
            IF OLD.finalized_at IS NOT NULL THEN
                RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
            RETURN NEW;
        END IF;
        IF TG_TABLE_NAME = 'scorecards_changeitem' THEN
            IF TG_OP = 'UPDATE' THEN
                RAISE EXCEPTION '{LOG_APPEND_ONLY}'
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            SELECT c.scorecard_id INTO row_card FROM scorecards_change c
             WHERE c.id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.change_id ELSE NEW.change_id END);
        ELSIF TG_OP = 'DELETE' THEN
            row_card := OLD.scorecard_id;
        ELSE
            row_card := NEW.scorecard_id;
            IF TG_OP = 'UPDATE' AND OLD.scorecard_id <> NEW.scorecard_id THEN
                SELECT finalized_at INTO done FROM scorecards_scorecard WHERE id = OLD.scorecard_id;
                IF done IS NOT NULL THEN
                    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
                END IF;
            END IF;
        END IF;
        SELECT finalized_at INTO done FROM scorecards_scorecard WHERE id = row_card;
        IF done IS NOT NULL THEN
            RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql;
    """,
    """
    CREATE TRIGGER scorecard_finalized BEFORE UPDATE OR DELETE ON scorecards_scorecard
    FOR EACH ROW EXECUTE FUNCTION dados_refuse_finalized();
    """,
    *[
        f"""
        CREATE TRIGGER {table}_finalized BEFORE INSERT OR UPDATE OR DELETE ON scorecards_{table}
        FOR EACH ROW EXECUTE FUNCTION dados_refuse_finalized();
        """
        for table in ("seat", "change", "changeitem")
    ],
]

_POSTGRES_DROP_0002 = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_finalized ON scorecards_{table};"
        for table in ("scorecard", "seat", "change", "changeitem")
    ],
    "DROP FUNCTION IF EXISTS dados_refuse_finalized();",
]

AT_0002 = Triggers(
    create_sql={"sqlite": tuple(_SQLITE_0002), "postgresql": tuple(_POSTGRES_0002)},
    drop_sql={"sqlite": tuple(_SQLITE_DROP_0002), "postgresql": tuple(_POSTGRES_DROP_0002)},
)


# 0006_change_items_inline: ChangeItem is gone, and the change log's append-only rule
# moves to Change.

_SQLITE_0006 = [
    *[
        f"""
        CREATE TRIGGER scorecard_finalized_no_{op.lower()} BEFORE {op} ON scorecards_scorecard
        WHEN OLD.finalized_at IS NOT NULL
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
        """
        for op in ("UPDATE", "DELETE")
    ],
    *[
        f"""
        CREATE TRIGGER {table}_finalized_no_{op.lower()} BEFORE {op} ON scorecards_{table}
        WHEN (SELECT finalized_at FROM scorecards_scorecard
              WHERE id = {row}.scorecard_id) IS NOT NULL
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
        """
        for table in ("seat", "change")
        for op, row in ROW_OPS
        if (table, op) != ("change", "UPDATE")
    ],
    # Changes are never updated: they may only go with a discarded card.
    f"""
    CREATE TRIGGER change_no_update BEFORE UPDATE ON scorecards_change
    BEGIN SELECT RAISE(ABORT, '{LOG_APPEND_ONLY}'); END;
    """,
]

_SQLITE_DROP_0006 = [
    "DROP TRIGGER IF EXISTS scorecard_finalized_no_update;",
    "DROP TRIGGER IF EXISTS scorecard_finalized_no_delete;",
    *[
        f"DROP TRIGGER IF EXISTS {table}_finalized_no_{op.lower()};"
        for table in ("seat", "change")
        for op, _ in ROW_OPS
    ],
    "DROP TRIGGER IF EXISTS change_no_update;",
]

_POSTGRES_0006 = [
    f"""
    CREATE FUNCTION dados_refuse_finalized() RETURNS trigger AS $$
    DECLARE
        row_card bigint;
        done timestamptz;
    BEGIN
        IF TG_TABLE_NAME = 'scorecards_scorecard' THEN
            IF OLD.finalized_at IS NOT NULL THEN
                RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
            RETURN NEW;
        END IF;
        IF TG_TABLE_NAME = 'scorecards_change' AND TG_OP = 'UPDATE' THEN
            RAISE EXCEPTION '{LOG_APPEND_ONLY}' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF TG_OP = 'DELETE' THEN
            row_card := OLD.scorecard_id;
        ELSE
            row_card := NEW.scorecard_id;
            IF TG_OP = 'UPDATE' AND OLD.scorecard_id <> NEW.scorecard_id THEN
                SELECT finalized_at INTO done FROM scorecards_scorecard WHERE id = OLD.scorecard_id;
                IF done IS NOT NULL THEN
                    RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
                END IF;
            END IF;
        END IF;
        SELECT finalized_at INTO done FROM scorecards_scorecard WHERE id = row_card;
        IF done IS NOT NULL THEN
            RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql;
    """,
    """
    CREATE TRIGGER scorecard_finalized BEFORE UPDATE OR DELETE ON scorecards_scorecard
    FOR EACH ROW EXECUTE FUNCTION dados_refuse_finalized();
    """,
    *[
        f"""
        CREATE TRIGGER {table}_finalized BEFORE INSERT OR UPDATE OR DELETE ON scorecards_{table}
        FOR EACH ROW EXECUTE FUNCTION dados_refuse_finalized();
        """
        for table in ("seat", "change")
    ],
]

_POSTGRES_DROP_0006 = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_finalized ON scorecards_{table};"
        for table in ("scorecard", "seat", "change")
    ],
    "DROP FUNCTION IF EXISTS dados_refuse_finalized();",
]

AT_0006 = Triggers(
    create_sql={"sqlite": tuple(_SQLITE_0006), "postgresql": tuple(_POSTGRES_0006)},
    drop_sql={"sqlite": tuple(_SQLITE_DROP_0006), "postgresql": tuple(_POSTGRES_DROP_0006)},
)


# 0007_seat_checks_in_domains: on PostgreSQL the card's trigger runs only for a finalized
# card, so the trigger function is skipped on every write to a card in progress.

_CARD_TRIGGER = (
    "CREATE TRIGGER scorecard_finalized BEFORE UPDATE OR DELETE ON scorecards_scorecard"
    " FOR EACH ROW{when} EXECUTE FUNCTION dados_refuse_finalized()"
)
CARD_TRIGGER_ALWAYS = _CARD_TRIGGER.format(when="")
CARD_TRIGGER_WHEN_FINALIZED = _CARD_TRIGGER.format(when=" WHEN (OLD.finalized_at IS NOT NULL)")

AT_0007 = Triggers(
    create_sql={
        "sqlite": AT_0006.create_sql["sqlite"],
        "postgresql": (
            _POSTGRES_0006[0],
            CARD_TRIGGER_WHEN_FINALIZED,
            *_POSTGRES_0006[2:],
        ),
    },
    drop_sql=AT_0006.drop_sql,
)


# 0010_digital_play: the rolls are never updated, and a finalized card's take nothing
# new and lose none.

_SQLITE_ROLLS = [
    *[
        f"""
        CREATE TRIGGER roll_finalized_no_{op.lower()} BEFORE {op} ON scorecards_roll
        WHEN (SELECT finalized_at FROM scorecards_scorecard
              WHERE id = {row}.scorecard_id) IS NOT NULL
        BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
        """
        for op, row in (("INSERT", "NEW"), ("DELETE", "OLD"))
    ],
    f"""
    CREATE TRIGGER roll_no_update BEFORE UPDATE ON scorecards_roll
    BEGIN SELECT RAISE(ABORT, '{ROLLS_APPEND_ONLY}'); END;
    """,
]

_SQLITE_DROP_ROLLS = [
    "DROP TRIGGER IF EXISTS roll_finalized_no_insert;",
    "DROP TRIGGER IF EXISTS roll_finalized_no_delete;",
    "DROP TRIGGER IF EXISTS roll_no_update;",
]

_POSTGRES_ROLLS = [
    f"""
    CREATE FUNCTION dados_refuse_update() RETURNS trigger AS $$
    BEGIN
        RAISE EXCEPTION '{ROLLS_APPEND_ONLY}' USING ERRCODE = 'integrity_constraint_violation';
    END;
    $$ LANGUAGE plpgsql;
    """,
    """
    CREATE TRIGGER roll_no_update BEFORE UPDATE ON scorecards_roll
    FOR EACH ROW EXECUTE FUNCTION dados_refuse_update();
    """,
    """
    CREATE TRIGGER roll_finalized BEFORE INSERT OR DELETE ON scorecards_roll
    FOR EACH ROW EXECUTE FUNCTION dados_refuse_finalized();
    """,
]

_POSTGRES_DROP_ROLLS = [
    "DROP TRIGGER IF EXISTS roll_finalized ON scorecards_roll;",
    "DROP TRIGGER IF EXISTS roll_no_update ON scorecards_roll;",
    "DROP FUNCTION IF EXISTS dados_refuse_update();",
]

AT_0010 = Triggers(
    create_sql={
        "sqlite": (*AT_0007.create_sql["sqlite"], *_SQLITE_ROLLS),
        "postgresql": (*AT_0007.create_sql["postgresql"], *_POSTGRES_ROLLS),
    },
    drop_sql={
        "sqlite": (*_SQLITE_DROP_ROLLS, *AT_0007.drop_sql["sqlite"]),
        "postgresql": (*_POSTGRES_DROP_ROLLS, *AT_0007.drop_sql["postgresql"]),
    },
)


# 0011_triggers_check_every_card: every card a written row belongs to is checked.
# SQLite's seat trigger looked only at the card a seat came from, so a seat could move
# into a finalized game; and a roll that names a finalized game's change is part of that
# game's history, whichever card it names.

_SEAT_UPDATE_0010 = next(
    statement
    for statement in AT_0010.create_sql["sqlite"]
    if "TRIGGER seat_finalized_no_update " in statement
)
_SEAT_UPDATE_0011 = f"""
    CREATE TRIGGER seat_finalized_no_update BEFORE UPDATE ON scorecards_seat
    WHEN EXISTS (SELECT 1 FROM scorecards_scorecard
                 WHERE id IN (OLD.scorecard_id, NEW.scorecard_id) AND finalized_at IS NOT NULL)
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
    """
_SQLITE_ROLLS_0011 = [
    f"""
    CREATE TRIGGER roll_finalized_no_{op.lower()} BEFORE {op} ON scorecards_roll
    WHEN EXISTS (SELECT 1 FROM scorecards_scorecard
                 WHERE id IN ({row}.scorecard_id, (SELECT scorecard_id FROM scorecards_change
                                                   WHERE id = {row}.change_id))
                   AND finalized_at IS NOT NULL)
    BEGIN SELECT RAISE(ABORT, '{MESSAGE}'); END;
    """
    for op, row in (("INSERT", "NEW"), ("DELETE", "OLD"))
]

_POSTGRES_ROLLS_0011 = [
    f"""
    CREATE FUNCTION dados_refuse_finalized_roll() RETURNS trigger AS $$
    DECLARE
        roll record;
    BEGIN
        IF TG_OP = 'DELETE' THEN roll := OLD; ELSE roll := NEW; END IF;
        IF EXISTS (
            SELECT 1 FROM scorecards_scorecard s
             WHERE s.id IN (roll.scorecard_id, (SELECT c.scorecard_id FROM scorecards_change c
                                                 WHERE c.id = roll.change_id))
               AND s.finalized_at IS NOT NULL
        ) THEN
            RAISE EXCEPTION '{MESSAGE}' USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql;
    """,
    """
    CREATE TRIGGER roll_finalized BEFORE INSERT OR DELETE ON scorecards_roll
    FOR EACH ROW EXECUTE FUNCTION dados_refuse_finalized_roll();
    """,
]

AT_0011 = Triggers(
    create_sql={
        "sqlite": (
            *[
                _SEAT_UPDATE_0011 if statement == _SEAT_UPDATE_0010 else statement
                for statement in AT_0007.create_sql["sqlite"]
            ],
            *_SQLITE_ROLLS_0011,
            _SQLITE_ROLLS[-1],
        ),
        "postgresql": (
            *AT_0007.create_sql["postgresql"],
            *_POSTGRES_ROLLS[:2],
            *_POSTGRES_ROLLS_0011,
        ),
    },
    drop_sql={
        "sqlite": AT_0010.drop_sql["sqlite"],
        "postgresql": (
            *AT_0010.drop_sql["postgresql"],
            "DROP FUNCTION IF EXISTS dados_refuse_finalized_roll();",
        ),
    },
)

CURRENT = AT_0011
