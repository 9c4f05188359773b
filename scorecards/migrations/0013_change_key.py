"""Each change keeps the Idempotency-Key of the write that made it, once per card: the same
write sent again finds its change and is not made twice (scorecards.once).

A nullable column without a default and a partial unique index: SQLite adds them with
ALTER TABLE ADD COLUMN and CREATE INDEX, and unapplied drops them with DROP INDEX and
ALTER TABLE DROP COLUMN, never rebuilding the change log's table, so its triggers stay
as 0011 left them both ways (scorecards.triggers.AT_0011, still CURRENT). The triggers
need nothing new: a key is written with its change, which is never updated.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0012_rematch")]

    operations = [
        migrations.AddField(
            model_name="change",
            name="key",
            field=models.UUIDField(blank=True, editable=False, null=True, verbose_name="clave"),
        ),
        migrations.AddConstraint(
            model_name="change",
            constraint=models.UniqueConstraint(
                condition=models.Q(("key__isnull", False)),
                fields=("scorecard", "key"),
                name="change_key_once",
            ),
        ),
    ]
