from axes.apps import AppConfig as BaseAxesConfig
from django.apps import AppConfig
from django.utils import formats, timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    default = True  # this module also holds AxesConfig, listed by its path in INSTALLED_APPS
    name = "accounts"
    verbose_name = "Jugadores"


def _when(moment) -> str:
    return formats.date_format(timezone.localtime(moment), "DATETIME_FORMAT") if moment else ""


def _attempt(attempt) -> str:
    return gettext("Intentos de %(username)s desde %(ip)s") % {
        "username": attempt.username,
        "ip": attempt.ip_address,
    }


def _log(log) -> str:
    return gettext("Entrada de %(username)s, %(time)s") % {
        "username": log.username,
        "time": _when(log.attempt_time),
    }


def _failure(failure) -> str:
    text = gettext("Fallo de %(username)s desde %(ip)s, %(time)s") % {
        "username": failure.username,
        "ip": failure.ip_address,
        "time": _when(failure.attempt_time),
    }
    return text + (gettext(" (bloqueado)") if failure.locked_out else "")


class AxesConfig(BaseAxesConfig):
    """django-axes (log-in throttling), its admin section and records named in the admin's
    language; its models' and fields' names come from locale/es."""

    verbose_name = _("Control de accesos")

    def ready(self):
        super().ready()
        from axes.models import AccessAttempt, AccessFailureLog, AccessLog

        # What the admin's titles, breadcrumbs and confirmations call a record: axes
        # writes «Attempted Access: 2026-12-02 08:12:58.560123+00:00».
        AccessAttempt.__str__ = _attempt
        AccessLog.__str__ = _log
        AccessFailureLog.__str__ = _failure
