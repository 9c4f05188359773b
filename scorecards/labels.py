"""The card's words in the active language: box names, the bonus line and rules' problems."""

import itertools
import re

from django.utils.text import get_text_list
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from accounts.names import fold
from scorecards import rules
from scorecards.rules import Category

# The bonus count line is edited like a box, but it is not a rules.Category.
BONUS_BOX = rules.BONUS_LINE

BOX_LABELS = {
    Category.ONES: _("Unos"),
    Category.TWOS: _("Doses"),
    Category.THREES: _("Treses"),
    Category.FOURS: _("Cuatros"),
    Category.FIVES: _("Cincos"),
    Category.SIXES: _("Seises"),
    Category.THREE_OF_A_KIND: _("Trío"),
    Category.FOUR_OF_A_KIND: _("Póquer"),
    Category.FULL_HOUSE: _("Full"),
    Category.SMALL_STRAIGHT: _("Escalera pequeña"),
    Category.LARGE_STRAIGHT: _("Escalera grande"),
    Category.YAHTZEE: _("Yahtzee"),
    Category.CHANCE: _("Libre (Chance)"),
}
BONUS_LABEL = _("Bonus Yahtzee")
# What a phone's narrow box column shows; the full name stays in the accessible name.
SHORT_LABELS = {
    Category.SMALL_STRAIGHT: _("Esc. peq."),
    Category.LARGE_STRAIGHT: _("Esc. gde."),
    Category.CHANCE: _("Libre"),
}
# A first name longer than this is cut where an initial must follow it, so that the
# initial still fits a phone's column («Guil. A.»).
SHORT_NAME = 5


def box_name(category: Category | str) -> str:
    """A box's name in the active language."""
    return str(BOX_LABELS[Category(category)])


def box_short(category: Category | str) -> str:
    """A box's name as the narrow box column shows it."""
    category = Category(category)
    return str(SHORT_LABELS.get(category, BOX_LABELS[category]))


def short_names(names: list[str]) -> list[str]:
    """Column headings for a phone: the first name where no one else at the card has one
    that reads alike («Dolores» for «Dolores Ibarra»; the column shows as many of its
    letters as fit); «Ana M.» and «Ana L.» for two Anas, and the whole name if that still
    reads alike."""
    options = [_short_name_options(name) for name in names]
    chosen = [0] * len(names)
    for _step in range(2):
        shorts = [fold(option[c]) for option, c in zip(options, chosen, strict=True)]
        for i, short in enumerate(shorts):
            if shorts.count(short) > 1:
                chosen[i] = min(chosen[i] + 1, len(options[i]) - 1)
    return [option[c] for option, c in zip(options, chosen, strict=True)]


def _short_name_options(name: str) -> list[str]:
    """A name's headings, shortest first."""
    words = name.split() or [name]
    first = words[0]
    if len(words) == 1:
        return [first, name]
    cut = first if len(first) <= SHORT_NAME else first[: SHORT_NAME - 1] + "."
    return [first, f"{cut} {words[1][0]}.", name]


# Where a heading may break a name over two lines: between its syllables, as Spanish
# splits them. Vowels side by side stay together (a diphthong, or a hiatus left whole);
# these pairs of consonants begin a syllable together («pla», «tre», «cho», «lla»).
VOWELS = frozenset("aeiouáéíóúàèìòùâêîôûäëïöü")
ONSETS = frozenset(
    {"pr", "br", "tr", "dr", "cr", "kr", "gr", "fr", "pl", "bl", "cl", "kl", "gl", "fl"}
    | {"ch", "ll", "rr"}
)
SOFT_HYPHEN = "\u00ad"
# The fewest letters a piece of a word keeps at either side of a break.
PIECE = 2


def breakable(name: str) -> str:
    """A name with a soft hyphen between the syllables of its words («Ma­xi­mi­lia­no»): a
    phone's column too narrow for it breaks it over two lines there, rather than cut it."""
    return re.sub(r"[^\W\d_]{4,}", lambda word: _hyphenated(word.group()), name)


def _hyphenated(word: str) -> str:
    lower = word.lower()
    vowels = [m.span() for m in re.finditer(f"[{''.join(VOWELS)}]+", lower)]
    cuts = []
    for (_start, end), (start, _end) in itertools.pairwise(vowels):
        cluster = lower[end:start]
        if len(cluster) == 1:
            cut = end
        elif len(cluster) == 2:
            cut = end if cluster in ONSETS else end + 1
        else:
            cut = start - 2 if cluster[-2:] in ONSETS else start - 1
        if PIECE <= cut <= len(word) - PIECE:
            cuts.append(cut)
    pieces = zip([0, *cuts], [*cuts, len(word)], strict=True)
    return SOFT_HYPHEN.join(word[a:b] for a, b in pieces)


def box_label(box: str) -> str:
    """A box's name, or the bonus line's for BONUS_BOX, in the active language."""
    return str(BONUS_LABEL) if box == BONUS_BOX else box_name(box)


def problem_text(problem) -> str:
    """A rules.Problem in words, in the active language."""
    # Whole sentences per count: English agrees «there is 1 bonus» / «there are 2 bonuses».
    count = problem.bonuses
    match problem.kind:
        case "impossible_score":
            return gettext("%(box)s: %(value)s no es una puntuación posible.") % {
                "box": box_name(problem.category),
                "value": problem.value,
            }
        case "negative_bonuses":
            return gettext("El número de bonus de Yahtzee no puede ser negativo.")
        case "bonus_without_yahtzee":
            return ngettext(
                "Yahtzee: hay %(count)s bonus de Yahtzee, pero la casilla Yahtzee no tiene 50.",
                "Yahtzee: hay %(count)s bonus de Yahtzee, pero la casilla Yahtzee no tiene 50.",
                count,
            ) % {"count": count}
        case "too_many_bonuses":
            return ngettext(
                "Hay %(count)s bonus de Yahtzee; como mucho puede haber %(max)s, "
                "uno por cada otra casilla.",
                "Hay %(count)s bonus de Yahtzee; como mucho puede haber %(max)s, "
                "uno por cada otra casilla.",
                count,
            ) % {"count": count, "max": problem.capacity}
        case _kind:
            if problem.capacity == 0:
                capacity = gettext("ninguna casilla anotada admite un comodín")
            else:
                capacity = ngettext(
                    "solo %(count)s casilla anotada admite un comodín",
                    "solo %(count)s casillas anotadas admiten un comodín",
                    problem.capacity,
                ) % {"count": problem.capacity}
            return ngettext(
                "Hay %(count)s bonus de Yahtzee, pero %(capacity)s.",
                "Hay %(count)s bonus de Yahtzee, pero %(capacity)s.",
                count,
            ) % {"count": count, "capacity": capacity}


def names_list(names) -> str:
    """«Ana, Ben y Carla»: names as a sentence list in the active language."""
    return get_text_list(names, gettext("y"))


def said(value) -> str:
    """A box's value in words: «sin anotar» while blank."""
    return gettext("sin anotar") if value is None else str(value)


def signed(difference: int) -> str:
    """A difference as the card shows it: «+4», «0», and below 0 with a minus sign (U+2212),
    not a hyphen."""
    if difference > 0:
        return f"+{difference}"
    return f"\u2212{-difference}" if difference < 0 else "0"
