import contextlib
import csv
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.forms import clean_name
from accounts.names import fold, normalize

HEADER = {"username", "usuario"}


class Command(BaseCommand):
    help = (
        "Register players from a CSV file of (username, display name) rows; print each "
        "temporary password once. Any invalid or duplicate row refuses the whole file."
    )

    def add_arguments(self, parser):
        parser.add_argument("csv_file", type=Path)

    def handle(self, *args, csv_file, **options):
        rows = self.read(csv_file)
        errors = self.problems(rows)
        if errors:
            raise CommandError(
                "No se ha registrado a nadie: el archivo tiene errores.\n" + "\n".join(errors)
            )
        User = get_user_model()
        issued = []
        with transaction.atomic():
            for _line, username, display_name in rows:
                user = User(username=username, display_name=normalize(display_name))
                issued.append((user, user.set_temporary_password()))
                user.save()
        self.stdout.write(
            f"{len(issued)} jugadores registrados. Contraseñas temporales "
            "(se muestran una sola vez; deberán cambiarse al entrar):"
        )
        for user, password in issued:
            self.stdout.write(f"{user.username}\t{user.display_name}\t{password}")

    def read(self, path):
        """Rows as (line number, username, display name); a header row is skipped."""
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"No se puede leer {path}: {error}") from None
        dialect = csv.excel
        with contextlib.suppress(csv.Error):
            dialect = csv.Sniffer().sniff(text[:2048], delimiters=",;\t")
        rows = []
        for line, row in enumerate(csv.reader(text.splitlines(), dialect), start=1):
            if not any(cell.strip() for cell in row):
                continue
            if line == 1 and row[0].strip().lower() in HEADER:
                continue
            rows.append((line, *[cell.strip() for cell in row]))
        if not rows:
            raise CommandError("El archivo no tiene ningún jugador.")
        return rows

    def problems(self, rows):
        User = get_user_model()
        username_field = User._meta.get_field("username")
        errors, seen = [], {}
        # Every name in use, folded as accounts.forms compares them, and the file's own.
        names = {fold(user.name): user.name for user in User.objects.all()}
        existing = set(
            User.objects.filter(username__in=[row[1] for row in rows if len(row) > 1]).values_list(
                "username", flat=True
            )
        )
        for row in rows:
            line = row[0]
            if len(row) != 3:
                errors.append(f"Línea {line}: debe tener dos columnas (usuario, nombre visible).")
                continue
            _line, username, display_name = row
            try:
                username_field.run_validators(username)
                if not username:
                    raise ValidationError("El usuario está vacío.")
            except ValidationError as error:
                errors.append(f"Línea {line}: usuario «{username}» no válido: {' '.join(error)}")
            if not display_name or len(display_name) > 60:
                errors.append(f"Línea {line}: el nombre visible debe tener de 1 a 60 caracteres.")
            else:
                errors += self.name_problems(line, display_name, names)
            if username in existing:
                errors.append(f"Línea {line}: el usuario «{username}» ya está registrado.")
            if username in seen:
                errors.append(
                    f"Línea {line}: «{username}» ya aparece en la línea {seen[username]}."
                )
            seen.setdefault(username, line)
        return errors

    def name_problems(self, line, display_name, names):
        """Why display_name cannot be a new player's name: as in the admin, nothing hidden
        in it and no other player's name (case, accents and lookalike letters aside)."""
        try:
            name = clean_name(display_name)
        except ValidationError as error:
            return [f"Línea {line}: {' '.join(error)}"]
        if other := names.get(fold(name)):
            return [f"Línea {line}: ya hay un jugador que se llama «{other}»."]
        names[fold(name)] = name
        return []
