"""Statistics over finalized games, computed by the database in a constant number of queries.

Every statistic takes an optional mode («presencial» or «digital», Scorecard.Mode): given,
it counts only the games of that mode; None counts them all. And an optional Period: given,
it counts only the games finalized within it; None counts them whenever they ended.

The chart functions lay out the player page's charts as plain data, which the templates in
templates/scorecards/charts/ draw: coordinates in the chart's viewBox (width by height),
labels, and desc, the sentence a screen reader gives. An empty chart (no games) has only
the x and y of its «Sin partidas».
"""

import functools
import itertools
import math
import operator
from dataclasses import dataclass
from datetime import date, datetime

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import Count, F, Max, Min, Q, Sum, Value
from django.db.models.functions import Coalesce, NullIf
from django.utils import formats, timezone
from django.utils.translation import gettext, ngettext

from accounts.names import sort_key
from scorecards import rules
from scorecards.models import Scorecard, Seat
from scorecards.rules import Category

__all__ = [
    "Period",
    "finalized",
    "finalized_state",
    "head_to_head",
    "histogram",
    "histogram_chart",
    "line_chart",
    "mean",
    "player_summary",
    "ranking",
    "totals_over_time",
]


@dataclass(frozen=True)
class Period:
    """The days a game may have been finalized on, both included, as the club's clock
    (settings.TIME_ZONE) dates them; None leaves that end open."""

    first: date | None = None
    last: date | None = None

    def __post_init__(self):
        for end in (self.first, self.last):
            if end is not None and (not isinstance(end, date) or isinstance(end, datetime)):
                raise ValueError(f"a period's ends are dates or None, not {end!r}")
        if self.first and self.last and self.first > self.last:
            raise ValueError(f"a period cannot end ({self.last}) before it starts ({self.first})")

    def condition(self, prefix="") -> Q:
        """Cards (reached through prefix) finalized within the period."""
        # __date reads finalized_at in the current time zone, which is the club's.
        condition = Q()
        if self.first is not None:
            condition &= Q(**{f"{prefix}finalized_at__date__gte": self.first})
        if self.last is not None:
            condition &= Q(**{f"{prefix}finalized_at__date__lte": self.last})
        return condition


def finalized(mode=None, period=None, prefix="scorecard__") -> Q:
    """Seats (reached through prefix) in finalized games, of that mode and within that
    period if they are given."""
    condition = Q(**{f"{prefix}finalized_at__isnull": False})
    if mode is not None:
        if mode not in Scorecard.Mode.values:
            raise ValueError(f"mode must be one of {Scorecard.Mode.values} or None, not {mode!r}")
        condition &= Q(**{f"{prefix}mode": mode})
    if period is not None:
        condition &= period.condition(prefix)
    return condition


def _finalized_seats(player, mode=None, period=None):
    """The player's seats in finalized games (of that mode and period, if given)."""
    return Seat.objects.filter(finalized(mode, period), player=player)


def _name(prefix=""):
    """User.name in SQL: the display name, else the username."""
    return Coalesce(NullIf(F(f"{prefix}display_name"), Value("")), F(f"{prefix}username"))


def _rate(part, whole):
    return part / whole if whole else None


def mean(points, games):
    """An average, divided here rather than by the database's AVG: SQLite and PostgreSQL
    round its last digit differently, and a club moved from one to the other (manage.py
    restore) must read the same statistics and ranking."""
    return points / games if games else None


# Statistics


