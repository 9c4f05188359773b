"""The club's records («Récords») and each player's personal bests, over finalized games.

The club's records are computed in one pass over every finalized seat (of a mode and a
period, if given), oldest game first, and kept in the cache until another game is
finalized, as «Clasificación»'s numbers are (stats.finalized_state). The same pass notes
which games set a record (beat the one before, strictly) and which were a player's best
game yet, for the game's own page to say so.

A record is held by every seat that reaches its value (a tie names them all); a run (of
wins, of upper bonuses) by the game that reached its length. The holders it had before
it was beaten are kept as its previous holders.
"""

import collections
import functools
import itertools
import operator
from dataclasses import dataclass, field

from django.core.cache import cache
from django.db.models import F
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from scorecards import rules, stats
from scorecards.models import Seat

# The club's records, in the order «Récords» shows them, with their names there.
BEST_GAME = "best_game"
MOST_YAHTZEES = "most_yahtzees"
BEST_UPPER = "best_upper"
UPPER_BONUS_RUN = "upper_bonus_run"
WIN_RUN = "win_run"
WIN_MARGIN = "win_margin"
TITLES = {
    BEST_GAME: _("Mejor partida"),
    MOST_YAHTZEES: _("Más Yahtzees en una partida"),
    BEST_UPPER: _("Mejor sección superior"),
    UPPER_BONUS_RUN: _("Más bonus superiores seguidos"),
    WIN_RUN: _("Racha de victorias más larga"),
    WIN_MARGIN: _("Victoria por más diferencia"),
}
# Runs are counted over a player's games in order: a record that one run keeps growing
# stays one holding, not a holder per game.
RUNS = frozenset({UPPER_BONUS_RUN, WIN_RUN})

# How many of a player's latest games their recent average counts.
RECENT_GAMES = 10


# A record tied by many (one Yahtzee in a game, say) names this many of them, the first
# to reach it, and counts the others.
NAMED = 6


@dataclass(frozen=True)
class Holding:
    """One holder of a record: the player and the game (its id); a run's holding also
    names the game its run began in."""

    player_id: int
    game_id: int
    since: int | None = None


@dataclass
class Record:
    kind: str
    value: int | None = None
    holders: list[Holding] = field(default_factory=list)
    # How many hold it, named or not.
    count: int = 0
    previous_value: int | None = None
    previous: list[Holding] = field(default_factory=list)
    previous_count: int = 0

    @property
    def title(self):
        return TITLES[self.kind]

    def said(self, value) -> str:
        """A value of this record in words: «412 puntos», «3 Yahtzees», «5 partidas»."""
        if self.kind == MOST_YAHTZEES:
            return ngettext("%(n)s Yahtzee", "%(n)s Yahtzees", value) % {"n": value}
        if self.kind in RUNS:
            return ngettext("%(n)s partida", "%(n)s partidas", value) % {"n": value}
        return ngettext("%(n)s punto", "%(n)s puntos", value) % {"n": value}

    @property
    def value_said(self) -> str:
        return self.said(self.value)

    @property
    def previous_said(self) -> str:
        return self.said(self.previous_value) if self.previous else ""

    @property
    def unnamed(self) -> int:
        return self.count - len(self.holders)

    @property
    def previous_unnamed(self) -> int:
        return self.previous_count - len(self.previous)

    def offer(self, value: int, holding: Holding) -> bool:
        """Take a seat's value: a new record (True when it beats one that stood), a tie,
        or nothing. Zero is never a record (no Yahtzee, no run)."""
        if value <= 0 or (self.value is not None and value < self.value):
            return False
        if value == self.value:
            if len(self.holders) < NAMED:
                self.holders.append(holding)
            self.count += 1
            return False
        beaten = self.value is not None
        same = [h for h in self.holders if holding.since is not None and _same_run(h, holding)]
        others = [h for h in self.holders if h not in same]
        if others:
            self.previous_value, self.previous = self.value, others
            self.previous_count = self.count - len(same)
        self.value, self.holders, self.count = value, [holding], 1
        # A run that only grows its own record sets it once, when it passes another's.
        return beaten and bool(others)

    def holdings(self):
        return self.holders + self.previous


