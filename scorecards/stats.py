"""Statistics over finalized games, computed by the database in a constant number of queries.

The SVG helpers draw server-side charts with no JavaScript and no inline styles (the
Content-Security-Policy forbids them): only presentation attributes and class names, with
currentColor so the page CSS can theme them. Every interpolated value is a number or passes
through escape(), so their output is returned already marked safe.
"""

import functools
import hashlib
import itertools
import math
import operator
import re
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import Avg, Count, F, Max, Min, Q, Sum, Value
from django.db.models.functions import Coalesce, NullIf
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext

from scorecards import rules
from scorecards.models import Seat
from scorecards.rules import Category

__all__ = [
    "head_to_head",
    "histogram",
    "histogram_svg",
    "line_chart_svg",
    "player_summary",
    "ranking",
    "totals_over_time",
]

# rules.totals gives the upper bonus from this sum of Unos to Seises on (a test keeps them equal).
UPPER_BONUS_THRESHOLD = 63
YAHTZEE_SCORE = max(rules.allowed_scores(Category.YAHTZEE))

_FINALIZED = Q(scorecard__finalized_at__isnull=False)


def _finalized_seats(player):
    """The player's seats in finalized games."""
    return Seat.objects.filter(_FINALIZED, player=player)


def _name(prefix=""):
    """User.name in SQL: the display name, else the username."""
    return Coalesce(NullIf(F(f"{prefix}display_name"), Value("")), F(f"{prefix}username"))


def _rate(part, whole):
    return part / whole if whole else None


# Statistics


def player_summary(player) -> dict:
    """Games, wins, scores, Yahtzees, upper bonus and box averages of a player, in one query."""
    upper = functools.reduce(operator.add, (F(c) for c in rules.UPPER))
    row = (
        _finalized_seats(player)
        .annotate(upper_sum=upper)
        .aggregate(
            games=Count("pk"),
            wins=Count("pk", filter=Q(place=1)),
            average=Avg("total"),
            best=Max("total"),
            worst=Min("total"),
            yahtzee_boxes=Count("pk", filter=Q(yahtzee=YAHTZEE_SCORE)),
            yahtzee_bonuses=Sum("yahtzee_bonuses", default=0),
            upper_bonuses=Count("pk", filter=Q(upper_sum__gte=UPPER_BONUS_THRESHOLD)),
            **{f"avg_{c}": Avg(c) for c in Category},
        )
    )
    games = row["games"]
    return {
        "games": games,
        "wins": row["wins"],
        "win_rate": _rate(row["wins"], games),
        "average": row["average"],
        "best": row["best"],
        "worst": row["worst"],
        "yahtzees": row["yahtzee_boxes"] + row["yahtzee_bonuses"],
        "upper_bonus_rate": _rate(row["upper_bonuses"], games),
        "box_averages": [(c, row[f"avg_{c}"]) for c in Category],
    }


