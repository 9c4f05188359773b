"""Database triggers: a finalized card, its seats and its change log never change.

The models and views refuse too; the triggers make the promise hold for every
path, the shell and raw SQL included.
"""

from django.db import migrations

MESSAGE = "scorecard is finalized"

# How each protected table finds the card a row belongs to.
CARD_OF = {
    "seat": "{row}.scorecard_id",
    "change": "{row}.scorecard_id",
    "changeitem": "(SELECT scorecard_id FROM scorecards_change WHERE id = {row}.change_id)",
}
ROW_OPS = (("INSERT", "NEW"), ("UPDATE", "OLD"), ("DELETE", "OLD"))

SQLITE = [
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
    """
    CREATE TRIGGER changeitem_no_update BEFORE UPDATE ON scorecards_changeitem
    BEGIN SELECT RAISE(ABORT, 'the change log is append-only'); END;
    """,
]

SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS scorecard_finalized_no_update;",
    "DROP TRIGGER IF EXISTS scorecard_finalized_no_delete;",
    *[
        f"DROP TRIGGER IF EXISTS {table}_finalized_no_{op.lower()};"
        for table in CARD_OF
        for op, _ in ROW_OPS
    ],
    "DROP TRIGGER IF EXISTS changeitem_no_update;",
]

POSTGRES = [
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
                RAISE EXCEPTION 'the change log is append-only'
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

POSTGRES_DROP = [
    *[
        f"DROP TRIGGER IF EXISTS {table}_finalized ON scorecards_{table};"
        for table in ("scorecard", "seat", "change", "changeitem")
    ],
    "DROP FUNCTION IF EXISTS dados_refuse_finalized();",
]


def create(apps, schema_editor):
    statements = POSTGRES if schema_editor.connection.vendor == "postgresql" else SQLITE
    for statement in statements:
        schema_editor.execute(statement)


def drop(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    for statement in POSTGRES_DROP if vendor == "postgresql" else SQLITE_DROP:
        schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
