class CacheRouter:
    """Django's database cache (settings.CACHES) in the database "cache", a SQLite file of
    its own: for routing, its table is the model CacheEntry of an app django_cache."""

    def db_for_read(self, model, **hints):
        return "cache" if model._meta.app_label == "django_cache" else None

    db_for_write = db_for_read

    def allow_migrate(self, db, app_label, **hints):
        if app_label == "django_cache":
            return db == "cache"
        return False if db == "cache" else None
