"""Registering a whole club at once from a CSV list of (username, display name) rows, as
`manage.py import_players` and the admin's «Importar jugadores» page both do. A row may
leave its username blank: it is made from the display name, as the admin's form makes it.

The list is taken whole or not at all: a line it cannot read (an unclosed quote, a line
too long), any invalid row, or a username or name already taken (in the club or earlier
in the list) refuses it, each problem named with its line.
"""

import contextlib
import csv
import io

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.forms import clean_name
from accounts.models import PLAIN_USERNAME, User
from accounts.names import fold, free_username, normalize, plain_username

HEADER = {"username", "usuario"}
# A line's characters at most: a username (150) and a display name (60), with room to
# spare, and far under the csv module's field limit.
MAX_LINE = 1_000
MAX_ERRORS = 20


def club_rows(text: str) -> list[tuple]:
    """The list's rows as (line number, cell, ...), blank lines and a header row skipped;
    ValidationError naming each line it cannot read, or if there is no row."""
    dialect = csv.excel
    with contextlib.suppress(csv.Error):
        dialect = csv.Sniffer().sniff(text[:2048], delimiters=",;\t")
    rows, unreadable = [], []
    # Each line read on its own, strictly: a display name holds no line break, so a quote
    # left open is its line's error instead of a field that swallows the lines after it.
    # Quotes as spreadsheets write them, whatever the sniffer guessed from a few lines.
    quoting = {"quotechar": '"', "doublequote": True, "strict": True}
    for line, physical in enumerate(io.StringIO(text, newline=None), start=1):
        if len(physical) > MAX_LINE:
            unreadable.append(_("Línea %(line)s: es demasiado larga.") % {"line": line})
            continue
        # No name holds one, and PostgreSQL refuses one even in a query.
        if "\x00" in physical:
            unreadable.append(
                _("Línea %(line)s: lleva un carácter nulo (NUL), que no es texto.") % {"line": line}
            )
            continue
        try:
            row = next(csv.reader([physical], dialect, **quoting), [])
        except csv.Error:
            unreadable.append(
                _(
                    "Línea %(line)s: unas comillas no se cierran. Pon el nombre entre un"
                    " par de comillas, o escríbelo sin ellas."
                )
                % {"line": line}
            )
            continue
        if not any(cell.strip() for cell in row):
            continue
        if line == 1 and row[0].strip().lower() in HEADER:
            continue
        rows.append((line, *[cell.strip() for cell in row]))
    if len(unreadable) > MAX_ERRORS:
        # The first few, and how many more: a page of them helps nobody.
        more = len(unreadable) - MAX_ERRORS
        del unreadable[MAX_ERRORS:]
        unreadable.append(
            ngettext(
                "Y %(n)s línea más que tampoco se puede leer.",
                "Y %(n)s líneas más que tampoco se pueden leer.",
                more,
            )
            % {"n": more}
        )
    if unreadable:
        raise ValidationError(unreadable, code="unreadable")
    if not rows:
        raise ValidationError(_("El archivo no tiene ningún jugador."), code="empty")
    return rows


def with_usernames(rows, taken) -> list[tuple]:
    """The rows, each blank username made from its display name as the admin's form makes
    it (accounts.names.plain_username), clear of taken (casefolded usernames) and of the
    list's own usernames."""
    taken = set(taken) | {row[1].casefold() for row in rows if len(row) == 3 and row[1]}
    filled = []
    for row in rows:
        if len(row) == 3 and not row[1] and row[2]:
            base = plain_username(row[2])[:140] or PLAIN_USERNAME
            row = (row[0], free_username(base, taken), row[2])
            taken.add(row[1].casefold())
        filled.append(row)
    return filled


def hard_to_type(users) -> list[tuple[User, str]]:
    """The users whose usernames have accents or other signs that not every keyboard
    types, each with what it would be without them."""
    return [
        (user, plain_username(user.username) or PLAIN_USERNAME)
        for user in users
        if plain_username(user.username) != user.username.casefold()
    ]


def club_problems(rows, existing) -> list[str]:
    """Why each row cannot register a player, one sentence per problem; [] if none.
    existing: the club's usernames by their casefolded selves."""
    username_field = User._meta.get_field("username")
    errors, seen = [], {}
    # Every name in use, folded as accounts.forms compares them, and the list's own.
    names = {fold(user.name): user.name for user in User.objects.all()}
    for row in rows:
        line = row[0]
        if len(row) != 3:
            errors.append(
                _("Línea %(line)s: debe tener dos columnas (usuario, nombre visible).")
                % {"line": line}
            )
            continue
        _line, username, display_name = row
        try:
            username_field.run_validators(username)
            if not username:
                raise ValidationError(_("El usuario está vacío."))
        except ValidationError as error:
            errors.append(
                _("Línea %(line)s: usuario «%(username)s» no válido: %(why)s")
                % {"line": line, "username": username, "why": " ".join(error)}
            )
        if not display_name or len(display_name) > 60:
            errors.append(
                _("Línea %(line)s: el nombre visible debe tener de 1 a 60 caracteres.")
                % {"line": line}
            )
        else:
            errors += _name_problems(line, display_name, names)
        # One account per username whatever its case, since log-in ignores it.
        if other := existing.get(username.casefold()):
            errors.append(
                _("Línea %(line)s: el usuario «%(username)s» ya está registrado.")
                % {"line": line, "username": other}
            )
        if username.casefold() in seen:
            errors.append(
                _("Línea %(line)s: «%(username)s» ya aparece en la línea %(first)s.")
                % {"line": line, "username": username, "first": seen[username.casefold()]}
            )
        seen.setdefault(username.casefold(), line)
    return errors


def _name_problems(line, display_name, names):
    """Why display_name cannot be a new player's name: as in the admin, nothing hidden
    in it and no other player's name (case, accents and lookalike letters aside)."""
    try:
        name = clean_name(display_name)
    except ValidationError as error:
        return [_("Línea %(line)s: %(why)s") % {"line": line, "why": " ".join(error)}]
    if other := names.get(fold(name)):
        return [
            _("Línea %(line)s: ya hay un jugador que se llama «%(name)s».")
            % {"line": line, "name": other}
        ]
    names[fold(name)] = name
    return []


def club_register(rows) -> list[tuple[User, str]]:
    """Register a player per row, each with a temporary password to change at the first
    log-in; return (player, password) pairs. A row without a username gets one made from
    its display name (with_usernames). All or none: ValidationError listing every
    problem, and nobody registered, if any row is bad."""
    try:
        with transaction.atomic():
            usernames = User.objects.values_list("username", flat=True)
            existing = {username.casefold(): username for username in usernames}
            rows = with_usernames(rows, existing)
            if errors := club_problems(rows, existing):
                raise ValidationError(errors, code="invalid")
            issued = []
            for _line, username, display_name in rows:
                user = User(username=username, display_name=normalize(display_name))
                issued.append((user, user.set_temporary_password()))
                user.save()
    except IntegrityError:
        # Someone registered one of these usernames since the check.
        raise ValidationError(
            _(
                "Otro administrador acaba de registrar a alguno de estos jugadores: vuelve a"
                " probarlo."
            ),
            code="taken",
        ) from None
    return issued
