from django import forms
from django.contrib import admin, messages
from django.contrib.admin import actions as admin_actions
from django.contrib.auth import password_validation
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import ReadOnlyPasswordHashWidget, UserChangeForm, UsernameField
from django.contrib.auth.hashers import is_password_usable
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import BooleanField, Count, ExpressionWrapper, Max, Q
from django.forms.renderers import TemplatesSetting
from django.http import Http404
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.decorators import method_decorator
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_variables

from accounts.admin_spanish import AdminPasswordChangeForm, flag
from accounts.club import club_register, club_rows, hard_to_type
from accounts.forms import DistinctNameMixin
from accounts.models import (
    GUEST,
    PLAIN_USERNAME,
    User,
    suggested_username,
    usernames_like,
)
from accounts.names import plain_username


def check_username_free(username, pk=None) -> None:
    """Refuse a username that another player (than pk) has whatever its case, since log-in
    ignores it: «Ana» while «ana» exists."""
    if taken := usernames_like(username, pk):
        raise forms.ValidationError(
            _("Ya hay un jugador con ese nombre de usuario: «%(username)s».")
            % {"username": taken[0]},
            code="unique",
        )


class PlayerCreationForm(DistinctNameMixin, forms.ModelForm):
    """Register a player: the admin sets a password or lets the app make a temporary one."""

    GENERATE, CHOOSE = "generar", "elegir"

    password_mode = forms.ChoiceField(
        label=_("Contraseña"),
        choices=[
            (GENERATE, _("Generar una contraseña temporal (se muestra una sola vez)")),
            (CHOOSE, _("Elegirla yo")),
        ],
        initial=GENERATE,
        widget=forms.RadioSelect,
    )
    password1 = forms.CharField(
        label=_("Contraseña elegida"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password2 = forms.CharField(
        label=_("Repite la contraseña"),
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    # The username the admin was told is hard to type (clean_username): sent again as it
    # was, it is kept.
    warned_username = forms.CharField(required=False, label="", widget=forms.HiddenInput)

    class Meta:
        model = User
        fields = ["username", "display_name", "plays"]
        field_classes = {"username": UsernameField}
        help_texts = {
            "username": _(
                "Con él se entra en Dados, en mayúsculas o minúsculas. Si lo dejas vacío, se"
                " forma con el nombre visible, sin acentos ni espacios («María José»:"
                " «mariajose»)."
            )
        }

    temporary_password = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].required = False

    def clean_username(self):
        """One account per username whatever its case (log-in ignores it): «Ana» is refused
        while «ana» exists. A username with accents works, but each log-in must type them:
        the first time, say so and what it would be without them."""
        username = self.cleaned_data.get("username")
        if not username:
            return username  # made from the display name (clean)
        check_username_free(username)
        plain = plain_username(username)
        try:
            User._meta.get_field("username").run_validators(username)
        except forms.ValidationError as error:
            hint = _("Sin espacios ni acentos: «%(username)s».") % {
                "username": plain or PLAIN_USERNAME
            }
            raise forms.ValidationError([*error.error_list, hint]) from None
        warned = self.add_prefix("warned_username")
        if plain != username.casefold() and self.data.get(warned) != username:
            self.data = self.data.copy()
            self.data[warned] = username
            raise forms.ValidationError(
                _(
                    "«%(username)s» lleva acentos u otros signos que no todos los teclados"
                    " escriben, y habrá que escribirlos igual al entrar. Sin ellos sería"
                    " «%(plain)s». Para dejarlo así, pulsa Guardar otra vez."
                )
                % {"username": username, "plain": plain or PLAIN_USERNAME},
                code="hard_to_type",
            )
        return username

    def clean(self):
        data = super().clean()
        if "username" in data and not data["username"] and data.get("display_name"):
            data["username"] = suggested_username(data["display_name"])
            self.instance.username = data["username"]
        if data.get("password_mode") == self.CHOOSE:
            first, second = data.get("password1"), data.get("password2")
            if not first:
                self.add_error("password1", _("Escribe la contraseña o elige generarla."))
            else:
                # Every problem at once, each under its field.
                if first != second:
                    self.add_error("password2", _("Las dos contraseñas no coinciden."))
                self.instance.username = data.get("username", "")
                try:
                    password_validation.validate_password(first, self.instance)
                except forms.ValidationError as error:
                    self.add_error("password1", error)
        return data

    def save(self, commit=True):
        user = super().save(commit=False)
        if self.cleaned_data["password_mode"] == self.GENERATE:
            self.temporary_password = user.set_temporary_password()
        else:
            user.set_password(self.cleaned_data["password1"])
        if commit:
            user.save()
        return user


class PlayerPasswordWidget(ReadOnlyPasswordHashWidget):
    """A player's password on their page: what can be done about it, never its hash
    (algorithm, iterations, salt), which tells a staff member nothing they can use."""

    template_name = "admin/accounts/user/password_widget.html"

    def get_context(self, name, value, attrs):
        return {**super().get_context(name, value, attrs), "usable": is_password_usable(value)}

    def render(self, name, value, attrs=None, renderer=None):
        # The project's templates: the form renderer's own engine sees only the apps'.
        return super().render(name, value, attrs, renderer=TemplatesSetting())


class PlayerChangeForm(DistinctNameMixin, UserChangeForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if field := self.fields.get("password"):
            field.widget = PlayerPasswordWidget()
            field.help_text = ""

    def clean_username(self):
        username = self.cleaned_data.get("username")
        if username and "username" in self.changed_data:
            check_username_free(username, self.instance.pk)
        return username


class PlayerImportForm(forms.Form):
    """A club's players as CSV rows of (username, display name), pasted or uploaded, read
    as `manage.py import_players` reads its file (accounts.club)."""

    # Each temporary password is hashed on purpose slowly (a third of a second): a longer
    # list is for the command, which no request timeout cuts short.
    MAX_PLAYERS = 50
    MAX_BYTES = 100_000

    text = forms.CharField(
        label=_("Pega la lista"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "cols": 40, "spellcheck": "false"}),
    )
    upload = forms.FileField(
        label=_("O sube un archivo CSV"),
        required=False,
        widget=forms.FileInput(attrs={"accept": ".csv,.txt,text/csv,text/plain"}),
    )

    def clean(self):
        data = super().clean()
        text, upload = (data.get("text") or "").strip(), data.get("upload")
        if text and upload:
            raise ValidationError(_("Pega la lista o sube un archivo, no las dos cosas."))
        if upload:
            if upload.size > self.MAX_BYTES:
                raise ValidationError(
                    _("El archivo es demasiado grande para una lista de jugadores.")
                )
            try:
                text = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ValidationError(
                    _("El archivo no está en UTF-8: guárdalo como «CSV UTF-8» y vuelve a subirlo.")
                ) from None
        elif not text:
            raise ValidationError(_("Pega la lista de jugadores o elige un archivo."))
        # Browsers send a textarea's line ends as CRLF: a pasted file counts as uploaded.
        elif len(text.replace("\r\n", "\n").encode()) > self.MAX_BYTES:
            raise ValidationError(
                _(
                    "La lista pegada es demasiado larga: como mucho %(kb)s KB. Divídela, o usa"
                    " «manage.py import_players»."
                )
                % {"kb": self.MAX_BYTES // 1000}
            )
        rows = club_rows(text)
        if len(rows) > self.MAX_PLAYERS:
            raise ValidationError(
                _(
                    "La lista tiene %(n)s jugadores: aquí se registran como mucho %(max)s de una"
                    " vez. Divídela, o usa «manage.py import_players»."
                )
                % {"n": len(rows), "max": self.MAX_PLAYERS}
            )
        data["rows"] = rows
        return data


class GuestFilter(admin.SimpleListFilter):
    """Guests (GUEST): added from «Tarjeta de puntos», still without a log-in."""

    title = _("invitado")
    parameter_name = "invitado"

    def lookups(self, request, model_admin):
        return [("si", _("Sí")), ("no", _("No"))]

    def queryset(self, request, queryset):
        if self.value() == "si":
            return queryset.filter(GUEST)
        if self.value() == "no":
            return queryset.exclude(GUEST)
        return queryset


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    add_form = PlayerCreationForm
    form = PlayerChangeForm
    change_password_form = AdminPasswordChangeForm
    add_form_template = None
    list_display = [
        "display_name",
        "username",
        "active",
        "playing",
        "guest",
        "staff",
        "games",
        "last_game",
        "last_login",
    ]
    list_filter = ["is_active", "plays", GuestFilter, "is_staff"]
    active = flag(User, "is_active")
    playing = flag(User, "plays")
    guest = flag(User, "is_guest_now", _("invitado"))
    staff = flag(User, "is_staff")
    search_fields = ["display_name", "username", "first_name", "last_name"]
    ordering = ["display_name", "username"]
    fieldsets = [
        (
            None,
            {"fields": ["username", "display_name", "plays", "password", "must_change_password"]},
        ),
        (_("Permisos"), {"fields": ["is_active", "is_staff", "is_superuser"]}),
        (_("Fechas"), {"fields": ["last_login", "date_joined", "added_by"]}),
    ]
    add_fieldsets = [
        (
            None,
            {
                "classes": ["wide"],
                "fields": [
                    "username",
                    "warned_username",
                    "display_name",
                    "plays",
                    "password_mode",
                    "password1",
                    "password2",
                ],
            },
        ),
    ]
    readonly_fields = ["last_login", "date_joined", "added_by"]
    actions = ["deactivate", "reactivate", "temporary_password", "delete_selected"]

    def get_queryset(self, request):
        finalized = Q(seats__scorecard__finalized_at__isnull=False)
        return (
            super()
            .get_queryset(request)
            .annotate(
                game_count=Count("seats", filter=finalized),
                last_game_at=Max("seats__scorecard__finalized_at"),
                is_guest_now=ExpressionWrapper(GUEST, output_field=BooleanField()),
            )
        )

    @admin.display(description=_("partidas"), ordering="game_count")
    def games(self, user):
        return user.game_count

    @admin.display(description=_("última partida"), ordering="last_game_at")
    def last_game(self, user):
        return user.last_game_at

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if getattr(form, "temporary_password", None):
            messages.warning(request, _temporary_message([(obj, form.temporary_password)]))
        if change and "is_active" in form.changed_data and not obj.is_active:
            obj.end_sessions()

    def get_deleted_objects(self, objs, request):
        """A player who appears in any scorecard is never deleted: deactivate instead."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        users = objs if isinstance(objs, list) else list(objs)
        played = User.objects.filter(pk__in=[u.pk for u in users]).filter(
            Q(seats__isnull=False) | Q(organized_scorecards__isnull=False)
        )
        explained = [
            _(
                "%(name)s aparece en tarjetas de puntos y su historial no se puede borrar: "
                "desactívalo en su lugar."
            )
            % {"name": user.name}
            for user in played.distinct()
        ]
        if explained:
            # The reason is the history, not a missing permission: say only that.
            return deleted, counts, set(), explained
        return deleted, counts, perms_needed, protected

    @admin.action(description=_("Eliminar los jugadores seleccionados"), permissions=["delete"])
    def delete_selected(self, request, queryset):
        """Django's own, named in the words of the other actions (not «seleccionado/s»)."""
        return admin_actions.delete_selected(self, request, queryset)

    @admin.action(description=_("Desactivar los jugadores seleccionados"))
    def deactivate(self, request, queryset):
        users = list(queryset.filter(is_active=True))
        for user in users:
            user.is_active = False
            user.save(update_fields=["is_active"])
            user.end_sessions()
            self.log_change(request, user, _("Desactivado."))
        n = len(users)
        done = ngettext("%(n)s jugador desactivado.", "%(n)s jugadores desactivados.", n)
        self.message_user(request, done % {"n": n})

    @admin.action(description=_("Reactivar los jugadores seleccionados"))
    def reactivate(self, request, queryset):
        users = list(queryset.filter(is_active=False))
        for user in users:
            user.is_active = True
            user.save(update_fields=["is_active"])
            self.log_change(request, user, _("Reactivado."))
        n = len(users)
        done = ngettext("%(n)s jugador reactivado.", "%(n)s jugadores reactivados.", n)
        self.message_user(request, done % {"n": n})

    @admin.action(description=_("Generar una contraseña temporal"))
    def temporary_password(self, request, queryset):
        issued = []
        for user in queryset:
            password = user.set_temporary_password()
            user.save(update_fields=["password", "must_change_password"])
            user.end_sessions()
            self.log_change(request, user, _("Contraseña temporal generada."))
            issued.append((user, password))
        messages.warning(request, _temporary_message(issued))

    def get_urls(self):
        import_view = self.admin_site.admin_view(self.import_players)
        temporary_view = self.admin_site.admin_view(self.temporary_password_view)
        return [
            path("importar/", import_view, name="accounts_user_import"),
            path(
                "<path:object_id>/contrasena-temporal/",
                temporary_view,
                name="accounts_user_temporary_password",
            ),
            *super().get_urls(),
        ]

    def temporary_password_view(self, request, object_id):
        """The player's page's «Generar una contraseña temporal»: asks, then does what the
        list's action does for this one player."""
        user = self.get_object(request, object_id)
        if user is None:
            raise Http404
        if not self.has_change_permission(request, user):
            raise PermissionDenied
        if request.method == "POST":
            self.temporary_password(request, User.objects.filter(pk=user.pk))
            return redirect("admin:accounts_user_change", user.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": user,
            "title": gettext("Generar una contraseña temporal"),
        }
        return TemplateResponse(request, "admin/accounts/user/temporary_password.html", context)

    @method_decorator(sensitive_variables("issued"))
    def import_players(self, request):
        """Register a club from a CSV list; its temporary passwords are shown on the page
        this answers, once: kept nowhere, and not cached (the admin's views never are)."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = PlayerImportForm(request.POST or None, request.FILES or None)
        context = {**self.admin_site.each_context(request), "opts": self.opts, "form": form}
        if request.method == "POST" and form.is_valid():
            try:
                issued = club_register(form.cleaned_data["rows"])
            except ValidationError as error:
                form.add_error(None, error)
            else:
                for user, _password in issued:
                    self.log_addition(request, user, gettext("Registrado desde una lista CSV."))
                hard = hard_to_type(user for user, _password in issued)
                context.update(title=gettext("Jugadores registrados"), issued=issued, hard=hard)
                return TemplateResponse(request, "admin/accounts/user/imported.html", context)
        context["title"] = gettext("Importar jugadores")
        return TemplateResponse(request, "admin/accounts/user/import.html", context)


def _temporary_message(issued):
    """The passwords just issued, shown once, above the admin's list."""
    return render_to_string("admin/accounts/temporary_passwords.html", {"issued": issued})
