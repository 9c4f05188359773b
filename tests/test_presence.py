"""Who follows a digital card now (scorecards.presence, the streams' «presence» event): shared
between processes through the cache, a polling phone counted too, sent only when it changes,
at no cost per stream; the page that shows it; and a roll refused because the other phone
rolled first, which says who did."""

import asyncio
import re
import time

import pytest
from django.core.cache import cache
from django.urls import reverse

from scorecards import live, presence, services, turns
from scorecards.models import Roll, Scorecard
from scorecards.services import Refused
from tests.factories import fill
from tests.test_live import run_apart

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture
def digital(organizer, ana, ben, carla):
    return services.scorecard_create(organizer=organizer, players=[ana, ben, carla], mode="digital")


class Counted:
    """The cache, counting what a process writes to it."""

    def __init__(self):
        self.writes = []

    def __getattr__(self, name):
        method = getattr(cache, name)
        if name in ("set", "add", "delete"):

            def counted(*args, **kwargs):
                self.writes.append(name)
                return method(*args, **kwargs)

            return counted
        return method


# Shared between processes (presence.Slot, one per process)


def test_two_processes_and_a_polling_phone_see_the_same_players(
    digital, organizer, ana, ben, carla
):
    first, second = presence.Slot(), presence.Slot()
    asked = {digital.pk: None}  # its seats' players, read by the first exchange
    here, players = first.exchange({digital.pk: {ana.pk, organizer.pk}}, asked)
    assert set(players[digital.pk]) == {ana.pk, ben.pk, carla.pk}
    # The organizer follows too, but is not seated: the marks are the seats'.
    assert here == {digital.pk: frozenset({ana.pk})}
    here, _ = second.exchange({digital.pk: {ben.pk}}, players)
    assert here[digital.pk] == {ana.pk, ben.pk}
    presence.polled(digital.pk, carla.pk)
    assert first.exchange({digital.pk: {ana.pk}}, players)[0][digital.pk] == {
        ana.pk,
        ben.pk,
        carla.pk,
    }
    # The first process's last stream is gone: its word with it.
    first.exchange({}, players)
    assert second.exchange({digital.pk: {ben.pk}}, players)[0][digital.pk] == {ben.pk, carla.pk}


def test_a_polling_phone_counts_until_the_cache_forgets_its_poll(digital, ana):
    presence.polled(digital.pk, ana.pk)
    slot = presence.Slot()
    players = {digital.pk: None}
    assert slot.exchange({}, players)[0][digital.pk] == {ana.pk}
    cache.delete(presence.polled_key(digital.pk, ana.pk))  # as the cache forgets it
    assert slot.exchange({}, players)[0][digital.pk] == frozenset()


def test_a_process_writes_only_when_its_streams_change_and_to_renew_its_word(
    digital, ana, ben, monkeypatch
):
    counted = Counted()
    monkeypatch.setattr(presence, "cache", counted)
    slot = presence.Slot()
    _, players = slot.exchange({digital.pk: {ana.pk}}, {digital.pk: None})
    assert counted.writes == ["add"]  # its slot, taken
    for _ in range(5):
        slot.exchange({digital.pk: {ana.pk}}, players)
    assert counted.writes == ["add"]
    slot.exchange({digital.pk: {ana.pk, ben.pk}}, players)
    assert counted.writes == ["add", "set"]
    slot.renew_at = time.monotonic() - 1  # RENEW seconds later
    slot.exchange({digital.pk: {ana.pk, ben.pk}}, players)
    assert counted.writes == ["add", "set", "set"]
    assert presence.RENEW * 3 <= presence.KEPT  # renewed well before the cache forgets it


def test_sharing_costs_a_query_for_a_cards_seats_once_then_none(
    organizer, ana, ben, django_assert_num_queries
):
    cards = [
        services.scorecard_create(organizer=organizer, players=[ana, ben], mode="digital")
        for _ in range(5)
    ]
    slot = presence.Slot()
    mine = {card.pk: {ana.pk} for card in cards}
    with django_assert_num_queries(1):  # the seats of the five cards
        _, players = slot.exchange(mine, dict.fromkeys(mine))
    # The cache's own reads and writes: tests run with each process's memory cache; the
    # database cache takes one SELECT for every read (get_many), whatever the streams.
    with django_assert_num_queries(0):
        here, _ = slot.exchange(mine, players)
    assert all(here[card.pk] == {ana.pk} for card in cards)


