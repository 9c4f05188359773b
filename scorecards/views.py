import csv
import functools
import threading
import uuid
from urllib.parse import urlencode, urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.core.handlers.asgi import ASGIRequest
from django.core.paginator import Paginator
from django.db import connections, transaction
from django.db.models import BooleanField, ExpressionWrapper, prefetch_related_objects
from django.http import Http404, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.forms import GuestForm
from accounts.models import GUEST
from accounts.names import fold, isolate_text, names_html, sort_key
from scorecards import live, rules, services, stats
from scorecards.dice import who_starts
from scorecards.forms import HistoryFilterForm, ModeFilterForm, PeriodForm, WhoStartsForm
from scorecards.labels import BONUS_BOX, box_label, box_name, box_short, short_names
from scorecards.models import BOXES, Access, Change, Scorecard, log_summary, seats_in_order
from scorecards.rules import Category
from scorecards.services import Refused, Written

HISTORY_PAGE = 20
IN_PROGRESS_LISTED = 20
RANKING_MIN_GAMES = 5
# A live page further behind than this many changes gets the whole sheet again.
PATCH_LIMIT = 20
# How long a patch rendered for one phone is kept for the others (they ask within a second).
SHARED_FOR = 60


def _card(request, pk, *, seats=True) -> Scorecard:
    """The card with its organizer and, unless told not to, its seats, if this user may
    see it (404 otherwise)."""
    cards = Scorecard.objects.for_user(request.user)
    cards = cards.with_seats() if seats else cards.select_related("organizer")
    return get_object_or_404(cards, pk=pk)


def _cell(seat, box) -> dict:
    return {
        "seat": seat,
        "box": box,
        "label": box_label(box),
        "name": seat.player.name,
        "value": getattr(seat, box),
    }


def _parts(scorecard, user) -> dict:
    """What both the whole sheet and a patch show: the column headings, sums and positions,
    whose turn it is, the latest changes and, to the organizer, what is missing to finalize."""
    seats = list(scorecard.seats.all())
    access = scorecard.access(user)
    turn = scorecard.turn
    columns = [
        {
            "seat": seat,
            "short": short,
            "totals": seat.totals,
            "place": place,
            "missing": max(0, rules.UPPER_BONUS_THRESHOLD - seat.totals.upper),
            "turn": turn is not None and turn.seat == seat,
        }
        for seat, place, short in zip(
            seats, scorecard.places, short_names([s.player.name for s in seats]), strict=True
        )
    ]
    changes = Change.objects.recent(scorecard).in_words(seats, with_rolls=scorecard.is_digital)
    context = {
        "scorecard": scorecard,
        "access": access,
        "seats": seats,
        "columns": columns,
        "changes": changes,
        "bonus_box": BONUS_BOX,
    }
    if turn is not None:
        context["turn"] = {"round": turn.round, "rounds": len(Category), "seat": turn.seat}
        if scorecard.is_digital:
            context["play"] = _play(scorecard, turn.seat)
    if access.writes_by_hand:
        context["problems"] = _problems(seats)
        context["remaining"] = sum(len(Category) - seat.filled for seat in seats)
    if scorecard.is_finalized:
        context["log_summary"] = log_summary(changes, digital=scorecard.is_digital)
        context["result"] = _result(seats)
    return context


def _play(scorecard, seat) -> dict:
    """A digital game's turn in progress: the dice of its last roll (the kept ones held
    again), the rolls left, and the boxes the dice may take with what each scores."""
    rolls = scorecard.turn_rolls
    faces, kept, _at = rolls[-1] if rolls else ("", "", None)
    dice = [int(face) for face in faces]
    extra = bool(dice) and rules.is_extra_yahtzee(dice, seat.scores)
    choices = rules.choices(dice, seat.scores) if dice else {}
    return {
        "seat": seat,
        "faces": faces,
        "dice": [
            {"position": i, "face": face, "held": str(i) in kept}
            for i, face in enumerate(dice, start=1)
        ],
        "number": len(rolls),
        "rolls": rules.ROLLS,
        "left": rules.ROLLS - len(rolls),
        "choices": [
            {"box": c.value, "label": box_name(c), "score": points} for c, points in choices.items()
        ],
        "extra": extra,
        "bonus": extra and rules.yahtzee_bonus_due(seat.scores),
    }


def _problems(seats) -> list[tuple[str, list[str]]]:
    """What stops the card from being finalized, per player: (name, reasons)."""
    return [(seat.player.name, problems) for seat in seats if (problems := seat.problems)]


def _result(seats) -> dict:
    """Who won, with how much: one winner, or everyone tied in first place."""
    winners = [seat for seat in seats if seat.place == 1]
    return {
        "names": names_html(seat.player.name for seat in winners),
        "tied": len(winners) > 1,
        "total": winners[0].total if winners else None,
    }


