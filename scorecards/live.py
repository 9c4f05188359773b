"""The live card, pushed: a card page holds a stream of Server-Sent Events that brings
what changed each time the card's version moves: the patch its poll would get
(sheets.stream_patch, rendered once for every viewer), or, when the page
needs the whole sheet (too far behind, a finalized card), the version alone, and the
page asks its poll.

Each process watches the versions of every card it streams with one query a few times a
second (Versions), on a thread of its own: no database connection and no thread per
phone, and a write in any process, on any app server, is seen by every stream.

A stream lives only as long as the session that opened it: before each event it asks
whether its viewer may still follow the card (may_follow, Django's own get_user). That
full check runs again only when what it depends on has changed (Viewer.looks: the session
still there, the account's password, active and staff flags). The same read that finds a
card moved finds how its viewers look, right after; everyone's looks are read again every
LOOKS_EVERY seconds, for the heartbeats of the cards that did not move.

A digital card's streams also say who follows it now («presence», scorecards.presence),
each time that changes: the process shares and reads it once a second for all its streams.
"""

import asyncio
import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module
from typing import NamedTuple

from django.conf import settings
from django.contrib.auth import get_user, get_user_model
from django.contrib.sessions.models import Session
from django.db import close_old_connections
from django.http import HttpRequest
from django.utils import timezone

from scorecards import presence
from scorecards.models import Scorecard

logger = logging.getLogger(__name__)

# How often a process asks the database for the versions of the cards it streams.
EVERY = 0.25
# A comment line this often, so proxies and phones keep an idle connection open.
HEARTBEAT = 15.0
# How often a process reads how all its viewers look, not only those of the cards that
# moved: a heartbeat's check is at most this old.
LOOKS_EVERY = 2.0
# A stream ends this long after its page opened it, whatever moved since: only a request
# says that someone is still there. The page then polls, until its viewer comes back.
IDLE_LIMIT = 30 * 60.0
# Streams one user may hold open in one process (a phone, a tablet, a few tabs).
MAX_PER_USER = 8
# How long a browser waits before it reconnects a dropped stream (SSE's retry), in ms.
RETRY_MS = 2000


class State(NamedTuple):
    """A streamed card as the database last said it: its version, and whether it is
    over (finalized, or discarded: gone)."""

    version: int
    over: bool


GONE = State(version=-1, over=True)


class Viewer(NamedTuple):
    """Who follows a stream: the session that opened it, and the player it logged in."""

    session_key: str
    user_id: int


