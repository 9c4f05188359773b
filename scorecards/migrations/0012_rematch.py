"""A card may be the rematch («Revancha») of a finished game, and only one card is.

A nullable column and a partial unique index: SQLite adds both without rebuilding the
card's table, so the finalized-card triggers stay as 0011 left them. Unapplied, SQLite
rebuilds the table to drop a foreign key's column: the triggers come off for it, and
the same set (scorecards.triggers.AT_0011) goes back on.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from scorecards import triggers


def drop_triggers(apps, schema_editor):
    triggers.AT_0011.drop(schema_editor)


def create_triggers(apps, schema_editor):
    triggers.AT_0011.create(schema_editor)


class Migration(migrations.Migration):

    dependencies = [
        ('scorecards', '0011_triggers_check_every_card'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # Unapplied, these two run last and first: the triggers back on, and off.
        migrations.RunPython(migrations.RunPython.noop, create_triggers),
        migrations.AddField(
            model_name='scorecard',
            name='rematch_of',
            field=models.ForeignKey(blank=True, db_index=False, editable=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='rematches', to='scorecards.scorecard', verbose_name='revancha de'),
        ),
        migrations.AddConstraint(
            model_name='scorecard',
            constraint=models.UniqueConstraint(condition=models.Q(('rematch_of__isnull', False)), fields=('rematch_of',), name='scorecard_rematch_once'),
        ),
        migrations.RunPython(migrations.RunPython.noop, drop_triggers),
    ]
