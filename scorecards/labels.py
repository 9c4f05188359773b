"""The card's words in the active language (rules.LABELS holds the Spanish reference)."""

import functools

from django.utils import translation
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from scorecards.rules import Category

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


def box_name(category) -> str:
    """BOX_LABELS[category] in the active language, as a plain string."""
    return _names_in(translation.get_language())[category]


@functools.cache
def _names_in(language) -> dict[str, str]:
    # A lazy label is translated again on every use: the card uses them by the hundred.
    with translation.override(language):
        return {category: str(label) for category, label in BOX_LABELS.items()}


def problem_text(problem) -> str:
    """A rules.Problem in words, in the active language."""
    bonuses = ngettext(
        "%(count)s bonus de Yahtzee", "%(count)s bonus de Yahtzee", problem.bonuses
    ) % {"count": problem.bonuses}
    match problem.kind:
        case "impossible_score":
            return _("%(box)s: %(value)s no es una puntuación posible.") % {
                "box": BOX_LABELS[problem.category],
                "value": problem.value,
            }
        case "negative_bonuses":
            return _("El número de bonus de Yahtzee no puede ser negativo.")
        case "bonus_without_yahtzee":
            return _("Yahtzee: hay %(bonuses)s, pero la casilla Yahtzee no tiene 50.") % {
                "bonuses": bonuses
            }
        case "too_many_bonuses":
            return _(
                "Hay %(bonuses)s; como mucho puede haber %(max)s, uno por cada otra casilla."
            ) % {"bonuses": bonuses, "max": problem.capacity}
        case _kind:
            capacity = ngettext(
                "solo %(count)s casilla anotada admite un comodín",
                "solo %(count)s casillas anotadas admiten un comodín",
                problem.capacity,
            ) % {"count": problem.capacity}
            if problem.capacity == 0:
                capacity = _("ninguna casilla anotada admite un comodín")
            return _("Hay %(bonuses)s, pero %(capacity)s.") % {
                "bonuses": bonuses,
                "capacity": capacity,
            }


# get_text_list's separator: a msgid of Django's own catalogue (a name, so that
# makemessages does not copy it into the app's).
_LIST_SEPARATOR = ", "


def names_list(names) -> str:
    """«Ana, Ben y Carla»: names as a sentence list in the active language, said as
    Django's get_text_list says it, with its words translated once per language (a page
    may list twenty cards' players)."""
    if len(names) < 2:
        return "".join(names)
    comma, and_word = _list_words(translation.get_language())
    return f"{comma.join(names[:-1])} {and_word} {names[-1]}"


@functools.lru_cache(maxsize=16)
def _list_words(language) -> tuple[str, str]:
    with translation.override(language):
        return translation.gettext(_LIST_SEPARATOR), translation.gettext("y")
