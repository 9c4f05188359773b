"""The Idempotency-Key of a write that changed nothing is kept too (scorecards.once), in a
table of its own: a new table, so the change log's table and its triggers stay as 0011
left them (scorecards.triggers.AT_0011, still CURRENT).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scorecards", "0014_turn_held"),
    ]

    operations = [
        migrations.CreateModel(
            name="KeptKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("key", models.UUIDField(editable=False, verbose_name="clave")),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("box", "Casilla"),
                            ("joker", "Yahtzee adicional"),
                            ("undo", "Deshacer"),
                        ],
                        max_length=10,
                        verbose_name="tipo",
                    ),
                ),
                ("items", models.JSONField(default=list, verbose_name="casillas")),
                ("created_at", models.DateTimeField(auto_now_add=True, verbose_name="fecha")),
                (
                    "scorecard",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="kept_keys",
                        to="scorecards.scorecard",
                        verbose_name="tarjeta",
                    ),
                ),
            ],
            options={
                "verbose_name": "clave sin cambio",
                "verbose_name_plural": "claves sin cambio",
                "constraints": [
                    models.UniqueConstraint(fields=("scorecard", "key"), name="kept_key_once")
                ],
            },
        ),
    ]
