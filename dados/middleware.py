from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers

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
