"""Seed an empty database for the benchmark, in bulk: 100 players, 10,000 finalized games.

    DJANGO_SETTINGS_MODULE=bench.settings DATABASE_URL=... python -m bench.seed

Migrates, then writes (deterministic, from a fixed random seed) `players` registered
players, the host «Anfitriona» (username `anfitriona`) and the rest, and `games` finalized
games of 2 to 6 players, spread over the last three years. The host played every one of
them, so her «Historial» and statistics page are the worst case; the others have a few
hundred each. Seats are inserted before their cards are finalized: a database trigger
refuses seats for a finalized card. The cards in progress are created by the bench itself,
through the app.
"""

import argparse
import json
import random
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HOST_USERNAME = "anfitriona"
# Every seeded player can log in with this password (for poking at a seeded database).
PASSWORD = "banco-de-pruebas-dados"
RANDOM_SEED = 7
BATCH = 500

FIRST_NAMES = [
    "Lucía", "Martín", "Sofía", "Hugo", "Valentina", "Mateo", "Paula", "Álvaro", "Noa",
    "Daniel", "Carmen", "Íñigo", "Julia", "Pablo", "Nerea", "Adrián", "Irene", "Óscar",
]  # fmt: skip


def random_column(rng, categories):
    """Plausible scores for the given boxes: every one allowed, no Yahtzee bonus."""
    from scorecards.rules import Category

    column = {}
    for c in categories:
        if c.face is not None:
            column[c] = c.face * rng.choice((0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 5))
        elif c == Category.THREE_OF_A_KIND:
            column[c] = rng.choice((0, *range(12, 31)))
        elif c == Category.FOUR_OF_A_KIND:
            column[c] = rng.choice((0, 0, 0, *range(12, 31)))
        elif c == Category.FULL_HOUSE:
            column[c] = rng.choice((0, 25, 25))
        elif c == Category.SMALL_STRAIGHT:
            column[c] = rng.choice((0, 30, 30))
        elif c == Category.LARGE_STRAIGHT:
            column[c] = rng.choice((0, 0, 40))
        elif c == Category.YAHTZEE:
            column[c] = rng.choice((0, 0, 0, 50))
        else:
            column[c] = rng.randint(14, 28)
    return column


def seed(*, players=100, games=10_000) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.db.models import Case, DateTimeField, Value, When
    from django.utils import timezone

    from scorecards import rules
    from scorecards.models import Scorecard, Seat
    from scorecards.rules import Category

    began = time.monotonic()
    call_command("migrate", interactive=False, verbosity=0)
    User = get_user_model()
    if User.objects.exists():
        raise SystemExit("The database already has users: the benchmark seeds only empty ones.")
    rng = random.Random(RANDOM_SEED)
    now = timezone.now()
    password = make_password(PASSWORD)
    with transaction.atomic():
        people = [User(username=HOST_USERNAME, display_name="Anfitriona", password=password)]
        people += [
            User(
                username=f"jugador{i:03d}",
                display_name=f"{FIRST_NAMES[i % len(FIRST_NAMES)]} {i:03d}",
                password=password,
            )
            for i in range(1, players)
        ]
        people = User.objects.bulk_create(people, batch_size=BATCH)
        host, others = people[0], people[1:]

        # Cards, then seats, then finalized_at (the trigger's order).
        cards = Scorecard.objects.bulk_create(
            (Scorecard(organizer=host) for _ in range(games)), batch_size=BATCH
        )
        seats = []
        for card in cards:
            table = [host, *rng.sample(others, rng.choice((1, 2, 2, 3, 3, 3, 4, 5)))]
            rng.shuffle(table)
            columns = [random_column(rng, Category) for _ in table]
            totals = [rules.totals(column).total for column in columns]
            places = rules.positions(totals)
            seats.extend(
                Seat(
                    scorecard=card,
                    player=player,
                    order=order,
                    total=total,
                    place=place,
                    **{c.value: v for c, v in column.items()},
                )
                for order, (player, column, total, place) in enumerate(
                    zip(table, columns, totals, places, strict=True)
                )
            )
        Seat.objects.bulk_create(seats, batch_size=BATCH)

        span = timedelta(days=3 * 365)
        start = now - span - timedelta(days=1)
        step = span / max(games, 1)
        for i in range(0, len(cards), BATCH):
            ends = {
                card.pk: start + step * (i + j) + timedelta(minutes=rng.randint(0, 90))
                for j, card in enumerate(cards[i : i + BATCH])
            }
            Scorecard.objects.filter(pk__in=list(ends)).update(
                finalized_at=Case(
                    *(When(pk=pk, then=Value(end)) for pk, end in ends.items()),
                    output_field=DateTimeField(),
                ),
                created_at=Case(
                    *(
                        When(pk=pk, then=Value(end - timedelta(minutes=35)))
                        for pk, end in ends.items()
                    ),
                    output_field=DateTimeField(),
                ),
            )
    if connection.vendor == "postgresql":
        # What autovacuum does soon after a bulk load: planner statistics, visibility map.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    connection.close()
    print(
        f"  seed: {players} players, {games} games, {len(seats)} seats in "
        f"{time.monotonic() - began:.1f} s",
        flush=True,
    )


def tables(n: int, floors: int, screens: int = 0) -> dict:
    """Six players for each of n tables (the first organizes): the seeded players, then
    newcomers with no games where the tables seat more people than the club has (a person
    holds one phone, as the streams' limit per user expects); and a logged-in session for
    every seat (a phone at a table has logged in long before): a log-in is not part of a
    club night's load, and it is slow on purpose."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import (
        BACKEND_SESSION_KEY,
        HASH_SESSION_KEY,
        SESSION_KEY,
        get_user_model,
    )
    from django.db import transaction
    from django.urls import reverse

    from scorecards.models import Screen

    backend = next(b for b in settings.AUTHENTICATION_BACKENDS if "axes" not in b)
    store = import_module(settings.SESSION_ENGINE).SessionStore
    User = get_user_model()
    users = list(User.objects.order_by("pk"))

    def session(user) -> str:
        s = store()
        s[SESSION_KEY] = user._meta.pk.value_to_string(user)
        s[BACKEND_SESSION_KEY] = backend
        s[HASH_SESSION_KEY] = user.get_session_auth_hash()
        s.create()
        return s.session_key

    password = users[0].password  # the seeded players' hash
    with transaction.atomic():
        newcomers = [
            User(username=f"nuevo{i:04d}", display_name=f"Nuevo {i:04d}", password=password)
            for i in range(len(users), 6 * n + floors)
        ]
        users += User.objects.bulk_create(newcomers, batch_size=BATCH)
        seated = [users[6 * t : 6 * t + 6] for t in range(n)]
        return {
            "session_cookie": settings.SESSION_COOKIE_NAME,
            "tables": [
                {"users": [u.pk for u in table], "sessions": [session(u) for u in table]}
                for table in seated
            ],
            "floor_sessions": [session(users[-1 - i]) for i in range(floors)],
            "screens": [
                reverse("screen_token", args=[Screen.objects.create(name=f"Tele {i}").token])
                for i in range(screens)
            ],
        }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=100)
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--tables", type=int, help="print the tables' sessions (JSON)")
    parser.add_argument("--floors", type=int, default=2)
    parser.add_argument("--screens", type=int, default=0, help="screen links to print")
    args = parser.parse_args(argv)
    import django

    django.setup()
    if args.tables is not None:
        print(json.dumps(tables(args.tables, args.floors, args.screens)))
    else:
        seed(players=args.players, games=args.games)
    return 0


if __name__ == "__main__":
    sys.exit(main())
