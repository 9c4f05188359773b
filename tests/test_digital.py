"""Digital play: the server's dice (scorecards.dice), a turn's rolls and box
(turns.turn_roll, turns.turn_score), who may play it, the game that finalizes
itself, the rolls the database keeps append-only, and the card page that plays it."""

import random
import re
from collections import Counter
from datetime import datetime

import pytest
from django.db import IntegrityError, transaction
from django.http import Http404
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from scorecards import dice, rules, services, turns
from scorecards.labels import BONUS_BOX
from scorecards.models import Change, Roll, Scorecard, Seat
from scorecards.rules import Category
from scorecards.services import Refused
from tests.dice import Scripted, Seeded
from tests.factories import UserFactory, full_card, seat_of
from tests.screens import Viewer, seen

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
# The chi-square statistic's critical value for 5 degrees of freedom (six faces) at p = 0.001.
CRITICAL = 20.515


@pytest.fixture
def stream(settings):
    """Seeded dice: the same ones every run, new ones every roll."""
    settings.DICE_SOURCE = "tests.dice.Seeded"
    Seeded.reseed()


def digital_card(organizer, players):
    return services.scorecard_create(organizer=organizer, players=players, mode=Scorecard.DIGITAL)


@pytest.fixture
def digital(organizer, ana, ben):
    return digital_card(organizer, [ana, ben])


def queue(*rolls):
    """Queue the faces of rolls («12345», or «123» for a roll keeping two dice)."""
    Scripted.faces.extend(int(face) for faces in rolls for face in faces)


def now(card) -> Scorecard:
    return Scorecard.objects.get(pk=card.pk)


def roll(card, author, keep=(), *, shown=None, version=None):
    """A roll as the card page sends it: the version and the dice it shows."""
    current = now(card)
    if shown is None:
        shown = current.turn_rolls[-1][0] if current.turn_rolls else ""
    return turns.turn_roll(
        scorecard_id=card.pk,
        author=author,
        version=current.version if version is None else version,
        shown=shown,
        keep=[str(position) for position in keep],
    ).scorecard


def score(card, author, box, *, version=None):
    return turns.turn_score(
        scorecard_id=card.pk,
        author=author,
        version=now(card).version if version is None else version,
        box=box,
    ).scorecard


def play(card, author, faces, box):
    """One whole turn: a single roll of faces, ended in box."""
    queue(faces)
    roll(card, author)
    return score(card, author, box)


def state(card):
    """Everything a turn action (or a refused write) could change."""
    current = now(card)
    boxes = [c.value for c in Category]
    seats = Seat.objects.filter(scorecard=card).order_by("order")
    return {
        "version": current.version,
        "turn_rolls": current.turn_rolls,
        "finalized_at": current.finalized_at,
        "seats": list(seats.values_list(*boxes, BONUS_BOX, "total", "place")),
        "changes": list(Change.objects.filter(scorecard=card).values_list("pk", "items")),
        "rolls": list(Roll.objects.filter(scorecard=card).values_list("pk", "dice", "kept")),
    }


def refused(call, status, message):
    """call() is refused with status and a message containing message."""
    with pytest.raises(Refused) as caught:
        call()
    assert caught.value.status == status
    assert message in caught.value.message
    return caught.value


def free_boxes(card):
    """The boxes the turn's seat may take with its last roll."""
    current = now(card)
    seats = list(current.seats.order_by("order"))
    seat = seats[rules.turn(s.filled for s in seats)[1]]
    return rules.choices(map(int, current.turn_rolls[-1][0]), seat.scores)


def latest_change(card) -> Change:
    return Change.objects.filter(scorecard=card).latest("pk")


def chi_square(counts: Counter) -> float:
    expected = sum(counts.values()) / rules.FACES
    return sum((counts[face] - expected) ** 2 / expected for face in range(1, rules.FACES + 1))


