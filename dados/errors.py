"""Error views the app sets in its settings."""

from django.views import csrf


def csrf_failure(request, reason=""):
    """Django's «La página caducó» (templates/403_csrf.html), marked for the page's script:
    a write refused for an expired form says so, rather than «No tienes permiso»."""
    response = csrf.csrf_failure(request, reason)
    response["X-Dados-Refusal"] = "expired"
    return response