class Versions:
    """The versions of the cards this process streams, read for all of them at once."""

    def __init__(self, every: float = EVERY):
        self.every = every
        self.states: dict[int, State] = {}
        self._moved: dict[int, asyncio.Event] = {}
        self._watchers: Counter[int] = Counter()
        # Each viewer's looks as last read, and those at which may_follow last said yes.
        self.looks: dict[Viewer, tuple] = {}
        self._cleared: dict[Viewer, tuple | None] = {}
        self._viewers: Counter[Viewer] = Counter()
        self._viewers_of: dict[int, Counter[Viewer]] = {}
        self._looked_at = 0.0
        # The patches asked for while a card is at a version, by what they bring: a table's
        # streams in this process take one answer (sheets.stream_patch), not one each.
        self._patches: dict[tuple, asyncio.Future] = {}
        # A digital card's streams here, by card and player (a closed one for presence.GRACE,
        # in _left), its seats' players, and who follows it anywhere, as last read.
        self.following: Counter[tuple[int, int]] = Counter()
        self._left: dict[tuple[int, int], float] = {}
        self.players: dict[int, tuple[int, ...] | None] = {}
        self.here: dict[int, frozenset[int]] = {}
        self._slot = presence.Slot()
        self._shared_at = 0.0
        self._task: asyncio.Task | None = None
        # One thread, so one database connection, whatever the number of streams.
        self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dados-live")

    def watch(
        self, pk: int, state: State, viewer: Viewer, looks: tuple | None = None, present=False
    ) -> None:
        """Follow card pk for viewer; `looks`: how they looked when the view found that they
        may (looks_of), which spares the first event a full check; `present`: a digital
        card, whose streams say who follows it."""
        self._watchers[pk] += 1
        self._viewers[viewer] += 1
        self._viewers_of.setdefault(pk, Counter())[viewer] += 1
        if looks is not None:
            self._cleared.setdefault(viewer, looks)
        self.states.setdefault(pk, state)
        if present:
            self.following[pk, viewer.user_id] += 1
            self._left.pop((pk, viewer.user_id), None)
            self.players.setdefault(pk, None)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._follow())

    def unwatch(self, pk: int, viewer: Viewer, present=False) -> None:
        if present:
            self.following[pk, viewer.user_id] -= 1
            if self.following[pk, viewer.user_id] <= 0:
                del self.following[pk, viewer.user_id]
                self._left[pk, viewer.user_id] = time.monotonic()
        self._watchers[pk] -= 1
        self._viewers_of[pk][viewer] -= 1
        if self._viewers_of[pk][viewer] <= 0:
            del self._viewers_of[pk][viewer]
        if self._watchers[pk] <= 0:
            del self._watchers[pk]
            del self._viewers_of[pk]
            self.states.pop(pk, None)
            self._moved.pop(pk, None)
            self._forget_patches(pk)
            self.players.pop(pk, None)
            self.here.pop(pk, None)
        self._viewers[viewer] -= 1
        if self._viewers[viewer] <= 0:
            del self._viewers[viewer]
            self.looks.pop(viewer, None)
            self._cleared.pop(viewer, None)

    async def allows(self, viewer: Viewer, pk: int) -> bool:
        """Whether viewer may still follow card pk: yes while they look as they did when
        may_follow last said so; otherwise as may_follow says now."""
        looks = self.looks.get(viewer)
        if looks is not None and viewer in self._cleared and self._cleared[viewer] == looks:
            return True
        looks, allowed = await self.run(_looks_and_may_follow, viewer, pk)
        if allowed:
            self._cleared[viewer] = looks
        return allowed

    async def moved(
        self, pk: int, shown: State, timeout: float, here: frozenset | None = None
    ) -> State | None:
        """The card's state once it is no longer `shown`, or once who follows it is no
        longer `here` (with `here`, a digital card's); None if both still are after timeout
        seconds."""
        deadline = time.monotonic() + timeout
        while (state := self.states.get(pk, GONE)) == shown and self.here.get(pk, here) == here:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            event = self._moved.setdefault(pk, asyncio.Event())
            try:
                await asyncio.wait_for(event.wait(), left)
            except TimeoutError:
                return None
        return state

    async def patch(self, key: tuple, fn, *args):
        """fn(*args) on the database thread, asked once for every stream that asks with the
        same key (the card, the versions, the language) until the card moves again."""
        if (future := self._patches.get(key)) is None:
            future = self._patches[key] = asyncio.ensure_future(self.run(fn, *args))
        return await asyncio.shield(future)

    def _forget_patches(self, pk: int) -> None:
        for key in [key for key in self._patches if key[0] == pk]:
            del self._patches[key]

    async def run(self, fn, *args):
        """fn(*args) on the process's one thread for the database, and so on its one
        connection: the versions' reads, and the patches' renders for every stream."""
        return await asyncio.get_running_loop().run_in_executor(self._reader, fn, *args)

    def _wake(self, pk: int) -> None:
        """Wakes every stream of the card; the next wait makes a new event."""
        if event := self._moved.pop(pk, None):
            event.set()

    async def _follow(self) -> None:
        # Until the last stream is gone, and its word in the cache with it (a closed stream
        # still counts for presence.GRACE: the others are told when it no longer does).
        while self._watchers or self._left or self._slot.number is not None:
            pks = list(self._watchers)
            if pks:
                everyone = time.monotonic() - self._looked_at >= LOOKS_EVERY
                if everyone:
                    self._looked_at = time.monotonic()
                viewers = {pk: list(self._viewers_of[pk]) for pk in pks}
                known = {pk: self.states.get(pk) for pk in pks}
                read, looks = await self.run(_read, known, viewers, everyone, set(self.looks))
                self.looks.update((v, seen) for v, seen in looks.items() if v in self._viewers)
            for pk in pks:
                state = read.get(pk, GONE)
                if pk in self._watchers and self.states.get(pk) != state:
                    self.states[pk] = state
                    self._forget_patches(pk)
                    self._wake(pk)
            over = not (self._watchers or self._left)
            if over or time.monotonic() - self._shared_at >= presence.EVERY:
                await self._share()
            await asyncio.sleep(self.every)

    async def _share(self) -> None:
        """Say which players this process's streams follow, and read who follows each
        digital card it streams, anywhere: its streams are woken when that changed."""
        self._shared_at = now = time.monotonic()
        self._left = {key: at for key, at in self._left.items() if now - at < presence.GRACE}
        mine: dict[int, set[int]] = {}
        for pk, user_id in [*self.following, *self._left]:
            mine.setdefault(pk, set()).add(user_id)
        if not (mine or self.players or self._slot.number is not None):
            return  # no digital card streamed here: nothing to say, nothing to read
        try:
            here, players = await self.run(self._slot.exchange, mine, dict(self.players))
        except Exception:
            # Who follows a card is a hint: a cache that fails must not stop the versions.
            logger.exception("Presence not shared")
            if not mine:
                self._slot.number = None  # the cache forgets it after presence.KEPT
            return
        for pk, following in here.items():
            if pk in self.players:
                self.players[pk] = players[pk]
                if self.here.get(pk) != following:
                    self.here[pk] = following
                    self._wake(pk)


