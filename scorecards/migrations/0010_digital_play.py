"""Digital play: a card's mode may be «digital», its turn in progress keeps its rolls, and
each finished turn's rolls are stored, append-only, with the change that wrote its box.

The finalized-card triggers come off first: SQLite rebuilds the card's table to change
its constraints and add a column. They come back, with the same guarantees for the rolls:
never updated, and nothing added to or taken from a finalized card's
(scorecards.triggers.AT_0010).
"""

import django.db.models.deletion
from django.db import migrations, models

from scorecards import triggers


def drop_triggers_before_rolls(apps, schema_editor):
    triggers.AT_0007.drop(schema_editor)


def create_triggers_before_rolls(apps, schema_editor):
    triggers.AT_0007.create(schema_editor)


def create_triggers(apps, schema_editor):
    triggers.AT_0010.create(schema_editor)


def drop_triggers(apps, schema_editor):
    triggers.AT_0010.drop(schema_editor)


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0009_plain_checks_and_change_version")]

    operations = [
        migrations.RunPython(drop_triggers_before_rolls, create_triggers_before_rolls),
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
