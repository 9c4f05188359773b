"""The bench's own logic (bench/run.py's verdict) and its floor views (bench/views.py).

No timing here: `make bench` measures, these only check what it concludes from numbers.
"""

import pytest
from django.urls import NoReverseMatch, reverse

from bench.run import BUDGET_MS, FLOORS, combine, misses


def _run(p95, errors=0, floor_p95=5):
    stats = {
        "box write": {"count": 60, "errors": errors, "p50": 8, "p95": p95, "p99": p95 + 1},
        FLOORS["read"]: {"count": 60, "errors": 0, "p50": 4, "p95": floor_p95, "p99": 9},
    }
    return {
        "seconds": 60.0,
        "stats": {**stats, "create card": {"count": 50, "errors": 1}},
        "errors": [],
        "generator": {"cpu": 0.2, "late_p99_ms": 2.0, "schedule": 1.0},
        "machine": {"busy": 0.7, "server": 1.1, "database": 0.0, "others": 0.0, "disk": 0.1,
                    "loadavg": ["2.0", "1.0", "0.5"], "cores": 2},
    }  # fmt: skip


def test_the_verdict_is_on_the_median_run_and_every_error():
    held = combine([_run(40), _run(BUDGET_MS + 500), _run(60)])
    assert held["rows"]["box write"]["p95"] == 60
    assert held["rows"]["box write"]["rps"] == 1.0
    assert "create card" not in held["rows"]  # the warm-up's requests are not reported
    assert misses(held) == []
    missed = combine([_run(40), _run(BUDGET_MS + 1), _run(BUDGET_MS + 2)])
    assert misses(missed) == ["box write: p95 101 ms, 0 errors"]
    assert misses(combine([_run(40, errors=1), _run(40), _run(40)])) != []


def test_a_slow_floor_is_reported_not_judged():
    assert misses(combine([_run(40, floor_p95=BUDGET_MS * 3)])) == []


def test_the_floors_are_only_in_the_benchs_own_urls(db, client, django_user_model, settings):
    for name in ("bench_floor_get", "bench_floor_write"):
        with pytest.raises(NoReverseMatch):
            reverse(name)
    settings.ROOT_URLCONF = "bench.urls"
    url = reverse("bench_floor_write")
    assert client.post(url).status_code == 302  # to the log-in page
    user = django_user_model.objects.create_user("suelo", password="x")
    client.force_login(user)
    django_user_model.objects.filter(pk=user.pk).update(last_login=None)
    assert client.get(reverse("bench_floor_get")).content == b"ok"
    assert client.post(url).content == b"ok"  # the one row it writes
    user.refresh_from_db()
    assert user.last_login is not None
