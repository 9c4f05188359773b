from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator
from django.utils.translation import gettext as _

from accounts.models import User, fold


class DistinctNameMixin:
    """For a ModelForm of User: a name that no other player shows, case and accents
    aside, or two columns of one card (and two lines of the ranking) would read alike."""

    def clean(self):
        data = super().clean()
        # Only a name being given: two players named alike before this check may still
        # be deactivated or get a new password.
        renamed = {"display_name", "username"} & set(self.changed_data)
        if renamed and "display_name" in self.fields and not self.has_error("display_name"):
            username = data.get("username") or self.instance.username
            name = data.get("display_name") or username
            if name and (other := _same_name(name, self.instance.pk)):
                self.add_error(
                    "display_name",
                    _(
                        "Ya hay un jugador que se llama «%(name)s»: elige otro nombre para"
                        " distinguirlos en las tarjetas."
                    )
                    % {"name": other.name},
                )
        return data


def _same_name(name, pk) -> User | None:
    wanted = fold(name)
    others = User.objects.exclude(pk=pk).only("pk", "display_name", "username")
    return next((user for user in others.iterator() if fold(user.name) == wanted), None)


class LoginForm(AuthenticationForm):
    """Django's log-in form, refusing a username longer than any account's.

    Django sets the username's max_length only as an HTML attribute; without the
    validator an over-long name reaches authentication, and django-axes then fails
    to record the attempt (a 500 on PostgreSQL).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["username"]
        field.validators.append(MaxLengthValidator(field.max_length))
