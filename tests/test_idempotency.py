"""A box, the bonus line and «Yahtzee adicional» sent with an Idempotency-Key (issue 50): the
same write sent again is taken once and answered as taken (X-Dados-Replayed), another write
with its key is refused (422), a key that is no UUID too (400), and a write without a key
is as it always was."""

import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from scorecards import once
from scorecards.labels import BONUS_BOX
from scorecards.models import Change, Scorecard, Seat
from tests.factories import UserFactory, enter, make_scorecard, seat_of
from tests.screens import HTMX, write

pytestmark = pytest.mark.django_db

KEY = "0f8e2a34-5b6c-4d7e-8f90-a1b2c3d4e5f6"
ANOTHER_WRITE = (
    "Esta clave (Idempotency-Key) ya se usó en esta tarjeta para otra anotación: "
    "no se ha anotado nada."
)
NOT_A_KEY = "La clave de este envío (Idempotency-Key) no es un UUID: no se ha anotado nada."


def box(seat, name="fours", value="12", was=""):
    return reverse("box", args=[seat.scorecard_id, seat.pk, name]), {"value": value, "was": was}


def bonus(seat, value="1", was="0"):
    return box(seat, BONUS_BOX, value, was)


def joker(seat, face="4", name="fours"):
    return reverse("joker", args=[seat.scorecard_id, seat.pk]), {"face": face, "box": name}


# Each write's first send, unless told otherwise: Ana's Cuatros, her bonus line, an extra
# Yahtzee of fours; and how the card then says what it wrote.
WRITES = {"box": box, "bonus": bonus, "joker": joker}
SHOWN = {
    "box": "Cuatros — Ana: 12",
    "bonus": "Bonus Yahtzee — Ana: 1 ",
    "joker": "Cuatros — Ana: 20",
}


def version(seat) -> int:
    return Scorecard.objects.get(pk=seat.scorecard_id).version


def send(client, seat, request, key=None, shown=None):
    """A write from the card page (htmx) with the version the page shows, and a key."""
    url, data = request
    data = data | {"version": version(seat) if shown is None else shown}
    headers = HTMX if key is None else HTMX | {"Idempotency-Key": key}
    return client.post(url, data, headers=headers)


def state(seat):
    """What a write refused, or sent again, leaves as it found it: the card's version, its
    change log and Ana's column."""
    seat = Seat.objects.get(pk=seat.pk)
    changes = list(Change.objects.order_by("pk").values_list("pk", "items"))
    return version(seat), changes, seat.scores, seat.yahtzee_bonuses


@pytest.fixture
def seat(card, ana, organizer):
    """Ana's column with 50 in Yahtzee: her bonus line and extra Yahtzees may be written."""
    seat = seat_of(card, ana)
    enter(card, seat, organizer, yahtzee=50)
    return seat


# Sent again


@pytest.mark.parametrize("name", WRITES)
def test_a_write_sent_again_with_its_key_is_taken_once_and_answered_as_taken(
    org_client, seat, name
):
    shown = version(seat)
    first = send(org_client, seat, WRITES[name](seat), KEY)
    assert first.status_code == 200
    assert "X-Dados-Replayed" not in first
    taken = state(seat)
    assert taken[0] == shown + 1
    assert Change.objects.get(key=KEY).version == shown + 1
    # Its answer was lost: the outbox sends the same request again.
    again = send(org_client, seat, WRITES[name](seat), KEY, shown=shown)
    assert again.status_code == 200
    assert again["X-Dados-Replayed"] == "1"
    assert again["HX-Reswap"] == "none"
    assert again["X-Dados-Base"] == str(shown)
    assert again.text == first.text  # the patch its first send was answered with
    assert state(seat) == taken


def test_a_write_sent_again_without_htmx_goes_back_to_the_card(org_client, seat):
    url, data = box(seat)
    headers = {"Idempotency-Key": KEY}
    org_client.post(url, data, headers=headers)
    taken = state(seat)
    again = org_client.post(url, data, headers=headers)
    assert again.status_code == 302
    assert again.url == reverse("scorecard", args=[seat.scorecard_id])
    assert again["X-Dados-Replayed"] == "1"
    assert state(seat) == taken


