# The change log's and the card's labels in Spanish, and «Yahtzee adicional» (the rule
# sheet's words): no SQL.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scorecards", "0007_seat_checks_in_domains"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="change",
            name="author",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="autor",
            ),
        ),
        migrations.AlterField(
            model_name="change",
            name="created_at",
            field=models.DateTimeField(auto_now_add=True, verbose_name="fecha"),
        ),
        migrations.AlterField(
            model_name="change",
            name="items",
            field=models.JSONField(default=list, verbose_name="casillas"),
        ),
        migrations.AlterField(
            model_name="change",
            name="kind",
            field=models.CharField(
                choices=[("box", "Casilla"), ("joker", "Yahtzee adicional"), ("undo", "Deshacer")],
                max_length=10,
                verbose_name="tipo",
            ),
        ),
        migrations.AlterField(
            model_name="change",
            name="scorecard",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="changes",
                to="scorecards.scorecard",
                verbose_name="tarjeta",
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
                verbose_name="deshace",
            ),
        ),
        migrations.AlterField(
            model_name="scorecard",
            name="version",
            field=models.PositiveIntegerField(default=0, editable=False, verbose_name="versión"),
        ),
    ]
