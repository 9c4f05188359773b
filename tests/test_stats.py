from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from django.utils import translation

from scorecards import rules, services, stats
from scorecards.models import Scorecard
from scorecards.rules import Category
from tests.factories import UserFactory, full_card

pytestmark = pytest.mark.django_db


def column(player, bonuses=0, **overrides):
    """One player's complete, consistent column: the factory card with some boxes changed."""
    scores = full_card(**overrides)
    assert rules.inconsistencies(scores, bonuses) == []
    return player, scores, bonuses


def play(*columns, finalize=True):
    """A game written box by box through the services, then finalized."""
    card = services.scorecard_create(organizer=columns[0][0], players=[p for p, _, _ in columns])
    for seat, (_, scores, bonuses) in zip(card.seats.order_by("order"), columns, strict=True):
        for box, value in scores.items():
            setattr(seat, box, value)
        seat.yahtzee_bonuses = bonuses
        seat.save()
    if not finalize:
        return card
    return services.scorecard_finalize(scorecard_id=card.pk, author=columns[0][0])


@pytest.fixture
def dani():
    return UserFactory(username="dani", display_name="Dani")


@pytest.fixture
def eva():
    return UserFactory(username="eva", display_name="Eva")


@pytest.fixture
def league(ana, ben, carla, dani, eva):
    """Four finalized games and one in progress; Eva leaves the club after playing.

    The factory card totals 245 with exactly 63 above (bonus), a 50 in Yahtzee and 22 in Chance.
                 Ana                     Ben           Carla             Eva
    game 1       245 (1st)               235 (2nd)
    game 2       445, 2 bonuses (1st)    245 (2nd)     207, 60 above (3rd)
    game 3       207, 60 above (1st =)   207 (1st =)   157, 60 above, no Y (3rd)
    game 4       140, 60 above, no Y (2nd)                               253 (1st)
    """
    games = [
        play(column(ana), column(ben, chance=12)),
        play(column(ana, bonuses=2), column(ben), column(carla, ones=0)),
        play(column(ana, ones=0), column(ben, ones=0), column(carla, ones=0, yahtzee=0)),
        play(column(eva, chance=30), column(ana, ones=0, yahtzee=0, chance=5)),
    ]
    # Never finalized, so it counts nowhere.
    play(column(ana, chance=5), column(dani, chance=5), finalize=False)
    eva.is_active = False
    eva.save()
    return SimpleNamespace(games=games)


def test_the_league_games_have_the_totals_and_places_the_examples_assume(league, ana):
    seats = [game.seats.get(player=ana) for game in league.games]
    assert [(s.total, s.place) for s in seats] == [(245, 1), (445, 1), (207, 1), (140, 2)]


# player_summary


def test_a_summary_counts_games_wins_and_scores(league, ana):
    summary = stats.player_summary(ana)
    assert summary["games"] == 4
    assert summary["wins"] == 3
    assert summary["win_rate"] == 0.75
    assert summary["average"] == pytest.approx((245 + 445 + 207 + 140) / 4)
    assert summary["best"] == 445
    assert summary["worst"] == 140


def test_a_shared_first_place_is_a_win_for_both(league, ben):
    summary = stats.player_summary(ben)
    assert summary["games"] == 3
    assert summary["wins"] == 1
    assert summary["win_rate"] == pytest.approx(1 / 3)
    assert summary["average"] == pytest.approx(229)


def test_yahtzees_are_the_boxes_with_50_plus_every_bonus(league, ana, carla):
    assert stats.player_summary(ana)["yahtzees"] == 3 + 2
    assert stats.player_summary(carla)["yahtzees"] == 1


def test_the_upper_bonus_rate_counts_games_with_63_or_more_above(league, ana, ben, carla):
    assert stats.player_summary(ana)["upper_bonus_rate"] == 0.5
    assert stats.player_summary(ben)["upper_bonus_rate"] == pytest.approx(2 / 3)
    assert stats.player_summary(carla)["upper_bonus_rate"] == 0


