"""Tests for the pure-Python Yahtzee rules in scorecards.rules."""

import ast
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorecards import rules
from scorecards.rules import (
    LOWER,
    UPPER,
    Category,
    Problem,
    Totals,
    allowed_scores,
    inconsistencies,
    joker_boxes,
    joker_score,
    positions,
    score,
    totals,
)

PROJECT_ROOT = Path(__file__).resolve().parents[1]
ALL_ROLLS = list(itertools.product(range(1, 7), repeat=5))
FACE_NAMES = ["ones", "twos", "threes", "fours", "fives", "sixes"]


# --- An independent formulation of the scoring rules -------------------------------------


def expected_score(roll, category, joker):
    """Brute-force scoring written with list.count and strings instead of Counter and sets."""
    dice = list(roll)
    name = str(category)
    is_yahtzee = dice.count(dice[0]) == 5
    if name in FACE_NAMES:
        face = FACE_NAMES.index(name) + 1
        return face * dice.count(face)
    if name == "three_of_a_kind":
        return sum(dice) if any(dice.count(v) >= 3 for v in dice) else 0
    if name == "four_of_a_kind":
        return sum(dice) if any(dice.count(v) >= 4 for v in dice) else 0
    if name == "full_house":
        if joker and is_yahtzee:
            return 25
        return 25 if sorted(dice.count(v) for v in set(dice)) == [2, 3] else 0
    distinct = "".join(str(v) for v in range(1, 7) if v in dice)
    if name == "small_straight":
        if joker and is_yahtzee:
            return 30
        return 30 if any(run in distinct for run in ("1234", "2345", "3456")) else 0
    if name == "large_straight":
        if joker and is_yahtzee:
            return 40
        return 40 if distinct in ("12345", "23456") else 0
    if name == "yahtzee":
        return 50 if is_yahtzee else 0
    assert name == "chance"
    return sum(dice)


# --- Categories --------------------------------------------------------------------------


def test_categories_follow_card_order_with_lowercase_values():
    assert [c.value for c in Category] == [
        "ones",
        "twos",
        "threes",
        "fours",
        "fives",
        "sixes",
        "three_of_a_kind",
        "four_of_a_kind",
        "full_house",
        "small_straight",
        "large_straight",
        "yahtzee",
        "chance",
    ]


def test_upper_and_lower_split_the_card_six_and_seven():
    assert tuple(Category) == UPPER + LOWER
    assert len(UPPER) == 6
    assert len(LOWER) == 7


def test_upper_boxes_know_their_face_and_lower_boxes_have_none():
    assert [c.face for c in UPPER] == [1, 2, 3, 4, 5, 6]
    assert all(c.face is None for c in LOWER)


def test_public_names_are_exactly_the_documented_ones():
    assert set(rules.__all__) == {
        "Category",
        "UPPER",
        "LOWER",
        "DICE",
        "FACES",
        "UPPER_BONUS",
        "UPPER_BONUS_THRESHOLD",
        "YAHTZEE_SCORE",
        "YAHTZEE_BONUS",
        "MAX_YAHTZEE_BONUSES",
        "ROLLS",
        "Totals",
        "score",
        "joker_score",
        "allowed_scores",
        "allowed_values",
        "BONUS_LINE",
        "bonus_line_limit",
        "bonus_pace",
        "five_of_a_kind",
        "totals",
        "inconsistencies",
        "Problem",
        "joker_boxes",
        "choices",
        "positions",
        "turn",
        "is_extra_yahtzee",
        "yahtzee_bonus_due",
    }
    assert all(hasattr(rules, name) for name in rules.__all__)


def test_the_game_constants_have_the_rulebook_values():
    assert (rules.DICE, rules.FACES) == (5, 6)
    assert (rules.UPPER_BONUS_THRESHOLD, rules.UPPER_BONUS) == (63, 35)
    assert (rules.YAHTZEE_SCORE, rules.YAHTZEE_BONUS) == (50, 100)
    # One bonus per box other than Yahtzee that could take the extra Yahtzee as a joker.
    assert rules.MAX_YAHTZEE_BONUSES == 12 == len(Category) - 1


# --- score -------------------------------------------------------------------------------


@pytest.mark.parametrize("joker", [False, True])
@pytest.mark.parametrize("category", list(Category))
def test_score_matches_brute_force_on_all_7776_rolls(category, joker):
    for roll in ALL_ROLLS:
        assert score(roll, category, joker=joker) == expected_score(roll, category, joker), roll


