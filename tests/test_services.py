"""scorecards.services: every write, its change log, and the refusals a person reads."""

import uuid

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext

from scorecards import rules, services
from scorecards.labels import BONUS_BOX
from scorecards.models import Change, Scorecard, Seat
from scorecards.services import Refused
from tests.factories import (
    UserFactory,
    enter,
    fill,
    full_card,
    logged_items,
    make_scorecard,
    seat_of,
)

pytestmark = pytest.mark.django_db


def write(card, seat, box, value, was="", author=None):
    return services.box_write(
        scorecard_id=card.pk,
        seat_id=seat.pk,
        box=box,
        value=value,
        was=was,
        author=author or card.organizer,
    ).scorecard


def joker(card, seat, face, box, author=None):
    return services.joker_write(
        scorecard_id=card.pk, seat_id=seat.pk, face=face, box=box, author=author or card.organizer
    ).scorecard


def version_of(card):
    return Scorecard.objects.get(pk=card.pk).version


# Refused


def test_a_refusal_is_a_bad_request_about_the_data_by_default():
    refused = Refused("No.")
    assert (refused.message, refused.status) == ("No.", 400)


@pytest.mark.parametrize(("raw", "value"), [(None, None), ("", None), ("0", 0), (" 25 ", 25)])
def test_a_value_is_blank_or_a_plain_number(raw, value):
    assert services.parse_value(raw) == value


@pytest.mark.parametrize("raw", ["-1", "1e3", "٣", "x", "2.0", "9" * 10])
def test_anything_else_is_not_a_score(raw):
    with pytest.raises(Refused, match="no es una puntuación") as refused:
        services.parse_value(raw)
    assert refused.value.status == 400


def test_the_values_a_box_may_take():
    assert rules.allowed_values("fours") == [0, 4, 8, 12, 16, 20]
    assert rules.allowed_values(BONUS_BOX) == list(range(rules.MAX_YAHTZEE_BONUSES + 1))


# scorecard_create


def test_a_card_seats_its_players_in_turn_order(organizer, ana, ben):
    card = services.scorecard_create(organizer=organizer, players=[ben, ana])
    assert card.organizer == organizer
    assert [(s.player, s.order) for s in card.seats.order_by("order")] == [(ben, 0), (ana, 1)]
    assert (card.mode, card.version, card.creation_token) == ("presencial", 0, None)


@pytest.mark.parametrize(
    ("players", "message"),
    [
        ("none", "Elige entre 1 y 10 jugadores."),
        ("eleven", "Elige entre 1 y 10 jugadores."),
        ("dup", "Un jugador solo puede aparecer una vez."),
        ("inactive", "Solo se pueden elegir jugadores activos."),
    ],
)
def test_a_bad_card_is_refused_and_nothing_is_made(organizer, ana, players, message):
    players = {
        "none": [],
        "eleven": [UserFactory() for _ in range(11)],
        "dup": [ana, ana],
        "inactive": [ana, UserFactory(is_active=False)],
    }[players]
    with pytest.raises(Refused) as refused:
        services.scorecard_create(organizer=organizer, players=players)
    assert (refused.value.message, refused.value.status) == (message, 400)
    assert not Scorecard.objects.exists()


def test_a_token_makes_one_card_however_often_it_is_sent(organizer, ana, ben):
    token = uuid.uuid4()
    first = services.scorecard_create(organizer=organizer, players=[ana, ben], token=token)
    again = services.scorecard_create(organizer=organizer, players=[ana, ben], token=token)
    assert again.pk == first.pk
    assert Scorecard.objects.get().creation_token == token
    # Another token, or none, is another card: the organizer meant it.
    services.scorecard_create(organizer=organizer, players=[ana, ben], token=uuid.uuid4())
    services.scorecard_create(organizer=organizer, players=[ana, ben])
    assert Scorecard.objects.count() == 3


def test_a_token_is_one_organizers_alone(organizer, ana, ben):
    token = uuid.uuid4()
    services.scorecard_create(organizer=organizer, players=[ana, ben], token=token)
    mine = services.scorecard_create(organizer=ana, players=[ben], token=token)
    assert mine.organizer == ana
    assert [s.player for s in mine.seats.all()] == [ben]
    assert Scorecard.objects.count() == 2


