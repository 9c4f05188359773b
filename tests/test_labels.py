"""Tests for the card's words in scorecards.labels, in Spanish and in English."""

import pytest
from django.utils import translation

from scorecards import rules
from scorecards.labels import (
    BONUS_BOX,
    BONUS_LABEL,
    BOX_LABELS,
    box_label,
    box_name,
    names_list,
    problem_text,
)
from scorecards.rules import Category, Problem

SPANISH_NAMES = [
    "Unos",
    "Doses",
    "Treses",
    "Cuatros",
    "Cincos",
    "Seises",
    "Trío",
    "Póquer",
    "Full",
    "Escalera pequeña",
    "Escalera grande",
    "Yahtzee",
    "Libre (Chance)",
]
ENGLISH_NAMES = [
    "Ones",
    "Twos",
    "Threes",
    "Fours",
    "Fives",
    "Sixes",
    "Three of a kind",
    "Four of a kind",
    "Full house",
    "Small straight",
    "Large straight",
    "Yahtzee",
    "Chance",
]


@pytest.fixture
def spanish():
    with translation.override("es"):
        yield


@pytest.fixture
def english():
    with translation.override("en"):
        yield


def texts(scores, yahtzee_bonuses=0):
    return [problem_text(p) for p in rules.inconsistencies(scores, yahtzee_bonuses)]


# --- Box names ---------------------------------------------------------------------------


def test_every_box_has_a_label_in_card_order():
    assert list(BOX_LABELS) == list(Category)


@pytest.mark.usefixtures("spanish")
def test_box_names_in_spanish():
    assert [box_name(c) for c in Category] == SPANISH_NAMES
    assert [box_label(c.value) for c in Category] == SPANISH_NAMES
    assert box_label(BONUS_BOX) == "Bonus Yahtzee"


@pytest.mark.usefixtures("english")
def test_box_names_in_english():
    assert [box_name(c) for c in Category] == ENGLISH_NAMES
    assert box_label(BONUS_BOX) == "Yahtzee bonus"


def test_box_names_are_plain_strings_in_the_language_active_when_asked():
    with translation.override("en"):
        assert type(box_name("fives")) is str
        assert type(box_label(BONUS_BOX)) is str
        assert box_name("fives") == "Fives"
    with translation.override("es"):
        assert box_name("fives") == "Cincos"
        assert str(BONUS_LABEL) == "Bonus Yahtzee"


def test_the_bonus_line_is_not_a_box_of_the_rules():
    assert BONUS_BOX not in set(Category)


def test_an_unknown_box_has_no_name():
    with pytest.raises(ValueError, match="not a valid Category"):
        box_label("bonus")


# --- Problems ----------------------------------------------------------------------------


@pytest.mark.usefixtures("spanish")
def test_an_impossible_value_is_worded_with_its_box():
    assert texts({"fives": 17}) == ["Cincos: 17 no es una puntuación posible."]
    assert texts({Category.CHANCE: 0}) == ["Libre (Chance): 0 no es una puntuación posible."]


@pytest.mark.usefixtures("spanish")
def test_a_bonus_without_50_in_yahtzee_is_worded():
    assert texts({"yahtzee": 0, "full_house": 25}, 1) == [
        "Yahtzee: hay 1 bonus de Yahtzee, pero la casilla Yahtzee no tiene 50."
    ]


@pytest.mark.usefixtures("spanish")
def test_more_bonuses_than_jokers_are_worded_in_spanish():
    card = {"yahtzee": 50, "full_house": 25, "small_straight": 30, "chance": 23}
    assert texts(card, 3) == [
        "Hay 3 bonus de Yahtzee, pero solo 2 casillas anotadas admiten un comodín."
    ]
    assert texts({"yahtzee": 50, "full_house": 25}, 2) == [
        "Hay 2 bonus de Yahtzee, pero solo 1 casilla anotada admite un comodín."
    ]
    assert texts({"yahtzee": 50}, 1) == [
        "Hay 1 bonus de Yahtzee, pero ninguna casilla anotada admite un comodín."
    ]


@pytest.mark.usefixtures("spanish")
def test_too_many_bonuses_are_worded_with_the_rules_maximum():
    card = {c: rules.joker_score(6, c) for c in Category}
    assert texts(card, rules.MAX_YAHTZEE_BONUSES + 1) == [
        "Hay 13 bonus de Yahtzee; como mucho puede haber 12, uno por cada otra casilla."
    ]


@pytest.mark.usefixtures("spanish")
def test_a_negative_bonus_count_is_worded():
    assert problem_text(Problem("negative_bonuses", bonuses=-1)) == (
        "El número de bonus de Yahtzee no puede ser negativo."
    )


