"""The card's sheet and its live patches: the same HTML for every viewer, rendered once per
version and served to every phone from Django's cache, as Rails' Turbo broadcasts render a
partial once for all its subscribers.

What a render contains depends on the card, its version (and, for a patch, the version
it starts from) and the language, never on who asks: there is no current user, no CSRF
token, no «you» in it. The sheet carries every control (the organizer's cell links,
«Deshacer», the turn's forms), each saying whom it is for; the page around it says who is
looking and shows them theirs (card.html, dados.css).

A render is kept under one key. The first phone to miss it claims the render (cache.add);
the others that miss meanwhile wait for it rather than render it again. A write renders
the patch its own answer brings, before the streams and polls of the table ask for it.
A stream never waits: its patches are rendered on the one thread that serves every stream
of its process (scorecards.live), where a sleep would stall them all; when another holds
the claim, it renders the patch itself, once for all the streams of its process.
"""

import functools
import hashlib
import time
from collections.abc import Callable

from django.core.cache import cache
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from accounts.names import names_html
from scorecards import bgstats, records, rules, services
from scorecards.forms import order_query
from scorecards.labels import (
    BONUS_BOX,
    box_label,
    box_name,
    box_short,
    breakable,
    short_names,
    signed,
)
from scorecards.models import (
    BOXES,
    Change,
    Scorecard,
    in_words,
    log_summary,
    without_usernames,
)
from scorecards.rules import Category

# A live page further behind than this many changes gets the whole sheet again.
PATCH_LIMIT = 20
# How long a render is kept: a table's phones ask for it within a second or two (a
# polling phone within 3 s). Short, so that the database cache stays well under its
# MAX_ENTRIES, past which every write culls it (dados/settings.py).
KEPT_FOR = 30
# How long a claim to render holds, and how long the others wait for it before they
# render it themselves (a render takes a few milliseconds; a claimer may have died).
CLAIM_FOR = 2
WAIT_FOR = 1.0
WAIT_STEP = 0.01


def key(card: dict, what: str) -> str:
    """The cache key of `what` (the sheet, a patch from a version) on the card at its
    version, in the language in use. The card's creation names it along with its id: a
    database made anew (a test's, a club's fresh start) has its own card 1, whose
    versions must not meet this one's."""
    stamp = card["created_at"].timestamp()
    return f"dados:{what}:{card['id']}:{stamp}:{card['version']}:{get_language()}"


def fields(scorecard) -> dict:
    """What key() reads, from a card."""
    return {name: getattr(scorecard, name) for name in CARD_FIELDS}


# What a live card's keys are made of, read alone when the answer may be in the cache.
CARD_FIELDS = ("id", "version", "created_at", "finalized_at")


def cached(card: dict, what: str) -> str | None:
    return cache.get(key(card, what))


def shared(
    card: dict, what: str, render: Callable[[], str], *, claim=True, wait=True
) -> tuple[str, bool]:
    """`what` on the card, from the cache, or rendered once for everyone: render() by the
    first to miss it, whom the others that miss meanwhile wait for. Whether it was found
    (True) or rendered here. Without `claim` (the write that made the version, which its
    phones ask for after it), it is rendered at once and kept. Without `wait` (a stream),
    it claims the render for the others, but renders at once if another holds the claim."""
    name = key(card, what)
    if (content := cache.get(name)) is not None:
        return content, True
    if claim and not cache.add(f"{name}:claim", 1, CLAIM_FOR) and wait:
        deadline = time.monotonic() + WAIT_FOR
        while time.monotonic() < deadline:
            time.sleep(WAIT_STEP)
            if (content := cache.get(name)) is not None:
                return content, True
    content = render()
    cache.set(name, content, KEPT_FOR)
    return content, False


def sheet(scorecard) -> str:
    """The card's whole sheet at its version, for everyone. Its people's names are part
    of its key (the card and its seats are read anyway): a name changed in «Mi perfil» or
    the admin shows at once, as it did before."""
    names = hashlib.blake2b(scorecard.organizer.name.encode(), digest_size=8)
    for seat in scorecard.seats.all():
        names.update(b"\0" + seat.player.name.encode())
    what = f"sheet:{names.hexdigest()}"
    return shared(fields(scorecard), what, lambda: render_sheet(scorecard))[0]


