from django.apps import AppConfig
from django.conf import settings
from django.core.management import call_command
from django.db.models.signals import post_migrate


def create_cache_table(using, verbosity=1, **kwargs):
    """The database cache's table (settings.CACHES), made by every `migrate`: in the
    database of its own on SQLite, else beside the app's tables. Nothing if it is there, or
    the cache is another."""
    database = "cache" if "cache" in settings.DATABASES else using
    call_command("createcachetable", database=database, verbosity=verbosity)


class ScorecardsConfig(AppConfig):
    name = "scorecards"
    verbose_name = "Tarjetas de puntos"

    def ready(self):
        post_migrate.connect(create_cache_table, sender=self)
