from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _


class PasswordChangeRequiredMiddleware:
    """A player with a temporary password may do nothing but change it, or log out.

    Every other request is sent to the password change, including addresses that match
    no view; an htmx request's redirect becomes a whole-page one
    (dados.middleware.HtmxRedirectMiddleware).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = request.user
        if user.is_authenticated and user.must_change_password:
            target = reverse("password_change")
            if request.path not in (target, reverse("logout")):
                if not request.htmx:
                    messages.info(
                        request, _("Tu contraseña es temporal: elige una nueva para seguir.")
                    )
                return redirect(target)
        return self.get_response(request)
