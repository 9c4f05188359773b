from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import resolve_url
from django.utils import translation
from django.utils.cache import patch_vary_headers
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