def player_summary(player, mode=None, period=None) -> dict:
    """Games, wins, scores, Yahtzees, upper bonus and box averages of a player, in one query."""
    upper = functools.reduce(operator.add, (F(c) for c in rules.UPPER))
    row = (
        _finalized_seats(player, mode, period)
        .annotate(upper_sum=upper)
        .aggregate(
            games=Count("pk"),
            wins=Count("pk", filter=Q(place=1)),
            points=Sum("total"),
            best=Max("total"),
            worst=Min("total"),
            yahtzee_boxes=Count("pk", filter=Q(yahtzee=rules.YAHTZEE_SCORE)),
            yahtzee_bonuses=Sum("yahtzee_bonuses", default=0),
            upper_bonuses=Count("pk", filter=Q(upper_sum__gte=rules.UPPER_BONUS_THRESHOLD)),
            **{f"sum_{c}": Sum(c) for c in Category},
        )
    )
    games = row["games"]
    return {
        "games": games,
        "wins": row["wins"],
        "win_rate": _rate(row["wins"], games),
        "average": mean(row["points"], games),
        "best": row["best"],
        "worst": row["worst"],
        "yahtzees": row["yahtzee_boxes"] + row["yahtzee_bonuses"],
        "upper_bonus_rate": _rate(row["upper_bonuses"], games),
        "box_averages": [(c, mean(row[f"sum_{c}"], games)) for c in Category],
    }


def head_to_head(player, mode=None, period=None) -> list[dict]:
    """Games, wins, losses and ties against each opponent, most games first; two queries."""
    # Opponents' seats joined to the player's seat in the same finalized game; the aggregates
    # below reuse that join (filter before annotate), so `mine` is the player's place there.
    mine = "scorecard__seats__place"
    rows = list(
        Seat.objects.filter(finalized(mode, period), scorecard__seats__player=player)
        .exclude(player=player)
        .values("player")
        .annotate(
            games=Count("pk"),
            wins=Count("pk", filter=Q(**{f"{mine}__lt": F("place")})),
            losses=Count("pk", filter=Q(**{f"{mine}__gt": F("place")})),
            ties=Count("pk", filter=Q(**{mine: F("place")})),
        )
        .order_by("-games", _name("player__"), "player__username", "player")
    )
    opponents = get_user_model().objects.in_bulk(row["player"] for row in rows)
    rows = [{"opponent": opponents[row.pop("player")], **row} for row in rows]
    return sorted(rows, key=lambda row: (-row["games"], sort_key(row["opponent"].name)))


def totals_over_time(player, limit=50, mode=None, period=None) -> list[tuple[datetime, int]]:
    """(finalized_at, total) of the player's last `limit` finalized games, oldest first."""
    rows = list(
        _finalized_seats(player, mode, period)
        .order_by("-scorecard__finalized_at", "-scorecard_id")
        .values_list("scorecard__finalized_at", "total")[:limit]
    )
    rows.reverse()
    return rows


def histogram(player, width=25, mode=None, period=None) -> list[dict]:
    """Games per range of `width` points, empty ranges between the lowest and highest included."""
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"width must be a positive integer, not {width!r}")
    counts = dict(
        _finalized_seats(player, mode, period)
        # Both sides are integers, so the database divides without a remainder.
        .annotate(bucket=F("total") / Value(width))
        .values("bucket")
        .annotate(count=Count("pk"))
        .order_by()
        .values_list("bucket", "count")
    )
    if not counts:
        return []
    return [
        {"low": b * width, "high": b * width + width - 1, "count": counts.get(b, 0)}
        for b in range(min(counts), max(counts) + 1)
    ]


def ranking(min_games=5, mode=None, period=None) -> tuple[list[dict], list[dict]]:
    """Active players ranked by average with at least min_games games, and those with fewer;
    accounts that do not play («Juega» unticked) are left out.

    The unranked are ordered the same way, by average, then best total, then games: while
    the ranking fills up (a new club, a new month) they are the period's results. Each of
    them says how many games it still lacks (missing)."""
    numbers = _ranking_numbers(mode, period)
    players = (
        get_user_model()
        .objects.filter(is_active=True, plays=True)
        # By name (sort_key, below); the stable sorts keep it as the last tie-break.
        .order_by(_name(), "username", "pk")
    )
    rows = [
        {"player": player, **numbers[player.pk]}
        for player in sorted(players, key=lambda p: sort_key(p.name))
        if player.pk in numbers
    ]
    ranked = sorted(
        (row for row in rows if row["games"] >= min_games),
        key=lambda row: (-row["average"], -row["wins"]),
    )
    for row, rank in zip(ranked, rules.positions(r["average"] for r in ranked), strict=True):
        row["rank"] = rank
    unranked = sorted(
        (row for row in rows if row["games"] < min_games),
        key=lambda row: (-row["average"], -row["best"], -row["games"]),
    )
    for row in unranked:
        row["missing"] = min_games - row["games"]
    return ranked, unranked


