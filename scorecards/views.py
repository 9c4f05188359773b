import csv
import dataclasses
import hashlib

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Prefetch
from django.http import Http404, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from scorecards import rules, services, stats
from scorecards.forms import HistoryFilterForm
from scorecards.labels import BOX_LABELS
from scorecards.models import BONUS, ChangeItem, Scorecard, Seat, StatsVersion
from scorecards.rules import Category
from scorecards.services import Refused

RECENT_CHANGES = 5
HISTORY_PAGE = 20
FINISHED_GAMES_CACHE_SECONDS = 24 * 60 * 60
RANKING_MIN_GAMES = 5


def _card(request, pk, *, edit=False) -> Scorecard:
    """The card if this user may see it (404 otherwise); 403 when edit is asked but not allowed."""
    scorecard = get_object_or_404(
        Scorecard.objects.visible_to(request.user).select_related("organizer"), pk=pk
    )
    if edit and not scorecard.can_edit(request.user):
        if scorecard.is_finalized:
            raise Refused(str(services.FinalizedError.message), status=409)
        raise PermissionDenied
    return scorecard


def _sheet_context(scorecard, user) -> dict:
    """Everything the card template needs, in a fixed number of queries."""
    seats = list(scorecard.seats.select_related("player"))
    base = reverse("scorecard", args=[scorecard.pk])
    can_edit = scorecard.can_edit(user)
    changes = scorecard.changes.select_related("author").prefetch_related(
        Prefetch("items", queryset=ChangeItem.objects.select_related("seat__player"))
    )
    # A finished game shows its whole log; one in progress only the latest entries.
    changes = list(changes if scorecard.is_finalized else changes[:RECENT_CHANGES])
    # The table is the bulk of the page. It depends only on the card's version, the
    # players' names, who is looking (editor or not) and the language, so each version
    # is rendered once and then served to every poll and reload.
    names = "|".join(seat.player.name for seat in seats)
    table = _rendered_once(
        ("table", scorecard.pk, scorecard.version, can_edit, names),
        lambda: render_to_string(
            "scorecards/card.html#table", _table_context(scorecard, seats, base, can_edit)
        ),
    )
    return {
        "table": table,
        "scorecard": scorecard,
        "changes": changes,
        "can_edit": can_edit,
        "problems": [(seat, problems) for seat in seats if (problems := seat.problems)],
        "log_summary": _log_summary(changes) if scorecard.is_finalized else None,
        "blank_text": _("sin anotar"),
        "base": base,
    }


def _table_context(scorecard, seats, base, can_edit) -> dict:
    totals = [seat.totals for seat in seats]
    places = _places(scorecard, seats)
    columns = [
        {"seat": seat, "totals": t, "place": place, "missing": max(0, 63 - t.upper)}
        for seat, t, place in zip(seats, totals, places, strict=True)
    ]
    blank = _("sin anotar")
    labels = {c: str(BOX_LABELS[c]) for c in Category}
    # Every cell is worked out here rather than with tags in the template: the card has
    # up to 130 cells, and per-cell template logic was most of its rendering time.
    rows = [
        {
            "label": labels[c],
            "cells": [_sheet_cell(base, seat, c, labels[c], blank) for seat in seats],
        }
        for c in Category
    ]
    return {
        "columns": columns,
        "upper_rows": rows[:6],
        "lower_rows": rows[6:],
        "can_edit": can_edit,
        "bonus_box": BONUS,
        "base": base,
    }


_BLANK_MARK = mark_safe('<span aria-hidden="true">·</span>')
_ZERO_MARK = mark_safe('<span class="zero">0</span>')


def _sheet_cell(base, seat, category, label, blank) -> dict:
    value = getattr(seat, category)
    return {
        "url": f"{base}casilla/{seat.pk}/{category.value}/",
        "aria": f"{label} — {seat.player.name}: {blank if value is None else value}",
        "state": " blank" if value is None else " scratched" if value == 0 else "",
        "shown": _BLANK_MARK if value is None else _ZERO_MARK if value == 0 else value,
    }


