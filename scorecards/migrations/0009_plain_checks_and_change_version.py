"""Back to plain Django: the seat's checks return to the table on PostgreSQL (0007 had
moved them into domains), the statistics version goes, and each change records the card
version it made, so a live page is sent only the cells written since it last looked."""

import importlib

from django.db import migrations, models

domains = importlib.import_module("scorecards.migrations.0007_seat_checks_in_domains")


class Migration(migrations.Migration):
    dependencies = [("scorecards", "0008_labels_in_spanish")]

    operations = [
        migrations.RunPython(domains.domains_into_checks, domains.checks_into_domains),
        migrations.DeleteModel(name="StatsVersion"),
        migrations.AddField(
            model_name="change",
            name="version",
            field=models.PositiveIntegerField(editable=False, null=True, verbose_name="versión"),
        ),
    ]