def test_three_fives_score_15_in_fives():
    assert score((5, 5, 5, 2, 1), Category.FIVES) == 15


def test_three_of_a_kind_scores_the_sum_of_all_dice():
    assert score((4, 4, 4, 2, 6), Category.THREE_OF_A_KIND) == 20


def test_four_of_a_kind_needs_four_equal_dice():
    assert score((4, 4, 4, 2, 6), Category.FOUR_OF_A_KIND) == 0
    assert score((4, 4, 4, 4, 6), Category.FOUR_OF_A_KIND) == 22


def test_full_house_scores_25():
    assert score((3, 3, 5, 5, 5), Category.FULL_HOUSE) == 25


def test_five_of_a_kind_is_not_a_full_house_without_joker():
    assert score((2, 2, 2, 2, 2), Category.FULL_HOUSE) == 0
    assert score((2, 2, 2, 2, 2), Category.FULL_HOUSE, joker=True) == 25


def test_small_straight_accepts_a_pair_inside_the_run():
    assert score((3, 4, 5, 6, 3), Category.SMALL_STRAIGHT) == 30
    assert score((1, 2, 3, 5, 6), Category.SMALL_STRAIGHT) == 0


def test_large_straight_needs_five_in_a_row():
    assert score((2, 3, 4, 5, 6), Category.LARGE_STRAIGHT) == 40
    assert score((1, 2, 3, 4, 6), Category.LARGE_STRAIGHT) == 0


def test_joker_fills_straights_only_for_five_of_a_kind():
    assert score((6, 6, 6, 6, 6), Category.SMALL_STRAIGHT, joker=True) == 30
    assert score((6, 6, 6, 6, 6), Category.LARGE_STRAIGHT, joker=True) == 40
    assert score((6, 6, 6, 6, 5), Category.LARGE_STRAIGHT, joker=True) == 0


def test_joker_does_not_change_other_boxes():
    assert score((3, 3, 3, 3, 3), Category.FOURS, joker=True) == 0
    assert score((3, 3, 3, 3, 3), Category.CHANCE, joker=True) == 15


def test_score_accepts_category_strings_and_any_iterable_of_dice():
    assert score([1, 2, 3, 4, 5], "large_straight") == 40
    assert score((d for d in (6, 6, 6, 6, 6)), "yahtzee") == 50


def test_unknown_category_is_rejected():
    with pytest.raises(ValueError, match="not a valid Category"):
        score((1, 2, 3, 4, 5), "straight")


@pytest.mark.parametrize(
    "dice",
    [
        pytest.param((1, 2, 3, 4), id="four dice"),
        pytest.param((1, 2, 3, 4, 5, 6), id="six dice"),
        pytest.param((0, 2, 3, 4, 5), id="a zero"),
        pytest.param((1, 2, 3, 4, 7), id="a seven"),
        pytest.param((1, 2, "3", 4, 5), id="a string die"),
        pytest.param("12345", id="a string"),
        pytest.param((1, 2, 3.0, 4, 5), id="a float"),
        pytest.param((True, 2, 3, 4, 5), id="a bool"),
        pytest.param((None, 2, 3, 4, 5), id="a None die"),
        pytest.param(None, id="None"),
        pytest.param(5, id="a number"),
    ],
)
def test_anything_but_five_dice_from_1_to_6_is_rejected(dice):
    with pytest.raises(ValueError, match="5 dice from 1 to 6"):
        score(dice, Category.CHANCE)


# --- joker_score -------------------------------------------------------------------------


def test_joker_score_is_the_joker_score_of_five_equal_dice():
    for face, category in itertools.product(range(1, 7), Category):
        assert joker_score(face, category) == score((face,) * 5, category, joker=True)


def test_joker_score_gives_fixed_prizes_and_sums():
    assert joker_score(4, Category.FOURS) == 20
    assert joker_score(4, Category.FIVES) == 0
    assert joker_score(4, Category.FULL_HOUSE) == 25
    assert joker_score(4, Category.LARGE_STRAIGHT) == 40
    assert joker_score(4, Category.CHANCE) == 20


@pytest.mark.parametrize("face", [0, 7, True, 2.0])
def test_joker_score_rejects_a_bad_face(face):
    with pytest.raises(ValueError, match="1 to 6"):
        joker_score(face, Category.CHANCE)


# --- allowed_scores ----------------------------------------------------------------------