def _same_run(a: Holding, b: Holding) -> bool:
    return a.player_id == b.player_id and a.since == b.since


@dataclass
class Club:
    """The records, and per game what it set: records[kind], set_by[game id] = [(kind,
    value, player id)], best_of[game id] = [ids of players whose best game yet it was];
    dates[game id], when each game a record names was finalized."""

    records: dict[str, Record]
    set_by: dict[int, list[tuple[str, int, int]]]
    best_of: dict[int, list[int]]
    # Each player's best total and current runs, for a game about to be finalized.
    best: dict[int, int]
    runs: dict[int, dict[str, tuple[int, int | None]]]


def _upper():
    return functools.reduce(operator.add, (F(c) for c in rules.UPPER))


def compute(mode=None, period=None) -> Club:
    """The records over the finalized games (of that mode and period), in one query: every
    seat, oldest game first."""
    rows = (
        # A seat without a total (written around the app, as some tests do) counts nowhere.
        Seat.objects.filter(stats.finalized(mode, period), total__isnull=False)
        .annotate(upper_sum=_upper())
        .order_by("scorecard__finalized_at", "scorecard_id", "order")
        .values_list(
            "scorecard_id", "player_id", "total", "place", "upper_sum", "yahtzee", "yahtzee_bonuses"
        )
    )
    records = {kind: Record(kind) for kind in TITLES}
    best_game, most_yahtzees, best_upper = (
        records[k] for k in (BEST_GAME, MOST_YAHTZEES, BEST_UPPER)
    )
    set_by, best_of, best = {}, {}, {}
    # Per player and run: (its length, the game it began in).
    runs: dict[int, dict[str, tuple[int, int | None]]] = {}
    threshold, fifty = rules.UPPER_BONUS_THRESHOLD, rules.YAHTZEE_SCORE

    def offer(record, value, player_id, game_id, since=None):
        # Most seats reach no record: only those that may are offered.
        if (record.value is None or value >= record.value) and record.offer(
            value, Holding(player_id, game_id, since)
        ):
            set_by.setdefault(game_id, []).append((record.kind, value, player_id))

    for game_id, seats in itertools.groupby(rows.iterator(chunk_size=2000), key=lambda r: r[0]):
        seats = list(seats)
        for _game, player_id, total, place, upper, yahtzee, bonuses in seats:
            offer(best_game, total, player_id, game_id)
            offer(most_yahtzees, (yahtzee == fifty) + bonuses, player_id, game_id)
            upper = upper or 0
            offer(best_upper, upper, player_id, game_id)
            mine = runs.setdefault(player_id, {})
            for kind, kept in ((UPPER_BONUS_RUN, upper >= threshold), (WIN_RUN, place == 1)):
                if kept:
                    length, since = mine.get(kind, (0, None))
                    mine[kind] = (length + 1, since or game_id)
                    offer(records[kind], length + 1, player_id, game_id, since or game_id)
                else:
                    mine[kind] = (0, None)
            mine_best = best.get(player_id)
            if mine_best is None or total > mine_best:
                if mine_best is not None:
                    best_of.setdefault(game_id, []).append(player_id)
                best[player_id] = total
        if len(seats) > 1:
            first, second = sorted((seat[2] for seat in seats), reverse=True)[:2]
            if first > second:
                winner = next(seat[1] for seat in seats if seat[2] == first)
                offer(records[WIN_MARGIN], first - second, winner, game_id)
    return Club(records, set_by, best_of, best, runs)


# How long the records are kept at most. A game finalized since makes new ones.
KEPT_FOR = 600


def club(mode=None, period=None) -> Club:
    """The records, from the cache while no game has been finalized since."""
    first, last = (period.first, period.last) if period else (None, None)
    key = f"dados:records:{mode}:{first}:{last}:{stats.finalized_state()}"
    if (found := cache.get(key)) is None:
        found = compute(mode, period)
        cache.set(key, found, KEPT_FOR)
    return found


