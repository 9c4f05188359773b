"""Seed an empty database for the benchmark, in bulk.

    DJANGO_SETTINGS_MODULE=bench.settings DATABASE_URL=... python -m bench.seed \
        --players 100 --games 10000 --live-cards 50 --live-seats 6

Migrates, then writes (all deterministic, from a fixed random seed):

* `players` registered players: the host «Anfitriona» (username `anfitriona`) and the rest;
* `games` finalized games, 2 to 6 players each, spread over the last three years. The host
  organized and played every one of them, so her «Historial» and statistics page cover
  all `games` games (the worst case); the other players have a few hundred each;
* `live_cards` cards in progress of `live_seats` players each, every column half filled,
  each filled box with its change log entry. Like tables at a club, each card has an
  organizer of its own (a different player for each card while there are enough), who
  plays in it and wrote its entries; the host plays in every one of them, so her
  «Historial» also lists the most cards in progress.

Seats are inserted before their cards are finalized: a database trigger refuses seats for
a finalized card. Finalized games have no change log (no page the benchmark reads shows it).
"""

import argparse
import random
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HOST_USERNAME = "anfitriona"
# Every seeded player can log in with this password too (for poking at a seeded database).
PASSWORD = "banco-de-pruebas-dados"
RANDOM_SEED = 7
BATCH = 500

FIRST_NAMES = [
    "Lucía", "Martín", "Sofía", "Hugo", "Valentina", "Mateo", "Paula", "Álvaro", "Noa",
    "Daniel", "Carmen", "Íñigo", "Julia", "Pablo", "Nerea", "Adrián", "Irene", "Óscar",
]  # fmt: skip


def defaults() -> dict:
    return {"players": 100, "games": 10_000, "live_cards": 50, "live_seats": 6}


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


def seed(*, players, games, live_cards, live_seats, verbose=True) -> dict:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.db.models import Case, DateTimeField, Value, When
    from django.utils import timezone

    from scorecards import rules
    from scorecards.models import Change, Scorecard, Seat
    from scorecards.rules import Category

    def say(message):
        if verbose:
            print(f"  seed: {message}", flush=True)

    began = time.monotonic()
    call_command("migrate", interactive=False, verbosity=0)
    User = get_user_model()
    if User.objects.exists():
        raise SystemExit("The database already has users: the benchmark seeds only empty ones.")
    if not 2 <= live_seats <= players - 1:
        raise SystemExit("live_seats must be from 2 (an organizer and the host) to players - 1.")

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
        say(f"{len(people)} players")

        # Finalized games: cards, then seats, then finalized_at (the trigger's order).
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
        say(f"{len(cards)} games, {len(seats)} seats")

        span = timedelta(days=3 * 365)
        start = now - span - timedelta(days=1)
        step = span / max(games, 1)
        for i in range(0, len(cards), BATCH):
            batch = cards[i : i + BATCH]
            ends = {
                card.pk: start + step * (i + j) + timedelta(minutes=rng.randint(0, 90))
                for j, card in enumerate(batch)
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
        say("finalized")

        # Cards in progress, half filled, each filled box with its change log entry.
        organizers = rng.sample(others, len(others))
        live = Scorecard.objects.bulk_create(
            Scorecard(organizer=organizers[i % len(organizers)]) for i in range(live_cards)
        )
        live_seat_rows, writes = [], []
        for card in live:
            rest = [p for p in others if p != card.organizer]
            table = [card.organizer, host, *rng.sample(rest, live_seats - 2)]
            rng.shuffle(table)
            card_writes = []
            for order, player in enumerate(table):
                filled = rng.sample(list(Category), rng.randint(4, 9))
                column = random_column(rng, filled)
                seat = Seat(
                    scorecard=card,
                    player=player,
                    order=order,
                    **{c.value: v for c, v in column.items()},
                )
                live_seat_rows.append(seat)
                card_writes.append([(seat, c.value, v) for c, v in column.items()])
            # Round by round: every player's first box, then every player's second ...
            rounds = [
                w for turn in range(13) for column in card_writes for w in column[turn : turn + 1]
            ]
            writes.append((card, rounds))
        Seat.objects.bulk_create(live_seat_rows, batch_size=BATCH)
        changes = Change.objects.bulk_create(
            (
                Change(
                    scorecard=card,
                    author=card.organizer,
                    kind=Change.Kind.BOX,
                    items=[[seat.pk, box, None, value]],
                )
                for card, rounds in writes
                for seat, box, value in rounds
            ),
            batch_size=BATCH,
        )
        for card, rounds in writes:
            Scorecard.objects.filter(pk=card.pk).update(
                version=len(rounds), created_at=now - timedelta(minutes=rng.randint(5, 60))
            )
        say(f"{len(live)} cards in progress, {len(changes)} changes")

    if connection.vendor == "postgresql":
        # What autovacuum does soon after a bulk load: planner statistics, visibility map.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    connection.close()
    elapsed = time.monotonic() - began
    say(f"done in {elapsed:.1f} s")
    return {"seconds": elapsed}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, value in defaults().items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=value)
    args = parser.parse_args(argv)
    import django

    django.setup()
    seed(**vars(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
