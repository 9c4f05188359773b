"""django-axes' records (AXES_ENABLE_ADMIN is off): its own admin classes, with the lock-out
status column and the clean-up action in Spanish, whose messages axes formats before
translating. The action also sets the request attributes axes' own one expects from its
log-in handling: without them it fails with an AttributeError."""

from axes import admin as axes_admin
from axes.conf import settings as axes_settings
from axes.handlers.proxy import AxesProxyHandler
from django.contrib import admin
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from accesses.models import AccessAttempt, AccessFailureLog, AccessLog
from accounts.admin_spanish import flag


@admin.register(AccessAttempt)
class AccessAttemptAdmin(axes_admin.AccessAttemptAdmin):
    @admin.action(description=_("Borrar los intentos caducados"))
    def cleanup_expired_attempts(self, request, queryset):
        AxesProxyHandler.update_request(request)
        n = self.handler.clean_expired_user_attempts(request=request)
        done = ngettext("%(n)s intento caducado borrado.", "%(n)s intentos caducados borrados.", n)
        self.message_user(request, done % {"n": n})

    @admin.display(description=_("Estado"))
    def status(self, attempt):
        left = axes_settings.AXES_FAILURE_LIMIT - attempt.failures_since_start
        if left <= 0:
            return gettext("Bloqueado")
        return ngettext("Queda %(n)s intento", "Quedan %(n)s intentos", left) % {"n": left}


@admin.register(AccessFailureLog)
class AccessFailureLogAdmin(axes_admin.AccessFailureLogAdmin):
    locked = flag(AccessFailureLog, "locked_out")
    list_display = [
        "locked" if name == "locked_out" else name
        for name in axes_admin.AccessFailureLogAdmin.list_display
    ]


@admin.register(AccessLog)
class AccessLogAdmin(axes_admin.AccessLogAdmin):
    pass
