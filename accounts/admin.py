from axes import admin as axes_admin
from axes.conf import settings as axes_settings
from axes.handlers.proxy import AxesProxyHandler
from django import forms
from django.contrib import admin, messages
from django.contrib.auth import password_validation
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.contrib.auth.forms import UserChangeForm, UsernameField
from django.db.models import BooleanField, Count, ExpressionWrapper, Max, Q
from django.template.loader import render_to_string
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from accounts.admin_spanish import AdminPasswordChangeForm, flag
from accounts.forms import DistinctNameMixin
from accounts.models import GUEST, AccessAttempt, AccessFailureLog, AccessLog, User


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

    class Meta:
        model = User
        fields = ["username", "display_name", "plays"]
        field_classes = {"username": UsernameField}

    temporary_password = None

    def clean_username(self):
        """One account per username whatever its case, as Django's own creation form:
        «Ana» is refused while «ana» exists."""
        username = self.cleaned_data.get("username")
        taken = User.objects.filter(username__iexact=username).first() if username else None
        if taken:
            raise forms.ValidationError(
                _("Ya hay un jugador con ese nombre de usuario: «%(username)s».")
                % {"username": taken.username},
                code="unique",
            )
        return username

    def clean(self):
        data = super().clean()
        if data.get("password_mode") == self.CHOOSE:
            first, second = data.get("password1"), data.get("password2")
            if not first:
                self.add_error("password1", _("Escribe la contraseña o elige generarla."))
            elif first != second:
                self.add_error("password2", _("Las dos contraseñas no coinciden."))
            else:
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


class PlayerChangeForm(DistinctNameMixin, UserChangeForm):
    pass


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
    actions = ["deactivate", "reactivate", "temporary_password"]

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


def _temporary_message(issued):
    """The passwords just issued, shown once, above the admin's list."""
    return render_to_string("admin/accounts/temporary_passwords.html", {"issued": issued})


# django-axes' records (AXES_ENABLE_ADMIN is off): its own admin classes, with the lock-out
# status column and the clean-up action in Spanish, whose messages axes formats before
# translating. The action also sets the request attributes axes' own one expects from its
# log-in handling: without them it fails with an AttributeError.


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
