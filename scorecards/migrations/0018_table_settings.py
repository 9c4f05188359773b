"""What the table sees, by choice: totals hidden from the players until the end, and the
upper bonus's pace; and the version at which they last changed.

Columns that are never null: SQLite rebuilds the card's table to add them, so the
finalized-card triggers come off first and the same set (scorecards.triggers.AT_0011)
goes back on after, both ways.
"""

from django.db import migrations, models

from scorecards import triggers


def drop_triggers(apps, schema_editor):
    triggers.AT_0011.drop(schema_editor)


def create_triggers(apps, schema_editor):
    triggers.AT_0011.create(schema_editor)


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0017_share")]

    operations = [
        migrations.RunPython(drop_triggers, create_triggers),
        migrations.AddField(
            model_name="scorecard",
            name="hide_totals",
            field=models.BooleanField(
                default=False, verbose_name="ocultar totales hasta el final"
            ),
        ),
        migrations.AddField(
            model_name="scorecard",
            name="settings_version",
            field=models.PositiveIntegerField(default=0, editable=False),
        ),
        migrations.AddField(
            model_name="scorecard",
            name="show_bonus_pace",
            field=models.BooleanField(default=False, verbose_name="ritmo del bonus"),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
