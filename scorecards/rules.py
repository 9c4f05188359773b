"""Yahtzee rules for Dados: scoring, totals, card consistency and the forced joker.

Pure standard-library Python, so the rules can be used and tested without Django.
The card's words (box names, problem texts) are in scorecards.labels.
"""

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

__all__ = [
    "BONUS_LINE",
    "DICE",
    "FACES",
    "LOWER",
    "MAX_YAHTZEE_BONUSES",
    "ROLLS",
    "UPPER",
    "UPPER_BONUS",
    "UPPER_BONUS_THRESHOLD",
    "YAHTZEE_BONUS",
    "YAHTZEE_SCORE",
    "Category",
    "Problem",
    "Totals",
    "allowed_scores",
    "allowed_values",
    "bonus_line_limit",
    "bonus_pace",
    "choices",
    "five_of_a_kind",
    "inconsistencies",
    "is_extra_yahtzee",
    "joker_boxes",
    "joker_score",
    "positions",
    "score",
    "totals",
    "turn",
    "yahtzee_bonus_due",
]


class Category(StrEnum):
    """A box on the scorecard, in card order."""

    ONES = "ones"
    TWOS = "twos"
    THREES = "threes"
    FOURS = "fours"
    FIVES = "fives"
    SIXES = "sixes"
    THREE_OF_A_KIND = "three_of_a_kind"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE = "full_house"
    SMALL_STRAIGHT = "small_straight"
    LARGE_STRAIGHT = "large_straight"
    YAHTZEE = "yahtzee"
    CHANCE = "chance"

    @property
    def face(self) -> int | None:
        """Die face an upper box counts (ones is 1 ... sixes is 6); None for lower boxes."""
        return _FACE_OF.get(self)


UPPER: tuple[Category, ...] = (
    Category.ONES,
    Category.TWOS,
    Category.THREES,
    Category.FOURS,
    Category.FIVES,
    Category.SIXES,
)
LOWER: tuple[Category, ...] = (
    Category.THREE_OF_A_KIND,
    Category.FOUR_OF_A_KIND,
    Category.FULL_HOUSE,
    Category.SMALL_STRAIGHT,
    Category.LARGE_STRAIGHT,
    Category.YAHTZEE,
    Category.CHANCE,
)

_FACE_OF = {category: face for face, category in enumerate(UPPER, start=1)}

DICE = 5
FACES = 6
# Rolls in a turn: the first, then up to two more of the dice not kept.
ROLLS = 3
UPPER_BONUS = 35
UPPER_BONUS_THRESHOLD = 63
YAHTZEE_SCORE = 50
YAHTZEE_BONUS = 100
# Each extra Yahtzee must be placed in another box, and there are only 12 of them.
MAX_YAHTZEE_BONUSES = len(Category) - 1

_SMALL_RUNS = (frozenset({1, 2, 3, 4}), frozenset({2, 3, 4, 5}), frozenset({3, 4, 5, 6}))
_LARGE_RUNS = (frozenset({1, 2, 3, 4, 5}), frozenset({2, 3, 4, 5, 6}))

_SUMS = frozenset(range(DICE, DICE * FACES + 1))
_ALLOWED: dict[Category, frozenset[int]] = {
    **{c: frozenset(c.face * n for n in range(DICE + 1)) for c in UPPER},
    Category.THREE_OF_A_KIND: _SUMS | {0},
    Category.FOUR_OF_A_KIND: _SUMS | {0},
    Category.FULL_HOUSE: frozenset({0, 25}),
    Category.SMALL_STRAIGHT: frozenset({0, 30}),
    Category.LARGE_STRAIGHT: frozenset({0, 40}),
    Category.YAHTZEE: frozenset({0, YAHTZEE_SCORE}),
    # Any roll qualifies for Chance, so it can never be scratched.
    Category.CHANCE: _SUMS,
}


def _is_int(value: object) -> bool:
    """True for real ints; bool is an int subclass but never a die or a score."""
    return isinstance(value, int) and not isinstance(value, bool)


def _is_face(value: object) -> bool:
    return _is_int(value) and 1 <= value <= FACES


def _roll(dice: Iterable[int]) -> tuple[int, ...]:
    """Return the dice as a tuple, or raise ValueError unless they are five ints from 1 to 6."""
    try:
        roll = tuple(dice)
    except TypeError:
        roll = None
    if roll is None or len(roll) != DICE or not all(map(_is_face, roll)):
        raise ValueError(f"A roll is {DICE} dice from 1 to {FACES}, not {dice!r}.")
    return roll


def _face(face: int) -> int:
    """Return face, or raise ValueError unless it is an int from 1 to 6."""
    if not _is_face(face):
        raise ValueError(f"A die shows 1 to {FACES}, not {face!r}.")
    return face


def _card(scores: Mapping[Category | str, int | None]) -> dict[Category, int | None]:
    """Every box of the card keyed by Category, with None for blank or missing boxes."""
    card: dict[Category, int | None] = dict.fromkeys(Category)
    for key, value in scores.items():
        category = Category(key)
        if value is not None and not _is_int(value):
            raise ValueError(f"A score is an int or None, not {value!r} in {category}.")
        card[category] = value
    return card