def test_a_slot_another_process_took_while_this_one_stalled_is_given_up(digital, ana, ben):
    stalled, other = presence.Slot(), presence.Slot()
    _, players = stalled.exchange({digital.pk: {ana.pk}}, {digital.pk: None})
    taken = stalled.number
    cache.delete(presence.slot_key(taken))  # KEPT seconds without a word from it
    other.exchange({digital.pk: {ben.pk}}, players)
    assert other.number == taken
    here, _ = stalled.exchange({digital.pk: {ana.pk}}, players)
    assert stalled.number not in (None, taken)
    assert here[digital.pk] == {ana.pk, ben.pk}
    assert other.exchange({digital.pk: {ben.pk}}, players)[0][digital.pk] == {ana.pk, ben.pk}


# The streams' «presence» event (live.stream, live.Versions)


class Table:
    """A process's streams of one digital card, with the database and the viewers' checks
    answered here: what each stream sent, by name."""

    def __init__(self, hub, pk):
        self.hub, self.pk = hub, pk
        self.sent: dict[int, list[str]] = {}
        self.tasks: dict[int, asyncio.Task] = {}

    def open(self, user_id):
        async def follow():
            viewer = live.Viewer(f"session-{user_id}", user_id)
            state = live.State(0, over=False)
            events = live.stream(
                self.pk, viewer, 0, state, lambda s, v: None, "/entrar/", present=True
            )
            async for text in events:
                if "event: presence" in text:
                    self.sent.setdefault(user_id, []).append(text.split("data: ")[1].strip())

        self.tasks[user_id] = asyncio.get_running_loop().create_task(follow())

    async def close(self, user_id):
        self.tasks.pop(user_id).cancel()
        await asyncio.sleep(0)

    async def said(self, user_id, what, timeout=3.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.sent.get(user_id, [])[-1:] == [what]:
                return time.monotonic()
            await asyncio.sleep(0.01)
        raise AssertionError(f"{user_id} was told {self.sent.get(user_id)}, not {what!r}")


@pytest.fixture
def hub(monkeypatch):
    """A process's hub ticking fast, its database answered here, and how many times it
    shared and read who follows (presence.Slot.exchange)."""
    monkeypatch.setattr(presence, "EVERY", 0.05)
    monkeypatch.setattr(presence, "GRACE", 0.3)

    def make(pk):
        hub = live.Versions(every=0.01)
        hub.exchanges = 0

        async def run(fn, *args):
            if fn is live._read:
                return {pk: live.State(0, over=False)}, {}
            if getattr(fn, "__name__", "") == "exchange":
                hub.exchanges += 1
            # On a thread, as the hub's own: the database is not the event loop's.
            return await asyncio.to_thread(fn, *args)

        async def allows(viewer, card):
            return True

        hub.run, hub.allows = run, allows
        monkeypatch.setattr(live, "versions", lambda: hub)
        return hub

    return make


@pytest.mark.django_db(transaction=True)
def test_a_stream_says_who_follows_the_card_once_and_again_only_when_it_changes(
    digital, ana, ben, hub
):
    pk = digital.pk
    both = " ".join(str(user) for user in sorted([ana.pk, ben.pk]))

    async def table():
        streams = Table(hub(pk), pk)
        streams.open(ana.pk)
        streams.open(ben.pk)
        await streams.said(ana.pk, both)
        await streams.said(ben.pk, both)
        await asyncio.sleep(0.5)  # ten exchanges, nothing changed: nothing more said
        assert streams.sent[ana.pk][-1:] == [both]
        told = len(streams.sent[ana.pk])
        # Ben's phone loses its stream: Ana is told once his GRACE is over, not before.
        closed = time.monotonic()
        await streams.close(ben.pk)
        seen = await streams.said(ana.pk, str(ana.pk))
        assert presence.GRACE <= seen - closed < presence.GRACE + 0.5
        # Back: told again at the next exchange.
        streams.open(ben.pk)
        await streams.said(ana.pk, both)
        await streams.said(ben.pk, both)
        assert streams.sent[ana.pk][told:] == [str(ana.pk), both]
        for user in list(streams.tasks):
            await streams.close(user)

    run_apart(table())


@pytest.mark.django_db(transaction=True)
def test_a_page_reloaded_within_the_grace_is_never_seen_gone(digital, ana, ben, hub):
    pk = digital.pk
    both = " ".join(str(user) for user in sorted([ana.pk, ben.pk]))

    async def table():
        streams = Table(hub(pk), pk)
        streams.open(ana.pk)
        streams.open(ben.pk)
        await streams.said(ana.pk, both)
        await streams.close(ben.pk)
        await asyncio.sleep(0.1)
        streams.open(ben.pk)  # his page, reloaded
        await asyncio.sleep(presence.GRACE + 0.2)
        assert streams.sent[ana.pk] == [both]
        for user in list(streams.tasks):
            await streams.close(user)

    run_apart(table())


@pytest.mark.django_db(transaction=True)
def test_who_follows_is_shared_once_a_tick_for_the_process_whatever_its_streams(
    organizer, ana, ben, carla, hub
):
    players = [ana, ben, carla]
    pk = services.scorecard_create(organizer=organizer, players=players, mode="digital").pk

    async def table():
        process = hub(pk)
        streams = Table(process, pk)
        for player in players * 2:  # six phones
            streams.open(player.pk)
        started = time.monotonic()
        await asyncio.sleep(0.5)
        ticks = (time.monotonic() - started) / presence.EVERY
        # Once a tick for the process, not once a tick for each of its six streams.
        assert 1 <= process.exchanges <= ticks + 2
        everyone = " ".join(str(pk) for pk in sorted(p.pk for p in players))
        assert all(streams.sent[p.pk][-1] == everyone for p in players)
        for task in list(streams.tasks.values()):
            task.cancel()

    run_apart(table())


# The poll (scorecards.views.card.scorecard_live)


def test_a_phone_that_polls_a_digital_card_follows_it(client, digital, ana, card, settings):
    settings.STREAMS_APART = True  # the other pages have streams to say it
    client.force_login(ana)
    live_url = reverse("scorecard_live", args=[digital.pk])
    assert client.get(live_url, {"version": 0}, headers=HTMX).status_code == 204
    assert cache.get(presence.polled_key(digital.pk, ana.pk)) is True
    # Not a physical card's poll: nothing to share there.
    client.get(reverse("scorecard_live", args=[card.pk]), {"version": 0}, headers=HTMX)
    assert cache.get(presence.polled_key(card.pk, ana.pk)) is None
    # Served without streams (WSGI alone), nobody would be told: nothing written.
    cache.clear()
    settings.STREAMS_APART = False
    client.get(reverse("scorecard_live", args=[digital.pk]), {"version": 0}, headers=HTMX)
    assert cache.get(presence.polled_key(digital.pk, ana.pk)) is None


def test_a_finished_digital_cards_poll_says_nobody_follows(
    client, organizer, ana, ben, scripted, settings
):
    settings.STREAMS_APART = True
    finished = services.scorecard_create(organizer=organizer, players=[ana, ben], mode="digital")
    fill(finished)
    finished.seats.filter(player=ben).update(chance=None)
    scripted += [2, 2, 3, 5, 6]
    version = Scorecard.objects.get(pk=finished.pk).version
    roll(finished, ben, version=version)
    turns.turn_score(scorecard_id=finished.pk, author=ben, version=str(version + 1), box="chance")
    assert Scorecard.objects.get(pk=finished.pk).is_finalized
    client.force_login(ana)
    client.get(reverse("scorecard_live", args=[finished.pk]), {"version": 0}, headers=HTMX)
    assert cache.get(presence.polled_key(finished.pk, ana.pk)) is None


# The page


def test_the_organizers_page_quiets_tirar_por_of_each_player_who_follows(
    client, digital, organizer, ana, ben, carla, settings
):
    settings.STREAMS_APART = True  # the page opens its stream, as under ASGI
    client.force_login(organizer)
    page = client.get(reverse("scorecard", args=[digital.pk])).text
    quiet = re.findall(r'\.card-page\[data-here~="(\d+)"\] #turn\[data-turn="(\d+)"\]', page)
    assert quiet == [(str(p.pk), str(p.pk)) for p in (ana, ben, carla)]
    # Each seat's heading is marked, in the seats' order (the sheet's columns).
    for column, player in enumerate((ana, ben, carla), start=2):
        assert f'[data-here~="{player.pk}"] #row-players th:nth-child({column})::before' in page
    assert re.search(r'<p id="presence" class="hint presence">.*</p>', page)
    assert "<bdi>Ben</bdi>: sin conexión." in page
    assert "<bdi>Ben</bdi>: con conexión." in page


def test_a_players_page_marks_the_names_but_has_no_tirar_por_to_quiet(
    client, digital, ana, settings
):
    settings.STREAMS_APART = True
    client.force_login(ana)
    page = client.get(reverse("scorecard", args=[digital.pk])).text
    assert 'id="presence"' in page
    assert "roll-button {" not in page


def test_a_physical_or_polling_page_shows_no_marks(client, card, digital, organizer, settings):
    client.force_login(organizer)
    settings.STREAMS_APART = True
    assert 'id="presence"' not in client.get(reverse("scorecard", args=[card.pk])).text
    # No stream (runserver, a WSGI server alone): nobody would say who follows.
    settings.STREAMS_APART = False
    assert 'id="presence"' not in client.get(reverse("scorecard", args=[digital.pk])).text


# Two phones roll at once (scorecards.turns)


def plain(message):
    """A message without the marks that isolate its names (accounts.names.isolate_text)."""
    return message.replace("\u2068", "").replace("\u2069", "")


def roll(card, author, version=0, shown=""):
    return turns.turn_roll(
        scorecard_id=card.pk, author=author, version=str(version), shown=shown, keep=[]
    )


def test_a_players_roll_refused_because_the_organizer_rolled_says_who(
    digital, organizer, ana, scripted
):
    scripted += [1, 2, 3, 4, 6]
    roll(digital, organizer)
    with pytest.raises(Refused) as refused:
        roll(digital, ana)  # from the same dice as the organizer's page showed: none
    assert plain(refused.value.message) == "Ha tirado Olga por ti: mira tus dados."
    assert refused.value.status == 409
    assert Scorecard.objects.get(pk=digital.pk).version == 1


def test_the_organizers_roll_refused_because_the_player_rolled_says_who(
    digital, organizer, ana, scripted
):
    scripted += [1, 2, 3, 4, 6]
    roll(digital, ana)
    with pytest.raises(Refused) as refused:
        roll(digital, organizer)
    assert plain(refused.value.message) == "Ha tirado Ana desde su móvil: mira sus dados."


def test_a_roll_sent_twice_from_one_phone_is_refused_as_before(digital, ana, scripted):
    scripted += [1, 2, 3, 4, 6]
    roll(digital, ana)
    with pytest.raises(Refused) as refused:
        roll(digital, ana)
    assert refused.value.message == (
        "La tarjeta ha cambiado desde que la viste: mira los dados de ahora."
    )


def test_the_refused_phone_is_told_who_rolled_in_its_sheet(
    client, digital, organizer, ana, scripted
):
    scripted += [1, 2, 3, 4, 6]
    roll(digital, organizer)
    client.force_login(ana)
    form = {"version": "0", "dados": ""}
    answer = client.post(reverse("roll", args=[digital.pk]), form, headers=HTMX)
    assert answer.status_code == 409
    assert 'role="alert">Ha tirado \u2068Olga\u2069 por ti: mira tus dados.<' in answer.text


def test_a_turn_ends_with_its_rolls_whoever_rolled_them_and_rolls_kept_before_who(
    digital, organizer, ana, scripted
):
    scripted += [1, 2, 3, 4, 6, 1, 2, 3, 4, 5]
    roll(digital, organizer)
    roll(digital, ana, version=1, shown="12346")
    rolls = Scorecard.objects.get(pk=digital.pk).turn_rolls
    assert [who for *_roll, who in rolls] == [organizer.pk, ana.pk]
    # A turn rolled before rolls said who (three fields each) ends as well.
    Scorecard.objects.filter(pk=digital.pk).update(turn_rolls=[row[:3] for row in rolls])
    turns.turn_score(scorecard_id=digital.pk, author=ana, version="2", box="chance")
    assert list(Roll.objects.filter(scorecard=digital).values_list("dice", flat=True)) == [
        "12346",
        "12345",
    ]


def test_the_marks_words_and_the_refusal_are_in_english_too(
    client, digital, organizer, ana, scripted, settings
):
    settings.STREAMS_APART = True
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    client.force_login(ana)
    page = client.get(reverse("scorecard", args=[digital.pk])).text
    assert "● connected · ○ offline" in page
    assert "<bdi>Ben</bdi>: offline." in page
    assert "sin conexión" not in page
    scripted += [1, 2, 3, 4, 6]
    roll(digital, organizer)
    form = {"version": "0", "dados": ""}
    answer = client.post(reverse("roll", args=[digital.pk]), form, headers=HTMX)
    assert "\u2068Olga\u2069 rolled for you: look at your dice." in answer.text
