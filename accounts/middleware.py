from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _


class PasswordChangeRequiredMiddleware:
    """A player with a temporary password may do nothing but change it (or log out).

    A view that reads the user only when it must (the live poll, and the views under
    accounts.auth.player_required, which read it their own way) sets
    checks_temporary_password and calls temporary_password_redirect itself.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(request, "resolver_match", None) is None:  # no view's: process_view never ran
            return temporary_password_redirect(request) or response
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        if getattr(view_func, "checks_temporary_password", False):
            return None
        return temporary_password_redirect(request)


def temporary_password_redirect(request):
    """To the password change, if this user's password is temporary; else None."""
    user = request.user
    if user.is_authenticated and user.must_change_password:
        target = reverse("password_change")
        if request.path not in (target, reverse("logout")):
            # To htmx, dados.middleware.HtmxMiddleware makes it a whole-page redirect.
            if not request.htmx:
                messages.info(request, _("Tu contraseña es temporal: elige una nueva para seguir."))
            return redirect(target)
    return None
