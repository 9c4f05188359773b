"""The session and the logged-in player of the organizer's writes, each read by one
prepared statement.

Django reads both rows through the ORM: on SQLite the session cost 0.54 ms and the user
0.46 ms of a 2.3 ms box write, on PostgreSQL 0.92 and 0.85 ms; the same rows by prepared
statements cost 0.07 and 0.04 ms, 0.36 and 0.41 ms (bench/RESULTS.md). The session is
Django's database session with only its read replaced. Of the user, only the common case
is done here (a user logged in by the model backend, whose session hash matches their
password of now): anything else is django.contrib.auth.get_user's own, fallback secrets
and the flush of a session that no longer verifies included.
"""

import functools

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.db import connections
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from accounts.middleware import temporary_password_redirect
from accounts.models import User
from dados import prepared

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def player_required(view):
    """login_required, and the temporary-password check, with the session read by
    SessionStore and request.user by session_user."""
    checked = login_required(view)

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        session = request.session
        if type(session) is db.SessionStore and not hasattr(session, "_session_cache"):
            request.session = SessionStore(session.session_key)
        request.user = SimpleLazyObject(lambda: session_user(request))
        return temporary_password_redirect(request) or checked(request, *args, **kwargs)

    # accounts.middleware.PasswordChangeRequiredMiddleware: checked here, after the swap.
    wrapped.checks_temporary_password = True
    return wrapped


class SessionStore(db.SessionStore):
    """Django's database sessions, the session's row read by one prepared statement."""

    def _get_session_from_db(self):
        if self.session_key is None:
            return None
        connection = connections[self.model.objects.db]
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            prepared.execute(cursor, _SESSION_SQL, [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None
            return None
        return self.model(session_key=self.session_key, session_data=row[0])


_SESSION_SQL = "SELECT session_data FROM django_session WHERE session_key = %s AND expire_date > %s"


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
    if not isinstance(user_id, int) or not 0 < user_id < 2**63:  # none the database holds
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