def render_sheet(scorecard, *, error=None) -> str:
    """The sheet rendered here: with a refusal's message, it is one write's answer alone."""
    return render_to_string("scorecards/card.html#sheet", sheet_context(scorecard, error=error))


def patch(scorecard, since: int, cells: list[dict], *, made=None, wait=True) -> tuple[str, bool]:
    """What changed after version `since` (the cells written then, cells_since), for
    everyone; and whether it came from the cache. `made`: asked by the write that made
    the version, before anyone else could (no claim), with the change it recorded (none
    for a roll), which the database need not be asked for. Without `wait`, asked by a
    stream, which never waits for another's render (shared)."""

    def render():
        context = parts(scorecard, since=since, changes=made) | {"cells": cells, "oob": True}
        return render_to_string("scorecards/card.html#patch", context)

    name = f"patch:{since}"
    return shared(fields(scorecard), name, render, claim=made is None, wait=wait)


def cell_id(seat, box) -> str:
    """A cell's id in the sheet, which patches swap and the outbox paints (data-cell)."""
    return f"c{seat.pk}-{box}"


def cell(seat, box, *, url=None) -> dict:
    """One box of one seat, its words and its picker's address ready: a sheet has 78 of
    them, and what the template would work out in a dozen lookups costs less here."""
    value = getattr(seat, box)
    label, name = box_label(box), seat.player.name
    said = _("sin anotar") if value is None else str(value)
    return {
        "seat": seat,
        "box": box,
        "id": cell_id(seat, box),
        "label": label,
        "name": name,
        "value": value,
        "written": "" if value is None else str(value),
        "blank": value is None,
        "scratched": value == 0,
        "state": " blank" if value is None else " scratched" if value == 0 else "",
        "value_said": said,
        "said": f"{label} — {name}: {said}",
        "url": url or reverse("box", args=[seat.scorecard_id, seat.pk, box]),
        # A Yahtzee written: the extra Yahtzee's picker (the joker order) is reached from it.
        "joker": (
            reverse("joker", args=[seat.scorecard_id, seat.pk])
            if box == Category.YAHTZEE and value is not None
            else ""
        ),
    }


def bonus_line(seat, totals: rules.Totals, *, links: bool) -> dict:
    """A seat's cell on the Yahtzee bonus line: how many extra Yahtzees, and the points they
    make; with `links` (the organizer's), the picker's and the joker's addresses and the
    words that name it."""
    count = seat.yahtzee_bonuses
    line = {
        "id": cell_id(seat, BONUS_BOX),
        "count": str(count),
        "points": totals.yahtzee_bonus,
    }
    if links:
        line["url"] = reverse("box", args=[seat.scorecard_id, seat.pk, BONUS_BOX])
        # The most its picker offers (the others disabled): without a 50, no more.
        line["limit"] = rules.bonus_line_limit(seat.scores, count)
        if seat.yahtzee is not None:
            line["joker"] = reverse("joker", args=[seat.scorecard_id, seat.pk])
        line["said"] = _("Bonus Yahtzee — %(name)s: %(count)s × 100") % {  # noqa: RUF001 (the msgid)
            "name": seat.player.name,
            "count": count,
        }
    return line


BOX_SLOT = "__box__"


def box_urls(seat) -> Callable[[str], str]:
    """The addresses of a seat's boxes, reverse()d once rather than 13 times: they differ
    only in their last part."""
    slot = f"/{BOX_SLOT}/"
    address = reverse("box", args=[seat.scorecard_id, seat.pk, BOX_SLOT])
    return lambda box: address.replace(slot, f"/{box}/")


