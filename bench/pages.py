"""What the bench's phones read in the app's pages and answers, as a browser, htmx and
the page's script would: a tag's attributes, a form's fields, and a digital game's turn
(whose it is, the dice, what «Tirar» and «Anotar» send) with the move a phone makes.

Plain functions on HTML text, without Locust (whose import patches the whole process):
bench/load.py plays with them, and tests/test_bench.py plays a whole digital game with
them through Django's test client, which a short bench run never gets to finish.
"""

import html
import re
from collections import Counter
from dataclasses import dataclass, field

TAG = r"<{}\b([^>]*)>"
# name="value", or a bare name (disabled, required): its value is "".
ATTRIBUTE = re.compile(r'([\w:-]+)(?:="([^"]*)")?')
HEADS = re.compile(r'<tr id="row-players"[^>]*>(.*?)</tr>', re.S)
SECTION = re.compile(r'<section id="turn"[^>]*>(.*?)</section>', re.S)
FORM = re.compile(r"<form\b[^>]*>.*?</form>", re.S)
SCORE = re.compile(r'class="choice-score">(\d+)<')
DICE, ROLLS = 5, 3


def tags(text: str, name: str) -> list[dict]:
    """The attributes of every `name` tag in the HTML text."""
    return [
        {key: html.unescape(value) for key, value in ATTRIBUTE.findall(attributes)}
        for attributes in re.findall(TAG.format(name), text or "")
    ]


def hidden(text: str) -> list[tuple[str, str]]:
    """The hidden fields a browser sends (not the disabled ones)."""
    return [
        (i["name"], i.get("value", ""))
        for i in tags(text, "input")
        if i.get("type") == "hidden" and "name" in i and "disabled" not in i
    ]


@dataclass
class Turn:
    """A digital card as an answer (a page, a sheet or a patch) shows it to one phone."""

    seat: int | None = None  # whose turn, in seating order; None once the game is over
    shown: str = ""  # the version the page shows (#sheet-version, what its poll sends)
    version: str = ""  # the version the turn's forms send
    dice: str = ""  # the dice shown, "" before the turn's first roll
    kept: list[str] = field(default_factory=list)  # the positions held (1-based)
    roll: bool = False  # «Tirar» is offered (to the turn's player: the sheet is everyone's)
    boxes: dict[str, int] = field(default_factory=dict)  # «Anotar»: free box -> its score

    @property
    def over(self) -> bool:
        return self.seat is None


def read_turn(text: str, seat: int | None = None) -> Turn | None:
    """The turn an answer shows; None if it shows neither the card's headings nor, in a
    patch without a box written (a roll: the headings are as they were), the turn of
    `seat`, the one the phone showed (a 204, an error)."""
    heads = HEADS.search(text or "")
    if heads is not None:
        columns = tags(heads[1], "th")[1:]  # after the «Casilla» heading
        seat = next(
            (i for i, th in enumerate(columns) if "turn" in th.get("class", "").split()), None
        )
    elif seat is None or SECTION.search(text or "") is None:
        return None
    shown = next(
        (i.get("value", "") for i in tags(text, "input") if i.get("id") == "sheet-version"), ""
    )
    turn = Turn(seat=seat, shown=shown)
    section = SECTION.search(text) if seat is not None else None
    for form in FORM.findall(section[1] if section else ""):
        classes = tags(form, "form")[0].get("class", "").split()
        inputs = tags(form, "input")
        values = {i["name"]: i.get("value", "") for i in inputs if "name" in i}
        turn.version = values.get("version", turn.version)
        if "roll-form" in classes:
            turn.dice = values.get("dados", "")
            turn.kept = [
                i["value"] for i in inputs if i.get("name") == "guardar" and "disabled" not in i
            ]
            turn.roll = any("roll-button" in b.get("class", "") for b in tags(form, "button"))
        elif "score-form" in classes:
            offered = [i["value"] for i in inputs if i.get("name") == "casilla"]
            turn.boxes = dict(zip(offered, map(int, SCORE.findall(form)), strict=True))
    return turn


def keep(dice: str) -> list[str]:
    """The dice to hold: those of the most common face (the higher on a tie), at most four."""
    counts = Counter(dice)
    face = max(counts, key=lambda f: (counts[f], f))
    return [str(i) for i, f in enumerate(dice, start=1) if f == face][: DICE - 1]


def move(turn: Turn) -> tuple[str, list[tuple[str, str]]] | None:
    """What the turn's phone sends next, as the page's forms do: («roll», «Tirar»'s
    fields) while rolls are left and the dice are not five of a kind, holding the most
    common face; then («score», «Anotar»'s fields) in the box that scores most (the first
    offered on a tie). None if this phone is offered neither."""
    if turn.roll and (not turn.dice or len(set(turn.dice)) > 1):
        held = keep(turn.dice) if turn.dice else []
        return "roll", [
            ("version", turn.version),
            ("dados", turn.dice),
            *(("guardar", p) for p in held),
        ]
    if turn.boxes:
        best = max(turn.boxes.values())
        box = next(b for b, points in turn.boxes.items() if points == best)
        return "score", [("version", turn.version), ("casilla", box)]
    return None
