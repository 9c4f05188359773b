"""The dice of digital games. The server rolls them: a browser only says which to keep."""

from django.conf import settings
from django.core import signing
from django.utils.module_loading import import_string

from scorecards import rules

# «¿Quién empieza?» stops after this many rounds of ties, rolled or typed (forms).
MAX_ROUNDS = 20

# Its own salt: nothing else the app signs passes for the rolls of «¿Quién empieza?».
WHO_STARTS_SALT = "scorecards.dice.who_starts"


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


def who_starts(ids, *, rng=None) -> str:
    """«¿Quién empieza?» with the app's dice, for the players with these ids: each rolls
    five dice, and the tied roll again, only they, until one is ahead. The order page's
    `tiradas`: each round's dice («66566,12312», five faces a player), in order, signed
    together with the ids in this order, so the browser carries them but can neither
    change them nor move them to other players."""
    rng = rng or source()
    rounds = []
    contenders = len(ids)
    while contenders > 1 and len(rounds) < MAX_ROUNDS:
        rolled = [roll(rng=rng) for _ in range(contenders)]
        rounds.append(",".join(rolled))
        sums = [faces_sum(faces) for faces in rolled]
        contenders = sums.count(max(sums))
    return signing.Signer(salt=WHO_STARTS_SALT).sign_object([list(ids), rounds])


def faces_sum(faces: str) -> int:
    return sum(int(face) for face in faces)


def is_roll(text: str) -> bool:
    """Whether text is five dice as roll() gives them: «31456»."""
    return (
        len(text) == rules.DICE
        and text.isascii()
        and text.isdigit()
        and all(1 <= int(face) <= rules.FACES for face in text)
    )


def verified_who_starts(signed: str, ids) -> tuple[list[int], list[str]] | None:
    """What who_starts rolled: the ids in the order they rolled and each round's dice,
    comma-separated (in an address signed before the dice were kept in it, their sums);
    None unless it was signed for these same players, seated in any order."""
    try:
        order, rounds = signing.Signer(salt=WHO_STARTS_SALT).unsign_object(signed)
    except signing.BadSignature:
        return None
    return (order, rounds) if sorted(order) == sorted(ids) else None
