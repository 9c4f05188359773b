"""The players' statistics and «Clasificación»."""

from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from scorecards import records as club_records
from scorecards import stats
from scorecards.forms import ModeFilterForm, PeriodForm
from scorecards.models import Scorecard

RANKING_MIN_GAMES = 5


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
        "bests": club_records.personal(person, **chosen),
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


@login_required
@require_GET
def records(request):
    """«Récords»: the club's records, each with its holders and the ones before them, over
    every game or those of one mode (?modalidad=) and period (?periodo=, or ?desde= and
    ?hasta=)."""
    filters = _stats_filters(request)
    found = club_records.club(mode=filters["mode"], period=filters["period"])
    shown = [record for record in found.records.values() if record.value is not None]
    ids = {h.player_id for record in shown for h in record.holdings()}
    people = get_user_model().objects.in_bulk(ids)
    games = {h.game_id for record in shown for h in record.holdings()}
    # A game's page is for its players (and staff): the others see its date, unlinked.
    dates = dict(Scorecard.objects.filter(pk__in=games).values_list("pk", "finalized_at"))
    seen = set(
        Scorecard.objects.for_user(request.user).filter(pk__in=games).values_list("pk", flat=True)
    )
    rows = [
        {
            "record": record,
            "holders": [_held(h, people, seen, dates) for h in record.holders],
            "previous": [_held(h, people, seen, dates) for h in record.previous],
        }
        for record in shown
    ]
    return render(request, "scorecards/records.html", {"rows": rows, **filters})


def _held(holding, people, seen, dates) -> dict:
    """A record's holding with its player, its game's date, and whether the viewer sees
    its game."""
    return {
        "game": holding.game_id,
        "player": people[holding.player_id],
        "at": dates[holding.game_id],
        "seen": holding.game_id in seen,
    }