def text_of(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


# scorecards.dice: fair dice


def test_sixty_thousand_seeded_dice_are_uniform():
    rng = random.Random(Seeded.SEED)
    rolls = [dice.roll(rng=rng) for _ in range(12_000)]
    assert all(re.fullmatch(r"[1-6]{5}", faces) for faces in rolls)
    faces = Counter(int(face) for faces in rolls for face in faces)
    assert sum(faces.values()) == 60_000
    # 10,000 expected each, with a standard deviation of about 91.
    assert all(9_500 < faces[face] < 10_500 for face in range(1, 7)), faces
    assert chi_square(faces) < CRITICAL
    # Each position by itself too: a die that always showed the same face would not hide.
    for position in range(rules.DICE):
        assert chi_square(Counter(int(faces[position]) for faces in rolls)) < CRITICAL


def test_the_chi_square_sees_loaded_dice():
    """The statistic above can fail: one face in twelve turned into a six is caught."""
    rng = random.Random(Seeded.SEED)
    loaded = Counter()
    for _ in range(12_000):
        for face in dice.roll(rng=rng):
            loaded[6 if rng.random() < 1 / 12 else int(face)] += 1
    assert chi_square(loaded) > CRITICAL


def test_a_roll_keeps_the_positions_kept():
    rng = random.Random(Seeded.SEED)
    for _ in range(200):
        previous = dice.roll(rng=rng)
        kept = {p for p in range(1, 6) if rng.random() < 0.5}
        faces = dice.roll(previous, kept, rng=rng)
        assert all(faces[p - 1] == previous[p - 1] for p in kept)


def test_the_default_source_rolls_new_dice_every_turn(settings, digital, organizer):
    """secrets.SystemRandom, made anew for every roll, rolls afresh every time. Among 20
    rolls of 7,776 equally likely ones, the expected number of repeats is 190 / 7,776 ≈ 0.024:
    six or more would happen about once in 10¹² runs."""
    settings.DICE_SOURCE = "secrets.SystemRandom"
    firsts = []
    for _ in range(20):
        firsts.append(roll(digital, organizer).turn_rolls[0][0])
        score(digital, organizer, next(iter(free_boxes(digital))))
    assert len(set(firsts)) >= 15, firsts


def test_a_seeded_source_rolls_new_dice_every_turn(stream, digital, organizer):
    first = roll(digital, organizer).turn_rolls[0][0]
    second = roll(digital, organizer).turn_rolls[1][0]
    assert first != second


# Kept dice never change, and every roll is stored as it was rolled


def test_kept_dice_never_change_and_the_rolls_are_stored_as_rolled(
    stream, organizer, ana, ben, carla
):
    """Three whole games with seeded choices: how many rolls, which dice to keep, who
    plays (the player or the organizer) and which box. The fresh dice, rolled through the
    service, are uniform too."""
    choose = random.Random(7)
    fresh = Counter()
    for players in ([ana, ben], [ben, carla, ana], [carla]):
        card = digital_card(organizer, players)
        turns = 0
        while not now(card).is_finalized:
            seats = list(Seat.objects.filter(scorecard=card).order_by("order"))
            round_, index = rules.turn(s.filled for s in seats)
            seat = seats[index]
            author = choose.choice([seat.player, organizer])
            previous = ""
            for number in range(1, choose.randint(1, rules.ROLLS) + 1):
                keep = set()
                if number > 1:
                    keep = set(choose.sample(range(1, 6), choose.randint(0, 4)))
                faces, kept, *_when_who = roll(card, author, keep).turn_rolls[-1]
                assert all(faces[p - 1] == previous[p - 1] for p in keep)
                assert kept == "".join(str(p) for p in sorted(keep))
                fresh.update(int(faces[p - 1]) for p in set(range(1, 6)) - keep)
                previous = faces
            turn = now(card).turn_rolls
            assert turn[-1][0] == previous
            box = choose.choice(list(free_boxes(card)))
            points = free_boxes(card)[box]
            score(card, author, box)
            turns += 1
            change = latest_change(card)
            assert change.author == author
            assert change.items[0] == [seat.pk, box, None, points]
            stored = Roll.objects.filter(change=change).order_by("pk")
            assert [
                (r.scorecard_id, r.seat_id, r.round, r.number, r.dice, r.kept, r.rolled_at)
                for r in stored
            ] == [
                (card.pk, seat.pk, round_, n, faces, kept, datetime.fromisoformat(at))
                for n, (faces, kept, at, *_who) in enumerate(turn, start=1)
            ]
            assert now(card).turn_rolls == []
        assert turns == len(players) * len(Category)
        assert Roll.objects.filter(scorecard=card).count() == sum(
            change.rolls.count() for change in Change.objects.filter(scorecard=card)
        )
    assert sum(fresh.values()) > 500  # about 100 a face
    assert chi_square(fresh) < CRITICAL


def test_kept_positions_may_come_in_any_order_and_twice(scripted, digital, ana):
    queue("31456", "2")
    roll(digital, ana)
    assert roll(digital, ana, ["4", "1", "4", "5", "3"]).turn_rolls[-1][:2] == ["32456", "1345"]


def test_a_kept_position_with_spaces_around_it_is_that_position(scripted, digital, ana):
    # _kept strips what the page sends (unlike the joker's face, which refuses " 3").
    queue("31456", "2222")
    roll(digital, ana)
    assert roll(digital, ana, [" 1 "]).turn_rolls[-1][:2] == ["32222", "1"]


# What a roll refuses, changing nothing


def test_a_fourth_roll_is_refused(scripted, digital, ana):
    queue("11111", "22222", "33333", "44444")
    for _ in range(rules.ROLLS):
        roll(digital, ana)
    before = state(digital)
    refused(lambda: roll(digital, ana), 409, "Ya has tirado 3 veces: elige una casilla.")
    assert state(digital) == before
    assert [r[0] for r in before["turn_rolls"]] == ["11111", "22222", "33333"]
    assert Scripted.faces == [4, 4, 4, 4, 4]  # nothing was rolled


def test_keeping_all_five_is_refused(scripted, digital, ana):
    queue("12345")
    roll(digital, ana)
    before = state(digital)
    refused(lambda: roll(digital, ana, range(1, 6)), 409, "Has guardado los cinco dados")
    assert state(digital) == before


@pytest.mark.parametrize(
    ("shown", "keep"),
    [
        ("54321", [1]),  # not the dice of the last roll
        ("54321", []),
        ("", []),  # the page showed no dice: it missed the first roll
        ("1234", [1]),
    ],
)
def test_keeping_dice_the_page_did_not_show_is_refused(scripted, digital, ana, shown, keep):
    queue("12345")
    roll(digital, ana)
    before = state(digital)
    refused(
        lambda: roll(digital, ana, keep, shown=shown),
        409,
        "Los dados guardados no son los de la última tirada",
    )
    assert state(digital) == before


@pytest.mark.parametrize(("shown", "keep"), [("", [1]), ("", [1, 2, 3, 4, 5]), ("12345", [])])
def test_a_first_roll_keeps_nothing(scripted, digital, ana, shown, keep):
    before = state(digital)
    refused(
        lambda: roll(digital, ana, keep, shown=shown),
        409,
        "Los dados guardados no son los de la última tirada",
    )
    assert state(digital) == before


@pytest.mark.parametrize("junk", ["0", "6", "a", "11", "", "\u0661", "1.0", "-1", "\x00"])
def test_a_junk_kept_position_is_refused(scripted, digital, ana, junk):
    queue("12345")
    roll(digital, ana)
    before = state(digital)
    refused(lambda: roll(digital, ana, ["2", junk]), 400, "Los dados guardados no son válidos.")
    assert state(digital) == before


def test_a_physical_card_is_not_rolled(scripted, card, ana):
    before = state(card)
    refused(lambda: roll(card, ana), 409, "Esta tarjeta es de dados físicos")
    refused(lambda: score(card, ana, "chance"), 409, "Esta tarjeta es de dados físicos")
    assert state(card) == before


# Who plays a turn


def test_another_player_waits_for_their_turn(scripted, digital, ana, ben):
    before = state(digital)
    refused(lambda: roll(digital, ben), 409, "Ahora le toca a \u2068Ana\u2069: espera a tu turno.")
    queue("12345")
    roll(digital, ana)
    before = state(digital)
    refused(lambda: roll(digital, ben, [1]), 409, "Ahora le toca a \u2068Ana\u2069")
    refused(lambda: score(digital, ben, "chance"), 409, "Ahora le toca a \u2068Ana\u2069")
    assert state(digital) == before
    score(digital, ana, "chance")
    refused(lambda: roll(digital, ana), 409, "Ahora le toca a \u2068Ben\u2069")


def test_a_stranger_is_told_the_card_does_not_exist(scripted, digital, ana, carla):
    queue("12345")
    roll(digital, ana)
    before = state(digital)
    for action in (lambda: roll(digital, carla, [1]), lambda: score(digital, carla, "chance")):
        with pytest.raises(Http404):
            action()
    assert state(digital) == before


def test_the_organizer_plays_any_seats_turn(scripted, digital, organizer, ana, ben):
    play(digital, organizer, "11122", "full_house")
    play(digital, organizer, "66665", "four_of_a_kind")
    assert (seat_of(digital, ana).full_house, seat_of(digital, ben).four_of_a_kind) == (25, 29)
    authors = Change.objects.filter(scorecard=digital).values_list("author", flat=True)
    assert list(authors) == [organizer.pk, organizer.pk]
    # The player whose turn it is plays too, alongside the organizer.
    queue("12345", "6")
    roll(digital, organizer)
    roll(digital, ana, [1, 2, 3, 4])
    score(digital, organizer, "large_straight")
    assert seat_of(digital, ana).large_straight == 0  # 12346 is no large straight


def test_staff_who_do_not_organize_the_card_see_it_but_do_not_play(scripted, digital, client):
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("scorecard", args=[digital.pk])).status_code == 200
    before = state(digital)
    refused(
        lambda: roll(digital, staff), 409, "No juegas en esta tarjeta: puedes mirarla, no tirar."
    )
    queue("12345")
    roll(digital, digital.organizer)
    refused(lambda: score(digital, staff, "chance"), 409, "No juegas en esta tarjeta")
    assert state(digital)["changes"] == before["changes"]


