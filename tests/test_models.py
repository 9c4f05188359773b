"""scorecards.models: who sees a card, what a card knows, and what the database refuses."""

import uuid

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError
from django.utils import translation

from scorecards import rules, services
from scorecards.labels import BONUS_BOX
from scorecards.models import Change, FinalizedError, Scorecard, Seat
from scorecards.rules import Category
from tests.factories import UserFactory, enter, fill, full_card, make_scorecard, seat_of

pytestmark = pytest.mark.django_db


def finalize(card):
    fill(card)
    return services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)


# Who sees a card (ScorecardQuerySet.for_user), and what they may do on it (Scorecard.access)


def _access(card, user):
    seen = Scorecard.objects.for_user(user).with_seats().filter(pk=card.pk).first()
    if seen is None:
        return None
    access = seen.access(user)
    return (access.organizes, access.writes_by_hand, access.plays_turn, access.watches)


def test_a_card_is_seen_by_its_organizer_its_players_and_staff(card, organizer, ana):
    staff, stranger = UserFactory(is_staff=True), UserFactory()
    # (organizes, writes by hand, plays the turn, watches)
    assert _access(card, organizer) == (True, True, False, False)
    assert _access(card, ana) == (False, False, False, True)  # follows the card, no more
    assert _access(card, staff) == (True, True, False, False)
    assert _access(card, stranger) is None


def test_seen_by_says_of_one_card_what_for_user_says_of_them_all(card, organizer, ana):
    from django.contrib.auth.models import AnonymousUser

    staff, stranger = UserFactory(is_staff=True), UserFactory()
    other = make_scorecard(stranger, players=[stranger])
    finished = make_scorecard(organizer, players=[ana])
    fill(finished)
    services.scorecard_finalize(scorecard_id=finished.pk, author=organizer)
    for user in (organizer, ana, staff, stranger, AnonymousUser()):
        listed = set(Scorecard.objects.for_user(user).values_list("pk", flat=True))
        for each in (card, other, finished):
            read = Scorecard.objects.with_seats().get(pk=each.pk)
            assert read.seen_by(user) is (each.pk in listed), (user, each)


def test_on_a_digital_card_the_turn_is_played_by_its_player_or_the_organizer(organizer, ana, ben):
    card = services.scorecard_create(
        organizer=organizer, players=[ana, ben], mode=Scorecard.DIGITAL
    )
    staff = UserFactory(is_staff=True)
    # Ana's turn: nobody writes by hand; staff may discard the card, but not play.
    assert _access(card, ana) == (False, False, True, False)
    assert _access(card, ben) == (False, False, False, True)
    assert _access(card, organizer) == (True, False, True, False)
    assert _access(card, staff) == (True, False, False, True)
    seen = Scorecard.objects.with_seats().get(pk=card.pk)
    assert [seen.access(user).takes_part for user in (ana, organizer, staff)] == [
        True,
        True,
        False,
    ]


def test_a_finalized_card_is_editable_for_nobody(card, organizer, ana):
    finalize(card)
    staff = UserFactory(is_staff=True)
    for user in (organizer, ana, staff):
        assert _access(card, user) == (False, False, False, True)


def test_involving_lists_each_card_once_for_its_organizer_and_players(organizer, ana, ben):
    mine = make_scorecard(organizer, [organizer, ana])  # the organizer plays too
    theirs = make_scorecard(ben, [ben])
    assert list(Scorecard.objects.involving(organizer)) == [mine]
    assert list(Scorecard.objects.involving(ana)) == [mine]
    assert list(Scorecard.objects.involving(ben)) == [theirs]
    assert list(Scorecard.objects.involving(UserFactory())) == []


def test_in_progress_and_finalized_split_the_cards(card, organizer, ana):
    other = make_scorecard(organizer, [ana])
    finalize(card)
    assert list(Scorecard.objects.in_progress()) == [other]
    assert list(Scorecard.objects.finalized()) == [card]


