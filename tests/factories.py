import functools

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

PASSWORD = "una-contraseña-de-prueba"


@functools.cache
def _hashed_password():
    # Hash once: the production hasher is slow on purpose, and tests create many players.
    return make_password(PASSWORD)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ["username"]

    username = factory.Sequence(lambda n: f"jugador{n}")
    display_name = factory.Sequence(lambda n: f"Jugador {n}")
    password = factory.LazyFunction(_hashed_password)
    plays = True


def full_card(**overrides):
    """A consistent, complete column: 63 above (bonus), every box used."""
    scores = {
        "ones": 3,
        "twos": 6,
        "threes": 9,
        "fours": 12,
        "fives": 15,
        "sixes": 18,
        "three_of_a_kind": 20,
        "four_of_a_kind": 0,
        "full_house": 25,
        "small_straight": 30,
        "large_straight": 0,
        "yahtzee": 50,
        "chance": 22,
    }
    scores.update(overrides)
    return scores


def make_scorecard(organizer=None, players=(), n=2):
    from scorecards.services import scorecard_create

    organizer = organizer or UserFactory()
    players = list(players) or [UserFactory() for _ in range(n)]
    return scorecard_create(organizer=organizer, players=players)


def seat_of(scorecard, player):
    return scorecard.seats.get(player=player)


def enter(scorecard, seat, author, **boxes):
    """Write blank boxes through the app's service, each with its change log entry."""
    from scorecards.services import box_write

    for box, value in boxes.items():
        box_write(
            scorecard_id=scorecard.pk,
            seat_id=seat.pk,
            box=box,
            value=str(value),
            was="",
            author=author,
        )


def fill(scorecard, **per_seat):
    """Write boxes directly (no change log) for arranging tests."""
    for seat in scorecard.seats.all():
        for box, value in full_card(**per_seat).items():
            setattr(seat, box, value)
        seat.save()


def finalized_games(players, n, *, start=None, organizer=None):
    """n finalized games among players, organized by the first player unless organizer
    is given, written in bulk (fast enough for 500 games)."""
    from datetime import timedelta

    from django.utils import timezone

    from scorecards import rules
    from scorecards.models import Scorecard, Seat

    start = start or timezone.now() - timedelta(days=n)
    organizer = organizer or players[0]
    cards = Scorecard.objects.bulk_create(Scorecard(organizer=organizer) for _ in range(n))
    seats = []
    for g, card in enumerate(cards):
        chances = [5 + (g * 7 + i * 11) % 26 for i in range(len(players))]
        totals = [rules.totals(full_card(chance=c)).total for c in chances]
        places = rules.positions(totals)
        for i, player in enumerate(players):
            seats.append(
                Seat(
                    scorecard=card,
                    player=player,
                    order=i,
                    total=totals[i],
                    place=places[i],
                    **full_card(chance=chances[i]),
                )
            )
    Seat.objects.bulk_create(seats)
    # Finalize last: the database refuses seats added to a finalized card.
    for g, card in enumerate(cards):
        Scorecard.objects.filter(pk=card.pk).update(finalized_at=start + timedelta(days=g))
    return cards


def logged_items(**filters) -> list[tuple]:
    """Every item of the change log, oldest first: (seat id, box, old, new)."""
    from scorecards.models import Change

    changes = Change.objects.filter(**filters).order_by("pk")
    return [tuple(item) for change in changes for item in change.items]