def _sheet_context(scorecard, user, *, error=None) -> dict:
    """What the card's whole sheet shows: its parts, and a row of cells per box."""
    context = _parts(scorecard, user)
    rows = [
        {
            "box": c.value,
            "label": box_name(c),
            "short": box_short(c),
            "cells": [_cell(s, c.value) for s in context["seats"]],
        }
        for c in Category
    ]
    upper = len(rules.UPPER)
    context |= {"upper": rows[:upper], "lower": rows[upper:], "error": error}
    if context["access"].starts_rematch:
        context["rematch"] = _rematch(scorecard)
    return context


def _rematch(finished) -> dict:
    """«Revancha» on a finished game: who would start, and the order page with the same
    players and mode, to decide «¿Quién empieza?» again."""
    players = services.rematch_seating(finished)
    order = reverse("scorecard_order") + "?" + _query([p.pk for p in players], finished.mode)
    return {"starter": players[0], "order": order}


def _sheet(request, scorecard, *, error=None, status=200) -> HttpResponse:
    """The card's sheet alone: the fragment htmx swaps in."""
    context = _sheet_context(scorecard, request.user, error=error)
    response = render(request, "scorecards/card.html#sheet", context, status=status)
    response["X-Dados-Version"] = scorecard.version
    return response


def _patch(request, scorecard, since, cells) -> HttpResponse:
    """What changed after version `since`, for a page that shows that version: the
    written cells and the parts that follow them, all swapped in out of band."""
    context = _parts(scorecard, request.user) | {"cells": cells, "oob": True}
    return _patch_answer(render(request, "scorecards/card.html#patch", context), since)


def _patch_answer(response, since) -> HttpResponse:
    response["HX-Reswap"] = "none"
    # The page drops it if it no longer shows `since` (a later answer got there first).
    response["X-Dados-Base"] = since
    return response


def _changed_cells(scorecard, since) -> list[dict] | None:
    """The cells the changes after version `since` wrote, or None when those changes do
    not account for every version in between (a finalize, or a page too far behind; in
    a digital game a version without a change is a roll, which the patch's turn shows)."""
    if scorecard.is_finalized or not 0 <= since < scorecard.version <= since + PATCH_LIMIT:
        return None
    changes = Change.objects.filter(
        scorecard=scorecard, version__gt=since, version__lte=scorecard.version
    ).values_list("items", flat=True)
    changes = list(changes)
    # In a digital game, a version no change made is a roll: the turn, which every
    # patch brings, shows it.
    if len(changes) != scorecard.version - since and not scorecard.is_digital:
        return None
    written = dict.fromkeys((seat_id, box) for items in changes for seat_id, box, *_ in items)
    cells = []
    for seat_id, box in written:
        if (seat := scorecard.seat(seat_id)) is not None and box != BONUS_BOX:
            cells.append(_cell(seat, box))
    return cells


def _refused(request, pk, refused: Refused):
    """Answer a refused write: the message in the card fragment, or back on the page."""
    if request.htmx:
        response = _sheet(request, _card(request, pk), error=refused.message, status=refused.status)
        if request.htmx.target == "picker":
            # Asked for a picker or the confirmation: the sheet with its message replaces
            # the sheet, not the dialog's content.
            response["HX-Retarget"] = "#sheet"
            response["HX-Reswap"] = "outerHTML"
        return response
    messages.error(request, refused.message)
    return redirect("scorecard", pk=pk)


def answers_refusals(view):
    """A card's view whose service may refuse: the refusal is the answer (_refused)."""

    @functools.wraps(view)
    def wrapped(request, pk, *args, **kwargs):
        try:
            return view(request, pk, *args, **kwargs)
        except Refused as refused:
            return _refused(request, pk, refused)

    return wrapped