@pytest.mark.parametrize("n", [2, 8])
def test_with_seats_loads_the_organizer_and_seats_in_turn_order(
    django_assert_num_queries, organizer, n
):
    players = [UserFactory() for _ in range(n)]
    made = make_scorecard(organizer, players)
    # the card with its organizer; its seats with their players
    with django_assert_num_queries(2):
        loaded = Scorecard.objects.with_seats().get(pk=made.pk)
    with django_assert_num_queries(0):
        assert loaded.organizer == organizer
        assert [seat.player for seat in loaded.seats.all()] == players
        assert [seat.order for seat in loaded.seats.all()] == list(range(n))


# Scorecard


def test_a_card_finds_its_own_seats_only(card, organizer, ana, ben):
    loaded = Scorecard.objects.with_seats().get(pk=card.pk)
    seat = seat_of(card, ben)
    assert loaded.seat(seat.pk).player == ben
    assert loaded.seat(str(seat.pk)).player == ben  # as a URL or a form gives it
    assert loaded.seat(seat_of(make_scorecard(organizer, [ana]), ana).pk) is None
    assert loaded.seat(99999999999999999999) is None


def test_places_are_live_in_progress_and_stored_once_finalized(card, ana, ben):
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(chance=20)
    loaded = Scorecard.objects.with_seats().get(pk=card.pk)
    assert loaded.places == [2, 1]
    fill(card)
    seat = seat_of(card, ben)
    seat.chance = 23
    seat.save()
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    finalized = Scorecard.objects.with_seats().get(pk=card.pk)
    assert finalized.places == [2, 1] == [seat.place for seat in finalized.seats.all()]


def test_no_one_has_a_place_until_a_box_is_written(card, ana):
    assert Scorecard.objects.with_seats().get(pk=card.pk).places == [None, None]
    # A zero is written too: from then on everyone has a place, the 0s sharing it.
    Seat.objects.filter(pk=seat_of(card, ana).pk).update(ones=0)
    assert Scorecard.objects.with_seats().get(pk=card.pk).places == [1, 1]


def test_ties_share_a_place(card):
    fill(card)
    assert Scorecard.objects.with_seats().get(pk=card.pk).places == [1, 1]


def test_a_new_card_is_in_person_at_version_zero(card):
    assert (card.mode, card.version, card.is_finalized) == ("presencial", 0, False)
    assert str(card).startswith(f"Tarjeta {card.pk} · ")


# Seat


def test_a_seat_knows_its_scores_and_totals(card, ana):
    seat = seat_of(card, ana)
    for box, value in full_card(chance=23).items():
        setattr(seat, box, value)
    seat.yahtzee_bonuses = 1
    assert seat.scores[Category.CHANCE] == 23
    assert seat.totals == rules.totals(full_card(chance=23), 1)
    assert seat.totals.total == 63 + 35 + 148 + 100
    assert str(seat) == "Ana"


def test_a_complete_consistent_column_has_no_problems(card, ana):
    seat = seat_of(card, ana)
    for box, value in full_card().items():
        setattr(seat, box, value)
    assert seat.problems == []


def test_what_a_column_lacks_is_said_in_the_language_asked_each_time(card, ana):
    seat = seat_of(card, ana)
    seat.yahtzee_bonuses = 1  # with no 50 in Yahtzee: an inconsistency too
    said = {}
    for language in ("es", "en", "es"):
        with translation.override(language):
            said.setdefault(language, []).append(seat.problems)
    assert said["es"][0] == said["es"][1]
    assert isinstance(said["es"][0], list)
    assert said["es"][0][0] == "13 casillas sin anotar."
    assert said["en"][0][0] == "13 boxes not scored yet."
    assert len(said["en"][0]) == len(said["es"][0]) == 3
    assert "the Yahtzee box does not hold 50" in said["en"][0][1]
    assert "la casilla Yahtzee no tiene 50" in said["es"][0][1]


