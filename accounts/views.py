from django import forms
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from accounts.forms import (
    DistinctNameMixin,
    PlayerPasswordChangeForm,
    TemporaryPasswordChangeForm,
)
from accounts.models import User


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's password change; after a temporary password, a set-password form instead:
    the new password twice, since the old one was typed a moment ago to log in."""

    def get_form_class(self):
        if self.request.user.must_change_password:
            return TemporaryPasswordChangeForm
        return PlayerPasswordChangeForm

    def form_invalid(self, form):
        # The page may hold the new password again (accounts.forms.PasswordPairMixin).
        response = super().form_invalid(form)
        add_never_cache_headers(response)
        return response

    def get_context_data(self, **kwargs):
        return super().get_context_data(temporary=self.request.user.must_change_password, **kwargs)

    def form_valid(self, form):
        form.user.must_change_password = False
        return super().form_valid(form)


class ProfileForm(DistinctNameMixin, forms.ModelForm):
    class Meta:
        model = User
        fields = ["display_name"]
        # A right-to-left name is typed and shown right to left.
        widgets = {"display_name": forms.TextInput(attrs={"dir": "auto"})}

    def clean_display_name(self):
        name = super().clean_display_name()
        if not name:
            raise forms.ValidationError(_("Escribe el nombre que verán los demás."))
        return name


@login_required
@require_http_methods(["GET", "POST"])
def profile(request):
    """«Mi perfil»: the player's own display name, and a way to the password change."""
    form = ProfileForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Nombre guardado."))
        return redirect("profile")
    return render(request, "accounts/profile.html", {"form": form})