def test_a_request_that_loses_the_race_answers_with_the_winners_card(
    organizer, ana, ben, monkeypatch
):
    """Its check found no card yet; by its insert the other request's card was there."""
    token = uuid.uuid4()
    first = services.scorecard_create(organizer=organizer, players=[ana, ben], token=token)
    found = services._created_with
    calls = []

    def not_yet_then_found(organizer, token):
        calls.append(token)
        return None if len(calls) == 1 else found(organizer, token)

    monkeypatch.setattr(services, "_created_with", not_yet_then_found)
    again = services.scorecard_create(organizer=organizer, players=[ana, ben], token=token)
    assert len(calls) == 2  # the check, then the lookup after the IntegrityError
    assert again.pk == first.pk
    assert Scorecard.objects.count() == 1


@pytest.mark.parametrize("then", ["finalized", "other players", "other order"])
def test_an_old_token_for_another_game_makes_a_new_card(organizer, ana, ben, then):
    """The order page back from the browser's history after that game: a new game."""
    token = uuid.uuid4()
    first = services.scorecard_create(organizer=organizer, players=[ana, ben], token=token)
    players = [ana, ben]
    if then == "finalized":
        fill(first)
        services.scorecard_finalize(scorecard_id=first.pk, author=organizer)
    elif then == "other players":
        players = [ana]
    else:
        players = [ben, ana]
    second = services.scorecard_create(organizer=organizer, players=players, token=token)
    assert second.pk != first.pk
    assert [s.player for s in second.seats.order_by("order")] == players
    assert second.creation_token is None


# organized_card: the locked read every write starts with


def test_organized_card_answers_the_card_with_its_seats_for_its_organizer_and_staff(
    card, organizer
):
    for user in (organizer, UserFactory(is_staff=True)):
        loaded = services.organized_card(card.pk, user)
        assert loaded.pk == card.pk
        assert loaded.access(user).organizes
        assert [s.player.name for s in loaded.seats.all()] == ["Ana", "Ben"]


@pytest.mark.parametrize(
    ("who", "refusal"),
    [("stranger", Http404), ("player", PermissionDenied), ("missing card", Http404)],
)
def test_organized_card_refuses_who_may_not_change_the_card(card, ana, who, refusal):
    user, pk = {"stranger": UserFactory(), "player": ana}.get(who, card.organizer), card.pk
    if who == "missing card":
        pk = 99999999
    with pytest.raises(refusal):
        services.organized_card(pk, user)


@pytest.mark.parametrize("who", ["organizer", "player", "staff"])
def test_a_finalized_card_changes_for_nobody(card, ana, who):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    user = {"organizer": card.organizer, "player": ana, "staff": UserFactory(is_staff=True)}[who]
    with pytest.raises(Refused) as refused:
        services.organized_card(card.pk, user)
    assert refused.value.status == 409
    assert refused.value.message == "Esta tarjeta ya está finalizada y no puede cambiar."


@pytest.mark.skipif(
    not connection.features.has_select_for_update, reason="SQLite locks the whole database"
)
def test_organized_card_locks_the_card_row(card, organizer):
    with CaptureQueriesContext(connection) as queries:
        services.organized_card(card.pk, organizer)
    assert "FOR UPDATE" in queries[0]["sql"]


# box_write


def test_a_box_write_records_the_change_and_moves_the_version(card, organizer, ana):
    seat = seat_of(card, ana)
    written, recorded, replayed = services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="fives", value="15", was="", author=organizer
    )
    assert not replayed
    assert seat_of(card, ana).fives == 15
    assert written.seat(seat.pk).fives == 15  # the answer shows it without reading again
    assert written.version == version_of(card) == 1
    change = Change.objects.get()
    assert (change.kind, change.author, change.version) == ("box", organizer, 1)
    assert change.items == [[seat.pk, "fives", None, 15]]
    assert recorded == change


def test_a_correction_and_sin_anotar_are_writes_too(card, ana):
    seat = seat_of(card, ana)
    write(card, seat, "ones", "3")
    write(card, seat, "ones", "4", was="3")
    write(card, seat, "ones", "", was="4")
    assert seat_of(card, ana).ones is None
    assert [item[1:] for item in logged_items()] == [
        ("ones", None, 3),
        ("ones", 3, 4),
        ("ones", 4, None),
    ]
    assert version_of(card) == 3