def test_a_column_names_its_last_blank_boxes_and_counts_more(card, ana):
    seat = seat_of(card, ana)
    for box, value in full_card(chance=None, yahtzee=None, fours=None, ones=None).items():
        setattr(seat, box, value)
    assert seat.problems == ["Sin anotar: Unos, Cuatros, Yahtzee, Libre (Chance)."]
    seat.twos = None
    assert seat.problems == ["5 casillas sin anotar."]
    assert seat.filled == 8


# Change


def test_a_change_says_what_it_wrote(card, organizer, ana):
    seat = seat_of(card, ana)
    enter(card, seat, organizer, chance=23)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="chance", value="", was="23", author=organizer
    )
    entry, correction = Change.objects.order_by("pk")
    seats = {seat.pk: seat}
    assert entry.summary(seats) == "Ana: Libre (Chance) sin anotar → 23"
    assert correction.summary(seats) == "Ana: Libre (Chance) 23 → sin anotar"
    assert (entry.is_correction, correction.is_correction) == (False, True)
    assert (entry.version, correction.version) == (1, 2)
    assert str(entry).startswith("Casilla · ")


def test_recent_changes_are_the_latest_few_until_the_card_is_finalized(card, organizer, ana):
    seat = seat_of(card, ana)
    boxes = ["ones", "twos", "threes", "fours", "fives", "sixes", "chance"]
    enter(card, seat, organizer, **{box: full_card()[box] for box in boxes})
    recent = Change.objects.recent(card)
    assert len(recent) == Change.RECENT
    assert [change.items[0][1] for change in recent] == boxes[::-1][: Change.RECENT]
    finalize(card)
    card.refresh_from_db()
    assert len(Change.objects.recent(card)) == len(boxes)


# FinalizedError: the models refuse to change a finalized card


def test_the_model_refuses_to_change_a_finalized_seat_or_card(card, ana):
    finalize(card)
    seat = seat_of(card, ana)
    seat.ones = 0
    with pytest.raises(FinalizedError):
        seat.save()
    with pytest.raises(FinalizedError):
        Scorecard.objects.get(pk=card.pk).delete()
    assert seat_of(card, ana).ones == 3
    assert str(FinalizedError.message) == "Esta tarjeta ya está finalizada y no puede cambiar."


def test_a_stale_copy_of_a_finalized_card_cannot_change_it(card, ana):
    seat = seat_of(card, ana)  # read while in progress
    finalize(card)
    seat.ones = 0
    with pytest.raises(FinalizedError):
        seat.save()


def test_a_player_with_games_cannot_be_deleted(card, ana):
    with pytest.raises(ProtectedError):
        ana.delete()
    ana.is_active = False
    ana.save()


# The database's CHECK constraints: every impossible value is refused


@pytest.mark.parametrize("box", [category.value for category in Category])
def test_the_database_takes_every_possible_score_and_no_other(card, ana, box):
    seat = Seat.objects.filter(pk=seat_of(card, ana).pk)
    allowed = rules.allowed_scores(box)
    for value in [*sorted(allowed), None]:
        seat.update(**{box: value})
        assert seat.values_list(box, flat=True).get() == value
    for value in [*sorted(set(range(-1, 52)) - allowed), 100, 32767]:
        with pytest.raises(IntegrityError), transaction.atomic():
            seat.update(**{box: value})
    assert seat.values_list(box, flat=True).get() is None


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [
        (BONUS_BOX, [0, rules.MAX_YAHTZEE_BONUSES], [-1, rules.MAX_YAHTZEE_BONUSES + 1]),
        ("total", [0, 1575], [-1]),
        ("place", [1], [-1]),
        ("order", [0, 5], [-1]),
    ],
)
def test_the_database_refuses_a_count_out_of_range(card, ana, field, good, bad):
    seat = Seat.objects.filter(pk=seat_of(card, ana).pk)
    for value in good:
        seat.update(**{field: value})
    for value in bad:
        with pytest.raises(IntegrityError), transaction.atomic():
            seat.update(**{field: value})
    assert seat.values_list(field, flat=True).get() == good[-1]


