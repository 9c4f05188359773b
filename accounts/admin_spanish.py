"""What the admin shows in its own language although Django and django-axes build it in code.

- Yes/no columns: Django's icons read «True» and «False» to a screen reader; `flag` makes
  a column with the same icons that reads «Sí» and «No».
- A player's password page: Django appends an untranslatable English warning to the
  «Autenticación basada en contraseña» choice; `AdminPasswordChangeForm` says it in words
  that fit Dados, which has no other way to log in.
- django-axes' pages: its models' and fields' names are translated in locale/es (its
  section's name in accounts.apps.AxesConfig, which also names its records); here are the
  lock-out status column and the clean-up action, whose message axes formats before
  translating. The action also sets the request attributes axes' own one expects from its
  log-in handling: without them it fails with an AttributeError."""

from axes import admin as axes_admin
from axes.conf import settings as axes_settings
from axes.handlers.proxy import AxesProxyHandler
from axes.models import AccessAttempt, AccessFailureLog
from django.contrib import admin
from django.contrib.auth import forms as auth_forms
from django.templatetags.static import static
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext


def flag(model, field):
    """A list column for a boolean field, shown as the admin shows one, sortable."""

    @admin.display(description=model._meta.get_field(field).verbose_name, ordering=field)
    def column(self, obj):
        value = getattr(obj, field)
        icon = static(f"admin/img/icon-{'yes' if value else 'no'}.svg")
        return format_html('<img src="{}" alt="{}">', icon, _("Sí") if value else _("No"))

    return column


class AdminPasswordChangeForm(auth_forms.AdminPasswordChangeForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if field := self.fields.get("usable_password"):
            # The warning keeps Django's markup: the page's script shows it when disabling.
            field.help_text = format_html(
                '{}<ul id="id_unusable_warning" class="messagelist">'
                '<li class="warning">{}</li></ul>',
                _("Sin contraseña, la cuenta no puede entrar: Dados no tiene otra forma."),
                _("Si la deshabilitas, la contraseña actual de esta cuenta se pierde."),
            )


class AccessAttemptAdmin(axes_admin.AccessAttemptAdmin):
    @admin.action(description=gettext_lazy("Borrar los intentos caducados"))
    def cleanup_expired_attempts(self, request, queryset):
        AxesProxyHandler.update_request(request)
        n = self.handler.clean_expired_user_attempts(request=request)
        done = ngettext("%(n)s intento caducado borrado.", "%(n)s intentos caducados borrados.", n)
        self.message_user(request, done % {"n": n})

    @admin.display(description=gettext_lazy("Estado"))
    def status(self, attempt):
        left = axes_settings.AXES_FAILURE_LIMIT - attempt.failures_since_start
        if left <= 0:
            return _("Bloqueado")
        return ngettext("Queda %(n)s intento", "Quedan %(n)s intentos", left) % {"n": left}


class AccessFailureLogAdmin(axes_admin.AccessFailureLogAdmin):
    locked = flag(AccessFailureLog, "locked_out")
    list_display = [
        "locked" if name == "locked_out" else name
        for name in axes_admin.AccessFailureLogAdmin.list_display
    ]


for model, model_admin in [
    (AccessAttempt, AccessAttemptAdmin),
    (AccessFailureLog, AccessFailureLogAdmin),
]:
    if admin.site.is_registered(model):
        admin.site.unregister(model)
        admin.site.register(model, model_admin)