def parts(scorecard, *, since=None, changes=None) -> dict:
    """What both the whole sheet and a patch show: the column headings, sums and positions,
    whose turn it is, the latest changes (in a patch from version `since`, the ones made
    after it, which the page adds to those it shows, unless given) and what is missing to
    finalize (the organizer's to see)."""
    seats = list(scorecard.seats.all())
    turn = scorecard.turn
    # The organizer's controls are in the sheet of a physical card in play.
    by_hand = not scorecard.is_finalized and not scorecard.is_digital
    columns = sheet_columns(scorecard, seats, turn, links=by_hand)
    if changes is None and since is None:
        changes = Change.objects.recent(scorecard)
    elif changes is None:
        changes = Change.objects.after(scorecard, since)
    changes = in_words(changes, seats, with_rolls=scorecard.is_digital)
    context = {
        "scorecard": scorecard,
        "seats": seats,
        "columns": columns,
        "changes": changes,
        "by_hand": by_hand,
        # The card's choice, the same for every viewer: each page says whether its viewer
        # follows it (card.html's viewer_style).
        "hides_totals": scorecard.hides_totals_now,
    }
    if turn is not None:
        context["turn"] = {"round": turn.round, "rounds": len(Category), "seat": turn.seat}
        if scorecard.is_digital:
            context["play"] = play(scorecard, turn.seat)
    if context["by_hand"]:
        context["problems"] = problems(seats)
        context["remaining"] = sum(len(Category) - seat.filled for seat in seats)
    if scorecard.is_finalized:
        context["log_summary"] = log_summary(changes, digital=scorecard.is_digital)
        context["result"] = result(seats)
    return context


def sheet_columns(scorecard, seats, turn, *, links: bool) -> list[dict]:
    """Each seat's column: its heading, sums, position and bonus line; with `links`, the
    organizer's addresses on its bonus line."""
    return [
        {
            "seat": seat,
            # Breakable between its syllables where a phone's column is too narrow for it.
            "short": breakable(short),
            "totals": totals,
            "place": place,
            "missing": max(0, rules.UPPER_BONUS_THRESHOLD - totals.upper),
            "turn": turn is not None and turn.seat == seat,
            # Whether the organizer's pickers say there is no bonus, or ask whether five
            # of a kind was an extra Yahtzee (picker.js reads it from the bonus line).
            "bonus_due": rules.yahtzee_bonus_due(seat.scores),
            "bonus": bonus_line(seat, totals, links=links),
            # «Ritmo del bonus», when the card shows it, from the first upper box written.
            "pace": pace(seat) if scorecard.show_bonus_pace else "",
        }
        for seat, totals, place, short in zip(
            seats,
            [seat.totals for seat in seats],
            scorecard.places,
            short_names([s.player.name for s in seats]),
            strict=True,
        )
    ]


def pace(seat) -> str:
    """A seat's «Ritmo del bonus» as its upper sum's cell shows it (labels.signed), or
    nothing while its upper boxes are all blank."""
    scores = seat.scores
    if all(scores[c] is None for c in rules.UPPER):
        return ""
    return signed(rules.bonus_pace(scores))


def play(scorecard, seat) -> dict:
    """A digital game's turn in progress: the dice of its last roll (those held now
    marked), the rolls left, and the boxes the dice may take with what each scores."""
    rolls = scorecard.turn_rolls
    faces = rolls[-1][0] if rolls else ""
    held = scorecard.turn_held
    dice = [int(face) for face in faces]
    extra = bool(dice) and rules.is_extra_yahtzee(dice, seat.scores)
    offered = rules.choices(dice, seat.scores) if dice else {}
    choices = [
        {"box": c.value, "label": box_name(c), "score": points} for c, points in offered.items()
    ]
    return {
        "seat": seat,
        "faces": faces,
        "dice": [
            {"position": i, "face": face, "held": str(i) in held}
            for i, face in enumerate(dice, start=1)
        ],
        "number": len(rolls),
        "rolls": rules.ROLLS,
        "left": rules.ROLLS - len(rolls),
        "choices": choices,
        # The boxes these dice score in first; apart, those they would only scratch.
        "scoring": [choice for choice in choices if choice["score"]],
        "scratching": [choice for choice in choices if not choice["score"]],
        "extra": extra,
        "bonus": extra and rules.yahtzee_bonus_due(seat.scores),
    }