def _bonus_count(yahtzee_bonuses: int) -> int:
    """Return the bonus count, or raise ValueError unless it is an int."""
    if not _is_int(yahtzee_bonuses):
        raise ValueError(f"The Yahtzee bonus count is an int, not {yahtzee_bonuses!r}.")
    return yahtzee_bonuses


def score(dice: Iterable[int], category: Category | str, *, joker: bool = False) -> int:
    """Points five dice score in a box; joker lets a five of a kind fill Full and straights."""
    roll = _roll(dice)
    category = Category(category)
    counts = Counter(roll)
    faces = set(counts)
    most = max(counts.values())
    wild = joker and most == DICE

    if category.face is not None:
        return category.face * counts[category.face]
    match category:
        case Category.THREE_OF_A_KIND:
            return sum(roll) if most >= 3 else 0
        case Category.FOUR_OF_A_KIND:
            return sum(roll) if most >= 4 else 0
        case Category.FULL_HOUSE:
            return 25 if wild or sorted(counts.values()) == [2, 3] else 0
        case Category.SMALL_STRAIGHT:
            return 30 if wild or any(run <= faces for run in _SMALL_RUNS) else 0
        case Category.LARGE_STRAIGHT:
            return 40 if wild or faces in _LARGE_RUNS else 0
        case Category.YAHTZEE:
            return YAHTZEE_SCORE if most == DICE else 0
        case _:
            return sum(roll)


def joker_score(face: int, category: Category | str) -> int:
    """Points an extra five of a kind of face scores in a box under the joker rule."""
    return score((_face(face),) * DICE, category, joker=True)


# What a joker leaves in each box: 5 x face in its own upper box, 0 in another upper box,
# the dice sum in three and four of a kind and Chance, the fixed prize in Full and straights.
_JOKER_VALUES: dict[Category, frozenset[int]] = {
    c: frozenset(joker_score(f, c) for f in range(1, FACES + 1))
    for c in Category
    if c != Category.YAHTZEE
}


def allowed_scores(category: Category | str) -> frozenset[int]:
    """Every value a real roll can leave in a box, joker values and scratches included."""
    return _ALLOWED[Category(category)]


# The card's line of extra Yahtzees: it holds how many, not points.
BONUS_LINE = "yahtzee_bonuses"


def allowed_values(box: str) -> list[int]:
    """What a box of the card may hold, in the order a picker offers it: a category's
    scores, or the bonus line's count of extra Yahtzees."""
    if box == BONUS_LINE:
        return list(range(MAX_YAHTZEE_BONUSES + 1))
    return sorted(allowed_scores(box))


def bonus_line_limit(scores: Mapping[Category | str, int | None], count: int) -> int:
    """The most extra Yahtzees the bonus line may be set to now, from `count`: any number
    after a 50 in Yahtzee; without it there is no bonus, so the line may only go down."""
    return MAX_YAHTZEE_BONUSES if yahtzee_bonus_due(scores) else count


def five_of_a_kind(box: str) -> int | None:
    """The score in an upper box that only five of its face make (15 in Treses): once a
    player has 50 in Yahtzee, that may be an extra Yahtzee, worth +100 (the picker asks).
    None for the other boxes, where a score says nothing of five of a kind."""
    face = _FACE_OF.get(box)
    return face * DICE if face else None


@dataclass(frozen=True, slots=True)
class Totals:
    """The sums at the foot of a card."""

    upper: int
    upper_bonus: int
    lower: int
    yahtzee_bonus: int
    total: int = field(init=False)

    def __post_init__(self) -> None:
        # Derived here so a Totals can never disagree with its own parts.
        object.__setattr__(
            self, "total", self.upper + self.upper_bonus + self.lower + self.yahtzee_bonus
        )


def totals(scores: Mapping[Category | str, int | None], yahtzee_bonuses: int = 0) -> Totals:
    """Section sums and bonuses of a card; blank boxes count as 0."""
    card = _card(scores)
    if _bonus_count(yahtzee_bonuses) < 0:
        raise ValueError(f"The Yahtzee bonus count cannot be negative: {yahtzee_bonuses}.")
    upper = sum(card[c] or 0 for c in UPPER)
    return Totals(
        upper=upper,
        upper_bonus=UPPER_BONUS if upper >= UPPER_BONUS_THRESHOLD else 0,
        lower=sum(card[c] or 0 for c in LOWER),
        yahtzee_bonus=YAHTZEE_BONUS * yahtzee_bonuses,
    )


# Three of each face is the pace of the upper bonus: 3 * (1 + 2 + ... + 6) is exactly 63.
_PACE_DICE = 3


