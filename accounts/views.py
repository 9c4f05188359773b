from django import forms
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from accounts.forms import DistinctNameMixin
from accounts.models import User
from scorecards.models import StatsVersion
from scorecards.views import in_progress_links


@login_required
@require_GET
def home(request):
    # The cards I play in or organize, in progress: where a player at the table finds the
    # one to follow live. The newest three; «Historial» lists more.
    in_progress, more = in_progress_links(request.user, limit=3)
    return render(request, "accounts/home.html", {"in_progress": in_progress, "more": more})


class PasswordChangeView(auth_views.PasswordChangeView):
    def form_valid(self, form):
        form.user.must_change_password = False
        return super().form_valid(form)


class ProfileForm(DistinctNameMixin, forms.ModelForm):
    class Meta:
        model = User
        fields = ["display_name"]

    def clean_display_name(self):
        name = self.cleaned_data["display_name"].strip()
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
        StatsVersion.bump()  # the name shows in history, statistics and the ranking
        messages.success(request, _("Nombre guardado."))
        return redirect("profile")
    return render(request, "accounts/profile.html", {"form": form})