# Stale and replayed requests


def test_a_replayed_roll_is_refused(scripted, digital, ana):
    queue("12345", "66666")
    roll(digital, ana, version=0)
    before = state(digital)
    refused(lambda: roll(digital, ana, shown="", version=0), 409, "La tarjeta ha cambiado")
    assert state(digital) == before
    assert Scripted.faces == [6, 6, 6, 6, 6]


def test_a_replayed_score_is_refused(scripted, digital, organizer, ana):
    queue("12345")
    roll(digital, organizer)
    version = now(digital).version
    score(digital, organizer, "large_straight", version=version)
    before = state(digital)
    refused(
        lambda: score(digital, organizer, "large_straight", version=version),
        409,
        "La tarjeta ha cambiado",
    )
    # The player, whose turn it no longer is, hears that first.
    refused(lambda: score(digital, ana, "large_straight", version=version), 409, "Ben")
    assert state(digital) == before
    assert seat_of(digital, ana).large_straight == 40


@pytest.mark.parametrize("version", [None, "", "abc", "1.0", "-1", "٣", "9" * 10, "\x00"])
def test_a_turn_without_a_version_is_refused(scripted, digital, ana, version):
    queue("12345")
    before = state(digital)
    message = "No sabemos qué tirada estás viendo: recarga la tarjeta."
    refused(
        lambda: turns.turn_roll(
            scorecard_id=digital.pk, author=ana, version=version, shown="", keep=[]
        ),
        400,
        message,
    )
    assert state(digital) == before
    roll(digital, ana)
    before = state(digital)
    refused(
        lambda: turns.turn_score(
            scorecard_id=digital.pk, author=ana, version=version, box="chance"
        ),
        400,
        message,
    )
    assert state(digital) == before


