"""django-axes' records as the admin shows them: axes names each one in English in code
(«Attempted Access: 2026-12-02 08:12:58.560123+00:00»), so the admin (accesses.admin) lists
these proxies of its models, which name them in Spanish. No table of their own."""

from axes import models as axes_models
from django.utils import formats, timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _


def _when(moment) -> str:
    return formats.date_format(timezone.localtime(moment), "DATETIME_FORMAT") if moment else ""


class AccessAttempt(axes_models.AccessAttempt):
    class Meta:
        proxy = True
        verbose_name = _("access attempt")
        verbose_name_plural = _("access attempts")

    def __str__(self):
        return gettext("Intentos de %(username)s desde %(ip)s") % {
            "username": self.username,
            "ip": self.ip_address,
        }


class AccessFailureLog(axes_models.AccessFailureLog):
    class Meta:
        proxy = True
        verbose_name = _("access failure")
        verbose_name_plural = _("access failures")

    def __str__(self):
        text = gettext("Fallo de %(username)s desde %(ip)s, %(time)s") % {
            "username": self.username,
            "ip": self.ip_address,
            "time": _when(self.attempt_time),
        }
        return text + (gettext(" (bloqueado)") if self.locked_out else "")


class AccessLog(axes_models.AccessLog):
    class Meta:
        proxy = True
        verbose_name = _("access log")
        verbose_name_plural = _("access logs")

    def __str__(self):
        return gettext("Entrada de %(username)s, %(time)s") % {
            "username": self.username,
            "time": _when(self.attempt_time),
        }
