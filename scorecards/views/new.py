"""A new card: «Tarjeta de puntos» (who plays), «Añadir invitado», the order page
(«¿Quién empieza?») and «Crear tarjeta»."""

import uuid

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_POST

from accounts.forms import GuestForm
from accounts.models import GUEST
from accounts.names import fold, isolate_text, sort_key
from scorecards import services
from scorecards.dice import who_starts
from scorecards.forms import TableSettingsForm, WhoStartsForm, order_query
from scorecards.models import Scorecard
from scorecards.services import Refused

# More than a club registers; beyond it the search narrows the list.
PLAYERS_LISTED = 500


@login_required
@require_GET
def scorecard_new(request):
    """«Tarjeta de puntos»: choose the registered players present; accounts that do not
    play (an admin's, until «Juega» is ticked) are not offered. The organizer, if they
    play, comes ticked.

    The search matches any part of the name the list shows, never the username (players
    do not see each other's), without regard to case or accents («oscar» finds Óscar),
    which neither database's LIKE does for every letter; the players already ticked stay
    in the list, ticked, whatever is searched.

    Without JavaScript «Añadir invitado» comes here with the name (a form that goes
    elsewhere carries no CSRF token): the page checks it and asks to confirm with a POST.
    """
    chosen_ids = _ids(request.GET.getlist("p"))
    if not request.GET and request.user.plays:
        chosen_ids = [request.user.pk]
    context = _new_card(request.GET, chosen_ids)
    name = request.GET.get("invitado", "")
    if name.strip():
        context.update(_guest_context(GuestForm({"display_name": name}), context))
    return render(request, "scorecards/new.html", context)


def _new_card(params, chosen_ids) -> dict:
    """What «Tarjeta de puntos» shows, for its query (or a POST carrying the same)."""
    User = get_user_model()
    query = params.get("q", "").replace("\x00", "").strip()[:60]
    active = User.objects.filter(services.SEATABLE).order_by("display_name", "username")
    guest = ExpressionWrapper(GUEST, output_field=BooleanField())
    players = sorted(
        active.only("pk", "display_name", "username").annotate(guest=guest),
        key=lambda p: sort_key(p.name),
    )
    # Only the players that may be ticked are carried on.
    seatable = {p.pk for p in players}
    chosen_ids = [pk for pk in chosen_ids if pk in seatable]
    if query:
        needle = fold(query)
        players = [p for p in players if p.pk in chosen_ids or needle in fold(p.name)]
    shown = players[:PLAYERS_LISTED]
    shown += [p for p in players[PLAYERS_LISTED:] if p.pk in chosen_ids]
    return {
        "players": shown,
        "query": query,
        "chosen_ids": chosen_ids,
        "hidden": len(players) - len(shown),
        "digital": _mode(params.get("modo")) == Scorecard.DIGITAL,
    }


def _guest_context(form, page) -> dict:
    """The «Añadir invitado» part of the page for the name in form: its errors, or, when
    the name is another player's, a way to tick that player instead."""
    mode = Scorecard.DIGITAL if page["digital"] else Scorecard.PRESENCIAL
    context = {"guest_name": form.data["display_name"].replace("\x00", "")}
    if form.is_valid():
        context["guest_confirm"] = form.cleaned_data["display_name"]
        context["page_query"] = order_query(page["chosen_ids"], mode)
        return context
    context["guest_errors"] = [*form.non_field_errors(), *form.errors.get("display_name", [])]
    if (same := form.same_name) is not None and same.is_active and same.plays:
        ids = page["chosen_ids"] + ([] if same.pk in page["chosen_ids"] else [same.pk])
        context["same"] = same
        context["same_query"] = order_query(ids, mode)
    return context


