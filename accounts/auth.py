"""The logged-in player of the organizer's writes, read in one prepared statement.

Django reads the user through the ORM: on the box write's path that query cost 0.46 ms
of a 2.3 ms write on SQLite, and 0.85 ms on PostgreSQL; the same row by one prepared
statement costs 0.04 and 0.41 ms (bench/RESULTS.md). Only the common case is done here
(a user logged in by the model backend, whose session hash matches their password of
now): anything else is django.contrib.auth.get_user's own, fallback secrets and the
flush of a session that no longer verifies included.
"""

import functools

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ValidationError
from django.db import connections
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from accounts.middleware import temporary_password_redirect
from accounts.models import User
from scorecards import prepared

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def player_required(view):
    """login_required, and the temporary-password check, with request.user read by
    session_user."""
    checked = login_required(view)

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        request.user = SimpleLazyObject(lambda: session_user(request))
        return temporary_password_redirect(request) or checked(request, *args, **kwargs)

    # accounts.middleware.PasswordChangeRequiredMiddleware: checked here, after the swap.
    wrapped.checks_temporary_password = True
    return wrapped


def session_user(request):
    """What django.contrib.auth.get_user answers for this request."""
    session = request.session
    try:
        user_id = User._meta.pk.to_python(session[SESSION_KEY])
        backend = session[BACKEND_SESSION_KEY]
    except KeyError:
        return get_user(request)
    except ValidationError:  # a session no login() wrote: Django's own would fail
        return AnonymousUser()
    if not 0 < user_id < 2**63:  # beyond any id; the database would refuse the number
        return AnonymousUser()
    if backend != MODEL_BACKEND or backend not in settings.AUTHENTICATION_BACKENDS:
        return get_user(request)
    user = _active_user(user_id)
    if user is None:
        return get_user(request)
    given = session.get(HASH_SESSION_KEY)
    if not given or not constant_time_compare(given, user.get_session_auth_hash()):
        return get_user(request)
    return user


# What the writes use of the user (the session hash is the password's), in the model's
# order as Model.from_db wants it; any other field is read on first use, as a deferred
# field is.
_USED = {
    "id",
    "password",
    "username",
    "display_name",
    "is_active",
    "is_staff",
    "is_superuser",
    "must_change_password",
}
_FIELDS = [field.attname for field in User._meta.concrete_fields if field.attname in _USED]
_SQL = f"SELECT {', '.join(_FIELDS)} FROM {User._meta.db_table} WHERE id = %s AND is_active"


def _active_user(user_id) -> User | None:
    """The active user with this id (ModelBackend.get_user's), else None."""
    db = User.objects.db
    with connections[db].cursor() as cursor:
        prepared.execute(cursor, _SQL, [user_id])
        row = cursor.fetchone()
    return None if row is None else User.from_db(db, _FIELDS, row)
