"""The stock floors: the least a logged-in page and a logged-in write cost in this app's
settings and middleware, written as any Django tutorial would write them."""

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST


@login_required
@require_GET
def floor_get(request):
    return HttpResponse("ok", content_type="text/plain")


@login_required
@require_POST
def floor_write(request):
    """One row updated in its own transaction (the user's own, so writers never queue on
    each other's rows)."""
    with transaction.atomic():
        get_user_model().objects.filter(pk=request.user.pk).update(last_login=timezone.now())
    return HttpResponse("ok", content_type="text/plain")
