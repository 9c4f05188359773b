"""What was played: the home page's cards in play, «Historial» and its exports."""

import csv

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from scorecards.forms import HistoryFilterForm
from scorecards.models import Scorecard
from scorecards.views.card import card_for

HISTORY_PAGE = 20


IN_PROGRESS_LISTED = 20


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
    form = HistoryFilterForm(request.GET or None, me=request.user)
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
    scorecard = card_for(request, pk)
    response = JsonResponse(
        scorecard.to_dict(), json_dumps_params={"ensure_ascii": False, "indent": 2}
    )
    response["Content-Disposition"] = f'attachment; filename="dados-partida-{scorecard.pk}.json"'
    return response