def test_the_bonus_line_is_written_like_a_box_and_blank_means_none(card, ana):
    seat = seat_of(card, ana)
    write(card, seat, "yahtzee", "50")
    write(card, seat, BONUS_BOX, "2", was="0")
    assert seat_of(card, ana).yahtzee_bonuses == 2
    write(card, seat, BONUS_BOX, "", was="2")
    assert seat_of(card, ana).yahtzee_bonuses == 0
    assert [item[1:] for item in logged_items()][1:] == [(BONUS_BOX, 0, 2), (BONUS_BOX, 2, 0)]


def test_staff_may_write_on_any_card(card, ana):
    staff = UserFactory(is_staff=True)
    write(card, seat_of(card, ana), "ones", "3", author=staff)
    assert Change.objects.get().author == staff


def test_a_stale_was_is_refused_with_409_and_changes_nothing(card, ana):
    """Another device wrote the box since this one saw it blank."""
    seat = seat_of(card, ana)
    write(card, seat, "sixes", "18")
    with pytest.raises(Refused) as refused:
        write(card, seat, "sixes", "24", was="")
    assert refused.value.status == 409
    assert refused.value.message == (
        "\u2068Ana\u2069, Seises cambió mientras tanto (ahora: 18)."
        " Revisa la tarjeta y vuelve a intentarlo."
    )
    assert seat_of(card, ana).sixes == 18
    assert version_of(card) == 1
    assert len(logged_items()) == 1


def test_a_stale_was_on_a_cleared_box_says_it_is_blank(card, ana):
    seat = seat_of(card, ana)
    write(card, seat, "sixes", "18")
    write(card, seat, "sixes", "", was="18")
    with pytest.raises(
        Refused, match=r"\u2068Ana\u2069, Seises cambió mientras tanto \(ahora: sin anotar\)"
    ):
        write(card, seat, "sixes", "24", was="18")


def test_a_retried_write_whose_answer_was_lost_writes_nothing_more(card, ana):
    seat = seat_of(card, ana)
    write(card, seat, "sixes", "18")
    again = write(card, seat, "sixes", "18", was="")
    assert again.version == version_of(card) == 1
    assert not hasattr(again, "recorded")
    assert len(logged_items()) == 1


@pytest.mark.parametrize(
    ("box", "value", "message"),
    [
        ("fives", "17", "Cincos: 17 no es una puntuación posible."),
        ("chance", "0", "Libre (Chance): 0 no es una puntuación posible."),
        ("full_house", "20", "Full: 20 no es una puntuación posible."),
        (BONUS_BOX, "13", "Bonus Yahtzee: 13 no es una puntuación posible."),
        ("ones", "-1", "«-1» no es una puntuación."),
        ("ones", "1e3", "«1e3» no es una puntuación."),
        ("ones", "٣", "«٣» no es una puntuación."),
        ("ones", "99999999999999999999", "«99999999999999999999» no es una puntuación."),
        ("ones", "x", "«x» no es una puntuación."),
    ],
)
def test_an_impossible_value_is_refused_in_spanish_and_nothing_changes(
    card, ana, box, value, message
):
    with pytest.raises(Refused) as refused:
        write(card, seat_of(card, ana), box, value, was="0" if box == BONUS_BOX else "")
    assert (refused.value.message, refused.value.status) == (message, 400)
    assert getattr(seat_of(card, ana), box) in (None, 0)
    assert (version_of(card), Change.objects.count()) == (0, 0)


def test_a_box_that_does_not_exist_is_404(card, ana):
    with pytest.raises(Refused) as refused:
        write(card, seat_of(card, ana), "sevens", "7")
    assert (refused.value.message, refused.value.status) == ("Esa casilla no existe.", 404)


def test_a_seat_of_another_card_is_404(card, organizer, ana):
    foreign = seat_of(make_scorecard(organizer, [ana]), ana)
    with pytest.raises(Refused) as refused:
        write(card, foreign, "ones", "1")
    assert refused.value.message == "Ese jugador no está en esta tarjeta."
    assert refused.value.status == 404
    assert Seat.objects.get(pk=foreign.pk).ones is None


