from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from safekeeping.archive import BackupError, write_backup


def at_least_one(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Copy the whole club (players, guests, cards, their log and rolls, finished games, "
        "the access log) to one file, consistent while the app writes. Prints the file's "
        "path, with the club's counts, as its last line."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--to",
            type=Path,
            default=None,
            help="The folder for the copy (default: BACKUP_DIR, backups/ beside SQLite's file).",
        )
        parser.add_argument(
            "--keep",
            type=at_least_one,
            default=14,
            help="How many of the newest copies to keep in that folder (default 14).",
        )

    def handle(self, *args, to, keep, **options):
        folder = to or Path(settings.BACKUP_DIR)
        try:
            path, summary = write_backup(folder, keep=keep)
        except BackupError as error:
            raise CommandError(str(error)) from None
        except KeyboardInterrupt:
            raise CommandError("Copia interrumpida: no se ha hecho.") from None
        self.stdout.write(f"{path}\t{summary}")
