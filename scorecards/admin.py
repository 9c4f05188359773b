from django.conf import settings
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from accounts.admin_spanish import flag
from scorecards.models import Change, Scorecard, Screen, Seat
from scorecards.rules import Category


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_readonly_fields(self, request, obj=None):
        return self.fields


class SeatInline(ReadOnlyInline):
    model = Seat
    fields = ["order", "player", *[c.value for c in Category], "yahtzee_bonuses", "total", "place"]


class ChangeInline(ReadOnlyInline):
    model = Change
    fk_name = "scorecard"
    fields = ["created_at", "author", "kind", "summary", "key"]

    def get_queryset(self, request):
        # Every change names its author and the card's players: read once for all.
        queryset = super().get_queryset(request).select_related("author")
        return queryset.prefetch_related("scorecard__seats__player")

    @admin.display(description=_("cambios"))
    def summary(self, change):
        seats = {seat.pk: seat for seat in change.scorecard.seats.all()}
        return change.summary(seats)


@admin.register(Scorecard)
class ScorecardAdmin(admin.ModelAdmin):
    """Every card can be opened; none is edited here (the app keeps the change log)."""

    list_display = [
        "__str__",
        "organizer",
        "players",
        "mode",
        "created_at",
        "state",
        "finalized_at",
    ]
    list_filter = [("finalized_at", admin.EmptyFieldListFilter), "mode", "created_at"]
    search_fields = ["organizer__display_name", "seats__player__display_name"]
    readonly_fields = ["organizer", "created_at", "finalized_at", "mode", "version"]
    fields = readonly_fields
    inlines = [SeatInline, ChangeInline]
    list_select_related = ["organizer"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("seats__player")

    @admin.display(description=_("jugadores"))
    def players(self, scorecard):
        return ", ".join(seat.player.name for seat in scorecard.seats.all())

    @admin.display(description=_("estado"), ordering="finalized_at")
    def state(self, scorecard):
        return _("finalizada") if scorecard.is_finalized else _("en juego")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # Staff may discard a card in progress; a finalized one is never deleted.
        if obj is not None and obj.is_finalized:
            return False
        return super().has_delete_permission(request, obj)

    def get_deleted_objects(self, objs, request):
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        finalized = [
            _("%(card)s está finalizada y no se puede borrar.") % {"card": card}
            for card in objs
            if card.is_finalized
        ]
        if finalized:
            return deleted, counts, set(), finalized
        return deleted, counts, perms_needed, protected


@admin.register(Screen)
class ScreenAdmin(admin.ModelAdmin):
    """The devices let in to «Pantalla del club», each by its own link: made here, copied
    from here to the TV's browser, and withdrawn here (unticked «activa», or deleted)."""

    list_display = ["name", "is_active", "created_at", "last_seen"]
    list_filter = ["active"]
    fields = ["name", "active", "link", "created_at", "last_seen"]
    readonly_fields = ["link", "created_at", "last_seen"]
    actions = ["withdraw"]
    is_active = flag(Screen, "active")

    @admin.display(description=_("enlace"))
    def link(self, screen):
        if screen.pk is None:
            return _("Se crea al guardar.")
        # The configured address (dados/settings.py), never the Host header a request sends.
        address = settings.SITE_URL + reverse("screen_token", args=[screen.token])
        # A read-only field, whose text one click selects for copying (admin.css).
        return format_html(
            '<input type="text" readonly class="screen-link" size="70" value="{}" aria-label="{}">'
            '<div class="help">{}</div>',
            address,
            _("Enlace de la pantalla"),
            _(
                "Ábrelo en el navegador de la tele o del portátil: muestra la pantalla del club "
                "sin entrar con ninguna cuenta, y nada más."
            ),
        )

    @admin.action(description=_("Retirar los enlaces de las pantallas elegidas"))
    def withdraw(self, request, queryset):
        withdrawn = queryset.update(active=False)
        message = ngettext(
            "%(n)s enlace retirado: ya no abre la pantalla.",
            "%(n)s enlaces retirados: ya no abren la pantalla.",
            withdrawn,
        )
        self.message_user(request, message % {"n": withdrawn})