@pytest.mark.parametrize("category", list(Category))
def test_allowed_scores_are_exactly_what_some_roll_can_leave(category):
    # A box can take any roll, so a roll that does not qualify scratches it with a 0.
    reachable = {score(roll, category, joker=joker) for roll in ALL_ROLLS for joker in (0, 1)}
    assert allowed_scores(category) == reachable
    assert allowed_scores(category.value) == reachable


def test_allowed_scores_match_the_documented_sets():
    sums = set(range(5, 31))
    for face, category in enumerate(UPPER, start=1):
        assert allowed_scores(category) == {0, face, 2 * face, 3 * face, 4 * face, 5 * face}
    assert allowed_scores(Category.THREE_OF_A_KIND) == sums | {0}
    assert allowed_scores(Category.FOUR_OF_A_KIND) == sums | {0}
    assert allowed_scores(Category.FULL_HOUSE) == {0, 25}
    assert allowed_scores(Category.SMALL_STRAIGHT) == {0, 30}
    assert allowed_scores(Category.LARGE_STRAIGHT) == {0, 40}
    assert allowed_scores(Category.YAHTZEE) == {0, 50}
    assert allowed_scores(Category.CHANCE) == sums


def test_chance_can_never_hold_zero():
    assert 0 not in allowed_scores(Category.CHANCE)


# --- totals ------------------------------------------------------------------------------

THREE_OF_EACH = {c: 3 * c.face for c in UPPER}


def test_exactly_63_in_the_upper_section_earns_the_35_bonus():
    result = totals(THREE_OF_EACH)
    assert result.upper == 63 == rules.UPPER_BONUS_THRESHOLD
    assert result.upper_bonus == 35 == rules.UPPER_BONUS
    assert result.total == 98


def test_62_in_the_upper_section_earns_no_bonus():
    result = totals({**THREE_OF_EACH, Category.ONES: 2})
    assert result.upper == 62
    assert result.upper_bonus == 0
    assert result.total == 62


def test_three_yahtzees_give_250_from_the_yahtzee_box_and_its_bonuses():
    result = totals({Category.YAHTZEE: 50}, yahtzee_bonuses=2)
    assert result.lower + result.yahtzee_bonus == 250
    assert result == Totals(upper=0, upper_bonus=0, lower=50, yahtzee_bonus=200)
    assert result.total == 250


def test_missing_and_blank_boxes_count_as_zero():
    result = totals({"sixes": 24, Category.CHANCE: None, "full_house": 25})
    assert result == Totals(upper=24, upper_bonus=0, lower=25, yahtzee_bonus=0)
    assert totals({}).total == 0


def test_totals_reject_a_negative_bonus_count():
    with pytest.raises(ValueError, match="negative"):
        totals({}, yahtzee_bonuses=-1)


def test_totals_reject_unknown_boxes_and_non_integer_scores():
    with pytest.raises(ValueError, match="not a valid Category"):
        totals({"bonus": 35})
    with pytest.raises(ValueError, match="an int"):
        totals({"chance": "20"})


def test_totals_cannot_be_changed():
    result = totals({})
    with pytest.raises(AttributeError):
        result.total = 1


def box_value(category):
    """A blank or any value the box allows."""
    return st.none() | st.sampled_from(sorted(allowed_scores(category)))


any_card = st.fixed_dictionaries({}, optional={c: box_value(c) for c in Category})


@given(card=any_card, bonuses=st.integers(0, 12))
def test_total_is_the_sum_of_its_parts(card, bonuses):
    result = totals(card, bonuses)
    assert result.total == result.upper + result.upper_bonus + result.lower + result.yahtzee_bonus
    assert result.upper == sum(card.get(c) or 0 for c in UPPER)
    assert result.lower == sum(card.get(c) or 0 for c in LOWER)
    assert result.upper_bonus in {0, 35}
    assert (result.upper_bonus == 35) == (result.upper >= 63)
    assert result.yahtzee_bonus == 100 * bonuses


# --- positions ---------------------------------------------------------------------------


def test_equal_totals_share_a_position():
    assert positions((200, 250, 200)) == [2, 1, 2]


def test_a_tie_skips_the_next_position():
    assert positions((300, 200, 200, 100)) == [1, 2, 2, 4]


def test_positions_of_no_players_is_empty():
    assert positions([]) == []