def held(scorecard) -> str:
    """The answer to the phone that held or released a die of the turn in progress (the
    card's version moved by that alone): the version, for the page and its forms, and the
    dice as the others see them; not the dice it taps, which show its own taps. The other
    phones get the usual patch, the whole turn."""
    context = {"scorecard": scorecard, "play": play(scorecard, scorecard.turn.seat)}
    return render_to_string("scorecards/card.html#held", context)


def problems(seats) -> list[tuple[str, list[str]]]:
    """What stops the card from being finalized, per player: (name, reasons)."""
    return [(seat.player.name, problems) for seat in seats if (problems := seat.problems)]


def result(seats) -> dict:
    """Who won, with how much: one winner, or everyone tied in first place."""
    winners = [seat for seat in seats if seat.place == 1]
    return {
        "names": names_html(seat.player.name for seat in winners),
        "tied": len(winners) > 1,
        "total": winners[0].total if winners else None,
    }


def sheet_context(scorecard, *, error=None) -> dict:
    """What the card's whole sheet shows: its parts, and a row of cells per box."""
    context = parts(scorecard)
    context |= sheet_rows(context["seats"]) | {"error": error}
    if scorecard.is_finalized:
        context["rematch"] = rematch(scorecard)
        context["bgstats"] = bgstats.link(scorecard, context["changes"])
        made = records.game_records(scorecard)
        context["records_set"] = records.said(made, context["seats"])
    return context


def sheet_rows(seats) -> dict:
    """A row of cells per box: `upper`, then `lower`."""
    urls = [(seat, box_urls(seat)) for seat in seats]
    rows = [
        {
            "box": c.value,
            "label": box_name(c),
            "short": box_short(c),
            "cells": [cell(seat, c.value, url=url(c.value)) for seat, url in urls],
        }
        for c in Category
    ]
    for row in rows:
        row["key"] = row_key(row)
    upper = len(rules.UPPER)
    return {"upper": rows[:upper], "lower": rows[upper:]}


def row_key(row) -> str:
    """Everything a row of the sheet shows, in one string: card.html caches each row's
    render under it, so a sheet renders again only the rows that changed since (a write
    changes one). Two rows share it only when they show the same: the language, the box,
    and each cell's address, value, words (its player's name among them) and joker link."""
    parts = [get_language(), row["box"], row["label"], row["short"]]
    for c in row["cells"]:
        parts += [c["id"], c["written"], c["said"], c["url"], c["joker"]]
    return "\x1f".join(str(part) for part in parts)


def shared_context(scorecard) -> dict:
    """A shared game's public page (scorecards/shared.html): its final sheet's table, the
    result and the positions, with each player's public name (without_usernames), and
    nothing of the app around it: no log, no controls, no link."""
    seats = without_usernames(list(scorecard.seats.all()))
    columns = sheet_columns(scorecard, seats, None, links=False)
    ranked = sorted(columns, key=lambda column: (column["place"], column["seat"].order))
    return {
        "scorecard": scorecard,
        "seats": seats,
        "columns": columns,
        "ranked": ranked,
        "result": result(seats),
    } | sheet_rows(seats)


def rematch(finished) -> dict:
    """«Revancha» on a finished game (for its organizer and players to see): who would
    start, and the order page with the same players and mode, to decide «¿Quién
    empieza?» again."""
    players = services.rematch_seating(finished)
    query = order_query([p.pk for p in players], finished.mode)
    return {"starter": players[0], "order": reverse("scorecard_order") + "?" + query}