@login_required
@require_POST
def guest_add(request):
    """«Añadir invitado»: a player account for someone without one (services.guest_add),
    then «Tarjeta de puntos» again with them ticked beside the players already ticked."""
    page = _new_card(request.POST, _ids(request.POST.getlist("p")))
    form = GuestForm({"display_name": request.POST.get("invitado", "")})
    if form.is_valid():
        try:
            guest = services.guest_add(
                added_by=request.user, name=form.cleaned_data["display_name"]
            )
        except services.NameTaken as taken:
            # Given to another player since the form checked it: offer to tick them.
            form.same_name = taken.player
            form.add_error("display_name", taken.message)
        except Refused as refused:
            form.add_error(None, refused.message)
        else:
            messages.success(
                request,
                _("%(name)s juega como invitado: ya está marcado.")
                % {"name": isolate_text(guest.name)},
            )
            mode = Scorecard.DIGITAL if page["digital"] else Scorecard.PRESENCIAL
            query = order_query([*page["chosen_ids"], guest.pk], mode)
            return redirect(reverse("scorecard_new") + "?" + query)  # to htmx, a whole page
    page.update(_guest_context(form, page))
    template = "scorecards/new.html#guest" if request.htmx else "scorecards/new.html"
    return render(request, template, page, status=400)


def _ids(raw_values) -> list[int]:
    """Distinct positive ints from a list of strings, in order; junk is dropped."""
    ids = []
    for raw in raw_values:
        # At most 10 digits: int() refuses strings of over 4300 digits with a ValueError.
        if (
            raw.isascii()
            and raw.isdigit()
            and len(raw) <= 10
            and 0 < int(raw) < 2**31
            and int(raw) not in ids
        ):
            ids.append(int(raw))
    return ids


@login_required
@require_GET
# Kept by the browser for Back (never served from a cache otherwise): back on this page
# after «Crear tarjeta», its token sends the organizer to the card it made, not to a
# second one; once that game is over, the same token makes a new card (services).
@cache_control(private=True, no_cache=True)
def scorecard_order(request):
    """Set the seating order, and optionally «¿Quién empieza?», before creating the card."""
    mode = _mode(request.GET.get("modo"))
    players = _seated(request, mode)
    if not isinstance(players, list):
        return players  # back to choosing them, with why
    if mode == Scorecard.DIGITAL and "tirar" in request.GET and len(players) > 1:
        # The app's dice decide who starts: rolled once, then carried in the address
        # signed, so reloading the page does not roll again and the address cannot lie.
        ids = [p.pk for p in players]
        query = order_query(ids, mode, rolled=who_starts(ids))
        return redirect(reverse("scorecard_order") + "?" + query)
    who = WhoStartsForm(request.GET, players, digital=mode == Scorecard.DIGITAL)
    players = who.seating
    context = {
        "moves": _moves(players, mode, rolled=who.signed),
        # What a seating tapped in order keeps of this address besides its players.
        "taps": order_query([], mode, rolled=who.signed),
        "players": players,
        "ids": [p.pk for p in players],
        "mode": mode,
        "digital": mode == Scorecard.DIGITAL,
        "rounds": who.rounds,
        "results": who.results,
        "starter": players[0] if who.starter is not None else None,
        "tied": who.tied,
        "sums": who.sums,
        "error": who.error,
        # One card per rendering of this page, however often «Crear tarjeta» is sent.
        "token": uuid.uuid4(),
    }
    return render(request, "scorecards/order.html", context)


def _seated(request, mode):
    """The active players the order page was sent, in order; or, when they cannot make
    a card, a redirect back to choosing them with a message saying why."""
    ids = _ids(request.GET.getlist("p"))
    found = get_user_model().objects.filter(is_active=True).in_bulk(ids)
    players = [found[i] for i in ids if i in found]
    back = reverse("scorecard_new")
    try:
        services.check_seatable(players)
    except Refused as refused:
        messages.error(request, refused.message)
        query = order_query([p.pk for p in players if p.plays], mode)
        return redirect(back + ("?" + query if query else ""))
    if not players:
        messages.error(request, _("Elige al menos un jugador."))
        query = order_query([], mode)
        return redirect(back + ("?" + query if query else ""))
    if len(players) > services.MAX_PLAYERS:
        messages.error(
            request,
            _("Como mucho %(max)s jugadores por tarjeta.") % {"max": services.MAX_PLAYERS},
        )
        return redirect(back + "?" + order_query(ids, mode))
    return players


def _mode(raw) -> str:
    """The mode a page asks for: digital, or the physical dice of every game till now."""
    return Scorecard.DIGITAL if raw == Scorecard.DIGITAL else Scorecard.PRESENCIAL


