from urllib.parse import urlsplit

import django_htmx.middleware
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import resolve_url
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django_htmx.http import HttpResponseClientRedirect

from dados.durable import synced_before_answer


class SyncedBeforeAnswerMiddleware:
    """What a request committed is on disk before its answer leaves, and the disk writes
    while the answer is built (dados.durable).

    Placed before every middleware that may write (the session's, the views'); only
    middleware that never touches the database (headers, static files, the HTTPS
    redirect) comes before it. A commit that cannot be finished is an error (500), after
    the middleware inside it has run, and the security headers are still added to it.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with synced_before_answer():
            return self.get_response(request)


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


class HtmxDetails(django_htmx.middleware.HtmxDetails):
    """django-htmx's request.htmx, which tells an htmx request by its header in META.

    django-htmx reads it from request.headers, which Django builds from every header of
    the request at the first use: 35 µs on the box write's path, where nothing else
    needs it (bench/RESULTS.md). The other attributes are django-htmx's own.
    """

    def __bool__(self):
        return self.request.META.get("HTTP_HX_REQUEST") == "true"


class HtmxMiddleware(django_htmx.middleware.HtmxMiddleware):
    """django-htmx's middleware, with the HtmxDetails above."""

    async_capable = False  # Dados is served over WSGI

    def __call__(self, request):
        request.htmx = HtmxDetails(request)
        response = self.get_response(request)
        if response.status_code in _REDIRECTS and request.htmx:
            return _whole_page(request, response)
        return response


_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _whole_page(request, response):
    """A redirect answered to htmx, as one the browser follows with the whole page.

    htmx would follow it inside the request and swap the page it lands on into the
    fragment's place: the log-in page inside the live card, once the session has ended
    (logged out elsewhere, a password reset, a deactivated player). A log-in then
    returns to the page the person was on, not to the fragment's address.
    """
    location = response["Location"]
    login = resolve_url(settings.LOGIN_URL)
    if urlsplit(location).path == login:
        page = urlsplit(request.headers.get("HX-Current-URL", ""))
        here = page.path + (f"?{page.query}" if page.query else "") if page.path else "/"
        location = redirect_to_login(here, login)["Location"]
    whole = HttpResponseClientRedirect(location)
    whole.cookies = response.cookies
    return whole