def test_box_averages_cover_all_13_boxes_in_card_order(league, ana):
    averages = stats.player_summary(ana)["box_averages"]
    assert [c for c, _ in averages] == list(Category)
    expected = {c: float(v) for c, v in full_card().items()}
    expected |= {"ones": 1.5, "yahtzee": 37.5, "chance": (22 * 3 + 5) / 4}
    assert {c: pytest.approx(v) for c, v in averages} == expected


def test_a_player_without_finalized_games_has_an_empty_summary(league, dani):
    assert stats.player_summary(dani) == {
        "games": 0,
        "wins": 0,
        "win_rate": None,
        "average": None,
        "best": None,
        "worst": None,
        "yahtzees": 0,
        "upper_bonus_rate": None,
        "box_averages": [(c, None) for c in Category],
    }


# head_to_head


def _record(rows):
    return [(r["opponent"].name, r["games"], r["wins"], r["losses"], r["ties"]) for r in rows]


def test_head_to_head_counts_wins_losses_and_ties_per_opponent(league, ana, ben, eva):
    rows = stats.head_to_head(ana)
    assert _record(rows) == [("Ben", 3, 2, 0, 1), ("Carla", 2, 2, 0, 0), ("Eva", 1, 0, 1, 0)]
    assert rows[0]["opponent"] == ben
    assert _record(stats.head_to_head(ben)) == [("Ana", 3, 0, 2, 1), ("Carla", 2, 2, 0, 0)]


def test_an_inactive_player_still_appears_in_head_to_head_both_ways(league, eva):
    assert _record(stats.head_to_head(eva)) == [("Ana", 1, 1, 0, 0)]


def test_head_to_head_orders_equal_game_counts_by_name(league, carla):
    assert _record(stats.head_to_head(carla)) == [("Ana", 2, 0, 2, 0), ("Ben", 2, 0, 2, 0)]


def test_head_to_head_breaks_ties_by_name_not_by_age(ana):
    zoe = UserFactory(display_name="Zoe")
    abel = UserFactory(display_name="Abel")
    play(column(ana), column(zoe))
    play(column(ana), column(abel))
    assert [r["opponent"] for r in stats.head_to_head(ana)] == [abel, zoe]


def test_a_player_without_finalized_games_has_no_opponents(league, dani):
    assert stats.head_to_head(dani) == []


# totals_over_time


def test_totals_over_time_lists_finalized_games_oldest_first(league, ana):
    moments = [game.finalized_at for game in league.games]
    assert stats.totals_over_time(ana) == list(zip(moments, [245, 445, 207, 140], strict=True))


def test_totals_over_time_keeps_only_the_latest_games(league, ana):
    g3, g4 = league.games[2:]
    assert stats.totals_over_time(ana, limit=2) == [(g3.finalized_at, 207), (g4.finalized_at, 140)]


def test_a_player_without_finalized_games_has_no_totals_over_time(league, dani):
    assert stats.totals_over_time(dani) == []


# histogram


def test_the_histogram_fills_empty_ranges_between_the_lowest_and_highest(league, ana):
    counts = {125: 1, 200: 1, 225: 1, 425: 1}
    assert stats.histogram(ana) == [
        {"low": low, "high": low + 24, "count": counts.get(low, 0)} for low in range(125, 450, 25)
    ]


def test_the_histogram_takes_a_bucket_width(league, ana, ben):
    assert stats.histogram(ana, width=100) == [
        {"low": 100, "high": 199, "count": 1},
        {"low": 200, "high": 299, "count": 2},
        {"low": 300, "high": 399, "count": 0},
        {"low": 400, "high": 499, "count": 1},
    ]
    assert stats.histogram(ben, width=50) == [{"low": 200, "high": 249, "count": 3}]


def test_a_player_without_finalized_games_has_an_empty_histogram(league, dani):
    assert stats.histogram(dani) == []