# Ending a turn in a box


def test_the_box_scores_the_last_roll(scripted, digital, ana):
    queue("12346", "1", "1")
    roll(digital, ana)
    roll(digital, ana, [1, 2, 3, 4])  # 12341
    roll(digital, ana, [1, 2, 3, 4])  # 12341 again: the fifth die rolled a 1
    turn = now(digital).turn_rolls
    version = now(digital).version
    after = score(digital, ana, "ones")
    seat = seat_of(digital, ana)
    assert seat.ones == rules.score([1, 2, 3, 4, 1], "ones") == 2
    assert (after.version, after.turn_rolls, seat.filled) == (version + 1, [], 1)
    change = latest_change(digital)
    assert (change.kind, change.items, change.version) == (
        Change.Kind.BOX,
        [[seat.pk, "ones", None, 2]],
        version + 1,
    )
    assert list(change.rolls.values_list("dice", "kept")) == [
        ("12346", ""),
        ("12341", "1234"),
        ("12341", "1234"),
    ]
    assert [r[0] for r in turn] == ["12346", "12341", "12341"]


def test_a_box_the_dice_do_not_fit_is_scratched(scripted, digital, ana):
    play(digital, ana, "12346", "yahtzee")
    assert seat_of(digital, ana).yahtzee == 0
    assert latest_change(digital).items == [[seat_of(digital, ana).pk, "yahtzee", None, 0]]


def test_a_first_yahtzee_may_go_anywhere(scripted, digital, ana, ben):
    play(digital, ana, "55555", "yahtzee")
    play(digital, ben, "33333", "chance")
    assert (seat_of(digital, ana).yahtzee, seat_of(digital, ben).chance) == (50, 15)
    assert [c.kind for c in Change.objects.filter(scorecard=digital).order_by("pk")] == [
        Change.Kind.BOX,
        Change.Kind.BOX,
    ]
    assert seat_of(digital, ana).yahtzee_bonuses == 0


def ready_for_an_extra_yahtzee(card, ana, ben, yahtzee, **boxes):
    """Round 2, Ana's turn, with yahtzee (50 or 0) in her Yahtzee box."""
    Seat.objects.filter(pk=seat_of(card, ana).pk).update(yahtzee=yahtzee, **boxes)
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(
        **{c.value: 0 for c in list(Category)[: 1 + len(boxes)]}
    )


def test_an_extra_yahtzee_after_a_50_takes_its_own_box_and_the_bonus(scripted, digital, ana, ben):
    ready_for_an_extra_yahtzee(digital, ana, ben, 50)
    queue("44444")
    roll(digital, ana)
    assert free_boxes(digital) == {Category.FOURS: 20}
    before = state(digital)
    for box in ("chance", "full_house", "fives"):
        refused(
            lambda box=box: score(digital, ana, box),
            409,
            "el orden del comodín no permite",
        )
    refused(lambda: score(digital, ana, "yahtzee"), 409, "ya está anotada")
    assert state(digital) == before
    score(digital, ana, "fours")
    seat = seat_of(digital, ana)
    assert (seat.fours, seat.yahtzee_bonuses, seat.totals.yahtzee_bonus) == (20, 1, 100)
    change = latest_change(digital)
    assert change.kind == Change.Kind.JOKER
    assert change.items == [[seat.pk, "fours", None, 20], [seat.pk, BONUS_BOX, 0, 1]]
    assert change.rolls.get().dice == "44444"


def test_with_its_own_box_used_an_extra_yahtzee_takes_a_lower_box_at_joker_scores(
    scripted, digital, ana, ben
):
    ready_for_an_extra_yahtzee(digital, ana, ben, 50, fours=8, chance=20)
    queue("44444")
    roll(digital, ana)
    assert free_boxes(digital) == {
        Category.THREE_OF_A_KIND: 20,
        Category.FOUR_OF_A_KIND: 20,
        Category.FULL_HOUSE: 25,
        Category.SMALL_STRAIGHT: 30,
        Category.LARGE_STRAIGHT: 40,
    }
    refused(lambda: score(digital, ana, "ones"), 409, "el orden del comodín no permite")
    score(digital, ana, "large_straight")
    seat = seat_of(digital, ana)
    assert (seat.large_straight, seat.yahtzee_bonuses) == (40, 1)