def _log_summary(changes) -> str:
    """A finished game's log in one sentence: entries, corrections, extra Yahtzees, undos."""
    counts = {"entries": 0, "corrections": 0, "jokers": 0, "undos": 0}
    for change in changes:
        if change.kind == change.Kind.UNDO:
            counts["undos"] += 1
        elif change.kind == change.Kind.JOKER:
            counts["jokers"] += 1
        elif any(item.old is not None for item in change.items.all()):
            counts["corrections"] += 1
        else:
            counts["entries"] += 1
    words = {
        "total": ngettext("%(n)s cambio", "%(n)s cambios", len(changes)),
        "entries": ngettext("%(n)s anotación", "%(n)s anotaciones", counts["entries"]),
        "corrections": ngettext("%(n)s corrección", "%(n)s correcciones", counts["corrections"]),
        "jokers": ngettext("%(n)s Yahtzee extra", "%(n)s Yahtzees extra", counts["jokers"]),
        "undos": ngettext("%(n)s deshecho", "%(n)s deshechos", counts["undos"]),
    }
    counts["total"] = len(changes)
    parts = {key: text % {"n": counts[key]} for key, text in words.items()}
    return _("%(total)s: %(entries)s, %(corrections)s, %(jokers)s y %(undos)s.") % parts


def _places(scorecard, seats) -> list[int]:
    """Stored positions of a finalized card, live ones while it is in progress."""
    if scorecard.is_finalized:
        return [seat.place for seat in seats]
    return rules.positions([seat.totals.total for seat in seats])


def _refused(request, scorecard_pk, refused: Refused):
    """Answer a refused write: the message in the card fragment, or back on the page."""
    if refused.access:
        raise Http404 if refused.status == 404 else PermissionDenied
    if request.htmx:
        scorecard = get_object_or_404(Scorecard, pk=scorecard_pk)
        context = _sheet_context(scorecard, request.user) | {"error": refused.message}
        return render(request, "scorecards/card.html#sheet", context, status=refused.status)
    messages.error(request, refused.message)
    return redirect("scorecard", pk=scorecard_pk)


def _saved(request, scorecard):
    if request.htmx:
        return render(
            request, "scorecards/card.html#sheet", _sheet_context(scorecard, request.user)
        )
    return redirect("scorecard", pk=scorecard.pk)


@login_required
@require_GET
def scorecard_new(request):
    """«Tarjeta de puntos»: choose the registered players present."""
    User = get_user_model()
    query = request.GET.get("q", "").replace("\x00", "").strip()[:60]  # PostgreSQL refuses NUL
    chosen_ids = _ids(request.GET.getlist("p"))
    players = User.objects.filter(is_active=True).order_by("display_name", "username")
    if query:
        players = players.filter(display_name__icontains=query) | players.filter(
            username__icontains=query
        )
    return render(
        request,
        "scorecards/new.html",
        {"players": players[:100], "query": query, "chosen_ids": chosen_ids},
    )


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
def scorecard_order(request):
    """Set the seating order, and optionally «¿Quién empieza?», before creating the card."""
    User = get_user_model()
    ids = _ids(request.GET.getlist("p"))
    found = User.objects.filter(is_active=True).in_bulk(ids)
    players = [found[i] for i in ids if i in found]
    if not players:
        messages.error(request, _("Elige al menos un jugador."))
        return redirect("scorecard_new")
    if len(players) > services.MAX_PLAYERS:
        messages.error(
            request,
            _("Como mucho %(max)s jugadores por tarjeta.") % {"max": services.MAX_PLAYERS},
        )
        return redirect(reverse("scorecard_new") + "?" + _query(ids))
    ids = [p.pk for p in players]
    raw_rounds = request.GET.getlist("s")
    if "t" in request.GET:
        raw_rounds.append(",".join(request.GET.getlist("t")))
    rounds, starter, error = _who_starts(raw_rounds, len(players))
    if starter is not None:
        players = players[starter:] + players[:starter]
        ids = [p.pk for p in players]
    moves = [
        {
            "player": p,
            "up": _query(_swap(ids, i, i - 1)) if i > 0 else None,
            "down": _query(_swap(ids, i, i + 1)) if i < len(ids) - 1 else None,
        }
        for i, p in enumerate(players)
    ]
    return render(
        request,
        "scorecards/order.html",
        {
            "moves": moves,
            "players": players,
            "ids": ids,
            "rounds": rounds,
            "starter": players[0] if starter is not None else None,
            "tied": _tied(rounds, players) if starter is None and rounds else [],
            "error": error,
        },
    )


def _query(ids) -> str:
    return "&".join(f"p={i}" for i in ids)


def _swap(ids, a, b):
    ids = list(ids)
    ids[a], ids[b] = ids[b], ids[a]
    return ids