@pytest.mark.parametrize("width", [0, -25, 2.5, True])
def test_the_histogram_refuses_a_width_that_is_not_a_positive_integer(ana, width):
    with pytest.raises(ValueError, match="width"):
        stats.histogram(ana, width=width)


# ranking


def _table(rows):
    return [
        (r["player"].name, r["games"], r["wins"], pytest.approx(r["average"]), r.get("rank"))
        for r in rows
    ]


def test_the_ranking_splits_players_at_min_games(league):
    ranked, unranked = stats.ranking(min_games=3)
    assert _table(ranked) == [("Ana", 4, 3, 259.25, 1), ("Ben", 3, 1, 229, 2)]
    assert _table(unranked) == [("Carla", 2, 0, 182, None)]


def test_inactive_players_and_players_without_games_are_left_out_of_the_ranking(league):
    ranked, unranked = stats.ranking()
    assert ranked == []
    assert [r["player"].name for r in unranked] == ["Ana", "Ben", "Carla"]


def test_the_ranking_orders_by_average_then_wins_then_name_and_shares_equal_averages(
    ana, ben, carla, dani
):
    zoe = UserFactory(display_name="Zoe")
    abel = UserFactory(display_name="Abel")
    play(column(ana), column(ben, chance=12))  # 245 beats 235
    play(column(ben, three_of_a_kind=30), column(carla))  # 255 beats 245
    play(column(dani, three_of_a_kind=30, chance=27))  # 260 alone
    play(column(zoe))  # 245 alone
    play(column(abel))  # 245 alone
    ranked, unranked = stats.ranking(min_games=1)
    assert _table(ranked) == [
        ("Dani", 1, 1, 260, 1),
        ("Abel", 1, 1, 245, 2),
        ("Ana", 1, 1, 245, 2),
        ("Ben", 2, 1, 245, 2),
        ("Zoe", 1, 1, 245, 2),
        ("Carla", 1, 0, 245, 2),
    ]
    assert unranked == []


def test_unranked_players_are_ordered_by_average_then_best_then_games(ana, ben, carla, dani):
    play(column(carla, bonuses=1), column(ana))  # 345, 245
    play(column(ben, chance=17), column(ana, chance=12))  # 240, 235
    play(column(dani, chance=17))  # 240
    play(column(dani, chance=17))  # 240
    ranked, unranked = stats.ranking(min_games=5)
    assert ranked == []
    # While nobody has five games, the best first, not the alphabet: Carla's single 345
    # leads; of the three averaging 240, Ana's best game, then Dani's two games.
    assert [
        (r["player"].name, pytest.approx(r["average"]), r["best"], r["games"], r["missing"])
        for r in unranked
    ] == [
        ("Carla", 345, 345, 1, 4),
        ("Ana", 240, 245, 2, 3),
        ("Dani", 240, 240, 2, 3),
        ("Ben", 240, 240, 1, 4),
    ]


def test_the_ranking_is_computed_once_until_another_game_is_finalized(
    ana, ben, carla, django_assert_num_queries
):
    play(column(ana), column(ben, chance=12))  # 245, 235
    assert _table(stats.ranking(min_games=1)[0]) == [("Ana", 1, 1, 245, 1), ("Ben", 1, 0, 235, 2)]
    # Kept: the finalized games' count, then the players who play, with their names.
    with django_assert_num_queries(2):
        stats.ranking(min_games=1)
    # Read each time: a new name, a player who leaves the club.
    ben.display_name = "Benito"
    ben.save()
    assert [r["player"].name for r in stats.ranking(min_games=1)[0]] == ["Ana", "Benito"]
    ana.is_active = False
    ana.save()
    assert [r["player"].name for r in stats.ranking(min_games=1)[0]] == ["Benito"]
    ana.is_active = True
    ana.save()
    # A game in progress changes nothing; finalized, it counts at once.
    card = play(column(carla, chance=30), column(ben, chance=20), finalize=False)
    assert [r["player"].name for r in stats.ranking(min_games=1)[0]] == ["Ana", "Benito"]
    services.scorecard_finalize(scorecard_id=card.pk, author=carla)
    assert _table(stats.ranking(min_games=1)[0]) == [
        ("Carla", 1, 1, 253, 1),
        ("Ana", 1, 1, 245, 2),
        ("Benito", 2, 0, 239, 3),
    ]