def bonus_pace(scores: Mapping[Category | str, int | None]) -> int:
    """How far the upper boxes filled so far are above (+) or below (-) three of each face
    («Ritmo del bonus»): 0 is on course for the bonus. A scratched box (0) is filled, and
    counts -3 * its face; a blank box does not count."""
    card = _card(scores)
    return sum(card[c] - _PACE_DICE * c.face for c in UPPER if card[c] is not None)


class Problem(NamedTuple):
    """One reason a card could not come from legal play, as data a UI can word in any language.

    kind is one of: impossible_score (category, value), negative_bonuses,
    bonus_without_yahtzee (bonuses), too_many_bonuses (bonuses, capacity =
    MAX_YAHTZEE_BONUSES), bonuses_exceed_jokers (bonuses, capacity = boxes able to hold
    a joker).
    """

    kind: str
    category: Category | None = None
    value: int | None = None
    bonuses: int = 0
    capacity: int = 0


def inconsistencies(
    scores: Mapping[Category | str, int | None], yahtzee_bonuses: int = 0
) -> list[Problem]:
    """Why a card could not come from legal play, as data; empty when consistent."""
    card = _card(scores)
    bonuses = _bonus_count(yahtzee_bonuses)
    problems = [
        Problem("impossible_score", category=category, value=value)
        for category, value in card.items()
        if value is not None and value not in _ALLOWED[category]
    ]
    if bonuses < 0:
        problems.append(Problem("negative_bonuses", bonuses=bonuses))
    if bonuses > 0 and not yahtzee_bonus_due(card):
        problems.append(Problem("bonus_without_yahtzee", bonuses=bonuses))
    # Every bonus is an extra Yahtzee that had to be placed, as a joker, in another box.
    joker_filled = sum(
        1
        for category, value in card.items()
        if category != Category.YAHTZEE and value in _JOKER_VALUES[category]
    )
    if bonuses > MAX_YAHTZEE_BONUSES:
        problems.append(Problem("too_many_bonuses", bonuses=bonuses, capacity=MAX_YAHTZEE_BONUSES))
    elif bonuses > joker_filled:
        problems.append(Problem("bonuses_exceed_jokers", bonuses=bonuses, capacity=joker_filled))
    return problems


def is_extra_yahtzee(dice: Iterable[int], scores: Mapping[Category | str, int | None]) -> bool:
    """Whether a roll is an extra Yahtzee on this card: five of a kind once the Yahtzee box
    is filled, with 50 or with 0. The joker order then places it (joker_boxes)."""
    return len(set(_roll(dice))) == 1 and _card(scores)[Category.YAHTZEE] is not None


def yahtzee_bonus_due(scores: Mapping[Category | str, int | None]) -> bool:
    """Whether an extra Yahtzee on this card earns the +100: only after a 50 in Yahtzee."""
    return _card(scores)[Category.YAHTZEE] == YAHTZEE_SCORE


def joker_boxes(face: int, scores: Mapping[Category | str, int | None]) -> frozenset[Category]:
    """Free boxes an extra five of a kind of face may take under the forced joker rule.

    The own upper box comes first, then any free lower box, then any free upper box.
    Raises ValueError while the Yahtzee box is blank: the roll is then an ordinary
    Yahtzee and may go in any box.
    """
    own = UPPER[_face(face) - 1]
    card = _card(scores)
    if card[Category.YAHTZEE] is None:
        raise ValueError("The joker applies only once the Yahtzee box is filled.")
    free = {category for category, value in card.items() if value is None}
    for tier in ((own,), LOWER, UPPER):
        if choices := free.intersection(tier):
            return frozenset(choices)
    return frozenset()


def choices(
    dice: Iterable[int], scores: Mapping[Category | str, int | None]
) -> dict[Category, int]:
    """The boxes a roll may take on this card, in card order, each with what it scores.

    Every free box, 0 where the roll does not fit; but an extra five of a kind (the
    Yahtzee box already used) only the boxes the joker order allows, at joker scores.
    """
    roll = _roll(dice)
    card = _card(scores)
    if is_extra_yahtzee(roll, card):
        allowed = joker_boxes(roll[0], card)
        return {c: joker_score(roll[0], c) for c in Category if c in allowed}
    return {c: score(roll, c) for c, value in card.items() if value is None}


def positions(totals: Iterable[int]) -> list[int]:
    """1-based places in input order; ties share a place and the next place is skipped."""
    totals = list(totals)
    # Equal totals keep the first place their value reaches in descending order.
    place: dict[int, int] = {}
    for index, total in enumerate(sorted(totals, reverse=True), start=1):
        place.setdefault(total, index)
    return [place[total] for total in totals]


def turn(filled: Iterable[int]) -> tuple[int, int] | None:
    """Whose turn it is, from how many boxes each player has filled, in seating order:
    (round, 0-based seat); None once every box is filled.

    Everyone plays one box a round, in seating order: the first player with the fewest
    boxes filled is the one to play, in the round after those boxes.
    """
    filled = list(filled)
    fewest = min(filled, default=len(Category))
    if fewest >= len(Category):
        return None
    return fewest + 1, filled.index(fewest)
