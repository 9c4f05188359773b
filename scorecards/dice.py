"""The dice of digital games. The server rolls them: a browser only says which to keep."""

from django.conf import settings
from django.utils.module_loading import import_string

from scorecards import rules

# «¿Quién empieza?» stops after this many rounds of ties, rolled or typed (forms).
MAX_ROUNDS = 20


def source():
    """The random source settings.DICE_SOURCE names (secrets.SystemRandom by default)."""
    return import_string(settings.DICE_SOURCE)()


def roll(previous: str = "", kept=(), *, rng=None) -> str:
    """Five dice as a string of faces («31456»): the 1-based positions in kept keep their
    faces from previous, every other die is rolled."""
    rng = rng or source()
    return "".join(
        previous[position - 1] if position in kept else str(rng.randint(1, rules.FACES))
        for position in range(1, rules.DICE + 1)
    )


def who_starts(count, *, rng=None) -> list[str]:
    """«¿Quién empieza?» with the app's dice, for count players: each rolls five dice,
    and the tied roll again, only they, until one is ahead. Each round's sums, in order,
    comma-separated: the order page's `s` values."""
    rng = rng or source()
    rounds = []
    contenders = count
    while contenders > 1 and len(rounds) < MAX_ROUNDS:
        sums = [sum(map(int, roll(rng=rng))) for _ in range(contenders)]
        rounds.append(",".join(map(str, sums)))
        contenders = sums.count(max(sums))
    return rounds
