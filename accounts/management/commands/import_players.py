from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.club import club_register, club_rows, hard_to_type


class Command(BaseCommand):
    help = (
        "Register players from a CSV file of (username, display name) rows; print each "
        "temporary password once. Any invalid or duplicate row refuses the whole file."
    )

    def add_arguments(self, parser):
        parser.add_argument("csv_file", type=Path)

    def handle(self, *args, csv_file, **options):
        try:
            text = csv_file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"No se puede leer {csv_file}: {error}") from None
        try:
            issued = club_register(club_rows(text))
        except ValidationError as error:
            raise CommandError(
                "No se ha registrado a nadie: el archivo tiene errores.\n" + "\n".join(error)
            ) from None
        self.stdout.write(
            f"{len(issued)} jugadores registrados. Contraseñas temporales "
            "(se muestran una sola vez; deberán cambiarse al entrar):"
        )
        for user, password in issued:
            self.stdout.write(f"{user.username}\t{user.display_name}\t{password}")
        for user, plain in hard_to_type(user for user, _password in issued):
            self.stderr.write(
                f"«{user.username}» lleva acentos u otros signos que no todos los teclados"
                f" escriben, y habrá que escribirlos igual al entrar; sin ellos sería «{plain}»."
            )