def _who_starts(raw_rounds, n):
    """Parse «¿Quién empieza?» rounds: each 's' is one round of comma-separated sums.

    Round one has a sum per player; each later round has a sum per player still tied.
    Returns (rounds, index of the starter or None, error message or None).
    """
    rounds = []
    contenders = list(range(n))
    for raw in raw_rounds[:20]:
        sums = [part.strip() for part in raw.split(",")]
        if len(sums) != len(contenders) or not all(
            s.isascii() and s.isdigit() and len(s) <= 2 and 5 <= int(s) <= 30 for s in sums
        ):
            return rounds, None, _("Cada suma de cinco dados está entre 5 y 30.")
        round_sums = dict(zip(contenders, (int(s) for s in sums), strict=True))
        rounds.append(round_sums)
        best = max(round_sums.values())
        contenders = [i for i, s in round_sums.items() if s == best]
        if len(contenders) == 1:
            return rounds, contenders[0], None
    return rounds, None, None


def _tied(rounds, players):
    last = rounds[-1]
    best = max(last.values())
    return [players[i] for i, s in last.items() if s == best]


@login_required
@require_POST
def scorecard_create(request):
    User = get_user_model()
    ids = _ids(request.POST.getlist("p"))
    found = User.objects.in_bulk(ids)
    try:
        if len(found) != len(ids) or len(ids) != len(request.POST.getlist("p")):
            raise Refused(_("La lista de jugadores no es válida."))
        scorecard = services.scorecard_create(
            organizer=request.user, players=[found[i] for i in ids]
        )
    except Refused as refused:
        messages.error(request, refused.message)
        return redirect("scorecard_new")
    if request.htmx:
        return HttpResponseClientRedirect(reverse("scorecard", args=[scorecard.pk]))
    return redirect("scorecard", pk=scorecard.pk)


@login_required
@require_GET
def scorecard_live(request, pk):
    """Live card poll: 204 while the version is unchanged, else the fresh card."""
    version = Scorecard.objects.live_version(pk, request.user)
    if version is None:
        raise Http404
    if request.GET.get("v") == str(version):
        return HttpResponse(status=204)
    scorecard = _card(request, pk)
    return render(request, "scorecards/card.html#sheet", _sheet_context(scorecard, request.user))


@login_required
@require_GET
@vary_on_headers("HX-Request")
def scorecard_detail(request, pk):
    scorecard = _card(request, pk)
    context = _sheet_context(scorecard, request.user)
    if request.htmx:
        return render(request, "scorecards/card.html#sheet", context)
    return render(request, "scorecards/card.html", context)


@login_required
@vary_on_headers("HX-Request")
def box(request, pk, seat_id, box):
    """The picker for one box (GET) and the write (POST)."""
    try:
        if request.method == "POST":
            # The service checks who may write, in the query that locks the card.
            scorecard = services.box_write(
                scorecard_id=pk,
                seat_id=seat_id,
                box=box,
                value=request.POST.get("value"),
                was=request.POST.get("was"),
                author=request.user,
            )
            return _saved(request, scorecard)
        if request.method != "GET":
            return _not_allowed()
        scorecard = _card(request, pk, edit=True)
        if box not in services.BOXES:
            raise Http404
        seat = get_object_or_404(scorecard.seats.select_related("player"), pk=seat_id)
    except Refused as refused:
        return _refused(request, pk, refused)
    dice = _dice(request.GET.get("dados", ""))
    proposed = rules.score(dice, box) if len(dice) == 5 and box != BONUS else None
    current = getattr(seat, box)
    context = {
        "scorecard": scorecard,
        "seat": seat,
        "box": box,
        "label": services.box_label(box),
        "current": current,
        "values": [v for v in services.allowed_values(box) if v != 0 or box == BONUS],
        "can_scratch": box not in (Category.CHANCE, BONUS),
        "dice": dice,
        "dice_text": "".join(str(d) for d in dice),
        "faces": range(1, 7),
        "proposed": proposed,
        "with_dice": box != BONUS,
    }
    template = "scorecards/picker.html#picker" if request.htmx else "scorecards/picker.html"
    return render(request, template, context)


def _dice(raw: str) -> list[int]:
    return [int(c) for c in raw[:5] if c in "123456"]


def _not_allowed():
    return HttpResponseNotAllowed(["GET", "POST"])


