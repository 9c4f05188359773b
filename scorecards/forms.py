from django import forms
from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy as _


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self):
        super().__init__(format="%Y-%m-%d")


class HistoryFilterForm(forms.Form):
    """«Historial» filters: games shared with another player, between two dates."""

    jugador = forms.ModelChoiceField(
        queryset=get_user_model().objects.order_by("display_name", "username"),
        required=False,
        label=_("Con"),
        empty_label=_("Cualquier jugador"),
        error_messages={"invalid_choice": _("Ese jugador no existe.")},
    )
    desde = forms.DateField(required=False, label=_("Desde"), widget=DateInput())
    hasta = forms.DateField(required=False, label=_("Hasta"), widget=DateInput())

    def clean(self):
        data = super().clean()
        if data.get("desde") and data.get("hasta") and data["desde"] > data["hasta"]:
            raise forms.ValidationError(_("«Desde» no puede ser posterior a «Hasta»."))
        return data

    def filter(self, seats):
        """Narrow a queryset of my seats by the valid filters; invalid ones are ignored."""
        if not self.is_valid():
            return seats
        if other := self.cleaned_data.get("jugador"):
            seats = seats.filter(scorecard__seats__player=other)
        if desde := self.cleaned_data.get("desde"):
            seats = seats.filter(scorecard__finalized_at__date__gte=desde)
        if hasta := self.cleaned_data.get("hasta"):
            seats = seats.filter(scorecard__finalized_at__date__lte=hasta)
        return seats