MALFORMED = {
    "box": [("ones", "3"), ("ones", "x"), ("sevens", "7"), ("fives", "17")],
    "joker": [("4", "fours"), ("9", "fours"), ("4", "sevens"), (None, None)],
    "undo": [None, "", "0", "abc", "-1"],
}


@pytest.mark.parametrize(("who", "refusal"), [("stranger", Http404), ("player", PermissionDenied)])
@pytest.mark.parametrize("kind", MALFORMED)
def test_who_may_write_is_checked_before_what_is_written(card, ana, who, refusal, kind):
    """A stranger learns nothing from how the data is wrong, nor a player (who sees the
    card) that their request was well formed: every write asks who first, as before."""
    seat = seat_of(card, ana)
    write(card, seat, "yahtzee", "50")
    author = UserFactory() if who == "stranger" else ana
    send = {
        "box": lambda sent: write(card, seat, *sent, author=author),
        "joker": lambda sent: joker(card, seat, *sent, author=author),
        "undo": lambda sent: services.change_undo(
            scorecard_id=card.pk, author=author, version=sent
        ),
    }[kind]
    for sent in MALFORMED[kind]:
        with pytest.raises(refusal):
            send(sent)
    assert Change.objects.count() == 1


def test_a_finalized_card_takes_no_write(card, ana):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    with pytest.raises(Refused) as refused:
        write(card, seat_of(card, ana), "ones", "", was="3")
    assert refused.value.status == 409
    assert seat_of(card, ana).ones == 3


# joker_write


def test_a_joker_with_50_writes_the_box_and_the_bonus_together(card, organizer, ana):
    seat = seat_of(card, ana)
    write(card, seat, "yahtzee", "50")
    written = joker(card, seat, "4", "fours")
    seat.refresh_from_db()
    assert (seat.fours, seat.yahtzee_bonuses) == (20, 1)
    assert written.version == version_of(card) == 2
    change = Change.objects.latest("pk")
    assert (change.kind, change.version, change.author) == ("joker", 2, organizer)
    assert change.items == [[seat.pk, "fours", None, 20], [seat.pk, BONUS_BOX, 0, 1]]


def test_a_joker_with_a_scratched_yahtzee_gives_no_bonus(card, ana):
    seat = seat_of(card, ana)
    write(card, seat, "yahtzee", "0")
    write(card, seat, "fours", "8")
    joker(card, seat, "4", "full_house")
    seat.refresh_from_db()
    assert (seat.full_house, seat.yahtzee_bonuses) == (25, 0)


def test_a_joker_follows_the_forced_order(card, ana):
    seat = seat_of(card, ana)
    write(card, seat, "yahtzee", "50")
    with pytest.raises(Refused) as refused:
        joker(card, seat, "4", "chance")
    assert refused.value.message == "El orden del comodín no permite anotar en Libre (Chance)."
    assert refused.value.status == 409
    seat.refresh_from_db()
    assert (seat.chance, seat.yahtzee_bonuses) == (None, 0)


def test_a_joker_needs_the_yahtzee_box_used(card, ana):
    with pytest.raises(Refused) as refused:
        joker(card, seat_of(card, ana), "4", "fours")
    assert refused.value.message.startswith("Anota primero la casilla Yahtzee")
    assert refused.value.status == 409


def test_a_joker_stops_at_the_most_bonuses_a_card_can_hold(card, ana):
    Seat.objects.filter(pk=seat_of(card, ana).pk).update(
        yahtzee=50, yahtzee_bonuses=rules.MAX_YAHTZEE_BONUSES
    )
    with pytest.raises(Refused) as refused:
        joker(card, seat_of(card, ana), "4", "fours")
    assert refused.value.message == "No puede haber más de 12 bonus de Yahtzee."
    assert refused.value.status == 409


@pytest.mark.parametrize(
    ("face", "box"),
    [
        (None, None),
        ("9", "ones"),
        ("x", None),
        (None, "?"),
        ("٣", "threes"),  # an Arabic-Indic three: int() would take it
        (" 3", "threes"),
        ("03", "threes"),
        ("3", "yahtzee_bonuses"),
    ],
)
def test_a_malformed_joker_is_refused(card, ana, face, box):
    seat = seat_of(card, ana)
    write(card, seat, "yahtzee", "50")
    with pytest.raises(Refused) as refused:
        joker(card, seat, face, box)
    assert refused.value.message == "Elige la cara de los dados y una casilla."
    assert refused.value.status == 400
    assert Change.objects.count() == 1