def picker(scorecard, box: str, seat=None, *, dice=()) -> dict:
    """What a box's picker shows (picker.html): the values rules.py allows, each with the
    points it adds (the bonus line's count of extra Yahtzees), whether a 0 scratches it,
    and, for a seat, its player, its value and its addresses; with five dice typed in
    («Con dados»), the score they make, or the extra Yahtzee they are. Without a seat, the
    copy the organizer's card page opens from a tap (picker.js fills in the player)."""
    bonus_line = box == BONUS_BOX
    points = rules.YAHTZEE_BONUS if bonus_line else None
    five = rules.five_of_a_kind(box)
    context = {
        "box": box,
        "label": box_label(box),
        "copy": seat is None,
        "values": [
            (value, f"+{value * points}" if points else "")
            for value in rules.allowed_values(box)
            if value != 0 or bonus_line
        ],
        "can_scratch": box not in (Category.CHANCE, BONUS_BOX),
        "bonus_line": bonus_line,
        "five": five,
        "five_face": five // rules.DICE if five else None,
        # An extra Yahtzee is entered from its own picker, reached from these two.
        "joker_box": box in (Category.YAHTZEE, BONUS_BOX),
        # «Con dados»: the score five dice make (the bonus line counts, it has none).
        "with_dice": not bonus_line,
        "faces": range(1, rules.FACES + 1),
        "dice": dice,
        "dice_text": "".join(str(d) for d in dice),
    }
    if seat is None:
        return context
    current = getattr(seat, box)
    rolled = len(dice) == rules.DICE and not bonus_line
    # An extra Yahtzee is placed by the joker order (and adds the +100 after a 50), not by
    # this picker, which would offer 0 in Full for 44444. The Yahtzee box's own picker
    # corrects that box.
    extra = rolled and box != Category.YAHTZEE and rules.is_extra_yahtzee(dice, seat.scores)
    due = rules.yahtzee_bonus_due(seat.scores)
    return context | {
        "name": seat.player.name,
        "cell": cell_id(seat, box),
        "current": current,
        "address": reverse("box", args=[scorecard.pk, seat.pk, box]),
        "joker": reverse("joker", args=[scorecard.pk, seat.pk]) if seat.yahtzee is not None else "",
        "refused": bonus_line and not due,
        "limit": rules.bonus_line_limit(seat.scores, current) if bonus_line else None,
        "asks": due,
        "proposed": rules.score(dice, box) if rolled and not extra else None,
        "extra_face": dice[0] if extra else None,
    }


def picker_copies() -> str:
    """Every box's picker with no player, as the organizer's card page carries them for a
    tap to open at once (static/js/picker.js fills in the player): the same for every card
    and viewer, so rendered once per language by each process (a deploy restarts it)."""
    return _picker_copies(get_language())


@functools.cache
def _picker_copies(language: str) -> str:
    pickers = [picker(None, box) for box in BOXES]
    return render_to_string("scorecards/card.html#picker_copies", {"pickers": pickers})


def cells_since(scorecard, since) -> list[dict] | None:
    """The cells the changes after version `since` wrote, or None when those changes do
    not account for every version in between (a finalize, what the table sees changed,
    or a page too far behind; in a digital game a version without a change is a roll or
    dice held, which the patch's turn shows)."""
    if scorecard.is_finalized or not 0 <= since < scorecard.version <= since + PATCH_LIMIT:
        return None
    if since < scorecard.settings_version:
        return None
    changes = Change.objects.filter(
        scorecard=scorecard, version__gt=since, version__lte=scorecard.version
    ).values_list("items", flat=True)
    changes = list(changes)
    if len(changes) != scorecard.version - since and not scorecard.is_digital:
        return None
    written = dict.fromkeys((seat_id, box) for items in changes for seat_id, box, *_ in items)
    return [
        cell(seat, box)
        for seat_id, box in written
        if (seat := scorecard.seat(seat_id)) is not None and box != BONUS_BOX
    ]


def stream_patch(card: dict, since: int) -> tuple[int, str] | None:
    """For the card's stream (scorecards.live), whose page shows version `since`: the
    patch that brings it to the card's version, and that version (from the cache, or
    rendered once for everyone); None when the page must ask its poll for the whole
    sheet (a page too far behind, a finalized card, a card gone). It runs on the thread
    that serves every stream of its process (scorecards.live), so it never waits for a
    render claimed elsewhere: rendered here, it is one render more for the club, where a
    wait would hold back every stream of the process."""
    if (content := cached(card, f"patch:{since}")) is not None:
        return card["version"], content
    scorecard = Scorecard.objects.with_seats().filter(pk=card["id"]).first()
    if scorecard is None or (cells := cells_since(scorecard, since)) is None:
        return None
    return scorecard.version, patch(scorecard, since, cells, wait=False)[0]
