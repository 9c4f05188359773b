from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _


class User(AbstractUser):
    """A registered player; the admin registers them, nobody signs up."""

    display_name = models.CharField(
        _("nombre visible"),
        max_length=60,
        help_text=_("El nombre que ven los demás jugadores en las tarjetas."),
    )

    class Meta:
        verbose_name = _("jugador")
        verbose_name_plural = _("jugadores")
        ordering = ["display_name", "username"]

    def __str__(self):
        return self.name

    @property
    def name(self) -> str:
        """What the UI shows for this player: the display name, else the username."""
        return self.display_name or self.username