# How long a ranking's numbers are kept at most. A game finalized since makes new ones.
RANKING_KEPT_FOR = 600


def finalized_state() -> str:
    """What the finalized games are now, in one query: their count and the newest id.

    The finalized games only ever grow, one at a time: the database refuses to change or
    delete a finalized card and its seats (scorecards.triggers). So their count (with the
    newest id, should a database be made anew) says whether numbers computed from them
    still hold, and names them in a cache key."""
    games = Scorecard.objects.finalized().aggregate(count=Count("pk"), newest=Max("pk"))
    return f"{games['count']}:{games['newest']}"


def _ranking_numbers(mode=None, period=None) -> dict[int, dict]:
    """Each player's games, wins, average and best total in the finalized games (of that
    mode and period), by the player's id: computed once for everyone (an aggregate over
    every finalized seat, the dearest query of a club night) until another game is
    finalized (finalized_state); who plays, and their names, are read each time."""
    seats = Seat.objects.filter(finalized(mode, period))
    first, last = (period.first, period.last) if period else (None, None)
    key = f"dados:ranking:{mode}:{first}:{last}:{finalized_state()}"
    if (numbers := cache.get(key)) is None:
        rows = (
            seats.values("player")
            .annotate(
                games=Count("pk"),
                wins=Count("pk", filter=Q(place=1)),
                points=Sum("total"),
                best=Max("total"),
            )
            .order_by()
        )
        numbers = {}
        for row in rows:
            row["average"] = mean(row.pop("points"), row["games"])
            numbers[row.pop("player")] = row
        cache.set(key, numbers, RANKING_KEPT_FOR)
    return numbers


# Charts

_WIDTH = 360


def _at(value) -> float:
    """A coordinate, to a tenth of a viewBox unit."""
    return round(float(value), 1)