def _read(known, viewers, everyone, looked) -> tuple[dict[int, State], dict[Viewer, tuple]]:
    """The states of the cards (known: as last read), then how the viewers of those that
    moved look, with those not yet looked at, or, with `everyone`, how all of them look:
    in that order, so that a log-out before a write is seen no later than the write."""
    # The reader's connection lives as long as CONN_MAX_AGE allows, as a request's would.
    close_old_connections()
    rows = Scorecard.objects.filter(pk__in=known).values_list("pk", "version", "finalized_at")
    states = {pk: State(version, finalized_at is not None) for pk, version, finalized_at in rows}
    asked = {
        viewer
        for pk, of in viewers.items()
        for viewer in of
        if everyone or states.get(pk, GONE) != known[pk] or viewer not in looked
    }
    return states, viewers_looks(asked) if asked else {}


def viewers_looks(viewers) -> dict[Viewer, tuple]:
    """What may_follow's answer for each viewer depends on, read for all of them in two
    queries: whether their session is still there, and their account's password (a new
    one ends the other sessions), active and staff flags."""
    keys = {viewer.session_key for viewer in viewers}
    now = timezone.now()
    sessions = Session.objects.filter(session_key__in=keys, expire_date__gt=now)
    alive = set(sessions.values_list("session_key", flat=True))
    users = get_user_model().objects.filter(pk__in={viewer.user_id for viewer in viewers})
    accounts = {
        pk: account for pk, *account in users.values_list("pk", "password", "is_active", "is_staff")
    }
    return {
        viewer: (viewer.session_key in alive, tuple(accounts.get(viewer.user_id, ())))
        for viewer in viewers
    }


def looks_of(user) -> tuple:
    """How viewers_looks reads a viewer whose session is there, from their account."""
    return True, (user.password, user.is_active, user.is_staff)


def _looks_and_may_follow(viewer: Viewer, pk: int) -> tuple[tuple, bool]:
    # How the viewer looks first: whatever changes after it, the next tick sees.
    return viewers_looks([viewer])[viewer], may_follow(viewer, pk)


def may_follow(viewer: Viewer, pk: int) -> bool:
    """Whether the viewer's session still logs in their player, as its next request would
    find it (not logged out, expired, or ended by a password change, and the player still
    active), and that player may still see card pk, unless it is gone (discarded: the
    stream says its end)."""
    request = HttpRequest()
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(viewer.session_key)
    user = get_user(request)
    if user.pk != viewer.user_id:
        return False
    seen = Scorecard.objects.for_user(user).values("pk")
    return not Scorecard.objects.filter(pk=pk).exclude(pk__in=seen).exists()