@pytest.mark.parametrize("name", WRITES)
@pytest.mark.parametrize("page", ["as first sent", "one behind"])
def test_a_write_sent_again_after_the_card_moved_on_gets_the_whole_sheet(
    org_client, card, seat, ben, name, page
):
    shown = version(seat)
    send(org_client, seat, WRITES[name](seat), KEY)
    write(org_client, card, seat_of(card, ben), "ones", "3")  # another device
    taken = state(seat)
    # A page one behind saw this write's change but not the next one: a patch of this
    # change alone would not bring it up to date.
    behind = shown if page == "as first sent" else taken[0] - 1
    again = send(org_client, seat, WRITES[name](seat), KEY, shown=behind)
    assert again.status_code == 200
    assert again["X-Dados-Replayed"] == "1"
    assert "HX-Reswap" not in again
    assert again["X-Dados-Version"] == str(taken[0])
    assert again.text.lstrip().startswith('<div id="sheet">')
    assert f'aria-label="{SHOWN[name]}' in again.text
    assert 'aria-label="Unos — Ben: 3"' in again.text
    assert state(seat) == taken


@pytest.mark.parametrize(
    ("name", "later", "changed"),
    [
        ("box", "box", {"value": "16", "was": "12"}),
        ("bonus", "bonus", {"value": "2", "was": "1"}),
        ("joker", "box", {"value": "0", "was": "20"}),
    ],
)
def test_a_box_changed_after_the_first_send_is_no_conflict_for_the_write_sent_again(
    org_client, seat, name, later, changed
):
    """The key is looked up before what the box holds: it was changed after this write's
    first send, which is not a stale write (409) but one already taken."""
    send(org_client, seat, WRITES[name](seat), KEY)
    assert send(org_client, seat, WRITES[later](seat, **changed)).status_code == 200
    taken = state(seat)
    again = send(org_client, seat, WRITES[name](seat), KEY)
    assert again.status_code == 200
    assert again["X-Dados-Replayed"] == "1"
    assert state(seat) == taken


def test_a_write_sent_again_after_it_was_undone_is_not_made_again(org_client, card, seat):
    send(org_client, seat, box(seat), KEY)
    org_client.post(reverse("undo", args=[card.pk]), {"version": version(seat)})
    taken = state(seat)
    again = send(org_client, seat, box(seat), KEY)
    assert again["X-Dados-Replayed"] == "1"
    assert state(seat) == taken
    assert Seat.objects.get(pk=seat.pk).fours is None


def test_a_key_is_its_cards_own(org_client, organizer, ana, seat):
    other = seat_of(make_scorecard(organizer, [ana]), ana)
    assert "X-Dados-Replayed" not in send(org_client, seat, box(seat), KEY)
    response = send(org_client, other, box(other), KEY)
    assert response.status_code == 200
    assert "X-Dados-Replayed" not in response
    assert Change.objects.filter(key=KEY).count() == 2
    assert Seat.objects.get(pk=other.pk).fours == 12


def test_a_key_in_capitals_is_the_same_key(org_client, seat):
    send(org_client, seat, box(seat), KEY)
    taken = state(seat)
    assert send(org_client, seat, box(seat), KEY.upper())["X-Dados-Replayed"] == "1"
    assert state(seat) == taken


# Refused


@pytest.mark.parametrize(
    ("name", "other", "changed", "whose"),
    [
        ("box", "box", {"value": "16"}, "ana"),
        ("box", "box", {"name": "fives", "value": "15"}, "ana"),
        ("box", "box", {}, "ben"),
        ("box", "joker", {}, "ana"),
        ("bonus", "bonus", {"value": "2"}, "ana"),
        ("bonus", "bonus", {}, "ben"),
        ("joker", "joker", {"face": "3"}, "ana"),
        ("joker", "joker", {"name": "chance"}, "ana"),
        ("joker", "box", {"value": "20"}, "ana"),
    ],
    ids=[
        "box, another value",
        "box, another box",
        "box, another seat",
        "box, then a joker",
        "bonus, another count",
        "bonus, another seat",
        "joker, another face",
        "joker, another box",
        "joker, then a box of its score",
    ],
)
def test_the_same_key_with_another_write_is_refused_and_changes_nothing(
    org_client, card, seat, ben, name, other, changed, whose
):
    send(org_client, seat, WRITES[name](seat), KEY)
    taken = state(seat)
    target = seat if whose == "ana" else seat_of(card, ben)
    held = seat_of(card, ben).scores
    response = send(org_client, seat, WRITES[other](target, **changed), KEY)
    assert response.status_code == 422
    assert response.text.lstrip().startswith('<div id="sheet">')
    assert f'<div class="alert alert-error" role="alert">{ANOTHER_WRITE}</div>' in response.text
    assert "X-Dados-Replayed" not in response
    assert state(seat) == taken
    assert seat_of(card, ben).scores == held