# Query budgets


@pytest.mark.parametrize("n", [3, 30])
def test_each_statistic_costs_the_same_queries_for_3_and_30_games(
    django_assert_num_queries, ana, ben, carla, n
):
    for i in range(n):
        play(column(ana, chance=5 + i % 26), column(ben, chance=30 - i % 26), column(carla))
    # One aggregate over the player's finalized seats.
    with django_assert_num_queries(1):
        assert stats.player_summary(ana)["games"] == n
    # The counts per opponent, then the opponents themselves.
    with django_assert_num_queries(2):
        assert len(stats.head_to_head(ana)) == 2
    # The latest totals.
    with django_assert_num_queries(1):
        assert len(stats.totals_over_time(ana, limit=20)) == min(n, 20)
    # The counts per range.
    with django_assert_num_queries(1):
        assert sum(b["count"] for b in stats.histogram(ana)) == n
    # The finalized games' count, the players' games, wins and averages (then kept until
    # another game is finalized), the players who play.
    with django_assert_num_queries(3):
        assert len(stats.ranking(min_games=1)[0]) == 3


# Charts: the layout that templates/scorecards/charts/ draws


def _points(*totals):
    start = datetime(2026, 3, 1, 20, tzinfo=UTC)
    return [(start + timedelta(days=i), t) for i, t in enumerate(totals)]


def _inside(chart, x, y):
    return 0 <= x <= chart["width"] and 0 <= y <= chart["height"]


def test_the_line_chart_places_a_labelled_point_per_game_left_to_right():
    chart = stats.line_chart(_points(245, 445, 207, 140))
    assert (chart["empty"], chart["width"], chart["height"]) == (False, 360, 200)
    points = chart["points"]
    assert [p["label"] for p in points] == [
        "1/3/2026: 245 puntos",
        "2/3/2026: 445 puntos",
        "3/3/2026: 207 puntos",
        "4/3/2026: 140 puntos",
    ]
    assert all(_inside(chart, p["x"], p["y"]) for p in points)
    assert [p["x"] for p in points] == sorted(p["x"] for p in points)
    # A higher total is drawn higher up, where y is smaller.
    assert points[1]["y"] < points[0]["y"] < points[2]["y"] < points[3]["y"]
    assert [(d["text"], d["anchor"]) for d in chart["dates"]] == [
        ("1/3/2026", "start"),
        ("4/3/2026", "end"),
    ]
    assert chart["desc"] == "4 partidas: mínimo 140, máximo 445, última 140 puntos."


def test_chart_coordinates_are_numbers_to_a_tenth():
    chart = stats.line_chart(_points(245, 446, 207))
    numbers = [p[k] for p in chart["points"] for k in ("x", "y")]
    numbers += [g[k] for g in chart["gridlines"] for k in ("y", "label_y")]
    assert all(isinstance(n, float) and n == round(n, 1) for n in numbers)


@pytest.mark.parametrize(
    "totals", [(245,), (0,), (250, 250), (240, 245), (110, 210), (140, 445), (5, 1575)]
)
def test_the_line_chart_has_3_to_5_gridlines_around_every_point(totals):
    chart = stats.line_chart(_points(*totals))
    grid = chart["gridlines"]
    assert 3 <= len(grid) <= 5
    assert grid[0]["value"] <= min(totals)
    assert grid[-1]["value"] >= max(totals)
    # Drawn on the points' scale: the lowest gridline at the bottom, none above a point's y.
    assert [g["y"] for g in grid] == sorted((g["y"] for g in grid), reverse=True)
    assert all(grid[-1]["y"] <= p["y"] <= grid[0]["y"] for p in chart["points"])