@given(st.lists(st.integers(0, 1575)))
def test_position_is_one_plus_the_number_of_higher_totals(scores):
    result = positions(scores)
    assert len(result) == len(scores)
    assert result == [1 + sum(other > mine for other in scores) for mine in scores]
    if scores:
        assert result[scores.index(max(scores))] == 1


# --- joker_boxes -------------------------------------------------------------------------


def expected_joker_boxes(face, card):
    """The forced joker order, written as a walk down a preference list."""
    blank = [c for c in Category if card.get(c) is None]
    own = FACE_NAMES[face - 1]
    if own in blank:
        return {Category(own)}
    lower = [c for c in blank if c.face is None and c != "yahtzee"]
    if lower:
        return set(lower)
    return {c for c in blank if c.face is not None}


def test_five_fours_go_in_fours_when_it_is_free():
    assert joker_boxes(4, {Category.YAHTZEE: 50}) == {Category.FOURS}


def test_with_fours_used_five_fours_may_go_in_any_free_lower_box():
    card = {Category.YAHTZEE: 0, Category.FOURS: 12, Category.CHANCE: 22, Category.ONES: None}
    assert joker_boxes(4, card) == {
        Category.THREE_OF_A_KIND,
        Category.FOUR_OF_A_KIND,
        Category.FULL_HOUSE,
        Category.SMALL_STRAIGHT,
        Category.LARGE_STRAIGHT,
    }


def test_with_the_lower_section_full_five_fours_go_in_a_free_upper_box():
    card = dict.fromkeys(LOWER, 0) | {Category.FOURS: 16, Category.SIXES: 18}
    assert joker_boxes(4, card) == {
        Category.ONES,
        Category.TWOS,
        Category.THREES,
        Category.FIVES,
    }


def test_with_no_free_box_there_is_nowhere_to_go():
    card = dict.fromkeys(Category, 0)
    assert joker_boxes(4, card) == frozenset()


def test_the_joker_does_not_apply_while_the_yahtzee_box_is_blank():
    with pytest.raises(ValueError, match="Yahtzee"):
        joker_boxes(4, {Category.FOURS: 12})


@pytest.mark.parametrize("face", [0, 7])
def test_joker_boxes_reject_a_face_outside_1_to_6(face):
    with pytest.raises(ValueError, match="1 to 6"):
        joker_boxes(face, {Category.YAHTZEE: 50})


used_yahtzee_card = st.fixed_dictionaries(
    {Category.YAHTZEE: st.sampled_from([0, 50])},
    optional={c: box_value(c) for c in Category if c != Category.YAHTZEE},
)


@given(face=st.integers(1, 6), card=used_yahtzee_card)
def test_joker_boxes_follow_the_forced_order(face, card):
    assert joker_boxes(face, card) == expected_joker_boxes(face, card)


# --- inconsistencies ---------------------------------------------------------------------

GOOD_CARD = {
    "ones": 3,
    "twos": 6,
    "threes": 9,
    "fours": 12,
    "fives": 15,
    "sixes": 18,
    "three_of_a_kind": 22,
    "four_of_a_kind": 0,
    "full_house": 25,
    "small_straight": 30,
    "large_straight": 0,
    "yahtzee": 50,
    "chance": 23,
}


def test_a_consistent_full_card_has_no_problems():
    assert inconsistencies(GOOD_CARD) == []


def test_an_empty_card_has_no_problems():
    assert inconsistencies({}) == []


def test_an_impossible_value_is_reported_with_its_box():
    assert inconsistencies({**GOOD_CARD, "fives": 17}) == [
        Problem("impossible_score", category=Category.FIVES, value=17)
    ]


def test_a_scratched_chance_is_reported():
    assert inconsistencies({Category.CHANCE: 0}) == [
        Problem("impossible_score", category=Category.CHANCE, value=0)
    ]


@pytest.mark.parametrize("yahtzee", [0, None])
def test_a_bonus_needs_50_in_the_yahtzee_box(yahtzee):
    problems = inconsistencies({**GOOD_CARD, "yahtzee": yahtzee}, yahtzee_bonuses=1)
    assert Problem("bonus_without_yahtzee", bonuses=1) in problems


def test_a_scratched_yahtzee_never_earns_a_bonus():
    card = {**GOOD_CARD, "yahtzee": 0, "fours": 20}
    assert inconsistencies(card, yahtzee_bonuses=0) == []
    assert inconsistencies(card, yahtzee_bonuses=1) == [Problem("bonus_without_yahtzee", bonuses=1)]