@pytest.mark.usefixtures("english")
def test_problems_are_worded_in_english():
    assert texts({"fives": 17}) == ["Fives: 17 is not a possible score."]
    assert texts({"yahtzee": 0, "full_house": 25}, 1) == [
        "Yahtzee: there is 1 Yahtzee bonus, but the Yahtzee box does not hold 50."
    ]
    assert texts({"yahtzee": 50, "full_house": 25}, 2) == [
        "There are 2 Yahtzee bonuses, but only 1 filled box can hold a joker."
    ]
    assert texts({"yahtzee": 50}, 2) == [
        "There are 2 Yahtzee bonuses, but no filled box can hold a joker."
    ]
    card = {c: rules.joker_score(6, c) for c in Category}
    assert texts(card, 13) == [
        "There are 13 Yahtzee bonuses; there can be at most 12, one for each other box."
    ]
    assert problem_text(Problem("negative_bonuses", bonuses=-1)) == (
        "The number of Yahtzee bonuses cannot be negative."
    )


@pytest.mark.usefixtures("english")
def test_english_agrees_with_the_number_of_bonuses():
    assert texts({"yahtzee": 0, "full_house": 25, "large_straight": 40}, 2) == [
        "Yahtzee: there are 2 Yahtzee bonuses, but the Yahtzee box does not hold 50."
    ]
    assert texts({"yahtzee": 50}, 1) == [
        "There is 1 Yahtzee bonus, but no filled box can hold a joker."
    ]
    assert problem_text(Problem("too_many_bonuses", bonuses=1, capacity=0)) == (
        "There is 1 Yahtzee bonus; there can be at most 0, one for each other box."
    )


@pytest.mark.parametrize("language", ["es", "en"])
def test_every_kind_of_problem_has_words(language):
    problems = [
        Problem("impossible_score", category=Category.ONES, value=7),
        Problem("negative_bonuses", bonuses=-1),
        Problem("bonus_without_yahtzee", bonuses=1),
        Problem("too_many_bonuses", bonuses=13, capacity=rules.MAX_YAHTZEE_BONUSES),
        Problem("bonuses_exceed_jokers", bonuses=2, capacity=1),
    ]
    with translation.override(language):
        words = [problem_text(p) for p in problems]
    assert all(type(w) is str and w.endswith(".") for w in words)
    assert len(set(words)) == len(problems)


# --- Lists of names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "spanish_list", "english_list"),
    [
        ([], "", ""),
        (["Ana"], "Ana", "Ana"),
        (["Ana", "Ben"], "Ana y Ben", "Ana and Ben"),
        (("Ana", "Ben", "Carla"), "Ana, Ben y Carla", "Ana, Ben and Carla"),
    ],
)
def test_names_are_listed_as_a_sentence(names, spanish_list, english_list):
    with translation.override("es"):
        assert names_list(names) == spanish_list
    with translation.override("en"):
        assert names_list(names) == english_list


def test_short_names_are_first_names_where_no_one_else_has_it():
    from scorecards.labels import short_names

    # Whole: the column shows as many letters as it fits (an ellipsis, not «Dolo.»).
    assert short_names(["Dolores Ibarra", "Carmen Ruiz", "Esteban", "Ana"]) == [
        "Dolores",
        "Carmen",
        "Esteban",
        "Ana",
    ]
    assert short_names(["Berto Álvarez", "Guillermo", "Maximiliano Gó"]) == [
        "Berto",
        "Guillermo",
        "Maximiliano",
    ]


def test_short_names_that_read_alike_get_an_initial_then_the_whole_name():
    from scorecards.labels import short_names

    assert short_names(["Ana María", "Ana López", "Carla"]) == ["Ana M.", "Ana L.", "Carla"]
    assert short_names(["Ana", "Ana B", "Ana C"]) == ["Ana", "Ana B.", "Ana C."]
    # A long first name is cut where an initial follows it, so that the initial shows.
    assert short_names(["Guillermo A", "Guillermo B"]) == ["Guil. A.", "Guil. B."]
    # Alike is what a reader sees: «Ángel» and «Angel» are the same first name.
    assert short_names(["Ángel López", "Angel Ruiz", "Dolores"]) == [
        "Ángel L.",
        "Angel R.",
        "Dolores",
    ]
    assert short_names(["Ana", "ana"]) == ["Ana", "ana"]
    assert short_names(["Ana Ruiz", "Ana Rey"]) == ["Ana Ruiz", "Ana Rey"]


def test_short_box_labels_keep_the_full_name_elsewhere():
    from scorecards.labels import box_short

    assert box_short("small_straight") == "Esc. peq."
    assert box_short("ones") == "Unos"
    with translation.override("en"):
        assert box_short("small_straight") == "Sm. str."


def test_a_heading_may_break_a_name_between_its_syllables():
    from scorecards.labels import breakable

    def shown(name):
        return breakable(name).replace("\u00ad", "·")

    assert shown("Maximiliano") == "Ma·xi·mi·lia·no"
    assert shown("Guillermo") == "Gui·ller·mo"
    assert shown("Constantino") == "Cons·tan·ti·no"
    assert shown("Íñigo") == "Íñi·go"
    assert shown("María José") == "Ma·ría Jo·sé"
    assert shown("Fernández-Villaverde") == "Fer·nán·dez-Vi·lla·ver·de"
    # Short words, initials and letters without vowels of ours are left whole.
    assert shown("Ana M.") == "Ana M."
    assert shown("Guil. A.") == "Guil. A."
    assert shown("Дмитрий") == "Дмитрий"
    assert breakable("Maximiliano").replace("\u00ad", "") == "Maximiliano"
