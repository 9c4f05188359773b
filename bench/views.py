"""The floor: the least an authenticated request costs in this app and middleware stack.

Same middleware as every page (session and user lookup, CSRF, CSP, axes ...), no query of
its own and a few bytes of answer. Each scenario's median is reported as a multiple of it.
"""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.views.decorators.http import require_GET, require_POST


@login_required
@require_GET
def floor_get(request):
    return HttpResponse("ok", content_type="text/plain")


@login_required
@require_POST
def floor_post(request):
    # CsrfViewMiddleware has already checked the X-CSRFToken header against the cookie.
    return HttpResponse("ok", content_type="text/plain")