@pytest.mark.parametrize(("field", "bad"), [("mode", "online"), ("version", -1)])
def test_the_database_refuses_an_impossible_card(card, field, bad):
    with pytest.raises(IntegrityError), transaction.atomic():
        Scorecard.objects.filter(pk=card.pk).update(**{field: bad})
    assert Scorecard.objects.filter(pk=card.pk, mode="presencial", version=0).exists()


def test_the_database_seats_a_player_once_per_card_and_one_per_turn(card, ana, carla):
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(scorecard=card, player=ana, order=5)
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(scorecard=card, player=carla, order=0)
    Seat.objects.create(scorecard=card, player=carla, order=2)


def test_the_database_refuses_a_second_card_for_one_token(organizer, ana):
    token = uuid.uuid4()
    Scorecard.objects.create(organizer=organizer, creation_token=token)
    Scorecard.objects.create(organizer=organizer)  # no token: as many as one likes
    Scorecard.objects.create(organizer=organizer)
    Scorecard.objects.create(organizer=ana, creation_token=token)  # the token is per organizer
    with pytest.raises(IntegrityError), transaction.atomic():
        Scorecard.objects.create(organizer=organizer, creation_token=token)


def test_the_database_undoes_a_change_once(card, organizer, ana):
    enter(card, seat_of(card, ana), organizer, ones=3)
    version = Scorecard.objects.get(pk=card.pk).version
    services.change_undo(scorecard_id=card.pk, author=organizer, version=version)
    done = Change.objects.get(kind=Change.Kind.BOX)
    with pytest.raises(IntegrityError), transaction.atomic():
        Change.objects.create(
            scorecard=card, author=organizer, kind=Change.Kind.UNDO, undoes=done, items=[]
        )


# The finalized-card triggers: no path at all changes a finalized card


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE scorecards_seat SET ones = 0",
        "UPDATE scorecards_seat SET total = 0",
        "DELETE FROM scorecards_seat",
        'INSERT INTO scorecards_seat (scorecard_id, player_id, "order", yahtzee_bonuses)'
        " SELECT id, organizer_id, 9, 0 FROM scorecards_scorecard",
        "UPDATE scorecards_scorecard SET finalized_at = NULL",
        "UPDATE scorecards_scorecard SET version = version + 1",
        "DELETE FROM scorecards_scorecard",
        "DELETE FROM scorecards_change",
        "INSERT INTO scorecards_change (scorecard_id, author_id, created_at, kind, items)"
        " SELECT id, organizer_id, created_at, 'box', '[]' FROM scorecards_scorecard",
    ],
)
def test_the_database_refuses_to_change_a_finalized_card(card, organizer, ana, sql):
    enter(card, seat_of(card, ana), organizer, ones=3)
    finalize(card)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert seat_of(card, ana).ones == 3
    assert Scorecard.objects.get(pk=card.pk).is_finalized
    assert Change.objects.filter(scorecard=card).count() == 1


def test_a_card_in_progress_may_change_and_go(card, organizer, ana):
    enter(card, seat_of(card, ana), organizer, ones=3)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE scorecards_seat SET ones = 0")
        cursor.execute("UPDATE scorecards_scorecard SET version = version + 1")
    assert seat_of(card, ana).ones == 0
    card.delete()
    assert not Change.objects.exists()
    assert not Seat.objects.exists()


@pytest.mark.parametrize("finalized", [False, True])
def test_the_change_log_is_append_only(card, organizer, ana, finalized):
    enter(card, seat_of(card, ana), organizer, ones=3)
    if finalized:
        finalize(card)
    with pytest.raises(IntegrityError), transaction.atomic():
        Change.objects.filter(scorecard=card).update(items=[])
    assert Change.objects.get().items == [[seat_of(card, ana).pk, "ones", None, 3]]