@pytest.mark.parametrize("name", WRITES)
@pytest.mark.parametrize(
    "key",
    ["", "abc", KEY.replace("-", ""), "{" + KEY + "}", KEY + "0", "urn:uuid:" + KEY, KEY[:-1]],
)
def test_a_key_that_is_no_uuid_is_refused_and_changes_nothing(org_client, seat, name, key):
    before = state(seat)
    response = send(org_client, seat, WRITES[name](seat), key)
    assert response.status_code == 400
    assert f'<div class="alert alert-error" role="alert">{NOT_A_KEY}</div>' in response.text
    assert state(seat) == before


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_who_may_write_comes_before_the_key(client, card, ana, seat, who, status):
    client.force_login(ana if who == "player" else UserFactory())
    before = state(seat)
    assert send(client, seat, box(seat), "abc").status_code == status
    assert send(client, seat, box(seat), KEY).status_code == status
    assert state(seat) == before


# Without a key


def test_a_write_without_a_key_is_as_before(org_client, seat):
    first = send(org_client, seat, box(seat))
    assert first.status_code == 200
    assert first["HX-Reswap"] == "none"
    assert "X-Dados-Replayed" not in first
    assert Change.objects.latest("pk").key is None
    taken = state(seat)
    # Sent again: the box already holds it, nothing to write; the whole sheet.
    again = send(org_client, seat, box(seat), shown=taken[0] - 1)
    assert again.status_code == 200
    assert again.text.lstrip().startswith('<div id="sheet">')
    assert "X-Dados-Replayed" not in again
    # A write that did not see the 12 is refused, as ever.
    stale = send(org_client, seat, box(seat, value="16"))
    assert stale.status_code == 409
    assert "Cuatros cambió mientras tanto (ahora: 12)." in stale.text
    assert state(seat) == taken


@pytest.mark.parametrize(
    ("name", "stale", "fresh"),
    [
        ("box", {"value": "16"}, {"value": "16", "was": "12"}),
        ("bonus", {"value": "2"}, {"value": "2", "was": "1"}),
    ],
)
def test_a_stale_write_with_a_key_is_still_a_conflict_and_takes_no_key(
    org_client, seat, name, stale, fresh
):
    send(org_client, seat, WRITES[name](seat))  # another device, without a key
    taken = state(seat)
    response = send(org_client, seat, WRITES[name](seat, **stale), KEY)
    assert response.status_code == 409
    assert "cambió mientras tanto" in response.text
    assert state(seat) == taken
    # The key is still free: sent again from what the box holds now, the write is made.
    response = send(org_client, seat, WRITES[name](seat, **fresh), KEY)
    assert response.status_code == 200
    assert "X-Dados-Replayed" not in response
    assert Change.objects.get(key=KEY).version == taken[0] + 1


# At once