def game_records(scorecard) -> dict:
    """What a finalized game set, over every game before it: the club's records it beat,
    as (kind, value, player id), and the players whose best game it was."""
    found = club()
    return {
        "club": found.set_by.get(scorecard.pk, []),
        "best_of": found.best_of.get(scorecard.pk, []),
    }


def would_set(scorecard) -> dict:
    """What a game in play, about to be finalized, would set over every finalized game:
    as game_records."""
    found = club()
    seats = list(scorecard.seats.all())
    places = scorecard.places
    made = []
    for seat, place in zip(seats, places, strict=True):
        totals = seat.totals
        yahtzees = (seat.yahtzee == rules.YAHTZEE_SCORE) + seat.yahtzee_bonuses
        runs = found.runs.get(seat.player_id, {})
        offers = [
            (BEST_GAME, totals.total),
            (MOST_YAHTZEES, yahtzees),
            (BEST_UPPER, totals.upper),
            (
                UPPER_BONUS_RUN,
                runs.get(UPPER_BONUS_RUN, (0, None))[0] + 1 if totals.upper_bonus else 0,
            ),
            (WIN_RUN, runs.get(WIN_RUN, (0, None))[0] + 1 if place == 1 else 0),
        ]
        for kind, value in offers:
            since = runs.get(kind, (0, None))[1] if kind in RUNS else None
            if _beats(found.records[kind], value, seat.player_id, since):
                made.append((kind, value, seat.player_id))
    totals = sorted(((s.totals.total, s.player_id) for s in seats), reverse=True)
    if len(totals) > 1 and totals[0][0] > totals[1][0]:
        margin = totals[0][0] - totals[1][0]
        if _beats(found.records[WIN_MARGIN], margin, totals[0][1]):
            made.append((WIN_MARGIN, margin, totals[0][1]))
    best_of = [
        seat.player_id
        for seat in seats
        if seat.player_id in found.best and seat.totals.total > found.best[seat.player_id]
    ]
    return {"club": made, "best_of": best_of}


def _beats(record: Record, value: int, player_id: int, since: int | None = None) -> bool:
    """Whether value beats a record that stands, as Record.offer would say: a run (that
    began in game `since`) that already holds the record alone only grows it."""
    if record.value is None or value <= record.value:
        return False
    mine = Holding(player_id, 0, since)
    return since is None or not all(_same_run(h, mine) for h in record.holders)


def said(made: dict, seats) -> list[dict]:
    """What a game set, for its page to word (card.html#records): the club's records, each
    with its holder's name, then «Mejor partida de …»."""
    names = {seat.player_id: seat.player.name for seat in seats}
    club_made = [
        {
            "kind": kind,
            "title": TITLES[kind],
            "value": value,
            "said": Record(kind).said(value),
            "name": names.get(player_id, ""),
        }
        for kind, value, player_id in made["club"]
    ]
    return club_made + [
        {"kind": "personal", "name": names.get(player_id, "")} for player_id in made["best_of"]
    ]


def personal(player, mode=None, period=None) -> dict:
    """A player's personal bests: their best game (total, game id), the average of their
    latest RECENT_GAMES games and their longest run of wins; one query, whatever the number
    of games."""
    seats = (
        Seat.objects.filter(stats.finalized(mode, period), player=player, total__isnull=False)
        .order_by("scorecard__finalized_at", "scorecard_id")
        .values_list("scorecard_id", "total", "place")
    )
    best = None
    recent = collections.deque(maxlen=RECENT_GAMES)
    longest = length = 0
    for game_id, total, place in seats.iterator(chunk_size=2000):
        if best is None or total > best["total"]:
            best = {"total": total, "scorecard_id": game_id}
        recent.append(total)
        length = length + 1 if place == 1 else 0
        longest = max(longest, length)
    return {
        "best": best,
        "recent": len(recent),
        "recent_average": stats.mean(sum(recent), len(recent)),
        "win_run": longest,
    }
