"""bench/run.py's verdict: the median of the rounds' ratios, each to the floor around it."""

import pytest

from bench.run import combine, drifts, judge, plan


def _row(key, p50, errors=0, statuses=None):
    return {
        "key": key,
        "label": key,
        "requests": 100,
        "errors": errors,
        "rps": 1000 / p50,
        "p50": p50,
        "p95": p50 * 1.5,
        "p99": p50 * 2,
        "max": p50 * 3,
        "statuses": statuses or {"200": 100},
        "socket_errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0},
        "sample": "",
        "cpu_busy_before": 0.01,
    }


def _round(floor_before, write, floor_after, errors=0):
    rows = [
        _row("floor_post", floor_before),
        _row("write", write, errors, {"200": 99, "500": errors} if errors else None),
        _row("floor_post", floor_after),
    ]
    judge(rows)
    return rows


def _write(rows):
    return next(row for row in rows if row["key"] == "write")


def test_each_scenario_runs_between_two_runs_of_its_floor():
    assert [s.key for s in plan(["write"])] == ["floor_post", "write", "floor_post"]
    assert [s.key for s in plan(["card", "write"])] == [
        "floor_get",
        "card",
        "floor_get",
        "floor_post",
        "write",
        "floor_post",
    ]
    # Scenarios with the same floor share the run between them; the write comes last.
    keys = [s.key for s in plan()]
    assert keys == [
        "floor_get",
        "card",
        "floor_get",
        "poll_same",
        "floor_get",
        "poll_changed",
        "floor_get",
        "history",
        "floor_get",
        "player",
        "floor_get",
        "ranking",
        "floor_get",
        "floor_post",
        "floor_write",
        "floor_post",
        "write",
        "floor_post",
    ]


def test_a_scenario_is_judged_against_the_mean_of_the_floors_around_it():
    rows = _round(4.0, 9.5, 5.0)
    assert _write(rows)["ratio"] == 9.5 / 4.5
    assert _write(rows)["floor_p50"] == (4.0, 5.0)
    assert _write(rows)["pass"] is False


def test_only_the_nearest_floor_runs_count():
    rows = [
        _row("floor_get", 10.0),  # a slow minute, two runs before the card page
        _row("poll_same", 4.0),
        _row("floor_get", 3.0),
        _row("card", 8.0),
        _row("floor_get", 5.0),
    ]
    judge(rows)
    card = next(row for row in rows if row["key"] == "card")
    assert card["floor_p50"] == (3.0, 5.0)
    assert card["ratio"] == 2.0
    assert card["pass"] is True
    poll = rows[1]
    assert poll["ratio"] == pytest.approx(4.0 / 6.5)


def test_the_median_of_the_rounds_decides():
    # Ratios 2.8 (a slow round), 2.1 and 1.9: the median, 2.1, misses 2x.
    rounds = [_round(4.0, 11.2, 4.0), _round(4.0, 8.4, 4.0), _round(5.0, 9.5, 5.0)]
    write = _write(combine(rounds))
    assert write["ratios"] == [11.2 / 4.0, 8.4 / 4.0, 9.5 / 5.0]
    assert write["ratio"] == 8.4 / 4.0
    assert write["pass"] is False
    assert write["requests"] == 300
    assert write["p50"] == 9.5  # the rounds' median latency

    # 2.8, 1.9 and 1.9: within 2x, the slow round notwithstanding.
    rounds = [_round(4.0, 11.2, 4.0), _round(4.0, 7.6, 4.0), _round(5.0, 9.5, 5.0)]
    assert _write(combine(rounds))["ratio"] == pytest.approx(1.9)
    assert _write(combine(rounds))["pass"] is True


def test_an_error_in_any_round_fails_the_scenario():
    rounds = [_round(4.0, 6.0, 4.0), _round(4.0, 6.0, 4.0, errors=1), _round(4.0, 6.0, 4.0)]
    write = _write(combine(rounds))
    assert write["ratio"] == 1.5
    assert write["errors"] == 1
    assert write["statuses"] == {"200": 299, "500": 1}
    assert write["pass"] is False


def test_floors_are_reported_once_from_all_their_runs_not_judged():
    combined = combine([_round(4.0, 6.0, 4.2), _round(3.8, 6.0, 4.0)])
    assert [row["key"] for row in combined] == ["floor_post", "write"]
    floor = combined[0]
    assert floor["ratio"] is None
    assert floor["ratios"] == []
    assert floor["pass"] is True
    assert floor["runs"] == 4
    assert floor["requests"] == 400
    assert floor["p50"] == 4.0  # the median of 3.8, 4.0, 4.0 and 4.2


def test_a_floor_that_moved_around_a_scenario_is_reported():
    assert drifts(_round(4.0, 8.0, 4.9)) == []
    moved = "floor POST + CSRF went from {} to {} ms around write"
    assert drifts(_round(4.0, 8.0, 5.1)) == [moved.format("4.0", "5.1")]
    assert drifts(_round(5.1, 8.0, 4.0)) == [moved.format("5.1", "4.0")]