def test_a_line_chart_of_one_game_centres_its_point_and_date():
    chart = stats.line_chart(_points(200))
    (point,) = chart["points"]
    (date,) = chart["dates"]
    assert date == {"x": point["x"], "anchor": "middle", "text": "1/3/2026"}
    assert chart["desc"] == "1 partida: mínimo 200, máximo 200, última 200 puntos."


def test_the_line_chart_of_a_player_plots_each_finalized_game(league, ana):
    assert len(stats.line_chart(stats.totals_over_time(ana))["points"]) == 4


def test_charts_without_games_are_empty():
    empty = {"empty": True, "width": 360, "height": 60, "desc": "", "x": 180, "y": 34}
    assert stats.line_chart([]) == empty
    assert stats.histogram_chart([]) == empty
    assert stats.histogram_chart([{"low": 0, "high": 24, "count": 0}]) == empty


def test_the_histogram_chart_has_a_bar_and_a_count_per_nonempty_range():
    buckets = [
        {"low": 100, "high": 199, "count": 1},
        {"low": 200, "high": 299, "count": 2},
        {"low": 300, "high": 399, "count": 0},
        {"low": 400, "high": 499, "count": 1},
    ]
    chart = stats.histogram_chart(buckets)
    ranges = chart["ranges"]
    assert [r["text"] for r in ranges] == [
        f"{low}\N{EN DASH}{low + 99}" for low in range(100, 500, 100)
    ]
    assert all(r["labelled"] for r in ranges)
    assert (chart["slanted"], chart["show_counts"]) == (False, True)
    bars = [r["bar"] for r in ranges]
    assert bars[2] is None
    assert [b["count"] for b in bars if b] == [1, 2, 1]
    assert bars[1]["label"] == "200\N{EN DASH}299: 2 partidas"
    assert bars[1]["height"] == pytest.approx(2 * bars[0]["height"], abs=0.1)
    assert all(_inside(chart, b["x"] + b["width"], b["y"] + b["height"]) for b in bars if b)
    assert chart["axis"]["y"] == pytest.approx(bars[0]["y"] + bars[0]["height"])
    assert chart["desc"] == "4 partidas entre 100 y 499 puntos, en tramos de 100."


def test_a_histogram_with_many_ranges_slants_and_thins_its_labels():
    buckets = [{"low": 25 * b, "high": 25 * b + 24, "count": b % 3} for b in range(2, 64)]
    chart = stats.histogram_chart(buckets)
    assert chart["slanted"]
    assert 0 < sum(r["labelled"] for r in chart["ranges"]) < len(buckets)
    assert all(_inside(chart, r["center"], chart["labels_y"]) for r in chart["ranges"])


def test_in_progress_games_count_nowhere(ana, ben):
    play(column(ana), column(ben), finalize=False)
    assert Scorecard.objects.finalized().count() == 0
    assert stats.player_summary(ana)["games"] == 0
    assert stats.head_to_head(ana) == []
    assert stats.totals_over_time(ana) == []
    assert stats.histogram(ana) == []
    assert stats.ranking(min_games=1) == ([], [])


def test_ranking_ties_and_rivals_are_in_spanish_order(ana):
    from tests.test_names import SPANISH_ORDER

    players = [UserFactory(display_name=name) for name in reversed(SPANISH_ORDER)]
    for player in players:
        play(column(player))  # the same total each, alone: tied on average and wins
    ranked, _unranked = stats.ranking(min_games=1)
    assert [row["player"].name for row in ranked] == SPANISH_ORDER
    assert {row["rank"] for row in ranked} == {1}
    play(column(ana), *(column(p) for p in players[:5]))
    rivals = [row["opponent"].name for row in stats.head_to_head(ana)]
    assert rivals == sorted(rivals, key=lambda n: SPANISH_ORDER.index(n)) == SPANISH_ORDER[1:]


def test_the_line_charts_dates_are_unambiguous_in_english():
    with translation.override("en"):
        chart = stats.line_chart(_points(200, 250))
    assert [date["text"] for date in chart["dates"]] == ["1 Mar 2026", "2 Mar 2026"]