def _saved(request, written: Written):
    """Answer a write: to the page that made it, only what changed, if that page was current
    (it sends the version it showed); otherwise the whole sheet."""
    scorecard, change = written
    if not request.htmx:
        return redirect("scorecard", pk=scorecard.pk)
    since = services.parse_version(request.POST.get("version"))
    # A roll records no change: its patch is the turn alone.
    if (change or scorecard.is_digital) and since == scorecard.version - 1:
        items = change.items if change else []
        cells = [_cell(scorecard.seat(seat_id), box) for seat_id, box, *_ in items]
        return _patch(request, scorecard, since, [c for c in cells if c["box"] != BONUS_BOX])
    return _sheet(request, scorecard)


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
        context["page_query"] = _query(page["chosen_ids"], mode)
        return context
    context["guest_errors"] = [*form.non_field_errors(), *form.errors.get("display_name", [])]
    if (same := form.same_name) is not None and same.is_active and same.plays:
        ids = page["chosen_ids"] + ([] if same.pk in page["chosen_ids"] else [same.pk])
        context["same"] = same
        context["same_query"] = _query(ids, mode)
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
            query = _query([*page["chosen_ids"], guest.pk], mode)
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
        query = _query(ids, mode, rolled=who_starts(ids))
        return redirect(reverse("scorecard_order") + "?" + query)
    who = WhoStartsForm(request.GET, players, digital=mode == Scorecard.DIGITAL)
    players = who.seating
    context = {
        "moves": _moves(players, mode, rolled=who.signed),
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
        query = _query([p.pk for p in players if p.plays], mode)
        return redirect(back + ("?" + query if query else ""))
    if not players:
        messages.error(request, _("Elige al menos un jugador."))
        query = _query([], mode)
        return redirect(back + ("?" + query if query else ""))
    if len(players) > services.MAX_PLAYERS:
        messages.error(
            request,
            _("Como mucho %(max)s jugadores por tarjeta.") % {"max": services.MAX_PLAYERS},
        )
        return redirect(back + "?" + _query(ids, mode))
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
            "up": _query(_swap(ids, i, i - 1), mode, rolled=rolled) if i > first else None,
            "down": (
                _query(_swap(ids, i, i + 1), mode, rolled=rolled)
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


def _query(ids, mode=Scorecard.PRESENCIAL, *, rolled=None) -> str:
    """The order page's query for these players in this order, the mode if digital and
    the app's signed rolls of «¿Quién empieza?» if any."""
    pairs = [("p", i) for i in ids]
    if mode == Scorecard.DIGITAL:
        pairs.append(("modo", Scorecard.DIGITAL))
    if rolled:
        pairs.append(("tiradas", rolled))
    return urlencode(pairs)


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
    try:
        if len(found) != len(ids) or len(ids) != len(request.POST.getlist("p")):
            raise Refused(_("La lista de jugadores no es válida."))
        players = [found[i] for i in ids]
        # The old card is discarded only if the new one is made, and only if nobody has
        # started it since it was asked about (its row locked, as every write locks it).
        with transaction.atomic():
            twin = _unstarted_twin(request.user, ids, mode, token)
            if twin is not None and request.POST.get("descartar") != str(twin.pk):
                return _continue_or_discard(request, twin, players, mode)
            if twin is not None:
                services.scorecard_discard(scorecard_id=twin.pk, author=request.user)
            scorecard = services.scorecard_create(
                organizer=request.user, players=players, token=token, mode=mode
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


def _continue_or_discard(request, twin, players, mode) -> HttpResponse:
    """The question before a second card for the same table: the order page's form again,
    with the card in play to continue or to discard."""
    context = {
        "twin": twin,
        "players": players,
        "ids": [p.pk for p in players],
        "mode": mode,
        "token": request.POST.get("token", "")[:40],
    }
    return render(request, "scorecards/order.html", context)


@require_GET
@login_required
def scorecard_live(request, pk):
    """Live card poll, with the version the page shows: 204 while the card is still at
    it, else what changed since."""
    cards = Scorecard.objects.for_user(request.user).filter(pk=pk)
    card = cards.values(*CARD_FIELDS).first()
    if card is None:
        raise Http404
    since = services.parse_version(request.GET.get("version"))
    if since == card["version"]:
        return HttpResponse(status=204)
    # Most of a table's phones get the same patch: rendered once, then from the cache.
    # X-Dados-Shared says which (as a proxy's X-Cache-Status does): the bench's hit rate.
    if (content := _cached_patch(request.user, card, since)) is not None:
        shared = "hit"
    else:
        scorecard = _card(request, pk)
        if since is None or (cells := _changed_cells(scorecard, since)) is None:
            return _sheet(request, scorecard)
        content, key = _share(scorecard, request.user, since, cells)
        shared = "miss" if key else "own"  # kept for the others, or one person's
    response = _patch_answer(HttpResponse(content), since)
    response["X-Dados-Shared"] = shared
    return response


def stream_patch(user, card, since, language) -> tuple[int, str] | None:
    """For the card's stream (scorecards.live), whose page shows version `since`: the
    patch that brings it to the card's version, and that version (rendered once for the
    viewers who share it, or from the cache); None when the page must ask scorecard_live
    (the whole sheet: a page too far behind, a finalized card; a card gone)."""
    with translation.override(language):
        if (content := _cached_patch(user, card, since, get=_remembered)) is not None:
            return card["version"], content.decode()
        scorecard, cells = _change(card["id"], card["created_at"], since, card["version"])
        if scorecard is None or cells is None:
            return None
        content, _key = _share(scorecard, user, since, cells, keep=_kept)
        return scorecard.version, content.decode()


@functools.lru_cache(maxsize=64)
def _change(pk, created_at, since, version) -> tuple[Scorecard | None, list[dict] | None]:
    """The card as a stream process read it at `version` (or later), and the cells written
    since `since`: read once for the kinds of viewer of one change, whose renders follow
    one another on that process's thread (a version's cells never change)."""
    scorecard = Scorecard.objects.with_seats().filter(pk=pk).first()
    if scorecard is None:
        return None, None
    return scorecard, _changed_cells(scorecard, since)


# What a live card's answers are keyed on: the card's version, and what says who may do
# what on it. The card's creation names it along with its id: a database made anew (a
# test's, a club's fresh start) has its own card 1, whose versions must not meet this one's.
CARD_FIELDS = ("id", "version", "created_at", "organizer_id", "mode", "finalized_at")


def _fields(scorecard) -> dict:
    return {name: getattr(scorecard, name) for name in CARD_FIELDS}


def _turn_key(card) -> str:
    return f"dados:card:{card['id']}:{card['created_at'].timestamp()}:{card['version']}:turn"


def _cached_patch(user, card, since, get=None) -> bytes | None:
    """The patch from `since` this user shares with others who only watch, if it has been
    rendered (in the shared cache, or what `get` reads)."""
    get = get or cache.get
    key = _shared_patch_key(user, card, since, get)
    return get(key) if key else None


# A stream process's memory of what it found in the shared cache, or put there: a table's
# phones of one kind ask for the same keys one after another (on the process's one thread
# for the streams), and only the first of them asks the cache, or renders. What a key
# names never changes.
_REMEMBERED: dict[str, object] = {}
_REMEMBERING = threading.Lock()  # one thread a process; tests may run several loops
REMEMBERED = 512


def _remembered(key):
    if (value := _REMEMBERED.get(key)) is None and (value := cache.get(key)) is not None:
        _remember(key, value)
    return value


def _remember(key, value) -> None:
    with _REMEMBERING:
        if len(_REMEMBERED) >= REMEMBERED:
            del _REMEMBERED[next(iter(_REMEMBERED))]  # the oldest
        _REMEMBERED[key] = value


def _shared(key, value) -> None:
    cache.set(key, value, SHARED_FOR)


def _kept(key, value) -> None:
    """A stream process's _shared: its next phones find it in its memory, and what it
    remembers is in the shared cache already (it found it there, or put it there)."""
    if key not in _REMEMBERED:
        _shared(key, value)
        _remember(key, value)


def _share(scorecard, user, since, cells, keep=_shared) -> tuple[bytes, str | None]:
    """The patch from `since` on the card in play, rendered for this user and every viewer
    who may do what they may, and its key, under which `keep` kept it for the others who
    only watch (None: theirs is one person's). It is rendered without the request: nothing
    in it belongs to one phone. The turn's forms go without their CSRF token, which htmx
    sends from the page (base.html's hx-headers), as for every patch."""
    known = _known_turn(scorecard, keep)
    key = _shared_patch_key(user, _fields(scorecard), since, get=known.get)
    context = _parts(scorecard, user) | {"cells": cells, "oob": True, "user": user}
    content = render_to_string("scorecards/card.html#patch", context).encode()
    if key:
        keep(key, content)
    return content, key


def _known_turn(scorecard, keep) -> dict:
    """Whose turn it is on the card at its version (a player's id, or 0: nobody's), kept
    by `keep` for _sharing, which can also read it from the dict this returns."""
    turn = scorecard.turn
    key, player = _turn_key(_fields(scorecard)), turn.seat.player_id if turn else 0
    keep(key, player)
    return {key: player}


# The kind of viewer whose answers are kept in the shared cache: the players who only
# watch, most of a table's phones. Every other kind is one person's (the organizer's, the
# player told «te toca a ti», the turn's player's): rendered for them, never kept, since
# nobody else would read it, and a write to the database cache (a count of its rows, a
# read and a write, in a transaction) costs more than a patch's render (bench/RESULTS.md,
# 2026-12-06). Their sheets also hold forms with the phone's own CSRF token.
KEPT_FOR = {"watch"}


def _shared_patch_key(user, card, since, get=None) -> str | None:
    """The cache key of the patch from `since` that this user shares with the others who
    only watch; None when theirs is one person's, or whose turn it is not yet known."""
    if since is None or (sharing := _sharing(user, card, get)) is None:
        return None
    return _shared_key(card, f"patch:{since}", sharing[1])


def _shared_sheet_key(user, card, get=None) -> tuple[Access | None, str | None]:
    """What this user may do on the card, and the cache key of the sheet they share with
    the others who only watch; None for either when not known here, None for the key when
    their sheet is one person's."""
    if (sharing := _sharing(user, card, get)) is None:
        return None, None
    access, viewer = sharing
    return access, _shared_key(card, "sheet", viewer)


def _sharing(user, card, get=None) -> tuple[Access, str] | None:
    """What this user may do on the card in play, and the kind of viewer they are, which
    says what their answers show; None when the card is finalized, or whose turn it is is
    not yet known (before the first render of this version)."""
    if card["finalized_at"] is not None:
        return None
    turn_player = (get or cache.get)(_turn_key(card))
    if turn_player is None:
        return None
    access = Access.of(
        user,
        organizer_id=card["organizer_id"],
        digital=card["mode"] == Scorecard.DIGITAL,
        in_play=True,
        turn_player_id=turn_player or None,
        seated=False,  # only starts_rematch asks, on a finalized card
    )
    if access.plays_turn:  # the turn's forms: «Tirar», or «Tirar por Ana» (the organizer)
        return access, "play" if user.pk == turn_player else "play-for"
    viewer = ("hand" if access.writes_by_hand else "watch") + (
        "-turn" if user.pk == turn_player else ""  # «te toca a ti»
    )
    return access, viewer


def _shared_key(card, what, viewer) -> str | None:
    """The cache key of `what` (a patch, the sheet) on the card at its version, for this
    kind of viewer; None when it is one person's, which is not kept."""
    if viewer not in KEPT_FOR:
        return None
    stamp = card["created_at"].timestamp()
    return f"dados:{what}:{card['id']}:{stamp}:{card['version']}:{get_language()}:{viewer}"


@require_GET
@login_required
async def scorecard_events(request, pk):
    """The card's stream (scorecards.live): each time its version moves past the one the
    page shows (which the page sends as `version`, and a reconnecting browser as
    Last-Event-ID), the patch that brings the page there, the one this viewer shares with
    others (stream_patch); or, when theirs is their own, the version alone, and the page
    asks scorecard_live."""
    user = await request.auser()
    cards = Scorecard.objects.for_user(user).filter(pk=pk)
    card = await cards.values(*CARD_FIELDS).afirst()
    if card is None:
        raise Http404
    raw = request.headers.get("Last-Event-ID") or request.GET.get("version")
    shown = services.parse_version(raw)
    if shown is None or shown > card["version"]:
        # Nothing to follow from there: the page's poll gets it the whole sheet.
        return HttpResponse(_("Esa versión de la tarjeta no existe."), status=400)
    over = card["finalized_at"] is not None
    if over and shown == card["version"]:
        return HttpResponse(status=204)  # nothing more will happen: do not reconnect
    if not isinstance(request, ASGIRequest):
        # A WSGI server would hold a thread for the whole stream and send nothing (a
        # proxy that routes the stream to it, say): 204 tells the page not to retry.
        return HttpResponse(status=204)
    language = get_language()
    viewer = live.Viewer(request.session.session_key, user.pk)

    def patch(since, version):
        # On the process's one thread for the streams (live.Versions.run): a table's
        # phones ask one after another, and all but the first of each kind of viewer
        # find the patch in the cache.
        return stream_patch(user, card | {"version": version}, since, language)

    # The stream holds no connection of its own (Django gives each ASGI request a thread,
    # whose connection would stay open as long as the stream): the process's one
    # thread for the streams reads for all of them.
    await sync_to_async(connections.close_all)()
    # Counted here, with no await before the response: opens arriving together each see
    # the others' count.
    if not live.admit(user.pk):
        return HttpResponse(_("Demasiadas tarjetas abiertas a la vez."), status=429)
    state = live.State(card["version"], over=over)
    login = redirect_to_login(reverse("scorecard", args=[pk]))["Location"]
    events = live.stream(pk, viewer, shown, state, patch, login)
    response = StreamingHttpResponse(
        live.Admitted(user.pk, events), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    # Every event as it is written: not held by nginx, nor gzipped (GZipMiddleware
    # leaves alone an answer that says its encoding).
    response["X-Accel-Buffering"] = "no"
    response["Content-Encoding"] = "identity"
    return response


@login_required
@require_GET
@vary_on_headers("HX-Request")
def scorecard_detail(request, pk):
    if request.htmx:
        return _sheet(request, _card(request, pk))
    # Most of a table's phones only watch, and get the same sheet: rendered once for them
    # all (as the live card's patches are), then from the cache.
    scorecard = _card(request, pk, seats=False)
    access, key = _shared_sheet_key(request.user, _fields(scorecard))
    if key is None or (sheet := cache.get(key)) is None:
        prefetch_related_objects([scorecard], seats_in_order())
        context = _sheet_context(scorecard, request.user)
        access = context["access"]
        sheet = render_to_string("scorecards/card.html#sheet", context, request)
        known = _known_turn(scorecard, _shared)
        if key := _shared_sheet_key(request.user, _fields(scorecard), known.get)[1]:
            _shared(key, sheet)
    context = {
        "scorecard": scorecard,
        "access": access,
        "sheet": mark_safe(sheet),  # rendered by the template's own sheet partial
        "streams": streams(request) and not scorecard.is_finalized,
    }
    return render(request, "scorecards/card.html", context)


def streams(request) -> bool:
    """Whether the card's page opens its stream: served by ASGI, or by WSGI with the
    streams served apart (STREAMS_APART). Else (runserver, the tests' live servers) it
    polls: a WSGI server would hold a thread for the whole stream and send nothing."""
    return isinstance(request, ASGIRequest) or settings.STREAMS_APART


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@answers_refusals
def box(request, pk, seat_id, box):
    """One box: its picker (GET) or its write (POST)."""
    if request.method == "POST":
        written = services.box_write(
            scorecard_id=pk,
            seat_id=seat_id,
            box=box,
            value=request.POST.get("value"),
            was=request.POST.get("was"),
            author=request.user,
        )
        return _saved(request, written)
    return _box_picker(request, pk, seat_id, box)


def _box_picker(request, pk, seat_id, box):
    """The values a box may take; with the dice typed in, the score they make."""
    scorecard = services.organized_card(pk, request.user, lock=False, by_hand=True)
    seat = scorecard.seat(seat_id)
    if box not in BOXES or seat is None:
        raise Http404
    dice = _dice(request.GET.get("dados", ""))
    rolled = len(dice) == rules.DICE and box != BONUS_BOX
    # An extra Yahtzee is placed by the joker order (and adds the +100 after a 50), not by
    # this picker, which would offer 0 in Full for 44444. The Yahtzee box's own picker
    # corrects that box.
    extra = rolled and box != Category.YAHTZEE and rules.is_extra_yahtzee(dice, seat.scores)
    context = {
        "scorecard": scorecard,
        "seat": seat,
        "box": box,
        "label": box_label(box),
        "current": getattr(seat, box),
        "values": [v for v in services.allowed_values(box) if v != 0 or box == BONUS_BOX],
        "can_scratch": box not in (Category.CHANCE, BONUS_BOX),
        "dice": dice,
        "dice_text": "".join(str(d) for d in dice),
        "faces": range(1, rules.FACES + 1),
        "proposed": rules.score(dice, box) if rolled and not extra else None,
        "extra_face": dice[0] if extra else None,
        "with_dice": box != BONUS_BOX,
        # The bonus line counts extra Yahtzees: each is worth +100, and only after a 50.
        "points": rules.YAHTZEE_BONUS if box == BONUS_BOX else None,
        "bonus_refused": box == BONUS_BOX and not rules.yahtzee_bonus_due(seat.scores),
        # An extra Yahtzee is entered from its own picker, reached from these two.
        "joker_offered": box in (Category.YAHTZEE, BONUS_BOX) and seat.yahtzee is not None,
    }
    template = "scorecards/picker.html#picker" if request.htmx else "scorecards/picker.html"
    return render(request, template, context)


def _dice(raw: str) -> list[int]:
    return [
        int(c)
        for c in raw[: rules.DICE]
        if c.isascii() and c.isdigit() and 1 <= int(c) <= rules.FACES
    ]


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@answers_refusals
def joker(request, pk, seat_id):
    """«Yahtzee adicional»: its picker (GET) or its write (POST)."""
    if request.method == "POST":
        written = services.joker_write(
            scorecard_id=pk,
            seat_id=seat_id,
            face=request.POST.get("face"),
            box=request.POST.get("box"),
            author=request.user,
        )
        return _saved(request, written)
    return _joker_picker(request, pk, seat_id)


def _joker_picker(request, pk, seat_id):
    """The face of the five dice, then only the boxes the joker order allows."""
    scorecard = services.organized_card(pk, request.user, lock=False, by_hand=True)
    seat = scorecard.seat(seat_id)
    if seat is None:
        raise Http404
    face = (_dice(request.GET.get("cara", "")) or [None])[0]
    choices = []
    if face is not None and seat.yahtzee is not None:
        allowed = rules.joker_boxes(face, seat.scores)
        choices = [
            {"box": c.value, "label": box_name(c), "score": rules.joker_score(face, c)}
            for c in Category
            if c in allowed
        ]
    context = {
        "scorecard": scorecard,
        "seat": seat,
        "face": face,
        "faces": range(1, rules.FACES + 1),
        "choices": choices,
        "bonus": rules.yahtzee_bonus_due(seat.scores),
    }
    template = "scorecards/joker.html#picker" if request.htmx else "scorecards/joker.html"
    return render(request, template, context)


@login_required
@require_POST
@answers_refusals
def undo(request, pk):
    written = services.change_undo(
        scorecard_id=pk, author=request.user, version=request.POST.get("version")
    )
    return _saved(request, written)


@login_required
@require_POST
@answers_refusals
def roll(request, pk):
    """«Tirar»: the server rolls the dice the player does not keep."""
    written = services.turn_roll(
        scorecard_id=pk,
        author=request.user,
        version=request.POST.get("version"),
        shown=request.POST.get("dados"),
        keep=request.POST.getlist("guardar"),
    )
    return _saved(request, written)


@login_required
@require_POST
@answers_refusals
def score(request, pk):
    """«Anotar»: the turn ends in the box the player chose; the last one ends the game."""
    written = services.turn_score(
        scorecard_id=pk,
        author=request.user,
        version=request.POST.get("version"),
        box=request.POST.get("casilla"),
    )
    if written.scorecard.is_finalized:
        messages.success(request, _("Partida terminada. Ya está en el historial."))
        return redirect("scorecard", pk=pk)  # to htmx, a whole-page one (dados.middleware)
    return _saved(request, written)


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@answers_refusals
def finalize(request, pk):
    """«Finalizar y guardar resultados»: confirm (GET) with each player's total and
    position, then finalize (POST)."""
    if request.method == "GET":
        return _finalize_confirm(request, pk)
    # Required: the version whose totals the confirmation showed.
    services.scorecard_finalize(
        scorecard_id=pk, author=request.user, version=request.POST.get("version", "")
    )
    messages.success(request, _("Resultados guardados. La partida ya está en el historial."))
    return redirect("scorecard", pk=pk)  # to htmx, a whole-page one (dados.middleware)


def _finalize_confirm(request, pk):
    scorecard = services.organized_card(pk, request.user, lock=False, by_hand=True)
    seats = list(scorecard.seats.all())
    standings = sorted(
        (
            {"place": place, "name": seat.player.name, "total": seat.totals.total}
            for seat, place in zip(seats, scorecard.places, strict=True)
        ),
        # No places on a card with nothing written, where only the problems are shown.
        key=lambda row: row["place"] or 0,
    )
    context = {
        "scorecard": scorecard,
        "standings": standings,
        "problems": _problems(seats),
    }
    template = "scorecards/finalize.html#confirm" if request.htmx else "scorecards/finalize.html"
    return render(request, template, context)


@login_required
@require_http_methods(["GET", "POST"])
@answers_refusals
def discard(request, pk):
    """Discard a card in progress, after confirming."""
    if request.method == "POST":
        services.scorecard_discard(scorecard_id=pk, author=request.user)
        messages.success(request, _("Tarjeta descartada."))
        return redirect("home")
    scorecard = services.organized_card(pk, request.user, lock=False)
    return render(request, "scorecards/discard.html", {"scorecard": scorecard})


@login_required
@require_POST
@answers_refusals
def rematch(request, pk):
    """«Revancha»: a new card for a finished game's players (services.scorecard_rematch);
    a second tap, or another player's, goes to the one made first."""
    scorecard, made = services.scorecard_rematch(scorecard_id=pk, user=request.user)
    if made:
        messages.success(request, _("Revancha: nueva tarjeta con los mismos jugadores."))
    elif Scorecard.objects.for_user(request.user).filter(pk=scorecard.pk).exists():
        messages.info(request, _("Ya había una revancha de esta partida: es esta."))
    else:
        # The game's organizer, who did not play: the players' rematch is theirs alone.
        messages.info(
            request,
            _("%(name)s ya organiza la revancha de esta partida.")
            % {"name": isolate_text(scorecard.organizer.name)},
        )
        return redirect("scorecard", pk=pk)
    return redirect("scorecard", pk=scorecard.pk)


@login_required
@require_GET
@vary_on_headers("HX-Request")
def scorecard_qr(request, pk):
    """«Seguir en el móvil»: the card's address as a QR code, for a phone at the table to
    scan, and as text to copy; asked for when the card page opens it."""
    scorecard = get_object_or_404(Scorecard.objects.for_user(request.user), pk=pk)
    # The configured address (dados/settings.py), never the Host header a request sends.
    host = urlsplit(settings.SITE_URL).hostname
    context = {
        "scorecard": scorecard,
        "address": settings.SITE_URL + reverse("scorecard", args=[pk]),
        # This computer's own address, or "every interface": no other phone opens it.
        "only_here": host in {"localhost", "127.0.0.1", "::1", "0.0.0.0", "::"},
    }
    template = "scorecards/qr.html#follow" if request.htmx else "scorecards/qr.html"
    return render(request, template, context)


def _in_progress(user, limit) -> tuple[list[Scorecard], bool]:
    """The newest cards in progress that user organizes or plays in, with their seats;
    and whether there are more."""
    cards = Scorecard.objects.involving(user).in_progress().order_by("-created_at", "-pk")
    cards = list(cards.with_seats()[: limit + 1])
    return cards[:limit], len(cards) > limit


@login_required
@require_GET
def home(request):
    # Where a player at the table finds the card to follow live: the newest three;
    # «Historial» lists more.
    in_progress, more = _in_progress(request.user, 3)
    return render(request, "scorecards/home.html", {"in_progress": in_progress, "more": more})


def _my_games(request):
    """The finalized games I played or organized, filtered as the request asks, newest
    first, each with its seats and players."""
    form = HistoryFilterForm(request.GET or None)
    cards = form.filter(Scorecard.objects.involving(request.user).finalized(), request.user)
    return form, cards.with_seats().order_by("-finalized_at", "-pk")


def _game(card, user) -> dict:
    """One game of my history: my seat (None if I only organized it), whether I
    organized it, and its winners."""
    seats = card.seats.all()
    return {
        "card": card,
        "mine": next((seat for seat in seats if seat.player_id == user.pk), None),
        "organized": card.organizer_id == user.pk,
        "winners": [seat.player for seat in seats if seat.place == 1],
    }


@login_required
@require_GET
def history(request):
    """«Historial»: the finalized games I played or organized, newest first, paginated and
    filterable; above them, the cards still in play."""
    form, cards = _my_games(request)
    page = Paginator(cards, HISTORY_PAGE).get_page(request.GET.get("pagina"))
    query = request.GET.copy()
    query.pop("pagina", None)
    context = {
        "form": form,
        "page": page,
        "rows": [_game(card, request.user) for card in page],
        "query": query.urlencode(),
        "in_progress": _in_progress(request.user, IN_PROGRESS_LISTED)[0],
    }
    return render(request, "scorecards/history.html", context)


@login_required
@require_GET
@cache_control(private=True, no_store=True)
def history_csv(request):
    """My history as CSV, one row per game, for a spreadsheet."""
    _, cards = _my_games(request)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="dados-historial.csv"'
    # The BOM makes spreadsheets read UTF-8; semicolons are what a Spanish locale expects.
    response.write("\ufeff")
    writer = csv.writer(response, delimiter=";")
    header = ["fecha", "modalidad", "jugadores", "mi total", "mi posición", "ganadores"]
    writer.writerow([*header, "partida", "organicé"])
    for card in cards:
        game = _game(card, request.user)
        mine = game["mine"]
        writer.writerow(
            [
                timezone.localtime(card.finalized_at).strftime("%Y-%m-%d %H:%M"),
                card.mode,
                _spreadsheet_safe(
                    ", ".join(f"{s.player.name} ({s.total})" for s in card.seats.all())
                ),
                "" if mine is None else mine.total,
                "" if mine is None else mine.place,
                _spreadsheet_safe(", ".join(p.name for p in game["winners"])),
                card.pk,
                "sí" if game["organized"] else "no",
            ]
        )
    return response


def _spreadsheet_safe(text: str) -> str:
    """Keep a spreadsheet from reading a player's name as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@login_required
@require_GET
@cache_control(private=True, no_store=True)
def scorecard_json(request, pk):
    """One game as JSON (Scorecard.to_dict)."""
    scorecard = _card(request, pk)
    response = JsonResponse(
        scorecard.to_dict(), json_dumps_params={"ensure_ascii": False, "indent": 2}
    )
    response["Content-Disposition"] = f'attachment; filename="dados-partida-{scorecard.pk}.json"'
    return response


def _stats_filters(request) -> dict:
    """The statistics' filters, by mode and by period, as the request asks: each falls
    back to every game when its input is invalid, and each one's links keep the other."""
    mode_form, period_form = ModeFilterForm(request.GET), PeriodForm(request.GET)
    return {
        "mode_form": mode_form,
        "mode": mode_form.mode,
        "mode_links": mode_form.links(keep=period_form.params),
        "period_form": period_form,
        "period": period_form.period,
        "period_links": period_form.links(keep=mode_form.params),
        # For the links to other statistics pages, which open on the same filters.
        "filter_query": urlencode(mode_form.params | period_form.params),
    }


@login_required
@require_GET
def player(request, pk):
    """A player's statistics, visible to every logged-in player, over every game or those of
    one mode (?modalidad=) and period (?periodo=, or ?desde= and ?hasta=). An account that
    does not play and never sat at a card (an admin's) has none: 404."""
    person = get_object_or_404(get_user_model(), pk=pk)
    if not person.plays and not person.seats.exists():
        raise Http404
    filters = _stats_filters(request)
    chosen = {"mode": filters["mode"], "period": filters["period"]}
    over_time = stats.totals_over_time(person, **chosen)
    buckets = stats.histogram(person, **chosen)
    context = {
        "person": person,
        "summary": stats.player_summary(person, **chosen),
        "rivals": stats.head_to_head(person, **chosen),
        "over_time": over_time,
        "buckets": buckets,
        "line_chart": stats.line_chart(over_time),
        "histogram_chart": stats.histogram_chart(buckets),
        **filters,
    }
    return render(request, "scorecards/player.html", context)


@login_required
@require_GET
def ranking(request):
    """«Clasificación»: active players by average total, with at least MIN_GAMES games, over
    every game or those of one mode (?modalidad=) and period (?periodo=, or ?desde= and
    ?hasta=)."""
    filters = _stats_filters(request)
    ranked, unranked = stats.ranking(
        min_games=RANKING_MIN_GAMES, mode=filters["mode"], period=filters["period"]
    )
    context = {
        "ranked": ranked,
        "unranked": unranked,
        "min_games": RANKING_MIN_GAMES,
        **filters,
    }
    return render(request, "scorecards/ranking.html", context)
