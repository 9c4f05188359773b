"""Several stateless app servers share one PostgreSQL database (sessions included)."""

import pytest
from django.db import connection

from tests.liveserver import (
    HOST,
    AppServer,
    Browser,
    django_script,
    drop_postgres_database,
    migrated_database,
    postgres_database,
)

pytestmark = [
    pytest.mark.server,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="runs in the PostgreSQL pass of make test"
    ),
]

SEED = """
from accounts.models import User
from scorecards.services import scorecard_create
olga = User.objects.create_user("olga", password="clave-de-olga-2026", display_name="Olga")
ana = User.objects.create_user("ana", password="clave-de-ana-2026", display_name="Ana")
card = scorecard_create(organizer=olga, players=[ana])
print(card.pk, card.seats.get().pk)
"""


@pytest.fixture
def shared_database():
    """A fresh PostgreSQL database on the test server, migrated, seeded, dropped afterwards."""
    url = migrated_database(postgres_database("dados_two_servers"))
    try:
        yield url, [int(n) for n in django_script(url, SEED).split()]
    finally:
        drop_postgres_database(url)


def test_a_write_through_one_server_is_seen_through_the_other(shared_database, tmp_path):
    url, (card, seat) = shared_database
    servers = [
        AppServer(db=url, log=tmp_path / f"server{n}.log", workers=1, threads=2) for n in (1, 2)
    ]
    try:
        for server in servers:
            server.start()
        first = Browser(HOST, servers[0].port)
        first.log_in("olga", "clave-de-olga-2026")
        # The same session cookie works on the other server: sessions live in the database.
        second = Browser(HOST, servers[1].port, cookies=dict(first.cookies))
        assert second.get(f"/tarjetas/{card}/").status == 200

        written = first.post(
            f"/tarjetas/{card}/casilla/{seat}/sixes/", {"value": "24", "was": ""}, htmx=True
        )
        assert written.status == 200
        seen = second.get(f"/tarjetas/{card}/vivo/?version=0", htmx=True)
        assert seen.status == 200
        assert 'aria-label="Seises — Ana: 24"' in seen.body
        assert second.get(f"/tarjetas/{card}/vivo/?version=1", htmx=True).status == 204

        refused = second.post(
            f"/tarjetas/{card}/casilla/{seat}/sixes/", {"value": "30", "was": ""}, htmx=True
        )
        assert refused.status == 409
        assert "cambió mientras tanto" in refused.body
    finally:
        for server in servers:
            server.stop()