def test_more_bonuses_than_boxes_that_could_hold_a_joker_is_a_problem():
    # Only Full (25) and the small straight (30) could hold a joker in this card.
    card = {"yahtzee": 50, "full_house": 25, "small_straight": 30, "chance": 23}
    assert inconsistencies(card, yahtzee_bonuses=2) == []
    assert inconsistencies(card, yahtzee_bonuses=3) == [
        Problem("bonuses_exceed_jokers", bonuses=3, capacity=2)
    ]


def test_an_upper_zero_counts_as_a_box_that_could_hold_a_joker():
    assert inconsistencies({"yahtzee": 50, "ones": 0}, yahtzee_bonuses=1) == []


def test_a_bonus_with_no_box_to_hold_it_is_a_problem():
    assert inconsistencies({"yahtzee": 50}, yahtzee_bonuses=1) == [
        Problem("bonuses_exceed_jokers", bonuses=1, capacity=0)
    ]


def test_thirteen_bonuses_is_a_problem():
    card = {c: joker_score(6, c) for c in Category}
    assert inconsistencies(card, yahtzee_bonuses=12) == []
    assert inconsistencies(card, yahtzee_bonuses=13) == [
        Problem("too_many_bonuses", bonuses=13, capacity=rules.MAX_YAHTZEE_BONUSES)
    ]


def test_a_negative_bonus_count_is_a_problem():
    assert inconsistencies(GOOD_CARD, yahtzee_bonuses=-1) == [
        Problem("negative_bonuses", bonuses=-1)
    ]


def test_every_problem_of_a_card_is_reported_in_card_order():
    card = {Category.FIVES: 17, Category.YAHTZEE: 0}
    assert inconsistencies(card, 1) == [
        Problem("impossible_score", category=Category.FIVES, value=17),
        Problem("bonus_without_yahtzee", bonuses=1),
        Problem("bonuses_exceed_jokers", bonuses=1, capacity=0),
    ]


@st.composite
def played_cards(draw):
    """A card, possibly unfinished, and its bonus count, built by playing legal turns."""
    card = {}
    bonuses = 0
    turns = draw(st.integers(0, 13))
    # Five of a kind is rare on random dice, so roll it often to exercise the joker.
    rolls = st.integers(1, 6).map(lambda face: (face,) * 5) | st.tuples(*[st.integers(1, 6)] * 5)
    for _ in range(turns):
        roll = draw(rolls)
        is_yahtzee = len(set(roll)) == 1
        if is_yahtzee and card.get("yahtzee") is not None:
            if card["yahtzee"] == 50:
                bonuses += 1
            box = draw(st.sampled_from(sorted(expected_joker_boxes(roll[0], card))))
            card[box] = score(roll, box, joker=True)
        else:
            free = [c for c in Category if c not in card]
            box = draw(st.sampled_from(free))
            card[box] = score(roll, box)
    return card, bonuses


@given(played_cards())
def test_any_legally_played_card_has_no_problems(played):
    card, bonuses = played
    assert inconsistencies(card, bonuses) == []
    assert totals(card, bonuses).yahtzee_bonus == 100 * bonuses


# --- No Django -----------------------------------------------------------------------------


