"""What the admin shows in its own language although Django builds it in code.

- Yes/no columns: Django's icons read «True» and «False» to a screen reader; `flag` makes
  a column with the same icons that reads «Sí» and «No».
- A player's password page: Django appends an untranslatable English warning to the
  «Autenticación basada en contraseña» choice; `AdminPasswordChangeForm` says it in words
  that fit Dados, which has no other way to log in.

django-axes' pages are accesses.admin's, over proxies of its models (accesses.models)."""

from django.contrib import admin
from django.contrib.auth import forms as auth_forms
from django.templatetags.static import static
from django.utils.html import format_html
from django.utils.translation import gettext as _


def flag(model, field, description=None):
    """A list column for a boolean field (or annotation, with its description), shown as
    the admin shows one, sortable."""

    description = description or model._meta.get_field(field).verbose_name

    @admin.display(description=description, ordering=field)
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
