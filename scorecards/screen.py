"""«Pantalla del club»: every card in play and tonight's results, for a TV in the room.

What the board shows is named by `state()`, one query: the cards in play with their
versions, and the games finished today (the club's clock, settings.TIME_ZONE). A screen
polls with the state it shows; while nothing moved, that one query is the whole answer.
When something did, the board is rendered once for that state and shared by every screen
through Django's cache, as a card's sheet is (scorecards.sheets): no screen renders a
sheet, nor a board of its own. A board is made of parts kept apart in the cache, each
rendered once: a table per card version, and tonight's results per game finished; so
that a write on one card renders one table, whatever the number of tables.
"""

import hashlib
from datetime import datetime, time
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import get_language

from scorecards import records, sheets
from scorecards.models import Scorecard, seats_in_order
from scorecards.rules import Category

# How long a board, and each of its parts, is kept: screens ask for a board within a poll
# of its state, and the next boards are made of its parts; a part not asked for meanwhile
# is rendered again. Short, as the sheets' (sheets.KEPT_FOR): a club night's writes make a
# new table each, and the database cache must stay well under its MAX_ENTRIES.
KEPT_FOR = 30
# Tonight's results shown at most; the others are counted.
RESULTS_SHOWN = 5


def tonight_began() -> datetime:
    """The start of today on the club's clock: a game finished since is tonight's."""
    return timezone.make_aware(datetime.combine(timezone.localdate(), time.min))


class Shown(NamedTuple):
    """A card the board shows, as state() read it."""

    pk: int
    version: int
    created_at: datetime
    finalized_at: datetime | None


class State(NamedTuple):
    """What the board shows: its digest, which the screens compare, and its cards (those
    in play, then tonight's finished games), oldest first."""

    digest: str
    cards: list[Shown]
    day: str

    @property
    def in_play(self) -> list[Shown]:
        return [card for card in self.cards if card.finalized_at is None]

    @property
    def finished(self) -> list[Shown]:
        return [card for card in self.cards if card.finalized_at is not None]


def state() -> State:
    """What the board shows now, in one query: each card in play and its version, the
    games finished today, the day and the language. A database made anew (a club's fresh
    start) numbers its cards again: their creation is part of it."""
    since = tonight_began()
    fields = ("pk", "version", "created_at", "finalized_at")
    # Two halves, so that each finds its cards by an index rather than by reading every
    # game the club ever played: the cards in play by theirs (scorecard_in_progress).
    in_play = Scorecard.objects.in_progress().order_by().values_list(*fields)
    tonight = Scorecard.objects.filter(finalized_at__gte=since).order_by().values_list(*fields)
    cards = sorted((Shown(*row) for row in in_play.union(tonight, all=True)), key=_age)
    day = f"{since.date()}:{get_language()}"
    digest = hashlib.blake2b(day.encode(), digest_size=10)
    for card in cards:
        digest.update(f";{_name(card)}".encode())
    return State(digest.hexdigest(), cards, day)


def _age(card: Shown):
    return card.created_at, card.pk


def _name(card: Shown) -> str:
    """A card at its version: its id, version and creation, and whether it is over."""
    over = "f" if card.finalized_at else ""
    return f"{card.pk}.{card.version}.{card.created_at.timestamp()}{over}"


def board(shown: State) -> str:
    """The board at state `shown`, rendered once for every screen: of the cards in play,
    each table rendered once per version (the others' renders kept from the boards
    before), and tonight's results once per game finished. What it reads may be newer
    than `shown` (a write in between): the next poll then finds a newer state."""
    key = f"dados:screen:{shown.digest}"
    if (content := cache.get(key)) is not None:
        return content
    language = get_language()
    keys = {card.pk: f"dados:screen-table:{_name(card)}:{language}" for card in shown.in_play}
    tables = cache.get_many(keys.values())
    missing = [pk for pk, name in keys.items() if name not in tables]
    made = {}
    for card in Scorecard.objects.filter(pk__in=missing).prefetch_related(seats_in_order()):
        made[keys[card.pk]] = render_to_string("scorecards/screen.html#table", table(card))
    if made:
        cache.set_many(made, KEPT_FOR)
    tables |= made
    context = {
        "state": shown.digest,
        # A card gone since state() read it has no table.
        "tables": [tables[name] for name in keys.values() if name in tables],
        "tonight": tonight(shown),
    }
    content = render_to_string("scorecards/screen.html#board", context)
    cache.set(key, content, KEPT_FOR)
    return content


def tonight(shown: State) -> str:
    """Tonight's results and the club's newest record, rendered once per game finished
    (the record changes only with one, records.club)."""
    finished = sorted(shown.finished, key=lambda card: card.finalized_at, reverse=True)
    names = ",".join(_name(card) for card in finished)
    key = f"dados:screen-tonight:{shown.day}:{hashlib.blake2b(names.encode()).hexdigest()}"
    if (content := cache.get(key)) is None:
        context = tonight_context([card.pk for card in finished])
        content = render_to_string("scorecards/screen.html#tonight", context)
        cache.set(key, content, KEPT_FOR)
    return content


def tonight_context(pks) -> dict:
    """The games finished tonight (pks, newest first) with their seats, in two queries;
    and the club's newest record."""
    shown = pks[:RESULTS_SHOWN]
    games = Scorecard.objects.filter(pk__in=shown).prefetch_related(seats_in_order())
    games = sorted(games, key=lambda card: shown.index(card.pk))
    return {
        "results": [result(card) for card in games],
        "more_results": len(pks) - len(shown),
        "record": newest_record(),
    }


def table(card) -> dict:
    """A card in play as the board shows it (its table): its players in turn order with
    their totals and places, and whose turn it is (Scorecard.turn, the hint the card page
    gives too)."""
    seats = list(card.seats.all())
    turn = card.turn
    return {
        "digital": card.is_digital,
        # «Ocultar totales hasta el final»: the room sees no more than the players' phones.
        "hidden": card.hide_totals,
        "players": [
            {
                "name": seat.player.name,
                "total": seat.totals.total,
                "place": place,
                "turn": turn is not None and turn.seat == seat,
            }
            for seat, place in zip(seats, card.places, strict=True)
        ],
        "turn": turn and {"round": turn.round, "rounds": len(Category), "seat": turn.seat},
    }


def result(card) -> dict:
    """A game finished tonight: when, who won with how much (sheets.result, as its page
    says it), and everyone's totals by place."""
    seats = sorted(card.seats.all(), key=lambda seat: (seat.place, seat.order))
    return {
        "at": card.finalized_at,
        "winners": sheets.result(seats),
        "others": [seat for seat in seats if seat.place != 1],
    }


def newest_record() -> dict | None:
    """The club's newest record: the last one a game beat (records.Club.set_by, in the
    order the games were finished; of those it beat, the first «Récords» lists); before
    any was beaten, the highest game."""
    club = records.club()
    if club.set_by:
        game_id, made = next(reversed(club.set_by.items()))
        kind, value, player_id = min(made, key=lambda m: list(records.TITLES).index(m[0]))
    else:
        best = club.records[records.BEST_GAME]
        if best.value is None:
            return None
        kind, value = best.kind, best.value
        player_id, game_id = best.holders[0].player_id, best.holders[0].game_id
    player = get_user_model().objects.filter(pk=player_id).first()
    at = Scorecard.objects.filter(pk=game_id).values_list("finalized_at", flat=True).first()
    return {
        "title": records.TITLES[kind],
        "said": records.Record(kind).said(value),
        "name": player.name if player else "",
        "at": at,
    }
