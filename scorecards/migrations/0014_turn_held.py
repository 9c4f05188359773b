"""The dice held in a digital turn in progress are the card's, for every phone to see.

A column that is never null: SQLite rebuilds the card's table to add it, so the
finalized-card triggers come off first and the same set (scorecards.triggers.AT_0011)
goes back on after, both ways. A turn in progress holds what its last roll kept.
"""

from django.db import migrations, models

from scorecards import triggers


def drop_triggers(apps, schema_editor):
    triggers.AT_0011.drop(schema_editor)


def create_triggers(apps, schema_editor):
    triggers.AT_0011.create(schema_editor)


def held_as_last_kept(apps, schema_editor):
    Scorecard = apps.get_model("scorecards", "Scorecard")
    for scorecard in Scorecard.objects.filter(finalized_at__isnull=True):
        if scorecard.turn_rolls:
            scorecard.turn_held = scorecard.turn_rolls[-1][1]
            scorecard.save(update_fields=["turn_held"])


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0013_change_key")]

    operations = [
        migrations.RunPython(drop_triggers, create_triggers),
        migrations.AddField(
            model_name="scorecard",
            name="turn_held",
            field=models.CharField(
                blank=True,
                default="",
                editable=False,
                max_length=5,
                verbose_name="dados guardados",
            ),
        ),
        migrations.RunPython(held_as_last_kept, migrations.RunPython.noop),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
