"""The benchmark's floor views (bench/views.py): only in its own URLs, only for a logged-in
user, and the durable write floor's row is committed before its answer leaves."""

import pytest
from django.db import connection
from django.test import Client
from django.urls import NoReverseMatch, reverse

from bench.views import TICKS, create_ticks

pytestmark = pytest.mark.django_db(transaction=True)  # the floor's own transaction


@pytest.fixture
def ticks(settings):
    settings.ROOT_URLCONF = "bench.urls"
    create_ticks(3)
    yield
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {TICKS}")


def _counts() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT n FROM {TICKS} ORDER BY id")
        return [n for (n,) in cursor.fetchall()]


def _in_transaction() -> bool:
    if connection.connection is None:
        return False
    if connection.vendor == "postgresql":
        return connection.connection.info.transaction_status != 0  # psycopg's IDLE
    return connection.connection.in_transaction


def test_the_durable_write_floor_commits_one_row_before_answering(ticks, ana_client):
    url = reverse("bench_floor_write", args=[2])
    response = ana_client.post(url)
    assert response.status_code == 200
    assert response.content == b"ok"
    assert not _in_transaction()  # committed, its COMMIT answered, within the request
    ana_client.post(url)
    ana_client.post(reverse("bench_floor_write", args=[3]))
    assert _counts() == [0, 2, 1]


def test_the_write_floor_is_for_a_logged_in_post(ticks, ana_client):
    url = reverse("bench_floor_write", args=[1])
    assert Client().post(url).status_code == 302  # to the log-in page
    assert ana_client.get(url).status_code == 405
    too_big = reverse("bench_floor_write", args=[2**70])
    assert ana_client.post(too_big).status_code == 404
    assert _counts() == [0, 0, 0]


def test_the_floors_are_not_in_the_apps_own_urls():
    for name in ("bench_floor_get", "bench_floor_post", "bench_floor_write"):
        with pytest.raises(NoReverseMatch):
            reverse(name)