# One per event loop: a process serves its streams from one loop (uvicorn's); tests may
# run several loops one after another.
_versions: dict[asyncio.AbstractEventLoop, Versions] = {}
_streams: Counter[int] = Counter()


def versions() -> Versions:
    loop = asyncio.get_running_loop()
    if loop not in _versions:
        for old in [old for old in _versions if old.is_closed()]:
            del _versions[old]
        _versions[loop] = Versions()
    return _versions[loop]


def admit(user_id: int) -> bool:
    """Count one more stream for user_id, unless they hold MAX_PER_USER already; whether
    it was counted. The count goes up as the stream is accepted, so that opens arriving
    together cannot all pass it; Admitted takes it down again."""
    if _streams[user_id] >= MAX_PER_USER:
        return False
    _streams[user_id] += 1
    return True


class Admitted:
    """A stream admit() counted, as a response's content: its events, and a close() that
    Django calls once the response is over, sent or not (a phone gone before its first
    event), which gives the place back."""

    def __init__(self, user_id: int, events):
        self.user_id = user_id
        self.events = events
        self.closed = False

    def __aiter__(self):
        return aiter(self.events)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            _streams[self.user_id] -= 1
            if _streams[self.user_id] <= 0:
                del _streams[self.user_id]


def event(name: str, version: int | str = "", data: str | None = None) -> str:
    """One Server-Sent Event (data on one line); its id is the version, which a
    reconnecting browser sends back as Last-Event-ID."""
    head = f"id: {version}\n" if version != "" else ""
    return f"{head}event: {name}\ndata: {version if data is None else data}\n\n"


# What a stream asks when the card has moved from the version its page shows to another:
# the patch between them and the version it brings (perhaps later still), or None. It
# runs on the process's database thread (Versions.run), one stream's after another's.
Patch = Callable[[int, int], tuple[int, str] | None]


async def stream(
    pk: int,
    viewer: Viewer,
    shown: int,
    state: State,
    patch: Patch,
    login: str,
    share=None,
    looks: tuple | None = None,
    present=False,
):
    """The card's events for a page that shows version `shown`, whenever the card moves
    (at once if it already has): «patch», whose data is {"base": the version it applies
    to, "html": the patch}, or «version» when the page must ask (patch gave None). Then
    «end» once the card is over, «idle» IDLE_LIMIT after it opened, and a comment line
    every HEARTBEAT seconds between them. Before each event and each heartbeat it asks
    whether its viewer may still follow the card: if not, «login», whose data is where to
    log in again, and nothing more. Streams that give the same `share` (the language their
    patches are in) take one answer for the same change; `looks`, how the viewer looked
    when the view let them follow (looks_of), spares the first event the full check.
    With `present` (a digital card), «presence» whenever who follows it changes, whose data
    is their ids (scorecards.presence), and once as soon as it is known."""
    hub = versions()
    hub.watch(pk, state, viewer, looks, present)
    said = None  # who follows the card, as this stream last said
    try:
        yield f"retry: {RETRY_MS}\n\n"
        idle_until = time.monotonic() + IDLE_LIMIT
        while True:
            if state.version > shown:
                asked = (pk, shown, state.version, share)
                found = None if state.over else await hub.patch(asked, patch, shown, state.version)
                if found is None:
                    shown = state.version
                    yield event("version", shown)
                else:
                    base, (shown, html) = shown, found
                    data = json.dumps({"base": base, "html": html}, ensure_ascii=False)
                    yield event("patch", shown, data)
            if present and not state.over and hub.here.get(pk, said) != said:
                said = hub.here[pk]
                yield event("presence", data=" ".join(str(user) for user in sorted(said)))
            if state.over:
                yield event("end")
                return
            left = idle_until - time.monotonic()
            if left <= 0:
                yield event("idle")
                return
            moved = await hub.moved(pk, state, min(HEARTBEAT, left), said if present else None)
            # The view asked as it opened; from then on, before anything is sent.
            if not await hub.allows(viewer, pk):
                yield event("login", data=login)
                return
            if moved is None:
                yield ": ping\n\n"
            else:
                state = moved
    finally:
        hub.unwatch(pk, viewer, present)
