from pathlib import Path

from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, transaction
from django.utils import formats, timezone

from safekeeping.archive import (
    BackupError,
    check_rows,
    clear_club,
    club_summary,
    count_rows,
    holds_club,
    load_club,
    plan_restore,
    read_backup,
    write_backup,
)

# Ctrl-C (or SIGINT) before the restore's transaction has committed: it is rolled back.
INTERRUPTED = (
    "Restauración interrumpida: no se ha restaurado nada, la base de datos está como estaba."
)


class Command(BaseCommand):
    help = (
        "Restore a club from a file `manage.py backup` made, into a migrated database of "
        "either kind. Checks the whole file first; refuses a database that holds a club "
        "unless --replace (which backs that club up first). Everyone logs in again."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--replace",
            action="store_true",
            help="Replace the club this database holds, after backing it up to BACKUP_DIR.",
        )

    def handle(self, *args, file, replace, **options):
        try:
            contents = read_backup(file)
            plan = plan_restore(contents)
            registry = plan.registry()
            check_rows(contents, registry)
        except BackupError as error:
            raise CommandError(f"No se ha restaurado nada. {error}") from None
        except KeyboardInterrupt:
            raise CommandError(INTERRUPTED) from None
        occupied = holds_club()
        if occupied and not replace:
            raise CommandError(
                f"Esta base de datos ya tiene un club ({club_summary()}): no se ha cambiado "
                "nada. Para sustituirlo por la copia, añade --replace; antes se guardará "
                "una copia de lo que hay."
            )
        if occupied:
            try:
                safety, summary = write_backup(Path(settings.BACKUP_DIR), keep=None)
            except BackupError as error:
                raise CommandError(f"No se ha restaurado nada. {error}") from None
            self.stdout.write(f"Copia de lo que había ({summary}): {safety}")
        try:
            if plan.older:
                self.restore_older(contents, plan, registry, occupied)
            else:
                with transaction.atomic():
                    if occupied:
                        clear_club()
                    Session.objects.all().delete()
                    self.load(contents, registry)
        except BackupError as error:
            raise CommandError(f"No se ha restaurado nada. {error}") from None
        except DatabaseError as error:
            raise CommandError(
                f"No se ha restaurado nada: la base de datos rechazó una fila de {file} ({error})."
            ) from None
        except KeyboardInterrupt:
            raise CommandError(INTERRUPTED) from None
        cache.clear()
        made = formats.date_format(timezone.localtime(contents.created_at), "DATETIME_FORMAT")
        self.stdout.write(
            f"Restaurada la copia del {made}: {club_summary()}. Todas las sesiones se han "
            "cerrado: cada uno vuelve a entrar con su contraseña."
        )

    def load(self, contents, registry):
        """Insert the rows and check that the database holds what the file says."""
        load_club(contents, registry)
        found = count_rows(registry, contents.counts)
        if found != contents.counts:
            wrong = ", ".join(label for label, n in contents.counts.items() if found[label] != n)
            raise BackupError(f"Las filas restauradas no son las del archivo: {wrong}.")

    def restore_older(self, contents, plan, registry, occupied):
        """An older release's backup: into its own schema, then migrated forward.

        `migrate` runs outside the load's transaction (SQLite changes its schema only
        there), so the database goes back to today's schema whatever happens.
        """
        if occupied:
            with transaction.atomic():
                clear_club()
                Session.objects.all().delete()
        for app, name in plan.targets:
            call_command("migrate", app, name, interactive=False, verbosity=0)
        try:
            with transaction.atomic():
                Session.objects.all().delete()
                self.load(contents, registry)
        finally:
            call_command("migrate", interactive=False, verbosity=0)