@login_required
@vary_on_headers("HX-Request")
def joker(request, pk, seat_id):
    """«Yahtzee extra»: the face, then only the boxes the joker order allows."""
    try:
        scorecard = _card(request, pk, edit=True)
        if request.method == "POST":
            scorecard = services.joker_write(
                scorecard_id=scorecard.pk,
                seat_id=seat_id,
                face=request.POST.get("face"),
                box=request.POST.get("box"),
                author=request.user,
            )
            return _saved(request, scorecard)
        if request.method != "GET":
            return _not_allowed()
        seat = get_object_or_404(scorecard.seats.select_related("player"), pk=seat_id)
    except Refused as refused:
        return _refused(request, pk, refused)
    face = _dice(request.GET.get("cara", ""))[:1]
    face = face[0] if face else None
    choices = []
    if face is not None and seat.yahtzee is not None:
        choices = [
            {"box": c.value, "label": BOX_LABELS[c], "score": rules.joker_score(face, c)}
            for c in Category
            if c in rules.joker_boxes(face, seat.scores)
        ]
    context = {
        "scorecard": scorecard,
        "seat": seat,
        "face": face,
        "faces": range(1, 7),
        "choices": choices,
        "bonus": seat.yahtzee == 50,
    }
    template = "scorecards/joker.html#picker" if request.htmx else "scorecards/joker.html"
    return render(request, template, context)


@login_required
@require_POST
def undo(request, pk):
    try:
        scorecard = _card(request, pk, edit=True)
        scorecard = services.change_undo(
            scorecard_id=scorecard.pk, author=request.user, version=request.POST.get("version")
        )
    except Refused as refused:
        return _refused(request, pk, refused)
    return _saved(request, scorecard)


@login_required
@require_POST
def finalize(request, pk):
    try:
        scorecard = _card(request, pk, edit=True)
        services.scorecard_finalize(scorecard_id=scorecard.pk)
    except Refused as refused:
        return _refused(request, pk, refused)
    messages.success(request, _("Resultados guardados. La partida ya está en el historial."))
    if request.htmx:
        return HttpResponseClientRedirect(reverse("scorecard", args=[pk]))
    return redirect("scorecard", pk=pk)


@login_required
def discard(request, pk):
    """Discard a card in progress, after confirming."""
    try:
        scorecard = _card(request, pk, edit=True)
        if request.method == "POST":
            services.scorecard_discard(scorecard_id=scorecard.pk)
            messages.success(request, _("Tarjeta descartada."))
            return redirect("home")
    except Refused as refused:
        return _refused(request, pk, refused)
    if request.method != "GET":
        return _not_allowed()
    return render(request, "scorecards/discard.html", {"scorecard": scorecard})


def _my_games(request):
    """My finalized seats, filtered as the request asks, newest first."""
    form = HistoryFilterForm(request.GET or None)
    seats = form.filter(
        Seat.objects.filter(player=request.user, scorecard__finalized_at__isnull=False)
    )
    seats = (
        seats.select_related("scorecard")
        .prefetch_related(
            Prefetch("scorecard__seats", queryset=Seat.objects.select_related("player"))
        )
        .order_by("-scorecard__finalized_at", "-scorecard_id")
    )
    return form, seats


def _winners(scorecard) -> list:
    return [seat.player for seat in scorecard.seats.all() if seat.place == 1]


@login_required
@require_GET
def history(request):
    """«Historial»: the finalized games I played, newest first, paginated and filterable."""

    def finished_games():
        form, seats = _my_games(request)
        page = Paginator(seats, HISTORY_PAGE).get_page(request.GET.get("pagina"))
        rows = [{"mine": seat, "winners": _winners(seat.scorecard)} for seat in page]
        query = request.GET.copy()
        query.pop("pagina", None)
        context = {"form": form, "page": page, "rows": rows, "query": query.urlencode()}
        return render_to_string("scorecards/history.html#body", context, request=request)

    in_progress = Scorecard.objects.mine(request.user).in_progress().order_by("-created_at")[:20]
    body = _finished_games_page(
        ("history", request.user.pk, request.GET.urlencode()), finished_games
    )
    return render(request, "scorecards/history.html", {"body": body, "in_progress": in_progress})


