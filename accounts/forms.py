from django.contrib.auth.forms import AuthenticationForm
from django.core.validators import MaxLengthValidator


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