def test_an_extra_yahtzee_after_a_0_follows_the_joker_order_without_bonus(
    scripted, digital, ana, ben
):
    ready_for_an_extra_yahtzee(digital, ana, ben, 0)
    queue("66666")
    roll(digital, ana)
    assert free_boxes(digital) == {Category.SIXES: 30}
    refused(lambda: score(digital, ana, "chance"), 409, "el orden del comodín no permite")
    score(digital, ana, "sixes")
    seat = seat_of(digital, ana)
    assert (seat.sixes, seat.yahtzee_bonuses) == (30, 0)
    change = latest_change(digital)
    assert (change.kind, change.items) == (Change.Kind.JOKER, [[seat.pk, "sixes", None, 30]])


def test_a_filled_box_is_refused(scripted, digital, ana, ben):
    play(digital, ana, "12345", "large_straight")
    play(digital, ben, "12345", "chance")
    queue("23456")
    roll(digital, ana)
    before = state(digital)
    refused(
        lambda: score(digital, ana, "large_straight"),
        409,
        "Escalera grande ya está anotada: elige una casilla libre.",
    )
    assert state(digital) == before


def test_a_box_before_rolling_is_refused(digital, ana):
    before = state(digital)
    refused(lambda: score(digital, ana, "chance"), 409, "Tira los dados antes")
    assert state(digital) == before


@pytest.mark.parametrize("box", ["bogus", "", None, BONUS_BOX, "Chance", " chance", "\u0661"])
def test_an_unknown_box_is_refused(scripted, digital, ana, box):
    queue("12345")
    roll(digital, ana)
    before = state(digital)
    refused(lambda: score(digital, ana, box), 400, "Elige una casilla libre.")
    assert state(digital) == before


# The game ends itself


# Every box in card order, with a roll that scores in it (66655: a full house).
GAME = [(c.value, "66655") for c in Category]


@pytest.mark.parametrize("tie", [True, False])
def test_the_last_box_finalizes_the_game(scripted, digital, organizer, ana, ben, tie):
    for i, (box, faces) in enumerate(GAME):
        for player in (ana, ben):
            assert not now(digital).is_finalized
            last = i == len(GAME) - 1 and player == ben
            # Without a tie, Ben's last roll is an extra Yahtzee after a 0: 30 in Chance.
            play(digital, player, "66666" if last and not tie else faces, box)
    card = now(digital)
    assert card.is_finalized
    assert card.mode == "digital"
    assert card.finalized_at <= timezone.now()
    assert card.turn_rolls == []
    # 13 boxes of 66655: 10 + 18 above, 28 + 25 + 28 below.
    seats = list(card.seats.order_by("order"))
    if tie:
        assert [(s.total, s.place) for s in seats] == [(109, 1), (109, 1)]
    else:
        assert [(s.total, s.place) for s in seats] == [(109, 2), (111, 1)]
        assert latest_change(digital).kind == Change.Kind.JOKER
    assert all(s.total == s.totals.total for s in seats)
    assert Change.objects.filter(scorecard=card).count() == 26
    assert Roll.objects.filter(scorecard=card).count() == 26
    # Two versions a turn, one for its roll and one for its box, then one to finalize.
    assert card.version == 26 * 2 + 1


def finished(digital, ana, ben):
    for box, faces in GAME:
        play(digital, ana, faces, box)
        play(digital, ben, faces, box)
    assert now(digital).is_finalized


def test_nothing_plays_a_finished_game(scripted, digital, organizer, ana, ben):
    finished(digital, ana, ben)
    before = state(digital)
    queue("12345")
    for author in (organizer, ana, ben):
        refused(lambda a=author: roll(digital, a), 409, "ya está finalizada")
        refused(lambda a=author: score(digital, a, "chance"), 409, "ya está finalizada")
    assert state(digital) == before