def test_rules_import_without_django():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['django'] = None; import scorecards.rules",
        ],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_rules_import_only_the_standard_library():
    tree = ast.parse((PROJECT_ROOT / "scorecards" / "rules.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative imports would reach into the project"
            imported.add(node.module.split(".")[0])
    assert imported
    assert imported <= sys.stdlib_module_names


def test_rules_hold_no_ui_wording():
    """Words a player reads live in scorecards.labels: outside docstrings, the rules'
    strings are plain ASCII (English error messages for programming mistakes)."""
    tree = ast.parse((PROJECT_ROOT / "scorecards" / "rules.py").read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    strings = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]
    assert strings
    assert [s for s in strings if not s.isascii()] == []


# Whose turn it is


@pytest.mark.parametrize(
    ("filled", "expected"),
    [
        ([0, 0, 0], (1, 0)),  # nobody has played: round 1, the first seat
        ([1, 0, 0], (1, 1)),
        ([1, 1, 1], (2, 0)),
        ([7, 7, 6, 6], (7, 2)),  # «Ronda 7 de 13 · le toca a» the third
        ([3, 2, 3], (3, 1)),  # a skipped turn: the one behind plays, whatever the seat
        ([13, 12], (13, 1)),
        ([13, 13], None),  # every box filled
        ([], None),
    ],
)
def test_turn_follows_the_seating_order_and_the_boxes_used(filled, expected):
    assert rules.turn(filled) == expected


# choices: what a digital turn's last roll may score, box by box


def test_choices_are_every_free_box_with_its_score_zero_included():
    card = {Category.CHANCE: 20, Category.ONES: 3}
    offered = rules.choices([2, 3, 4, 5, 5], card)
    assert list(offered) == [c for c in Category if c not in card]  # card order
    assert offered[Category.FIVES] == 10
    assert offered[Category.SMALL_STRAIGHT] == 30
    assert offered[Category.FULL_HOUSE] == 0  # offered: a scratch is a choice
    assert offered[Category.YAHTZEE] == 0


def test_five_of_a_kind_with_yahtzee_blank_is_an_ordinary_roll():
    offered = rules.choices([4] * 5, {})
    assert offered[Category.YAHTZEE] == rules.YAHTZEE_SCORE
    assert offered[Category.FULL_HOUSE] == 0  # no joker while the Yahtzee box is free
    assert len(offered) == len(Category)


@pytest.mark.parametrize("yahtzee", [0, 50])
def test_an_extra_yahtzee_offers_only_the_joker_order(yahtzee):
    assert rules.choices([4] * 5, {Category.YAHTZEE: yahtzee}) == {Category.FOURS: 20}
    card = {Category.YAHTZEE: yahtzee, Category.FOURS: 12}
    assert rules.choices([4] * 5, card) == {
        Category.THREE_OF_A_KIND: 20,
        Category.FOUR_OF_A_KIND: 20,
        Category.FULL_HOUSE: 25,
        Category.SMALL_STRAIGHT: 30,
        Category.LARGE_STRAIGHT: 40,
        Category.CHANCE: 20,
    }
    lower_used = card | dict.fromkeys(rules.LOWER, 0) | {Category.YAHTZEE: yahtzee}
    assert rules.choices([4] * 5, lower_used) == {c: 0 for c in rules.UPPER if c != Category.FOURS}


def test_choices_refuse_what_is_not_a_roll():
    with pytest.raises(ValueError, match="A roll is"):
        rules.choices([1, 2, 3], {})


@pytest.mark.parametrize("yahtzee", [None, 0, 50])
def test_an_extra_yahtzee_is_five_of_a_kind_once_the_yahtzee_box_is_filled(yahtzee):
    card = {Category.YAHTZEE: yahtzee}
    for dice in itertools.product(range(1, 7), repeat=5):
        expected = len(set(dice)) == 1 and yahtzee is not None
        assert rules.is_extra_yahtzee(dice, card) is expected, dice


@pytest.mark.parametrize(("yahtzee", "due"), [(None, False), (0, False), (50, True)])
def test_the_yahtzee_bonus_is_due_only_after_a_50(yahtzee, due):
    assert rules.yahtzee_bonus_due({Category.YAHTZEE: yahtzee}) is due
    # The same rule the card's consistency check applies to a bonus already counted.
    problems = rules.inconsistencies({Category.YAHTZEE: yahtzee, Category.ONES: 5}, 1)
    assert any(p.kind == "bonus_without_yahtzee" for p in problems) is not due


def test_is_extra_yahtzee_refuses_what_is_not_a_roll():
    with pytest.raises(ValueError, match="A roll is 5 dice"):
        rules.is_extra_yahtzee([6, 6, 6, 6], {})


def test_allowed_values_are_a_box_s_scores_or_the_bonus_line_s_count():
    assert rules.allowed_values("twos") == [0, 2, 4, 6, 8, 10]
    assert rules.allowed_values(rules.BONUS_LINE) == list(range(rules.MAX_YAHTZEE_BONUSES + 1))


def test_without_a_50_the_bonus_line_may_only_go_down():
    card = dict.fromkeys(Category)
    assert rules.bonus_line_limit({**card, Category.YAHTZEE: 0}, 2) == 2
    assert rules.bonus_line_limit(card, 0) == 0
    assert rules.bonus_line_limit({**card, Category.YAHTZEE: 50}, 2) == rules.MAX_YAHTZEE_BONUSES


def test_five_of_a_kind_is_the_upper_box_s_top_score_only():
    assert [rules.five_of_a_kind(c) for c in rules.UPPER] == [5, 10, 15, 20, 25, 30]
    assert rules.five_of_a_kind(Category.CHANCE) is None
    assert rules.five_of_a_kind(rules.BONUS_LINE) is None
