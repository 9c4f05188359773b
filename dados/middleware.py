from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.views import redirect_to_login
from django.db import DatabaseError, connections
from django.http import HttpResponse
from django.shortcuts import resolve_url
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
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

    A write (POST) whose session has ended is not redirected: its sender may be the
    outbox, which keeps the write until the server says it took it, and must not read a
    log-in page, nor a redirect, as taken. It gets 401, «Tu sesión ha terminado: entra
    otra vez.» as text, and in X-Dados-Login where to log in: back to the card for a
    card's writes, else to the page that sent it (its Referer, from this site), else to
    the write's own address.
    """

    REDIRECTS = frozenset({301, 302, 303, 307, 308})

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.status_code not in self.REDIRECTS or not request.htmx:
            return response
        location = response["Location"]
        to = urlsplit(location)
        to_login = to.path == resolve_url(settings.LOGIN_URL)
        # login_required's redirect says where to come back (a log-out's does not).
        if to_login and request.method == "POST" and REDIRECT_FIELD_NAME in parse_qs(to.query):
            return session_ended(request)
        if to_login:
            location = redirect_to_login(request.htmx.current_url_abs_path or "/")["Location"]
        whole = HttpResponseClientRedirect(location)
        whole.cookies = response.cookies
        return whole


def session_ended(request) -> HttpResponse:
    """The answer to a write from htmx whose session has ended (HtmxRedirectMiddleware)."""
    response = HttpResponse(
        _("Tu sesión ha terminado: entra otra vez."),
        status=401,
        content_type="text/plain; charset=utf-8",
    )
    response["X-Dados-Login"] = redirect_to_login(way_back(request))["Location"]
    return response


def way_back(request) -> str:
    """Where a log-in returns a write's sender: the card's page for a write to one of a
    card's addresses (under /tarjetas/<pk>/), else the page that sent it, from this site,
    else the write's own address."""
    match = request.resolver_match
    if match is not None and "pk" in match.kwargs:
        card = reverse("scorecard", kwargs={"pk": match.kwargs["pk"]})
        if request.path.startswith(card):
            return card
    referer = request.headers.get("Referer", "")
    own = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    if referer and own and urlsplit(referer).netloc:
        return urlsplit(referer).path or "/"
    return request.path


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