def test_the_database_keeps_a_finished_games_rolls(scripted, digital, ana, ben):
    finished(digital, ana, ben)
    before = state(digital)
    stored = Roll.objects.filter(scorecard=digital).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Roll.objects.create(
            scorecard=digital,
            seat=stored.seat,
            change=stored.change,
            round=1,
            number=2,
            dice="12345",
            kept="",
            rolled_at=timezone.now(),
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Roll.objects.filter(scorecard=digital).delete()
    with pytest.raises(IntegrityError), transaction.atomic():
        Roll.objects.filter(pk=stored.pk).update(dice="66666")
    assert state(digital) == before


def test_a_roll_is_never_updated_even_in_a_game_in_progress(scripted, digital, ana):
    play(digital, ana, "12345", "chance")
    stored = Roll.objects.get(scorecard=digital)
    for change in ({"dice": "66666"}, {"kept": "1"}, {"number": 2}, {"round": 2}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Roll.objects.filter(pk=stored.pk).update(**change)
    assert Roll.objects.values_list("dice", "kept", "number", "round").get() == (
        "12345",
        "",
        1,
        1,
    )


# Nothing is written by hand on a digital card


def test_a_digital_card_is_not_written_by_hand(scripted, digital, organizer, ana):
    play(digital, organizer, "12345", "chance")
    seat = seat_of(digital, ana)
    before = state(digital)
    message = "En una partida con dados virtuales deciden los dados: no se anota a mano."
    refused(
        lambda: services.box_write(
            scorecard_id=digital.pk,
            seat_id=seat.pk,
            box="ones",
            value="3",
            was="",
            author=organizer,
        ),
        409,
        message,
    )
    refused(
        lambda: services.box_write(
            scorecard_id=digital.pk,
            seat_id=seat.pk,
            box="chance",
            value="",
            was="15",
            author=organizer,
        ),
        409,
        message,
    )
    refused(
        lambda: services.joker_write(
            scorecard_id=digital.pk, seat_id=seat.pk, face="3", box="threes", author=organizer
        ),
        409,
        message,
    )
    refused(
        lambda: services.change_undo(
            scorecard_id=digital.pk, author=organizer, version=now(digital).version
        ),
        409,
        message,
    )
    refused(
        lambda: services.scorecard_finalize(
            scorecard_id=digital.pk, author=organizer, version=now(digital).version
        ),
        409,
        "se finaliza sola con la última casilla",
    )
    assert state(digital) == before


def test_a_digital_card_whose_boxes_are_all_written_is_not_finalized_by_hand(
    digital, organizer, ana, ben
):
    """Even a card complete by other means (here, written directly) finalizes only with
    its last box."""
    for player in (ana, ben):
        Seat.objects.filter(pk=seat_of(digital, player).pk).update(**full_card())
    before = state(digital)
    refused(
        lambda: services.scorecard_finalize(scorecard_id=digital.pk, author=organizer),
        409,
        "se finaliza sola",
    )
    # Nor played: no box is left for a turn.
    refused(lambda: roll(digital, organizer), 409, "Todas las casillas están anotadas.")
    refused(lambda: score(digital, organizer, "chance"), 409, "Todas las casillas están anotadas.")
    assert state(digital) == before
    assert not now(digital).is_finalized


def test_the_digital_card_page_has_no_cell_links_nor_undo(scripted, org_client, digital, ana):
    play(digital, ana, "12345", "chance")
    for headers in ({}, HTMX):
        html = org_client.get(reverse("scorecard", args=[digital.pk]), headers=headers).text
        assert "/casilla/" not in html
        assert 'id="undo-button"' not in html
        assert reverse("undo", args=[digital.pk]) not in html
        assert reverse("finalize", args=[digital.pk]) not in html
        assert 'id="turn"' in html
        assert reverse("roll", args=[digital.pk]) in html


@pytest.mark.parametrize(
    ("name", "args", "data"),
    [
        ("box", ["ones"], {"value": "3", "was": ""}),
        ("joker", [], {"face": "3", "box": "threes"}),
        ("undo", None, {}),
        ("finalize", None, {}),
    ],
)
def test_a_manual_write_on_a_digital_card_is_refused_by_its_page(
    scripted, org_client, digital, ana, name, args, data
):
    play(digital, ana, "12345", "chance")
    before = state(digital)
    seat = seat_of(digital, ana)
    url_args = [digital.pk] if args is None else [digital.pk, seat.pk, *args]
    data = {"version": now(digital).version, **data}
    response = org_client.post(reverse(name, args=url_args), data, headers=HTMX)
    assert response.status_code == 409
    assert "dados virtuales" in response.text
    assert state(digital) == before


# The card page plays it


def roll_view(client, card, keep=(), *, htmx=True, version=None, shown=None):
    current = now(card)
    data = {
        "version": current.version if version is None else version,
        "dados": (current.turn_rolls[-1][0] if current.turn_rolls else "")
        if shown is None
        else shown,
        "guardar": [str(p) for p in keep],
    }
    return client.post(reverse("roll", args=[card.pk]), data, headers=HTMX if htmx else {})


def score_view(client, card, box, *, htmx=True):
    data = {"version": now(card).version, "casilla": box}
    return client.post(reverse("score", args=[card.pk]), data, headers=HTMX if htmx else {})


def turn_section(html) -> str:
    return re.search(r'<section id="turn".*?</section>', html, re.S)[0]


def test_a_roll_from_htmx_gets_its_turn_back_as_a_patch(scripted, ana_client, digital):
    queue("31456")
    response = roll_view(ana_client, digital)
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert response["X-Dados-Base"] == "0"
    assert '<table class="sheet"' not in response.text  # not the whole sheet
    # No box written: the headings and sums stay as they are.
    assert 'id="row-players"' not in response.text
    assert 'id="row-total"' not in response.text
    turn = turn_section(response.text)
    assert 'hx-swap-oob="true"' in turn
    assert "Tirada 1 de 3" in text_of(turn)
    for position, face in enumerate("31456", start=1):
        assert f'aria-label="Dado {position}: {face}"' in turn
    assert '<input type="hidden" name="dados" value="31456">' in turn
    assert 'name="version" value="1"' in response.text
    queue("22")
    turn = turn_section(roll_view(ana_client, digital, [1, 4, 5]).text)
    assert 'aria-label="Dado 1: 3, guardado"' in turn
    assert 'aria-label="Dado 2: 2"' in turn
    assert '<input type="hidden" name="dados" value="32256">' in turn
    assert now(digital).turn_rolls[-1][:2] == ["32256", "145"]


def test_a_watcher_polls_the_dice_as_a_patch(scripted, client, digital, ana, ben):
    client.force_login(ben)
    queue("31456")
    roll(digital, ana)
    response = client.get(
        reverse("scorecard_live", args=[digital.pk]), {"version": 0}, headers=HTMX
    )
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert '<table class="sheet"' not in response.text
    ben_sees = Viewer(me=str(ben.pk), manager=False, part=True, every_turn=False)
    turn = seen(turn_section(response.text), ben_sees)
    assert "Turno de <bdi>Ana</bdi>" in turn
    assert re.findall(r'aria-label="(Dado \d: \d)"', turn) == [
        f"Dado {p}: {f}" for p, f in enumerate("31456", start=1)
    ]
    # Ben watches: no «Tirar» and no boxes to choose.
    assert reverse("roll", args=[digital.pk]) not in turn
    assert 'name="casilla"' not in turn
    # A box scored: the patch brings its cell.
    score(digital, ana, "chance")
    patch = client.get(
        reverse("scorecard_live", args=[digital.pk]), {"version": 1}, headers=HTMX
    ).text
    assert f'<td id="c{seat_of(digital, ana).pk}-chance" hx-swap-oob="true">' in patch
    assert "Aún no has tirado." in text_of(seen(turn_section(patch), ben_sees))


def test_the_player_chooses_among_the_free_boxes(scripted, ana_client, digital, ana):
    queue("66655")
    turn = turn_section(roll_view(ana_client, digital).text)
    offered = dict(
        re.findall(
            r'value="(\w+)" required> <span class="choice-box">[^<]*</span> '
            r'<strong class="choice-score">(\d+)</strong>',
            turn,
        )
    )
    assert offered == {c.value: str(rules.score([6, 6, 6, 5, 5], c)) for c in Category}
    response = score_view(ana_client, digital, "full_house")
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    assert seat_of(digital, ana).full_house == 25


def test_the_boxes_the_dice_score_in_come_first_and_those_to_scratch_apart(
    scripted, ana_client, digital, organizer, ana
):
    queue("66655")
    turn = turn_section(roll_view(ana_client, digital).text)
    scoring, scratching = turn.split('<details class="scratch-choices">')
    offered = r'name="casilla" value="(\w+)" required'
    # Each group in the card's order; the scratches folded, under a summary saying so.
    assert re.findall(offered, scoring) == [
        "fives",
        "sixes",
        "three_of_a_kind",
        "full_house",
        "chance",
    ]
    assert re.findall(offered, scratching) == [
        "ones",
        "twos",
        "threes",
        "fours",
        "four_of_a_kind",
        "small_straight",
        "large_straight",
        "yahtzee",
    ]
    assert "<summary>Tachar una casilla (0 puntos)</summary>" in scratching
    assert re.findall(r'<strong class="choice-score">(\d+)</strong>', scratching) == ["0"] * 8
    # One radio group, with its legend, and «Anotar» on its bar after it.
    assert scoring.count("<fieldset>") == 1
    assert "</fieldset>" in scratching
    assert '<div class="score-bar"><button type="submit">' in scratching
    # Dice that score nowhere: the scratches are the list, open.
    alone = digital_card(organizer, [ana])
    Seat.objects.filter(scorecard=alone).update(**full_card(ones=None, yahtzee=None))
    queue("23456")
    turn = turn_section(roll_view(ana_client, alone).text)
    assert '<details class="scratch-choices" open>' in turn
    assert '<ul class="choices"' in turn.split("<details")[1]
    assert re.findall(offered, turn) == ["ones", "yahtzee"]


def test_a_roll_without_htmx_goes_back_to_the_card(scripted, ana_client, digital):
    queue("12345")
    response = roll_view(ana_client, digital, htmx=False)
    assert response.status_code == 302
    assert response["Location"] == reverse("scorecard", args=[digital.pk])
    assert now(digital).turn_rolls[0][0] == "12345"
    response = score_view(ana_client, digital, "large_straight", htmx=False)
    assert response.status_code == 302
    assert response["Location"] == reverse("scorecard", args=[digital.pk])


def test_a_refused_roll_answers_with_the_message(scripted, client, digital, ben):
    client.force_login(ben)
    before = state(digital)
    response = roll_view(client, digital)
    assert response.status_code == 409
    assert "Ahora le toca a" in response.text
    assert '<div id="sheet">' in response.text
    response = roll_view(client, digital, htmx=False)
    assert response.status_code == 302
    page = client.get(response["Location"]).text
    assert "Ahora le toca a" in page
    response = client.post(reverse("roll", args=[digital.pk]), {"dados": ""}, headers=HTMX)
    assert response.status_code == 409  # out of turn is said before the version
    assert state(digital) == before


def test_junk_from_the_page_is_a_400_not_a_500(scripted, ana_client, digital):
    queue("12345")
    roll_view(ana_client, digital)
    before = state(digital)
    for data in (
        {"version": "1", "dados": "12345", "guardar": ["٣"]},
        {"version": "x", "dados": "12345"},
        {"dados": "12345"},
        {"version": "1", "casilla": "nada"},
    ):
        view = "score" if "casilla" in data else "roll"
        response = ana_client.post(reverse(view, args=[digital.pk]), data, headers=HTMX)
        assert response.status_code == 400, data
        assert 'role="alert"' in response.text
    assert state(digital) == before


def test_a_stranger_gets_404_from_the_pages(scripted, client, digital, carla):
    client.force_login(carla)
    assert roll_view(client, digital).status_code == 404
    assert score_view(client, digital, "chance").status_code == 404
    assert not Roll.objects.exists()
    assert now(digital).version == 0


def test_the_turn_pages_take_only_posts(ana_client, digital):
    for name in ("roll", "score"):
        assert ana_client.get(reverse(name, args=[digital.pk])).status_code == 405


def test_the_last_box_sends_the_page_to_the_finished_card(scripted, client, digital, ana, ben):
    Seat.objects.filter(pk=seat_of(digital, ana).pk).update(**full_card())
    Seat.objects.filter(pk=seat_of(digital, ben).pk).update(**full_card(chance=None))
    client.force_login(ben)
    queue("66655")
    roll_view(client, digital)
    response = score_view(client, digital, "chance")
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("scorecard", args=[digital.pk])
    assert now(digital).is_finalized
    html = client.get(reverse("scorecard", args=[digital.pk])).text
    assert "Partida terminada. Ya está en el historial." in html
    assert '<span class="badge">digital</span>' in html
    # full_card: 63 + 35 above, 147 below with 22 in Chance; Ben's 28 makes 251.
    assert "Gana Ben con 251" in text_of(html)
    assert 'id="turn"' not in html
    assert "Tiradas: 6 6 6 5 5" in text_of(html)
    # Its log in a sentence: turns and rolls (nothing to correct or undo in a digital game).
    assert "1 turno, 1 tirada y 0 Yahtzees adicionales." in text_of(html)
    assert "correcciones" not in html
    # Without htmx: a plain redirect.
    other = digital_card(digital.organizer, [ana])
    Seat.objects.filter(scorecard=other).update(**full_card(chance=None))
    client.force_login(ana)
    queue("12345")
    roll_view(client, other, htmx=False)
    response = score_view(client, other, "chance", htmx=False)
    assert (response.status_code, response["Location"]) == (
        302,
        reverse("scorecard", args=[other.pk]),
    )
    assert now(other).is_finalized


# Measured: 7, 7 and 11 queries on SQLite (the session, the user, the card locked, its
# seats, the version moved; a write's patch shows the change it recorded without asking
# for it), with a little room.
ROLL_QUERIES = 9
POLL_QUERIES = 9
SCORE_QUERIES = 13


def test_the_roll_and_its_poll_stay_within_a_query_budget(
    scripted, ana_client, digital, ana, ben, django_assert_max_num_queries
):
    queue("12345", "6", "6")
    roll_view(ana_client, digital)
    url = reverse("roll", args=[digital.pk])
    data = {"version": 1, "dados": "12345", "guardar": ["1", "2", "3", "4"]}
    with django_assert_max_num_queries(ROLL_QUERIES):
        response = ana_client.post(url, data, headers=HTMX)
    assert response["HX-Reswap"] == "none"
    watcher = Client()
    watcher.force_login(ben)
    url = reverse("scorecard_live", args=[digital.pk])
    with django_assert_max_num_queries(POLL_QUERIES):
        response = watcher.get(url, {"version": 1}, headers=HTMX)
    assert response["HX-Reswap"] == "none"
    assert 'aria-label="Dado 5: 6"' in response.text
    url = reverse("score", args=[digital.pk])
    with django_assert_max_num_queries(SCORE_QUERIES):
        response = ana_client.post(url, {"version": 2, "casilla": "chance"}, headers=HTMX)
    assert response["HX-Reswap"] == "none"
    assert seat_of(digital, ana).chance == 16


# Discarding a game in progress


def test_a_digital_game_in_progress_may_be_discarded(scripted, org_client, digital, ana, ben):
    play(digital, ana, "12345", "chance")
    play(digital, ben, "66666", "yahtzee")
    queue("11111")
    roll(digital, ana)
    assert Roll.objects.filter(scorecard=digital).count() == 2
    response = org_client.post(reverse("discard", args=[digital.pk]))
    assert response.status_code == 302
    assert not Scorecard.objects.filter(pk=digital.pk).exists()
    assert not Seat.objects.exists()
    assert not Change.objects.exists()
    assert not Roll.objects.exists()


def test_a_player_may_not_discard_a_digital_game(scripted, ana_client, digital, ana):
    play(digital, ana, "12345", "chance")
    before = state(digital)
    assert ana_client.post(reverse("discard", args=[digital.pk])).status_code == 403
    assert state(digital) == before
