from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm, SetPasswordForm
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.debug import sensitive_variables

from accounts import names
from accounts.models import User, same_name


def clean_name(value: str) -> str:
    """A display name as typed, as it is kept (accounts.names); ValidationError if it shows
    nothing to read, has characters that show nothing or would disturb the text around it,
    or is too long."""
    if value and names.is_blank(value):
        raise ValidationError(
            _(
                "El nombre no tiene nada que se pueda leer, solo acentos sueltos o caracteres"
                " invisibles: escribe un nombre."
            ),
            code="blank",
        )
    if invisible := names.invisible_characters(value):
        raise ValidationError(
            _(
                "El nombre lleva caracteres invisibles o de control (%(codes)s), que no se"
                " ven pero cambian cómo se muestra: escríbelo sin ellos."
            )
            % {"codes": ", ".join(invisible)},
            code="hidden_characters",
        )
    if lone := names.lone_marks(value):
        raise ValidationError(
            _(
                "El nombre lleva acentos o signos sueltos (%(codes)s), sin una letra a la que"
                " unirse: escríbelos junto a su letra o quítalos."
            )
            % {"codes": ", ".join(lone)},
            code="lone_marks",
        )
    if enclosing := names.enclosing_marks(value):
        raise ValidationError(
            _(
                "El nombre lleva signos que encierran la letra de delante (%(codes)s), como un"
                " círculo o un recuadro: escríbelo sin ellos."
            )
            % {"codes": ", ".join(enclosing)},
            code="enclosing_marks",
        )
    name = names.normalize(value)
    limit = User._meta.get_field("display_name").max_length
    if len(name) > limit:
        raise ValidationError(
            _("El nombre puede tener como mucho %(limit)s caracteres.") % {"limit": limit},
            code="max_length",
        )
    return name


def name_taken(other) -> str:
    """Why a name that reads as other's cannot be given."""
    return _(
        "Ya hay un jugador que se llama «%(name)s»: elige otro nombre para distinguirlos en"
        " las tarjetas."
    ) % {"name": other.name}


class DistinctNameMixin:
    """For a ModelForm of User: a name kept normalized, with nothing hidden in it, that no
    other player shows (case, accents and lookalike letters aside), or two columns of one
    card (and two lines of the ranking) would read alike."""

    # The player whose name this one would read as, once cleaned.
    same_name = None

    def clean_display_name(self):
        name = self.cleaned_data.get("display_name") or ""
        if self.instance.pk and name == self.instance.display_name:
            # Unchanged: a name saved before these checks stays until it is changed, so
            # that the rest of its player's account can still be edited.
            return name
        return clean_name(name)

    def clean(self):
        data = super().clean()
        # Only a name being given: two players named alike before this check may still
        # be deactivated or get a new password.
        renamed = {"display_name", "username"} & set(self.changed_data)
        if renamed and "display_name" in self.fields and not self.has_error("display_name"):
            username = data.get("username") or self.instance.username
            name = data.get("display_name") or username
            if name and (other := same_name(name, self.instance.pk)):
                self.same_name = other
                self.add_error("display_name", name_taken(other))
        return data


class GuestForm(DistinctNameMixin, forms.ModelForm):
    """«Añadir invitado»: the name of a guest, with the rules of any player's. The name is
    checked again where the guest is added (scorecards.services.guest_add)."""

    class Meta:
        model = User
        fields = ["display_name"]
        error_messages = {
            "display_name": {"required": gettext_lazy("Escribe el nombre del invitado.")}
        }


class LoginForm(AuthenticationForm):
    """Django's log-in form, refusing a username longer than any account's.

    Django sets the username's max_length only as an HTML attribute; without the
    validator an over-long name reaches authentication, and django-axes then fails
    to record the attempt (a 500 on PostgreSQL).
    """

    # The username is matched in any case (accounts.security.UsernameAnyCaseBackend).
    error_messages = {
        **AuthenticationForm.error_messages,
        "invalid_login": gettext_lazy(
            "Escribe un %(username)s y una contraseña correctos. Ten en cuenta que la"
            " contraseña distingue mayúsculas y minúsculas; el usuario, no."
        ),
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        field.validators.append(MaxLengthValidator(field.max_length))


class PasswordPairMixin:
    """For Django's set-password forms: each error under the field it is about, all of them
    at once, and the new password kept when only its repetition was wrong.

    Django checks the new password only once the two match, and puts what its validators
    say («demasiado corta») under the repetition."""

    @method_decorator(sensitive_variables("password1", "password2"))
    def clean(self):
        password1 = self.cleaned_data.get("new_password1")
        password2 = self.cleaned_data.get("new_password2")
        if password1 and password2 and password1 != password2:
            mismatch = self.error_messages["password_mismatch"]
            self.add_error("new_password2", ValidationError(mismatch, code="password_mismatch"))
        self.validate_password_for_user(self.user, "new_password1")
        if "new_password1" not in self.errors:
            # Shown again to whoever just typed it, on a page no cache keeps
            # (accounts.views.PasswordChangeView).
            self.fields["new_password1"].widget.render_value = True
        return self.cleaned_data


class PlayerPasswordChangeForm(PasswordPairMixin, PasswordChangeForm):
    """«Cambiar contraseña»: the old password, then the new one twice."""


class TemporaryPasswordChangeForm(PasswordPairMixin, SetPasswordForm):
    """The change a temporary password forces: the new password twice, not the one typed
    a moment ago to log in, and never that temporary password again."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["new_password1"].widget.attrs["autofocus"] = True

    @method_decorator(sensitive_variables("password"))
    def clean_new_password1(self):
        password = self.cleaned_data.get("new_password1")
        if password and self.user.check_password(password):
            raise forms.ValidationError(
                _("Esa es tu contraseña temporal: elige una nueva."), code="password_unchanged"
            )
        return password