# change_undo


def test_undo_restores_the_latest_change_then_the_one_before(card, organizer, ana):
    seat = seat_of(card, ana)
    write(card, seat, "ones", "3")
    write(card, seat, "ones", "4", was="3")
    undone = services.change_undo(
        scorecard_id=card.pk, author=organizer, version=version_of(card)
    ).scorecard
    assert seat_of(card, ana).ones == 3
    assert undone.version == version_of(card) == 3
    services.change_undo(scorecard_id=card.pk, author=organizer, version=version_of(card))
    assert seat_of(card, ana).ones is None
    with pytest.raises(Refused) as refused:
        services.change_undo(scorecard_id=card.pk, author=organizer, version=version_of(card))
    assert (refused.value.message, refused.value.status) == ("No hay nada que deshacer.", 409)
    undos = Change.objects.filter(kind="undo").order_by("pk")
    assert [(u.undoes.items[0][3], u.version) for u in undos] == [(4, 3), (3, 4)]


def test_undo_of_a_joker_removes_the_box_and_the_bonus(card, organizer, ana):
    seat = seat_of(card, ana)
    write(card, seat, "yahtzee", "50")
    joker(card, seat, "2", "twos")
    services.change_undo(scorecard_id=card.pk, author=organizer, version=version_of(card))
    seat.refresh_from_db()
    assert (seat.twos, seat.yahtzee_bonuses, seat.yahtzee) == (None, 0, 50)


def test_undo_refuses_when_the_card_changed_since_it_was_seen(card, organizer, ana):
    seat = seat_of(card, ana)
    write(card, seat, "ones", "3")
    seen = version_of(card)
    write(card, seat, "twos", "4")
    with pytest.raises(Refused) as refused:
        services.change_undo(scorecard_id=card.pk, author=organizer, version=str(seen))
    assert refused.value.status == 409
    assert "revisa antes de deshacer" in refused.value.message
    assert seat_of(card, ana).twos == 4
    services.change_undo(scorecard_id=card.pk, author=organizer, version=str(version_of(card)))
    assert seat_of(card, ana).twos is None


@pytest.mark.parametrize("version", [None, "", " ", "abc", "-1", "3.0", "10\xa0000", "1" * 10])
def test_undo_without_the_version_it_was_based_on_is_refused(card, organizer, ana, version):
    seat = seat_of(card, ana)
    write(card, seat, "ones", "3")
    with pytest.raises(Refused) as refused:
        services.change_undo(scorecard_id=card.pk, author=organizer, version=version)
    assert refused.value.status == 400
    assert refused.value.message == (
        "No sabemos qué versión de la tarjeta estás viendo: recárgala y vuelve a deshacer."
    )
    assert seat_of(card, ana).ones == 3
    assert version_of(card) == 1
    assert Change.objects.count() == 1


def test_undo_takes_the_version_as_a_number_or_as_sent(card, organizer, ana):
    seat = seat_of(card, ana)
    write(card, seat, "ones", "3")
    write(card, seat, "twos", "4")
    services.change_undo(scorecard_id=card.pk, author=organizer, version=2)
    services.change_undo(scorecard_id=card.pk, author=organizer, version=" 3 ")
    assert (seat_of(card, ana).ones, seat_of(card, ana).twos) == (None, None)


def test_undo_refuses_a_change_whose_boxes_were_changed_outside_the_log(card, organizer, ana):
    seat = seat_of(card, ana)
    write(card, seat, "ones", "3")
    Seat.objects.filter(pk=seat.pk).update(ones=2)  # the admin, the shell
    with pytest.raises(Refused) as refused:
        services.change_undo(scorecard_id=card.pk, author=organizer, version=version_of(card))
    assert refused.value.message == "La tarjeta cambió después: no se puede deshacer."
    assert refused.value.status == 409
    assert seat_of(card, ana).ones == 2


