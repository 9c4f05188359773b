"""The players' statistics and «Clasificación»."""

from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from scorecards import stats
from scorecards.forms import ModeFilterForm, PeriodForm

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
