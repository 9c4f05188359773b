"""The finalized-card triggers look at every card a written row belongs to.

SQLite's seat trigger looked only at the card a seat came from, so an UPDATE could move
a seat into a finalized game; PostgreSQL's function has always looked at both cards. On
both, a roll was checked only by its own card, not by the card of the change it belongs
to, which is the turn a finalized game's history shows. The whole set is swapped for
scorecards.triggers.AT_0011, and back.
"""

from django.db import migrations

from scorecards import triggers


def checks_every_card(apps, schema_editor):
    triggers.AT_0010.drop(schema_editor)
    triggers.AT_0011.create(schema_editor)


def checks_one_card(apps, schema_editor):
    triggers.AT_0011.drop(schema_editor)
    triggers.AT_0010.create(schema_editor)


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0010_digital_play")]

    operations = [migrations.RunPython(checks_every_card, checks_one_card)]
