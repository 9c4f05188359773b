"""A change's items move into its own row (Change.items, JSON); ChangeItem goes.

Every box write then adds one row to the change log instead of two, and touches three
fewer indexes: ChangeItem's two, the one on Change.author, and the one that kept an
undo to one per change, now left out for the changes that undo nothing. On SQLite the
write reads every page it touches again after another worker's commit, so this is most
of what a write costs beyond the card itself (bench/RESULTS.md).

The finalized-card triggers of 0002 come off first: SQLite rebuilds the change table to
alter it, and the finalized games' changes get their items too. They come back without
ChangeItem's, and the change log's append-only rule moves to Change
(scorecards.triggers.AT_0006).

An undo now RESTRICTs the change it undid instead of PROTECTing it: both still go when
their card in progress is discarded, which PROTECT refused.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from scorecards import triggers

# Each change's items in the order of their ids; a change without any gets []. SQLite
# 3.40 has no ORDER BY inside an aggregate: json_group_array takes the rows in the order
# of the subquery, which SQLite keeps because the subquery is not flattened into it.
FILL_ITEMS = {
    "sqlite": """
        UPDATE scorecards_change SET items = (
            SELECT json_group_array(json_array(seat_id, box, old, new)) FROM (
                SELECT seat_id, box, old, new FROM scorecards_changeitem
                WHERE change_id = scorecards_change.id ORDER BY id
            )
        )
    """,
    "postgresql": """
        UPDATE scorecards_change c SET items = COALESCE((
            SELECT jsonb_agg(jsonb_build_array(i.seat_id, i.box, i.old, i.new) ORDER BY i.id)
            FROM scorecards_changeitem i WHERE i.change_id = c.id
        ), '[]'::jsonb)
    """,
}
FILL_CHANGE_ITEMS = {
    "sqlite": """
        INSERT INTO scorecards_changeitem (change_id, seat_id, box, old, new)
        SELECT c.id, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
               json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]')
        FROM scorecards_change c, json_each(c.items) j ORDER BY c.id, j.key
    """,
    "postgresql": """
        INSERT INTO scorecards_changeitem (change_id, seat_id, box, old, new)
        SELECT c.id, (j.item->>0)::bigint, j.item->>1, (j.item->>2)::integer,
               (j.item->>3)::integer
        FROM scorecards_change c, jsonb_array_elements(c.items) WITH ORDINALITY AS j(item, n)
        ORDER BY c.id, j.n
    """,
}


def _run(schema_editor, by_vendor):
    postgres = schema_editor.connection.vendor == "postgresql"
    for statement in by_vendor["postgresql" if postgres else "sqlite"]:
        schema_editor.execute(statement)


def drop_first_triggers(apps, schema_editor):
    triggers.AT_0002.drop(schema_editor)


def create_first_triggers(apps, schema_editor):
    triggers.AT_0002.create(schema_editor)


def fill_items(apps, schema_editor):
    _run(schema_editor, {vendor: [sql] for vendor, sql in FILL_ITEMS.items()})


def fill_change_items(apps, schema_editor):
    _run(schema_editor, {vendor: [sql] for vendor, sql in FILL_CHANGE_ITEMS.items()})


def create_triggers(apps, schema_editor):
    triggers.AT_0006.create(schema_editor)


def drop_triggers(apps, schema_editor):
    triggers.AT_0006.drop(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("scorecards", "0005_created_once"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(drop_first_triggers, create_first_triggers),
        migrations.AddField(
            model_name="change",
            name="items",
            field=models.JSONField(default=list),
        ),
        migrations.RunPython(fill_items, fill_change_items),
        migrations.RemoveField(model_name="changeitem", name="change"),
        migrations.RemoveField(model_name="changeitem", name="seat"),
        migrations.DeleteModel(name="ChangeItem"),
        migrations.AlterField(
            model_name="change",
            name="author",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="change",
            name="undoes",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.RESTRICT,
                related_name="undone_by",
                to="scorecards.change",
            ),
        ),
        migrations.AddConstraint(
            model_name="change",
            constraint=models.UniqueConstraint(
                condition=models.Q(("undoes__isnull", False)),
                fields=("undoes",),
                name="change_undone_once",
            ),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