@login_required
@require_GET
def history_csv(request):
    """My history as CSV, one row per game, for a spreadsheet."""
    _, seats = _my_games(request)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="dados-historial.csv"'
    # The BOM makes spreadsheets read UTF-8; semicolons are what a Spanish locale expects.
    response.write("\ufeff")
    writer = csv.writer(response, delimiter=";")
    writer.writerow(
        ["fecha", "modalidad", "jugadores", "mi total", "mi posición", "ganadores", "partida"]
    )
    for seat in seats:
        card = seat.scorecard
        writer.writerow(
            [
                timezone.localtime(card.finalized_at).strftime("%Y-%m-%d %H:%M"),
                card.mode,
                _cell(", ".join(f"{s.player.name} ({s.total})" for s in card.seats.all())),
                seat.total,
                seat.place,
                _cell(", ".join(p.name for p in _winners(card))),
                card.pk,
            ]
        )
    return response


def _cell(text: str) -> str:
    """Keep a spreadsheet from reading a player's name as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@login_required
@require_GET
def scorecard_json(request, pk):
    """One game as JSON: every box, bonuses, totals, positions, players, date, modality."""
    scorecard = _card(request, pk)
    seats = list(scorecard.seats.select_related("player"))
    places = _places(scorecard, seats)
    data = {
        "partida": scorecard.pk,
        "modalidad": scorecard.mode,
        "creada": scorecard.created_at.isoformat(),
        "finalizada": scorecard.finalized_at.isoformat() if scorecard.finalized_at else None,
        "organizador": scorecard.organizer.name,
        "jugadores": [
            {
                "jugador": seat.player.name,
                "usuario": seat.player.username,
                "turno": seat.order + 1,
                "casillas": {c.value: getattr(seat, c) for c in Category},
                "bonus_yahtzee": seat.yahtzee_bonuses,
                "totales": dataclasses.asdict(seat.totals),
                "posicion": place,
            }
            for seat, place in zip(seats, places, strict=True)
        ],
    }
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False, "indent": 2})
    response["Content-Disposition"] = f'attachment; filename="dados-partida-{scorecard.pk}.json"'
    return response


@login_required
@require_GET
def player(request, pk):
    """A player's statistics, visible to every logged-in player."""
    person = get_object_or_404(get_user_model(), pk=pk)

    def statistics():
        summary = stats.player_summary(person)
        over_time = stats.totals_over_time(person)
        buckets = stats.histogram(person)
        context = {
            "person": person,
            "summary": summary,
            "rivals": stats.head_to_head(person),
            "over_time": over_time,
            "buckets": buckets,
            "line_chart": stats.line_chart_svg(
                over_time,
                title=_("Totales de %(name)s en el tiempo") % {"name": person.name},
                id_prefix="totals",
            ),
            "histogram_chart": stats.histogram_svg(
                buckets,
                title=_("Histograma de totales de %(name)s") % {"name": person.name},
                id_prefix="histogram",
            ),
        }
        return render_to_string("scorecards/player.html#body", context, request=request)

    body = _finished_games_page(("player", person.pk), statistics)
    return render(request, "scorecards/player.html", {"person": person, "body": body})


@login_required
@require_GET
def ranking(request):
    """«Clasificación»: active players by average total, with at least MIN_GAMES games."""

    def table():
        ranked, unranked = stats.ranking(min_games=RANKING_MIN_GAMES)
        context = {"ranked": ranked, "unranked": unranked, "min_games": RANKING_MIN_GAMES}
        return render_to_string("scorecards/ranking.html#body", context, request=request)

    return render(
        request, "scorecards/ranking.html", {"body": _finished_games_page(("ranking",), table)}
    )


def _rendered_once(key, render):
    """A rendered part, cached under key and the language."""
    parts = ":".join(map(str, (*key, get_language())))
    cache_key = "part:" + hashlib.sha256(parts.encode()).hexdigest()
    html = cache.get(cache_key)
    if html is None:
        html = render()
        cache.set(cache_key, html, FINISHED_GAMES_CACHE_SECONDS)
    return html


def _finished_games_page(key, render_body):
    """A page part built only from finished games, cached until one more game is finalized.

    Finalized games never change, so StatsVersion (bumped by every finalize and by
    renaming or (de)activating a player) is all a cached copy has to agree with; the
    key also carries the language, as the same numbers read differently in each.
    """
    parts = ["dados", *map(str, key), str(StatsVersion.current()), get_language()]
    cache_key = "page:" + hashlib.sha256(":".join(parts).encode()).hexdigest()
    body = cache.get(cache_key)
    if body is None:
        body = render_body()
        cache.set(cache_key, body, FINISHED_GAMES_CACHE_SECONDS)
    return body