@pytest.mark.django_db(transaction=True)
def test_two_sends_of_one_write_at_once_make_one_change(organizer, seat):
    """The card's lock queues them: the second finds the first one's change. (Without the
    key the second extra Yahtzee of fours would be refused: Cuatros is taken.)"""
    clients = [Client(), Client()]
    for client in clients:
        client.force_login(organizer)
    shown = version(seat)
    barrier = threading.Barrier(2)
    answers = []

    def tap(client):
        try:
            barrier.wait()
            answers.append(send(client, seat, joker(seat), KEY, shown=shown))
        finally:
            connection.close()

    threads = [threading.Thread(target=tap, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [answer.status_code for answer in answers] == [200, 200]
    assert sorted(answer.get("X-Dados-Replayed", "") for answer in answers) == ["", "1"]
    assert Change.objects.filter(key=KEY).count() == 1
    assert version(seat) == shown + 1
    assert Seat.objects.get(pk=seat.pk).yahtzee_bonuses == 1


def test_a_second_change_with_a_key_is_refused_by_the_database_and_answered_as_taken(
    org_client, card, seat, monkeypatch
):
    """The last guard, change_key_once: a send that missed its key's change (none can
    while the card's lock queues them; here the lookup misses once) records its own, which
    the database refuses, and is made again: it finds the change and is answered as
    taken, its version and box rolled back."""
    send(org_client, seat, box(seat), KEY)
    org_client.post(reverse("undo", args=[card.pk]), {"version": version(seat)})
    taken = state(seat)  # Cuatros is blank again: the write would be made
    replayed, looked = once.replayed, []

    def missing_once(*args, **kwargs):
        looked.append(kwargs)
        return None if len(looked) == 1 else replayed(*args, **kwargs)

    monkeypatch.setattr(once, "replayed", missing_once)
    again = send(org_client, seat, box(seat), KEY)
    assert len(looked) == 2
    assert again.status_code == 200
    assert again["X-Dados-Replayed"] == "1"
    assert state(seat) == taken


# A write that found its value already there


@pytest.fixture
def unchanged(org_client, seat):
    """Ana's Cuatros already holds 12 (another device wrote it): the same 12 sent with KEY
    changes nothing, and is answered with the card's version (taken), which it does not
    move."""
    send(org_client, seat, box(seat))
    before = state(seat)
    response = send(org_client, seat, box(seat), KEY)
    assert response.status_code == 200
    assert response["X-Dados-Version"] == str(before[0])
    assert "X-Dados-Replayed" not in response
    assert state(seat) == before
    return before


def test_a_write_that_changed_nothing_sent_again_is_answered_as_taken(org_client, seat, unchanged):
    again = send(org_client, seat, box(seat), KEY, shown=unchanged[0] - 1)
    assert again.status_code == 200
    assert again["X-Dados-Replayed"] == "1"
    assert again["X-Dados-Version"] == str(unchanged[0])
    assert state(seat) == unchanged


@pytest.mark.parametrize(
    ("other", "changed", "whose"),
    [
        ("box", {"value": "16", "was": "12"}, "ana"),
        ("box", {"name": "fives", "value": "15"}, "ana"),
        ("box", {}, "ben"),
        ("joker", {"face": "3", "name": "threes"}, "ana"),
    ],
    ids=["another value", "another box", "another seat", "a joker"],
)
def test_the_key_of_a_write_that_changed_nothing_writes_nothing_else(
    org_client, card, seat, ben, unchanged, other, changed, whose
):
    target = seat if whose == "ana" else seat_of(card, ben)
    held = seat_of(card, ben).scores
    response = send(org_client, seat, WRITES[other](target, **changed), KEY)
    assert response.status_code == 422
    assert f'<div class="alert alert-error" role="alert">{ANOTHER_WRITE}</div>' in response.text
    assert state(seat) == unchanged
    assert seat_of(card, ben).scores == held


def test_a_key_that_changed_nothing_is_its_cards_own(org_client, organizer, ana, seat, unchanged):
    other = seat_of(make_scorecard(organizer, [ana]), ana)
    response = send(org_client, other, box(other), KEY)
    assert response.status_code == 200
    assert "X-Dados-Replayed" not in response
    assert Seat.objects.get(pk=other.pk).fours == 12


def test_a_second_unchanged_write_with_a_key_is_refused_by_the_database_and_answered_as_taken(
    org_client, seat, unchanged, monkeypatch
):
    """The last guard for a key kept without a change: a send that missed it (here the
    lookup misses once) keeps the key again, which the database refuses; made again, the
    write finds the key and is answered as taken."""
    replayed, looked = once.replayed, []

    def missing_once(*args, **kwargs):
        looked.append(kwargs)
        return None if len(looked) == 1 else replayed(*args, **kwargs)

    monkeypatch.setattr(once, "replayed", missing_once)
    again = send(org_client, seat, box(seat), KEY)
    assert len(looked) == 2
    assert again.status_code == 200
    assert again["X-Dados-Replayed"] == "1"
    assert state(seat) == unchanged