def head_to_head(player) -> list[dict]:
    """Games, wins, losses and ties against each opponent, most games first; two queries."""
    # Opponents' seats joined to the player's seat in the same finalized game; the aggregates
    # below reuse that join (filter before annotate), so `mine` is the player's place there.
    mine = "scorecard__seats__place"
    rows = list(
        Seat.objects.filter(_FINALIZED, scorecard__seats__player=player)
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
    return [{"opponent": opponents[row.pop("player")], **row} for row in rows]


def totals_over_time(player, limit=50) -> list[tuple[datetime, int]]:
    """(finalized_at, total) of the player's last `limit` finalized games, oldest first."""
    rows = list(
        _finalized_seats(player)
        .order_by("-scorecard__finalized_at", "-scorecard_id")
        .values_list("scorecard__finalized_at", "total")[:limit]
    )
    rows.reverse()
    return rows


def histogram(player, width=25) -> list[dict]:
    """Games per range of `width` points, empty ranges between the lowest and highest included."""
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"width must be a positive integer, not {width!r}")
    counts = dict(
        _finalized_seats(player)
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


def ranking(min_games=5) -> tuple[list[dict], list[dict]]:
    """Active players ranked by average with at least min_games games, and those with fewer."""
    finalized = Q(seats__scorecard__finalized_at__isnull=False)
    players = (
        get_user_model()
        .objects.filter(is_active=True)
        .annotate(
            games=Count("seats", filter=finalized),
            wins=Count("seats", filter=finalized & Q(seats__place=1)),
            average=Avg("seats__total", filter=finalized),
        )
        .filter(games__gt=0)
        # By name here; the stable sorts below keep it as the last tie-break.
        .order_by(_name(), "username", "pk")
    )
    rows = [{"player": p, "games": p.games, "wins": p.wins, "average": p.average} for p in players]
    ranked = sorted(
        (row for row in rows if row["games"] >= min_games),
        key=lambda row: (-row["average"], -row["wins"]),
    )
    for row, rank in zip(ranked, rules.positions(r["average"] for r in ranked), strict=True):
        row["rank"] = rank
    unranked = sorted(
        (row for row in rows if row["games"] < min_games), key=lambda row: -row["games"]
    )
    return ranked, unranked


# Charts

_WIDTH = 360
_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_LABEL = 'fill="currentColor" font-size="10"'


def _prefix(title, id_prefix):
    """Ids unique per chart: the given prefix, else one derived from the title."""
    if id_prefix is None:
        return "chart-" + hashlib.blake2s(str(title).encode(), digest_size=4).hexdigest()
    if not _ID.fullmatch(id_prefix):
        raise ValueError(f"id_prefix must be a plain HTML id, not {id_prefix!r}")
    return id_prefix


def _svg(prefix, title, body, *, height, desc="") -> SafeString:
    """The outer <svg> with its accessible name (and description), scaling to its container."""
    described = f' aria-describedby="{prefix}-desc"' if desc else ""
    desc = f'<desc id="{prefix}-desc">{escape(desc)}</desc>' if desc else ""
    # Safe: every interpolated value is a number or escaped.
    return mark_safe(
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {_WIDTH} {height}"'
        f' width="100%" role="img" aria-labelledby="{prefix}-title"{described}>'
        f'<title id="{prefix}-title">{escape(title)}</title>{desc}{"".join(body)}</svg>'
    )


def _empty(prefix, title) -> SafeString:
    return _svg(
        prefix,
        title,
        [
            f'<text class="chart-label chart-empty" x="{_WIDTH / 2:g}" y="34"'
            ' text-anchor="middle" fill="currentColor" font-size="14">'
            f"{escape(gettext('Sin partidas'))}</text>"
        ],
        height=60,
    )


def _span(low, high):
    return f"{low}\N{EN DASH}{high}"


def _points(day, total):
    return gettext("%(day)s: %(total)s puntos") % {"day": day, "total": total}


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
    if timezone.is_aware(moment):
        moment = timezone.localtime(moment)
    return moment.strftime("%d/%m/%y")


def line_chart_svg(
    points: list[tuple[datetime, int]], *, title: str, id_prefix: str | None = None
) -> SafeString:
    """Totals over time as a line with markers; a «Sin partidas» chart when there are none."""
    prefix = _prefix(title, id_prefix)
    if not points:
        return _empty(prefix, title)
    totals = [int(total) for _, total in points]
    height, left, right, top, bottom = 200, 36, _WIDTH - 12, 12, 176
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

    body = []
    for value in grid:
        body.append(
            f'<line class="chart-grid" x1="{left}" x2="{right}" y1="{y(value):.1f}"'
            f' y2="{y(value):.1f}" stroke="currentColor" stroke-opacity="0.2" stroke-width="1"/>'
            f'<text class="chart-label" x="{left - 4}" y="{y(value) + 3.5:.1f}"'
            f' text-anchor="end" {_LABEL}>{value}</text>'
        )
    if len(points) > 1:
        line = " ".join(f"{x:.1f},{y(t):.1f}" for x, t in zip(xs, totals, strict=True))
        body.append(
            f'<polyline class="chart-line" points="{line}" fill="none" stroke="currentColor"'
            ' stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>'
        )
    for x, (moment, _), total in zip(xs, points, totals, strict=True):
        body.append(
            f'<circle class="chart-point" cx="{x:.1f}" cy="{y(total):.1f}" r="3"'
            f' fill="currentColor"><title>{escape(_points(_day(moment), total))}</title></circle>'
        )
    first, last = escape(_day(points[0][0])), escape(_day(points[-1][0]))
    if len(points) == 1:
        dates = [(xs[0], "middle", first)]
    else:
        dates = [(inner_left, "start", first), (inner_right, "end", last)]
    body.extend(
        f'<text class="chart-label" x="{x:.1f}" y="{bottom + 16}" text-anchor="{anchor}"'
        f" {_LABEL}>{text}</text>"
        for x, anchor, text in dates
    )
    desc = gettext("%(games)s: mínimo %(low)s, máximo %(high)s, última %(last)s puntos.") % {
        "games": _partidas(len(totals)),
        "low": min(totals),
        "high": max(totals),
        "last": totals[-1],
    }
    return _svg(prefix, title, body, height=height, desc=desc)


def histogram_svg(buckets: list[dict], *, title: str, id_prefix: str | None = None) -> SafeString:
    """Games per points range as bars with their counts; «Sin partidas» when there are none."""
    prefix = _prefix(title, id_prefix)
    bars = [(int(b["low"]), int(b["high"]), int(b["count"])) for b in buckets]
    if not bars or not any(count for _, _, count in bars):
        return _empty(prefix, title)
    right, top, height = _WIDTH - 8, 18, 200
    upright = (right - 8) / len(bars) >= 42
    # Narrow bars get slanted range labels, which need room on the left and below; when
    # very narrow, only every nth range is labelled and the counts stay in the bar tooltips.
    left, bottom = (8, 176) if upright else (36, 150)
    slot = (right - left) / len(bars)
    every = 1 if upright else math.ceil(12 / slot)
    most = max(count for _, _, count in bars)

    body = []
    for i, (low, high, count) in enumerate(bars):
        center = left + (i + 0.5) * slot
        if count:
            bar_height = count / most * (bottom - top)
            body.append(
                f'<rect class="chart-bar" x="{left + i * slot + slot * 0.1:.1f}"'
                f' y="{bottom - bar_height:.1f}" width="{slot * 0.8:.1f}"'
                f' height="{bar_height:.1f}" fill="currentColor">'
                f"<title>{_span(low, high)}: {_partidas(count)}</title></rect>"
            )
            if slot >= 9:
                body.append(
                    f'<text class="chart-label chart-value" x="{center:.1f}"'
                    f' y="{bottom - bar_height - 4:.1f}" text-anchor="middle" {_LABEL}>'
                    f"{count}</text>"
                )
        if i % every:
            continue
        if upright:
            body.append(
                f'<text class="chart-label" x="{center:.1f}" y="{bottom + 14}"'
                f' text-anchor="middle" {_LABEL}>{_span(low, high)}</text>'
            )
        else:
            body.append(
                f'<text class="chart-label" x="{center:.1f}" y="{bottom + 10}"'
                f' text-anchor="end" transform="rotate(-45 {center:.1f} {bottom + 10})"'
                f' fill="currentColor" font-size="9">{_span(low, high)}</text>'
            )
    body.append(
        f'<line class="chart-axis" x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}"'
        ' stroke="currentColor" stroke-width="1"/>'
    )
    games = sum(count for _, _, count in bars)
    desc = gettext("%(games)s entre %(low)s y %(high)s puntos, en tramos de %(width)s.") % {
        "games": _partidas(games),
        "low": bars[0][0],
        "high": bars[-1][1],
        "width": bars[0][1] - bars[0][0] + 1,
    }
    return _svg(prefix, title, body, height=height, desc=desc)