@pytest.mark.parametrize(("who", "refusal"), [("stranger", Http404), ("player", PermissionDenied)])
def test_only_the_organizer_or_staff_undo(card, ana, who, refusal):
    write(card, seat_of(card, ana), "ones", "3")
    author = UserFactory() if who == "stranger" else ana
    with pytest.raises(refusal):
        services.change_undo(scorecard_id=card.pk, author=author, version=version_of(card))
    staff = UserFactory(is_staff=True)
    services.change_undo(scorecard_id=card.pk, author=staff, version=version_of(card))
    assert seat_of(card, ana).ones is None


# scorecard_finalize


def test_finalize_stores_totals_positions_and_closes_the_card(card, organizer, ana, ben):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(chance=23)
    finalized = services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    assert finalized.is_finalized
    assert finalized.version == version_of(card) == 1
    a, b = seat_of(card, ana), seat_of(card, ben)
    assert (a.total, a.place, b.total, b.place) == (63 + 35 + 147, 2, 63 + 35 + 148, 1)


def test_ties_share_a_position(card, organizer):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    assert [(s.total, s.place) for s in card.seats.all()] == [(245, 1), (245, 1)]


def test_finalize_lists_what_is_missing_per_player(card, organizer, ana, ben):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ana).pk).update(chance=None)
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(yahtzee=0, yahtzee_bonuses=1)
    with pytest.raises(Refused) as refused:
        services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    assert (refused.value.message, refused.value.status) == ("Aún no se puede finalizar.", 409)
    # What is missing is the seats' own problems, which the card lists.
    assert seat_of(card, ana).problems == ["Sin anotar: Libre (Chance)."]
    assert "la casilla Yahtzee no tiene 50" in seat_of(card, ben).problems[0]
    assert not Scorecard.objects.get(pk=card.pk).is_finalized


def test_two_finalize_requests_give_one_success(card, organizer):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    with pytest.raises(Refused) as refused:
        services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    assert refused.value.status == 409
    assert version_of(card) == 1


@pytest.mark.parametrize(("who", "refusal"), [("stranger", Http404), ("player", PermissionDenied)])
def test_only_the_organizer_or_staff_finalize(card, ana, who, refusal):
    fill(card)
    author = UserFactory() if who == "stranger" else ana
    with pytest.raises(refusal):
        services.scorecard_finalize(scorecard_id=card.pk, author=author)
    assert not Scorecard.objects.get(pk=card.pk).is_finalized
    services.scorecard_finalize(scorecard_id=card.pk, author=UserFactory(is_staff=True))
    assert Scorecard.objects.get(pk=card.pk).is_finalized


# scorecard_discard


def test_discard_deletes_the_card_its_seats_and_its_log(card, organizer, ana):
    enter(card, seat_of(card, ana), organizer, ones=3)
    # an undo keeps what it undid
    services.change_undo(scorecard_id=card.pk, author=organizer, version=version_of(card))
    services.scorecard_discard(scorecard_id=card.pk, author=organizer)
    assert not Scorecard.objects.exists()
    assert not Seat.objects.exists()
    assert not Change.objects.exists()


def test_a_finalized_card_cannot_be_discarded(card, organizer):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    with pytest.raises(Refused) as refused:
        services.scorecard_discard(scorecard_id=card.pk, author=organizer)
    assert refused.value.status == 409
    assert Scorecard.objects.filter(pk=card.pk).exists()


@pytest.mark.parametrize(("who", "refusal"), [("stranger", Http404), ("player", PermissionDenied)])
def test_only_the_organizer_or_staff_discard(card, ana, who, refusal):
    author = UserFactory() if who == "stranger" else ana
    with pytest.raises(refusal):
        services.scorecard_discard(scorecard_id=card.pk, author=author)
    assert Scorecard.objects.filter(pk=card.pk).exists()
    services.scorecard_discard(scorecard_id=card.pk, author=UserFactory(is_staff=True))
    assert not Scorecard.objects.exists()


# A complete game through the services


def test_a_whole_game_entered_box_by_box_finalizes(card, organizer, ana, ben):
    for player in (ana, ben):
        enter(card, seat_of(card, player), organizer, **full_card())
    finalized = services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    assert finalized.version == 2 * len(full_card()) + 1
    assert [s.total for s in card.seats.all()] == [245, 245]
    assert Change.objects.filter(scorecard=card).count() == 2 * len(full_card())
