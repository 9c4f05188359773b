"""Who follows a digital card now: the players whose phones hold its stream
(scorecards.live), or poll it where a stream cannot stay open, whichever process of whichever
app server serves them. The streams tell the table (a «presence» event), and each page marks
the names and quiets the organizer's «Tirar por» of a player who can roll on their own phone
(card.html).

It is shared through Django's cache, which every process and app server sees. Each process
that holds streams writes the players they follow under a key of its own (one of SLOTS, taken
with cache.add) when that changes, and again every RENEW seconds; it reads every process's,
with the polling phones' marks, in one get_many, once every EVERY seconds: no query per
stream. A process that ends stops renewing its key, which the cache forgets after KEPT seconds.
"""

import time
import uuid

from django.core.cache import cache

from scorecards.models import Seat

# How often a process shares its streams' players and reads everyone's.
EVERY = 1.0
# How long the cache keeps a process's word, which it renews every RENEW seconds.
KEPT = 10
RENEW = 3.0
# How long a stream that closed still counts: a page reloaded, or a stream that reconnects,
# does not show its player gone and back.
GRACE = 3.0
# How long a poll counts: a digital card's page polls every 2 s.
POLLED = 6
# Processes holding streams at once, on every app server together.
SLOTS = 32


def slot_key(n: int) -> str:
    return f"dados:presence:{n}"


def polled_key(pk: int, user_id: int) -> str:
    return f"dados:presence:{pk}:{user_id}"


def polled(pk: int, user_id: int) -> None:
    """The player's phone polls card pk: it follows it for the next POLLED seconds."""
    cache.set(polled_key(pk, user_id), True, POLLED)


class Slot:
    """One process's word in the cache: which players its streams follow, by card."""

    def __init__(self):
        self.token = uuid.uuid4().hex
        self.number: int | None = None
        self.said: dict | None = None
        self.renew_at = 0.0

    def exchange(self, mine: dict[int, set[int]], players: dict[int, tuple[int, ...]]):
        """Say `mine` (card → the players this process's streams follow), and read who
        follows each card in `players` (card → its seats' players, read here for a card
        missing one) on any process or polling: (card → those players, players)."""
        if missing := [pk for pk, seated in players.items() if seated is None]:
            seats = Seat.objects.filter(scorecard_id__in=missing).values_list(
                "scorecard_id", "player_id"
            )
            players = players | dict.fromkeys(missing, ())
            for pk, player_id in seats:
                players[pk] += (player_id,)
        keys = [slot_key(n) for n in range(SLOTS)]
        keys += [polled_key(pk, user_id) for pk, seated in players.items() for user_id in seated]
        found = cache.get_many(keys)
        if self.number is not None and found.get(slot_key(self.number), {}).get("token") != (
            self.token
        ):
            self.number = None  # forgotten (this process stalled), perhaps taken since
        self._say({pk: sorted(users) for pk, users in mine.items() if users}, found)
        following = {}
        for pk, seated in players.items():
            users = set(mine.get(pk, ()))
            for n in range(SLOTS):
                if n != self.number and (word := found.get(slot_key(n))):
                    users.update(word["cards"].get(pk, ()))
            users.update(user for user in seated if polled_key(pk, user) in found)
            following[pk] = frozenset(users & set(seated))
        return following, players

    def _say(self, said: dict, found: dict) -> None:
        now = time.monotonic()
        if not said:
            if self.number is not None:
                cache.delete(slot_key(self.number))
            self.number, self.said = None, None
            return
        if self.number is not None and said == self.said and now < self.renew_at:
            return
        word = {"token": self.token, "cards": said}
        if self.number is not None:
            cache.set(slot_key(self.number), word, KEPT)
        else:
            free = (n for n in range(SLOTS) if slot_key(n) not in found)
            self.number = next((n for n in free if cache.add(slot_key(n), word, KEPT)), None)
        self.said, self.renew_at = said, now + RENEW
