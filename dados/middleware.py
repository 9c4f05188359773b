from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.db import DatabaseError, connections
from django.shortcuts import resolve_url
from django.utils import translation
from django.utils.cache import patch_cache_control, patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect


class LanguageMiddleware:
    """Spanish unless the person chose another language with the switch.

    Django's LocaleMiddleware would follow the browser's Accept-Language; Dados is
    a Spanish app whose English is opt-in, remembered in the language cookie.
    """

    def __init__(self, get_response):
        self.get_response = get_response
        self.supported = {code for code, _name in settings.LANGUAGES}

    def __call__(self, request):
        chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
        language = chosen if chosen in self.supported else settings.LANGUAGE_CODE
        translation.activate(language)
        request.LANGUAGE_CODE = language
        response = self.get_response(request)
        patch_vary_headers(response, ["Cookie"])
        response.headers.setdefault("Content-Language", language)
        return response


class HtmxRedirectMiddleware:
    """A redirect answered to htmx becomes one the browser follows with the whole page.

    htmx would follow it inside the request and swap the page it lands on into the
    fragment's place: the log-in page inside the live card once the session has ended
    (logged out elsewhere, a password reset, a deactivated player). A log-in then returns
    to the page the person was on, not to the fragment's address. Goes after django-htmx's
    middleware, which sets request.htmx.
    """

    REDIRECTS = frozenset({301, 302, 303, 307, 308})

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code not in self.REDIRECTS or not request.htmx:
            return response
        location = response["Location"]
        login = resolve_url(settings.LOGIN_URL)
        if urlsplit(location).path == login:
            location = redirect_to_login(request.htmx.current_url_abs_path or "/")["Location"]
        whole = HttpResponseClientRedirect(location)
        whole.cookies = response.cookies
        return whole


class PrivateCacheMiddleware:
    """A page for a logged-in person is theirs alone: `private`, so no shared cache keeps
    it, and `no-cache`, so the browser asks the server before reusing its copy. Views
    that set their own Cache-Control keep it (the exports say `no-store`).

    Goes after AuthenticationMiddleware, which sets request.user.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if "Cache-Control" not in response and user is not None and user.is_authenticated:
            patch_cache_control(response, private=True, no_cache=True)
        return response


class FreshConnectionMiddleware:
    """A request that failed on a database error closes its connections, so the next
    request opens new ones.

    Django keeps a connection for CONN_MAX_AGE while it still answers, and one opened while
    the database was read-only (a SQLite file, a PostgreSQL database whose
    default_transaction_read_only was on) stays read-only when the database is writable
    again: every write on it would fail until it expired. CONN_HEALTH_CHECKS does not see
    it, since it answers.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DatabaseError):
            for connection in connections.all(initialized_only=True):
                connection.close()