def _moves(players, mode, *, rolled=None) -> list[dict]:
    """Each player with the seating orders one step up and one step down, as queries.
    After the app's dice chose the starter (rolled), the links keep their result, so the
    starter's seat, the first, is not one to move into or out of."""
    ids = [p.pk for p in players]
    first = 1 if rolled else 0
    return [
        {
            "player": p,
            "up": order_query(_swap(ids, i, i - 1), mode, rolled=rolled) if i > first else None,
            "down": (
                order_query(_swap(ids, i, i + 1), mode, rolled=rolled)
                if first <= i < len(ids) - 1
                else None
            ),
        }
        for i, p in enumerate(players)
    ]


def _token(raw: str) -> uuid.UUID | None:
    """The order page's one-time token; None (no protection against a second tap, as
    from a page older than it) when missing or malformed."""
    try:
        return uuid.UUID(raw[:40])
    except ValueError:
        return None


def _swap(ids, a, b):
    ids = list(ids)
    ids[a], ids[b] = ids[b], ids[a]
    return ids


@login_required
@require_POST
def scorecard_create(request):
    """«Crear tarjeta». When the organizer already has a card in play for these players
    that nobody has started, it asks first: continue that one, or discard it («descartar»,
    its id) and create this one."""
    User = get_user_model()
    ids = _ids(request.POST.getlist("p"))
    found = User.objects.in_bulk(ids)
    token = _token(request.POST.get("token", ""))
    mode = request.POST.get("modo") or Scorecard.PRESENCIAL
    table = TableSettingsForm(request.POST)
    try:
        if len(found) != len(ids) or len(ids) != len(request.POST.getlist("p")):
            raise Refused(_("La lista de jugadores no es válida."))
        if not table.is_valid():
            raise Refused(table.refusal)
        players = [found[i] for i in ids]
        # The old card is discarded only if the new one is made, and only if nobody has
        # started it since it was asked about (its row locked, as every write locks it).
        with transaction.atomic():
            twin = _unstarted_twin(request.user, ids, mode, token)
            if twin is not None and request.POST.get("descartar") != str(twin.pk):
                return _continue_or_discard(request, twin, players, mode, table.settings)
            if twin is not None:
                services.scorecard_discard(scorecard_id=twin.pk, author=request.user)
            scorecard = services.scorecard_create(
                organizer=request.user, players=players, token=token, mode=mode, **table.settings
            )
    except Refused as refused:
        messages.error(request, refused.message)
        return redirect("scorecard_new")
    return redirect("scorecard", pk=scorecard.pk)  # to htmx, a whole-page one (dados.middleware)


def _unstarted_twin(organizer, ids, mode, token) -> Scorecard | None:
    """organizer's newest card in play of this mode with exactly these players, in any
    order, and not a box written nor a die rolled on it. None when this order page's
    token made one for them in this order: «Crear tarjeta» sent again goes to it."""
    if mode not in Scorecard.Mode.values:
        return None  # no card has it (services.scorecard_create says why it is refused)
    cards = (
        Scorecard.objects.select_for_update()
        .filter(organizer=organizer, mode=mode)
        .in_progress()
        .prefetch_related("seats")
        .order_by("-created_at", "-pk")
    )
    same = [c for c in cards if sorted(s.player_id for s in c.seats.all()) == sorted(ids)]
    if token is not None and any(
        c.creation_token == token and [s.player_id for s in c.seats.all()] == ids for c in same
    ):
        return None
    unstarted = (
        c
        for c in same
        if not c.turn_rolls and not any(s.filled or s.yahtzee_bonuses for s in c.seats.all())
    )
    return next(unstarted, None)


def _continue_or_discard(request, twin, players, mode, settings) -> HttpResponse:
    """The question before a second card for the same table: the order page's form again
    (with what the table sees, as chosen), with the card in play to continue or to
    discard."""
    context = {
        "chosen": settings,
        "twin": twin,
        "players": players,
        "ids": [p.pk for p in players],
        "mode": mode,
        "token": request.POST.get("token", "")[:40],
    }
    return render(request, "scorecards/order.html", context)
