from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccessesConfig(AppConfig):
    """django-axes' records of sign-ins, a section of the admin of their own."""

    name = "accesses"
    verbose_name = _("Accesos")
