"""Digital play: a card's mode may be «digital», its turn in progress keeps its rolls, and
each finished turn's rolls are stored, append-only, with the change that wrote its box.

The finalized-card triggers come off first: SQLite rebuilds the card's table to change
its constraints and add a column. They come back, with the same guarantees for the rolls:
never updated, and nothing added to or taken from a finalized card's.
"""

import importlib

import django.db.models.deletion
from django.db import migrations, models

previous = importlib.import_module("scorecards.migrations.0007_seat_checks_in_domains")
first = importlib.import_module("scorecards.migrations.0002_finalized_triggers")
MESSAGE = first.MESSAGE
APPEND_ONLY = "the rolls are append-only"

SQLITE = [
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
    BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END;
    """,
]

SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS roll_finalized_no_insert;",
    "DROP TRIGGER IF EXISTS roll_finalized_no_delete;",
    "DROP TRIGGER IF EXISTS roll_no_update;",
]

POSTGRES = [
    f"""
    CREATE FUNCTION dados_refuse_update() RETURNS trigger AS $$
    BEGIN
        RAISE EXCEPTION '{APPEND_ONLY}' USING ERRCODE = 'integrity_constraint_violation';
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

POSTGRES_DROP = [
    "DROP TRIGGER IF EXISTS roll_finalized ON scorecards_roll;",
    "DROP TRIGGER IF EXISTS roll_no_update ON scorecards_roll;",
    "DROP FUNCTION IF EXISTS dados_refuse_update();",
]


def _run(schema_editor, statements):
    for statement in statements[schema_editor.connection.vendor]:
        schema_editor.execute(statement)


def create_triggers(apps, schema_editor):
    """Every trigger as this migration leaves them (tests/conftest.py drops them for a
    flush and creates them again)."""
    previous.create_triggers(apps, schema_editor)
    _run(schema_editor, {"postgresql": POSTGRES, "sqlite": SQLITE})


def drop_triggers(apps, schema_editor):
    _run(schema_editor, {"postgresql": POSTGRES_DROP, "sqlite": SQLITE_DROP})
    previous.drop_triggers(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0009_plain_checks_and_change_version")]

    operations = [
        migrations.RunPython(previous.drop_triggers, previous.create_triggers),
        migrations.RemoveConstraint(model_name="scorecard", name="scorecard_mode_presencial"),
        migrations.AlterField(
            model_name="scorecard",
            name="mode",
            field=models.CharField(
                choices=[("presencial", "presencial"), ("digital", "digital")],
                default="presencial",
                editable=False,
                max_length=20,
                verbose_name="modalidad",
            ),
        ),
        migrations.AddConstraint(
            model_name="scorecard",
            constraint=models.CheckConstraint(
                condition=models.Q(("mode__in", ["presencial", "digital"])),
                name="scorecard_mode_known",
            ),
        ),
        migrations.AddField(
            model_name="scorecard",
            name="turn_rolls",
            field=models.JSONField(
                default=list, editable=False, verbose_name="tiradas del turno"
            ),
        ),
        migrations.CreateModel(
            name="Roll",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("round", models.PositiveSmallIntegerField(verbose_name="ronda")),
                ("number", models.PositiveSmallIntegerField(verbose_name="tirada")),
                ("dice", models.CharField(max_length=5, verbose_name="dados")),
                ("kept", models.CharField(blank=True, max_length=5, verbose_name="guardados")),
                ("rolled_at", models.DateTimeField(verbose_name="hora")),
                (
                    "change",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rolls",
                        to="scorecards.change",
                        verbose_name="cambio",
                    ),
                ),
                (
                    "scorecard",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="rolls",
                        to="scorecards.scorecard",
                        verbose_name="tarjeta",
                    ),
                ),
                (
                    "seat",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="scorecards.seat",
                        verbose_name="jugador",
                    ),
                ),
            ],
            options={"verbose_name": "tirada", "verbose_name_plural": "tiradas", "ordering": ["pk"]},
        ),
        migrations.AddConstraint(
            model_name="roll",
            constraint=models.CheckConstraint(
                condition=models.Q(("number__gte", 1), ("number__lte", 3)),
                name="roll_number_range",
            ),
        ),
        migrations.AddConstraint(
            model_name="roll",
            constraint=models.CheckConstraint(
                condition=models.Q(("round__gte", 1), ("round__lte", 13)),
                name="roll_round_range",
            ),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
