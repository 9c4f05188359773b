import secrets
from importlib import import_module

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.names import fold, free_username, plain_username

# A temporary password is typed from a printed sheet on a phone's keyboard: lowercase
# letters and digits, none that reads as another (l/1, o/0), in hyphenated groups of five.
# 32 symbols, 15 of them: 75 bits, more than the 72 of the token_urlsafe(9) it replaced.
TEMPORARY_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
TEMPORARY_GROUPS, TEMPORARY_GROUP_LENGTH = 3, 5


def temporary_password() -> str:
    """A random password to be given once and changed at the next log-in."""
    size = TEMPORARY_GROUP_LENGTH
    symbols = "".join(secrets.choice(TEMPORARY_ALPHABET) for _n in range(TEMPORARY_GROUPS * size))
    return "-".join(symbols[start : start + size] for start in range(0, len(symbols), size))


class User(AbstractUser):
    """A registered player; the admin registers them, nobody signs up."""

    display_name = models.CharField(
        _("nombre visible"),
        max_length=60,
        help_text=_("El nombre que ven los demás jugadores en las tarjetas."),
    )
    must_change_password = models.BooleanField(
        _("debe cambiar la contraseña"),
        default=False,
        help_text=_("Tiene una contraseña temporal y debe cambiarla al entrar."),
    )
    plays = models.BooleanField(
        _("juega"),
        default=True,
        help_text=_(
            "Se le ofrece al crear una tarjeta de puntos y aparece en «Clasificación» y en "
            "los filtros de «Historial». Desmárcalo en las cuentas que solo administran."
        ),
    )
    # Who added this player as a guest from «Tarjeta de puntos» (its date: date_joined);
    # empty for an account the admin registered.
    added_by = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        editable=False,
        related_name="guests_added",
        verbose_name=_("invitado por"),
    )

    class Meta:
        verbose_name = _("jugador")
        verbose_name_plural = _("jugadores")
        ordering = ["display_name", "username"]

    def __str__(self):
        return self.name

    def set_temporary_password(self) -> str:
        """Give a new random password that must be changed at the next log-in; return it."""
        password = temporary_password()
        self.set_password(password)
        self.must_change_password = True
        return password

    def end_sessions(self) -> int:
        """Log this player out everywhere by deleting their sessions, through the session
        engine, which forgets a cached copy too (settings.SESSION_ENGINE); return how many."""
        from django.contrib.sessions.models import Session

        store = import_module(settings.SESSION_ENGINE).SessionStore
        mine = [
            session.pk
            for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
            if session.get_decoded().get(SESSION_KEY) == str(self.pk)
        ]
        for key in mine:
            store(key).delete()
        return len(mine)

    @property
    def is_guest(self) -> bool:
        """Added as a guest and not yet given a log-in by the admin (GUEST)."""
        return self.added_by_id is not None and not self.has_usable_password()

    @property
    def name(self) -> str:
        """What the UI shows for this player: the display name, else the username."""
        return self.display_name or self.username


def usernames_like(username: str, pk=None) -> list[str]:
    """The usernames of the players other than pk that are username whatever its case
    («Íñigo» is «íñigo»), the one spelled exactly so first. Compared in Python: SQLite's
    LIKE and LOWER, and PostgreSQL's under the C locale, fold only ASCII letters."""
    others = User.objects.exclude(pk=pk)
    if username.isascii():
        others = others.filter(username__iexact=username)
    wanted = username.casefold()
    found = others.values_list("username", flat=True).iterator()
    return sorted((name for name in found if name.casefold() == wanted), key=username.__ne__)


# A suggested username when a display name has no letter or digit a keyboard types.
PLAIN_USERNAME = "jugador"


def suggested_username(display_name: str, pk=None) -> str:
    """A username for a player called display_name that no other player (than pk) has,
    case aside, and any keyboard types: «María José» is «mariajose», or «mariajose2»
    if that is taken."""
    base = plain_username(display_name)[:140] or PLAIN_USERNAME
    # base is ASCII: both databases compare it without case.
    alike = User.objects.exclude(pk=pk).filter(username__istartswith=base)
    taken = {name.casefold() for name in alike.values_list("username", flat=True)}
    return free_username(base, taken)


def same_name(name, pk=None) -> User | None:
    """The player other than pk whose name reads as name (accounts.names.fold), if any."""
    wanted = fold(name)
    others = User.objects.exclude(pk=pk).only("pk", "display_name", "username")
    return next((user for user in others.iterator() if fold(user.name) == wanted), None)


# A guest: a player added by another from «Tarjeta de puntos», who cannot log in until the
# admin gives them a temporary password; their games are theirs from the first one.
GUEST = Q(added_by__isnull=False, password__startswith=UNUSABLE_PASSWORD_PREFIX)
# How many guests one account may add in a day.
GUESTS_PER_DAY = 10
