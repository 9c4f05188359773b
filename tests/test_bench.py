"""bench/run.py's verdict: the median of the rounds' ratios, each against its own floors."""

import pytest

from bench.run import combine, judge


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


def _round(floor_start, write, floor_end, errors=0):
    rows = [
        _row("floor_post", floor_start),
        _row("write", write, errors, {"200": 99, "500": errors} if errors else None),
        _row("floor_post_end", floor_end),
    ]
    judge(rows)
    return rows


def _write(rows):
    return next(row for row in rows if row["key"] == "write")


def test_each_round_is_judged_against_its_own_lower_floor():
    rows = _round(4.0, 9.0, 5.0)
    assert _write(rows)["ratio"] == 9.0 / 4.0


def test_the_median_of_the_rounds_decides():
    # Ratios 2.8 (a slow round), 2.1 and 1.9: the median, 2.1, misses 2x.
    rounds = [_round(4.0, 11.2, 4.0), _round(4.0, 8.4, 4.1), _round(5.0, 9.5, 5.2)]
    write = _write(combine(rounds))
    assert write["ratios"] == [11.2 / 4.0, 8.4 / 4.0, 9.5 / 5.0]
    assert write["ratio"] == 8.4 / 4.0
    assert write["pass"] is False
    assert write["requests"] == 300
    assert write["p50"] == 9.5  # the rounds' median latency

    # 2.8, 1.9 and 1.9: within 2x, the slow round notwithstanding.
    rounds = [_round(4.0, 11.2, 4.0), _round(4.0, 7.6, 4.0), _round(5.0, 9.5, 5.2)]
    assert _write(combine(rounds))["ratio"] == pytest.approx(1.9)
    assert _write(combine(rounds))["pass"] is True


def test_an_error_in_any_round_fails_the_scenario():
    rounds = [_round(4.0, 6.0, 4.0), _round(4.0, 6.0, 4.0, errors=1), _round(4.0, 6.0, 4.0)]
    write = _write(combine(rounds))
    assert write["ratio"] == 1.5
    assert write["errors"] == 1
    assert write["statuses"] == {"200": 299, "500": 1}
    assert write["pass"] is False


def test_floors_are_reported_not_judged():
    floor = combine([_round(4.0, 6.0, 4.2), _round(3.8, 6.0, 4.0)])[0]
    assert floor["ratio"] is None
    assert floor["ratios"] == []
    assert floor["pass"] is True
    assert floor["p50"] == 3.9
