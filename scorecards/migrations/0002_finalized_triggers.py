"""Database triggers: a finalized card, its seats and its change log never change.

The models and views refuse too; the triggers make the promise hold for every
path, the shell and raw SQL included. Their SQL is scorecards.triggers.AT_0002.
"""

from django.db import migrations

from scorecards import triggers


def create(apps, schema_editor):
    triggers.AT_0002.create(schema_editor)


def drop(apps, schema_editor):
    triggers.AT_0002.drop(schema_editor)


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