def _empty() -> dict:
    """A chart that only says «Sin partidas», in the middle."""
    return {"empty": True, "width": _WIDTH, "height": 60, "desc": "", "x": _WIDTH // 2, "y": 34}


def _span(low, high):
    return f"{low}\N{EN DASH}{high}"


def _partidas(n):
    return ngettext("%(count)s partida", "%(count)s partidas", n) % {"count": n}


def _steps():
    """Round gridline steps: 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000..."""
    yield 5
    for e in itertools.count():
        for m in (10, 20, 25, 50):
            yield m * 10**e


def _gridlines(low, high) -> list[int]:
    """Three to five round values from at most low to at least high."""
    for step in _steps():
        start, stop = low // step * step, -(-high // step) * step
        if stop - start <= 4 * step:
            break
    if stop - start < 2 * step:
        start = max(start - step, 0)
    while stop - start < 2 * step:
        stop += step
    return list(range(start, stop + 1, step))


def _day(moment: datetime) -> str:
    """The date as its readers write it short (dados/formats): 6/12/2026, 6 Dec 2026."""
    if timezone.is_aware(moment):
        moment = timezone.localtime(moment)
    return formats.date_format(moment, "SHORT_DATE_FORMAT")


def line_chart(points: list[tuple[datetime, int]]) -> dict:
    """Lay out totals over time: gridlines, a marker per game joined by a line, the dates."""
    if not points:
        return _empty()
    totals = [int(total) for _, total in points]
    left, right, top, bottom = 36, _WIDTH - 12, 12, 176
    grid = _gridlines(min(totals), max(totals))
    lo, hi = grid[0], grid[-1]

    def y(value):
        return bottom - (value - lo) / (hi - lo) * (bottom - top)

    inner_left, inner_right = left + 8, right - 8
    if len(points) == 1:
        xs = [(inner_left + inner_right) / 2]
    else:
        gap = (inner_right - inner_left) / (len(points) - 1)
        xs = [inner_left + i * gap for i in range(len(points))]
    days = [_day(moment) for moment, _ in points]
    if len(points) == 1:
        dates = [{"x": _at(xs[0]), "anchor": "middle", "text": days[0]}]
    else:
        dates = [
            {"x": _at(inner_left), "anchor": "start", "text": days[0]},
            {"x": _at(inner_right), "anchor": "end", "text": days[-1]},
        ]
    desc = gettext("%(games)s: mínimo %(low)s, máximo %(high)s, última %(last)s puntos.") % {
        "games": _partidas(len(totals)),
        "low": min(totals),
        "high": max(totals),
        "last": totals[-1],
    }
    return {
        "empty": False,
        "width": _WIDTH,
        "height": 200,
        "desc": desc,
        "left": left,
        "right": right,
        "labels_x": left - 4,
        "gridlines": [
            {"value": value, "y": _at(y(value)), "label_y": _at(y(value) + 3.5)} for value in grid
        ],
        "points": [
            {
                "x": _at(x),
                "y": _at(y(total)),
                "label": gettext("%(day)s: %(total)s puntos") % {"day": day, "total": total},
            }
            for x, day, total in zip(xs, days, totals, strict=True)
        ],
        "dates": dates,
        "dates_y": bottom + 16,
    }


def histogram_chart(buckets: list[dict]) -> dict:
    """Lay out games per points range: the range, and a bar with its count where there are games."""
    ranges = [(int(b["low"]), int(b["high"]), int(b["count"])) for b in buckets]
    if not any(count for _, _, count in ranges):
        return _empty()
    right, top = _WIDTH - 8, 18
    upright = (right - 8) / len(ranges) >= 42
    # Narrow bars get slanted range labels, which need room on the left and below; when
    # very narrow, only every nth range is labelled and the counts stay in the bar tooltips.
    left, bottom = (8, 176) if upright else (36, 150)
    slot = (right - left) / len(ranges)
    every = 1 if upright else math.ceil(12 / slot)
    most = max(count for _, _, count in ranges)
    laid_out = []
    for i, (low, high, count) in enumerate(ranges):
        center = left + (i + 0.5) * slot
        bar = None
        if count:
            height = count / most * (bottom - top)
            bar = {
                "x": _at(left + i * slot + slot * 0.1),
                "y": _at(bottom - height),
                "width": _at(slot * 0.8),
                "height": _at(height),
                "count": count,
                "count_y": _at(bottom - height - 4),
                "label": f"{_span(low, high)}: {_partidas(count)}",
            }
        labelled = i % every == 0
        laid_out.append(
            {"center": _at(center), "text": _span(low, high), "labelled": labelled, "bar": bar}
        )
    games = sum(count for _, _, count in ranges)
    desc = gettext("%(games)s entre %(low)s y %(high)s puntos, en tramos de %(width)s.") % {
        "games": _partidas(games),
        "low": ranges[0][0],
        "high": ranges[-1][1],
        "width": ranges[0][1] - ranges[0][0] + 1,
    }
    return {
        "empty": False,
        "width": _WIDTH,
        "height": 200,
        "desc": desc,
        "ranges": laid_out,
        "show_counts": slot >= 9,
        "slanted": not upright,
        "labels_y": bottom + (14 if upright else 10),
        "axis": {"x1": left, "x2": right, "y": bottom},
    }
