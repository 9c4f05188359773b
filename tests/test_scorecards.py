import re
import uuid

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError
from django.urls import reverse

from scorecards import rules, services
from scorecards.models import BONUS, Change, FinalizedError, Scorecard, Seat
from scorecards.rules import Category
from scorecards.services import Refused
from tests.factories import UserFactory, fill, logged_items, make_scorecard

pytestmark = pytest.mark.django_db


@pytest.fixture
def organizer():
    return UserFactory(username="org", display_name="Olga")


@pytest.fixture
def card(organizer, ana, ben):
    return make_scorecard(organizer, [ana, ben])


@pytest.fixture
def org_client(client, organizer):
    client.force_login(organizer)
    return client


def seat_of(card, player):
    return card.seats.get(player=player)


def write(client, card, seat, box, value, was="", htmx=False):
    headers = {"HX-Request": "true"} if htmx else {}
    return client.post(
        reverse("box", args=[card.pk, seat.pk, box]),
        {"value": value, "was": was},
        headers=headers,
    )


# Creating a card


def test_the_new_card_page_lists_active_players_only(org_client, ana):
    UserFactory(username="gone", display_name="Ausente", is_active=False)
    response = org_client.get(reverse("scorecard_new"))
    assert response.status_code == 200
    assert "Ana" in response.text
    assert "Ausente" not in response.text


def test_it_finds_players_by_name(org_client, ana, ben):
    response = org_client.get(reverse("scorecard_new"), {"q": "be"})
    assert "Ben" in response.text
    assert ">Ana<" not in response.text.replace(" Ana<", ">Ana<")


@pytest.mark.parametrize("query", ["oscar", "ÓSCAR", "Óscar", "scar"])
def test_the_search_ignores_case_and_accents(org_client, query):
    UserFactory(display_name="Óscar")
    UserFactory(display_name="Olivia")
    response = org_client.get(reverse("scorecard_new"), {"q": query})
    listed = re.search(r'<ul class="player-list".*?</ul>', response.text, re.S).group(0)
    assert "Óscar" in listed
    assert "Olivia" not in listed


def test_the_players_ticked_stay_ticked_whatever_is_searched(org_client, ana, ben):
    response = org_client.get(reverse("scorecard_new"), {"q": "be", "p": [ana.pk]})
    assert f'value="{ana.pk}" checked' in response.text  # Ana does not match «be» …
    assert f'value="{ben.pk}">' in response.text
    # … and «Buscar» sends the ticks with it: one form, two destinations.
    form = re.search(r'<form [^>]*action="/tarjetas/nueva/orden/".*?</form>', response.text, re.S)
    form = form.group(0)
    assert f'formaction="{reverse("scorecard_new")}"' in form
    assert 'name="p"' in form
    assert 'name="q"' in form


def test_every_player_of_a_club_is_listed(org_client, monkeypatch):
    from scorecards import views

    monkeypatch.setattr(views, "PLAYERS_LISTED", 3)
    players = [UserFactory(display_name=f"Jugador {n:02}") for n in range(5)]
    response = org_client.get(reverse("scorecard_new"), {"p": [players[4].pk]})
    listed = re.findall(r'name="p" value="(\d+)"', response.text)
    assert len(listed) == 4  # the first three, and the one ticked
    assert str(players[4].pk) in listed
    assert "Hay 2 jugadores más: búscalos por su nombre." in response.text


def test_the_order_page_sets_the_seating_order(org_client, ana, ben):
    response = org_client.get(reverse("scorecard_order"), {"p": [ben.pk, ana.pk]})
    assert response.status_code == 200
    assert response.text.index("Ben") < response.text.index("Ana")
    assert f'name="p" value="{ben.pk}"' in response.text


def test_who_starts_rotates_the_table_to_the_highest_sum(org_client, ana, ben, organizer):
    carla = UserFactory(display_name="Carla")
    ids = [ana.pk, ben.pk, carla.pk]
    response = org_client.get(reverse("scorecard_order"), {"p": ids, "t": ["12", "25", "20"]})
    assert "Empieza Ben" in response.text
    hidden = [f'name="p" value="{i}"' for i in (ben.pk, carla.pk, ana.pk)]
    positions = [response.text.index(h) for h in hidden]
    assert positions == sorted(positions)


def test_who_starts_asks_only_the_tied_players_to_roll_again(org_client, ana, ben):
    carla = UserFactory(display_name="Carla")
    ids = [ana.pk, ben.pk, carla.pk]
    response = org_client.get(reverse("scorecard_order"), {"p": ids, "t": ["25", "10", "25"]})
    assert "Empate: repiten solo Ana y Carla" in response.text
    assert f'id="s-{ben.pk}"' not in response.text
    response = org_client.get(
        reverse("scorecard_order"), {"p": ids, "s": ["25,10,25"], "t": ["8", "19"]}
    )
    assert "Empieza Carla" in response.text


def test_who_starts_rejects_impossible_sums(org_client, ana, ben):
    response = org_client.get(reverse("scorecard_order"), {"p": [ana.pk, ben.pk], "t": ["3", "x"]})
    assert response.status_code == 200
    assert "entre 5 y 30" in response.text


def test_a_wrong_sum_is_named_and_the_others_are_kept(org_client, ana, ben):
    carla = UserFactory(display_name="Carla")
    ids = [ana.pk, ben.pk, carla.pk]
    response = org_client.get(reverse("scorecard_order"), {"p": ids, "t": ["12", "31", "20"]})
    assert "Revisa la suma de Ben: con cinco dados sale entre 5 y 30." in response.text
    fields = dict(re.findall(r'id="s-(\d+)" name="t" value="([^"]*)"', response.text))
    assert fields == {str(ana.pk): "12", str(ben.pk): "31", str(carla.pk): "20"}
    wrong = re.findall(r'id="s-(\d+)"[^>]*aria-invalid="true"', response.text)
    assert wrong == [str(ben.pk)]
    # In a re-roll among the tied, the same.
    response = org_client.get(
        reverse("scorecard_order"), {"p": ids, "s": ["25,10,25"], "t": ["8", "0"]}
    )
    assert "Revisa la suma de Carla" in response.text
    assert f'id="s-{ben.pk}"' not in response.text
    # More sums than players to roll (a hand-made address), and fewer: a page, not a 500.
    for t in (["8", "31", "9", "9"], ["31"]):
        response = org_client.get(reverse("scorecard_order"), {"p": ids, "s": ["25,10,25"], "t": t})
        assert response.status_code == 200
        assert "con cinco dados sale entre 5 y 30" in response.text


def test_creating_a_card_makes_the_creator_the_organizer(org_client, organizer, ana, ben):
    response = org_client.post(reverse("scorecard_create"), {"p": [ben.pk, ana.pk]})
    card = Scorecard.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert card.organizer == organizer
    assert [s.player for s in card.seats.all()] == [ben, ana]
    assert card.mode == "presencial"


def _order_token(org_client, *players) -> str:
    page = org_client.get(reverse("scorecard_order"), {"p": [p.pk for p in players]})
    match = re.search(r'name="token" value="([0-9a-f-]{36})"', page.text)
    assert match, "the order page carries a one-time token"
    return match.group(1)


def test_sending_the_order_page_twice_makes_one_card(org_client, organizer, ana, ben):
    """A double tap on «Crear tarjeta», or the browser sending the form again."""
    token = _order_token(org_client, ana, ben)
    sent = {"p": [ana.pk, ben.pk], "token": token}
    first = org_client.post(reverse("scorecard_create"), sent)
    second = org_client.post(reverse("scorecard_create"), sent)
    card = Scorecard.objects.get()
    assert first.url == second.url == reverse("scorecard", args=[card.pk])
    assert [s.player for s in card.seats.all()] == [ana, ben]
    # Another rendering of the page is another card: the organizer meant it.
    assert _order_token(org_client, ana, ben) != token
    org_client.post(
        reverse("scorecard_create"),
        {"p": [ana.pk, ben.pk], "token": _order_token(org_client, ana, ben)},
    )
    assert Scorecard.objects.count() == 2


def test_a_token_is_one_organizers_alone(org_client, client, organizer, ana, ben):
    token = _order_token(org_client, ana, ben)
    org_client.post(reverse("scorecard_create"), {"p": [ana.pk, ben.pk], "token": token})
    client.force_login(ana)
    response = client.post(reverse("scorecard_create"), {"p": [ben.pk], "token": token})
    mine = Scorecard.objects.get(organizer=ana)
    assert response.url == reverse("scorecard", args=[mine.pk])
    assert [s.player for s in mine.seats.all()] == [ben]


@pytest.mark.parametrize("token", ["", "zz", "1" * 5000, "../../etc"])
def test_a_missing_or_malformed_token_still_creates_the_card(org_client, ana, token):
    response = org_client.post(reverse("scorecard_create"), {"p": [ana.pk], "token": token})
    card = Scorecard.objects.get()
    assert response.url == reverse("scorecard", args=[card.pk])
    assert card.creation_token is None


def test_a_request_that_loses_the_race_answers_with_the_winners_card(
    org_client, organizer, ana, ben, monkeypatch
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
def test_an_old_token_for_another_game_makes_a_new_card(org_client, organizer, ana, ben, then):
    """The order page back from the browser's history after that game: a new game."""
    token = _order_token(org_client, ana, ben)
    org_client.post(reverse("scorecard_create"), {"p": [ana.pk, ben.pk], "token": token})
    first = Scorecard.objects.get()
    players = [ana.pk, ben.pk]
    if then == "finalized":
        fill(first)
        services.scorecard_finalize(scorecard_id=first.pk, author=first.organizer)
    elif then == "other players":
        players = [ana.pk]
    else:
        players = [ben.pk, ana.pk]
    response = org_client.post(reverse("scorecard_create"), {"p": players, "token": token})
    second = Scorecard.objects.exclude(pk=first.pk).get()
    assert response.url == reverse("scorecard", args=[second.pk])
    assert [s.player_id for s in second.seats.all()] == players
    assert second.creation_token is None


def test_the_order_page_is_kept_for_back_but_never_reused_otherwise(org_client, ana):
    """Back after «Crear tarjeta» shows the same page, whose token leads to the card it
    made (test_browser.py); any other visit asks the server again."""
    page = org_client.get(reverse("scorecard_order"), {"p": [ana.pk]})
    cache = {part.strip() for part in page["Cache-Control"].split(",")}
    assert cache == {"private", "no-cache"}
    assert 'autocomplete="off"' in page.text


def test_the_database_refuses_a_second_card_for_one_token(db, organizer):
    token = uuid.uuid4()
    Scorecard.objects.create(organizer=organizer, creation_token=token)
    Scorecard.objects.create(organizer=organizer)  # no token: as many as one likes
    Scorecard.objects.create(organizer=organizer)
    with pytest.raises(IntegrityError), transaction.atomic():
        Scorecard.objects.create(organizer=organizer, creation_token=token)


@pytest.mark.parametrize(
    "players",
    [[], ["abc"], ["999999"], "dup", "eleven", "inactive"],
)
def test_creating_a_bad_card_changes_nothing(org_client, ana, players):
    if players == "dup":
        players = [ana.pk, ana.pk]
    elif players == "eleven":
        players = [UserFactory().pk for _ in range(11)]
    elif players == "inactive":
        players = [UserFactory(is_active=False).pk]
    response = org_client.post(reverse("scorecard_create"), {"p": players}, follow=True)
    assert response.status_code == 200
    assert Scorecard.objects.count() == 0
    assert "alert" in response.text or "message-error" in response.text


# Entering boxes


def test_the_card_page_shows_the_paper_card(org_client, card):
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    for text in ["Unos", "Seises", "Bonus superior", "faltan 63", "Bonus Yahtzee", "Total"]:
        assert text in response.text
    assert 'aria-label="Unos — Ana: sin anotar"' in response.text


def test_the_picker_offers_only_allowed_values(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, "fours"]))
    assert response.status_code == 200
    values = [v for v in (0, 4, 8, 12, 16, 20) if f'name="value" value="{v}"' in response.text]
    assert values == [0, 4, 8, 12, 16, 20]
    assert 'name="value" value="3"' not in response.text
    assert "Sin anotar" in response.text


def test_the_picker_fragment_has_no_page_around_it(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(
        reverse("box", args=[card.pk, seat.pk, "chance"]), headers={"HX-Request": "true"}
    )
    assert "<html" not in response.text
    assert 'name="value" value="0"' not in response.text


def test_the_picker_proposes_the_score_of_the_dice(org_client, card, ana):
    seat = seat_of(card, ana)
    url = reverse("box", args=[card.pk, seat.pk, "three_of_a_kind"])
    assert 'value="19" class="primary">Anotar 19' in org_client.get(url, {"dados": "55513"}).text
    assert 'value="0" class="primary">Anotar 0' in org_client.get(url, {"dados": "12345"}).text


@pytest.mark.parametrize("yahtzee", [50, 0])
@pytest.mark.parametrize("box", ["full_house", "large_straight", "three_of_a_kind", "fours"])
def test_five_of_a_kind_after_the_yahtzee_box_goes_to_the_extra_yahtzee(
    org_client, card, ana, yahtzee, box
):
    """The dice helper does not offer 0 in Full for 44444 once Yahtzee is used: it is an
    extra Yahtzee, scored by the joker order (and +100 after a 50)."""
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", str(yahtzee))
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, box]), {"dados": "44444"})
    assert response.status_code == 200
    assert 'class="primary">Anotar' not in response.text
    joker = reverse("joker", args=[card.pk, seat.pk])
    assert f'href="{joker}?cara=4"' in response.text
    assert "Es un Yahtzee adicional" in response.text
    # That link's picker offers the boxes the joker order allows, with their scores.
    choices = org_client.get(joker, {"cara": "4"}).text
    assert 'value="fours">Cuatros <strong>20</strong>' in choices
    assert 'value="full_house"' not in choices  # the own upper box is free: it comes first


def test_five_of_a_kind_before_the_yahtzee_box_is_an_ordinary_roll(org_client, card, ana):
    seat = seat_of(card, ana)
    url = reverse("box", args=[card.pk, seat.pk, "three_of_a_kind"])
    response = org_client.get(url, {"dados": "44444"})
    assert 'value="20" class="primary">Anotar 20' in response.text
    assert "Yahtzee adicional" not in response.text
    # Correcting the Yahtzee box itself still proposes its score.
    write(org_client, card, seat, "yahtzee", "0")
    url = reverse("box", args=[card.pk, seat.pk, "yahtzee"])
    assert 'value="50" class="primary">Anotar 50' in org_client.get(url, {"dados": "44444"}).text


def test_writing_a_box_updates_totals_and_positions(org_client, card, ana, ben):
    response = write(org_client, card, seat_of(card, ana), "fives", "15", htmx=True)
    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'aria-label="Cincos — Ana: 15"' in response.text
    assert seat_of(card, ana).fives == 15
    card.refresh_from_db()
    assert card.version == 1
    change = Change.objects.get()
    assert change.items == [[seat_of(card, ana).pk, "fives", None, 15]]
    assert change.author.username == "org"


def test_a_plain_post_redirects_back_to_the_card(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "ones", "0")
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert seat_of(card, ana).ones == 0


def test_sin_anotar_clears_a_box(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    write(org_client, card, seat_of(card, ana), "ones", "", was="3")
    assert seat_of(card, ana).ones is None
    assert logged_items()[-1][3] is None


@pytest.mark.parametrize(
    ("box", "value"),
    [
        ("fives", "17"),
        ("chance", "0"),
        ("full_house", "20"),
        ("ones", "-1"),
        ("ones", "1e3"),
        ("ones", "٣"),
        ("ones", "99999999999999999999"),
        ("yahtzee_bonuses", "13"),
        ("ones", "x"),
    ],
)
def test_an_impossible_value_is_refused_in_spanish_and_nothing_changes(
    org_client, card, ana, box, value
):
    response = write(org_client, card, seat_of(card, ana), box, value, htmx=True)
    assert response.status_code == 400
    assert 'role="alert"' in response.text
    assert Change.objects.count() == 0
    seat = seat_of(card, ana)
    assert getattr(seat, box) in (None, 0)


def test_a_box_that_does_not_exist_is_404(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "sevens", "7")
    assert response.status_code in (302, 404)
    assert Change.objects.count() == 0


def test_a_seat_of_another_card_is_refused(org_client, card, organizer):
    other = make_scorecard(organizer)
    foreign = other.seats.first()
    response = write(org_client, card, foreign, "ones", "1", htmx=True)
    assert response.status_code == 404
    assert foreign.__class__.objects.get(pk=foreign.pk).ones is None


def test_a_stale_write_is_refused_rather_than_overwriting(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "sixes", "18")
    response = write(org_client, card, seat, "sixes", "24", was="", htmx=True)
    assert response.status_code == 409
    assert "cambió mientras tanto" in response.text
    assert seat_of(card, ana).sixes == 18


def test_a_card_read_with_its_seats_behaves_like_one_the_orm_loaded(
    django_assert_num_queries, organizer, card, ana
):
    seat_id = seat_of(card, ana).pk
    with django_assert_num_queries(1):
        loaded = Scorecard.objects.with_seats(card.pk)
        seat = loaded.loaded_seat(seat_id)
        assert (seat.scorecard, seat.player, loaded.organizer) == (loaded, ana, organizer)
        assert seat.scorecard is loaded
        assert loaded.created_at == card.created_at
        assert loaded.created_at.tzinfo is not None
    assert not loaded._state.adding
    assert seat._state.db == "default"
    # A field the query left out is read when asked for, as with QuerySet.only().
    with django_assert_num_queries(1):
        assert seat.player.email == ana.email
    seat.ones = 3
    seat.save(update_fields=["ones"])  # an UPDATE of the row it was read from
    assert Seat.objects.get(pk=seat.pk).ones == 3
    assert Seat.objects.count() == 2


def _another_device_writes_first(monkeypatch, organizer, seat, box, value):
    """Between a write's read of the card and its write, another device writes.

    The path of a write in two steps (_written: every box write on SQLite, every extra
    Yahtzee); PostgreSQL's box writes in one statement are in test_races.py.
    """
    monkeypatch.setattr(services, "_box_written_in_one_statement", lambda *args: None)
    record = services._record_unless_changed
    calls = []

    def record_after_the_other(scorecard, *args, **kwargs):
        if not calls:
            calls.append(scorecard.version)
            Seat.objects.filter(pk=seat.pk).update(**{box: value})
            Scorecard.objects.filter(pk=scorecard.pk).update(version=scorecard.version + 1)
        outcome = record(scorecard, *args, **kwargs)
        calls.append(outcome)
        return outcome

    monkeypatch.setattr(services, "_record_unless_changed", record_after_the_other)
    return calls


def test_a_write_whose_card_changed_after_it_was_read_is_checked_again(
    monkeypatch, organizer, card, ana, ben
):
    calls = _another_device_writes_first(monkeypatch, organizer, seat_of(card, ben), "ones", 3)
    version = card.version
    scorecard = _box(card, seat_of(card, ana), "twos", "4", "", organizer)
    # The conditional write found the card changed and wrote nothing; read again locked,
    # the write still holds and is made.
    assert calls == [version, False, True]
    assert scorecard.version == version + 2
    assert (seat_of(card, ana).twos, seat_of(card, ben).ones) == (4, 3)
    assert [(box, new) for _seat, box, _old, new in logged_items()] == [("twos", 4)]


on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the one-statement box write is PostgreSQL's"
)


def _box(card, seat, box, value, was, author):
    return services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box=box, value=value, was=was, author=author
    )


@on_postgres
def test_on_postgresql_a_box_write_is_read_checked_and_written_in_one_statement(
    django_assert_num_queries, organizer, card, ana, ben
):
    seat, version = seat_of(card, ana), card.version
    # an entry, a correction and «Sin anotar»: each one statement, answered with the card
    for value, was, new in (("3", "", 3), ("4", "3", 4), ("", "4", None)):
        with django_assert_num_queries(1):
            scorecard = _box(card, seat, "ones", value, was, organizer)
        version += 1
        assert scorecard.version == version == Scorecard.objects.get(pk=card.pk).version
        assert scorecard.loaded_seat(seat.pk).ones == new == seat_of(card, ana).ones
        assert [s.player for s in scorecard.seat_list] == [ana, ben]
        assert scorecard.organizer == organizer
        recorded = scorecard.recorded
        assert [(s.pk, box, old, n) for s, box, old, n in recorded.items] == [
            (seat.pk, "ones", None if was == "" else int(was), new)
        ]
        change = Change.objects.get(pk=recorded.change_id)
        assert (change.author, change.kind, change.scorecard_id) == (organizer, "box", card.pk)
        assert change.items == [[seat.pk, "ones", None if was == "" else int(was), new]]
    staff, ben_seat = UserFactory(username="root", is_staff=True), seat_of(card, ben)
    with django_assert_num_queries(1):
        assert _box(card, ben_seat, "chance", "20", "", staff).version == version + 1


@on_postgres
@pytest.mark.parametrize(
    "case", ["player", "stale was", "same value", "finalized", "not allowed", "other seat", "junk"]
)
def test_what_the_one_statement_does_not_write_is_left_to_the_two_step_path(
    organizer, card, ana, ben, case
):
    author, seat, box, value, was = organizer, seat_of(card, ana), "ones", "2", ""
    if case == "player":
        author = ana
    elif case == "stale was":
        was = "1"
    elif case == "same value":
        Seat.objects.filter(pk=seat.pk).update(ones=2)
        was = "2"
    elif case == "finalized":
        fill(card)
        services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
        was = str(seat_of(card, ana).ones)
    elif case == "not allowed":
        value = "7"
    elif case == "other seat":
        other = make_scorecard(organizer, [ana])
        seat = seat_of(other, ana)
    elif case == "junk":
        value = "dos"
    before = Scorecard.objects.get(pk=card.pk).version, Change.objects.count()
    assert services._box_written_in_one_statement(card.pk, seat.pk, box, value, was, author) is None
    assert (Scorecard.objects.get(pk=card.pk).version, Change.objects.count()) == before


def test_a_write_whose_box_changed_after_it_was_read_is_refused(monkeypatch, organizer, card, ana):
    seat = seat_of(card, ana)
    calls = _another_device_writes_first(monkeypatch, organizer, seat, "twos", 6)
    with pytest.raises(Refused, match="cambió mientras tanto") as refused:
        _box(card, seat, "twos", "4", "", organizer)
    assert refused.value.status == 409
    assert calls[1:] == [False]
    assert seat_of(card, ana).twos == 6
    assert not Change.objects.exists()


def test_a_change_for_a_version_the_card_has_left_writes_nothing(organizer, card, ana):
    stale = Scorecard.objects.with_seats(card.pk)
    Scorecard.objects.filter(pk=card.pk).update(version=stale.version + 1)
    seat = stale.loaded_seat(seat_of(card, ana).pk)
    items = [services._set(seat, "ones", 2)]
    assert services._record_unless_changed(stale, organizer, Change.Kind.BOX, items) is False
    assert seat_of(card, ana).ones is None
    assert not Change.objects.exists()
    assert Scorecard.objects.get(pk=card.pk).version == stale.version + 1
    # At the version it has, the same change is written, with its log entry.
    current = Scorecard.objects.with_seats(card.pk)
    items = [services._set(current.loaded_seat(seat.pk), "ones", 2)]
    assert services._record_unless_changed(current, organizer, Change.Kind.BOX, items) is True
    assert seat_of(card, ana).ones == 2
    assert [item[1:] for item in logged_items()] == [("ones", None, 2)]
    assert current.recorded.items == items


def test_the_bonus_line_is_correctable(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, BONUS, "2", was="0")
    seat.refresh_from_db()
    assert seat.yahtzee_bonuses == 2
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert "la casilla Yahtzee no tiene 50" in response.text


# Extra Yahtzee


def test_joker_with_50_writes_the_upper_box_and_the_bonus_together(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    page = org_client.get(reverse("joker", args=[card.pk, seat.pk]), {"cara": "4"})
    assert 'value="fours"' in page.text
    assert 'value="chance"' not in page.text
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]), {"face": "4", "box": "fours"}
    )
    assert response.status_code == 302
    seat.refresh_from_db()
    assert (seat.fours, seat.yahtzee_bonuses) == (20, 1)
    change = Change.objects.latest("pk")
    assert change.kind == "joker"
    assert {(box, old, new) for _seat, box, old, new in change.items} == {
        ("fours", None, 20),
        (BONUS, 0, 1),
    }


def test_joker_with_a_scratched_yahtzee_gives_no_bonus(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "0")
    write(org_client, card, seat, "fours", "8")
    org_client.post(reverse("joker", args=[card.pk, seat.pk]), {"face": "4", "box": "full_house"})
    seat.refresh_from_db()
    assert (seat.full_house, seat.yahtzee_bonuses) == (25, 0)


def test_joker_refuses_a_box_out_of_the_forced_order(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]),
        {"face": "4", "box": "chance"},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 409
    assert "orden del comodín" in response.text
    seat.refresh_from_db()
    assert (seat.chance, seat.yahtzee_bonuses) == (None, 0)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"face": "9", "box": "ones"},
        {"face": "x"},
        {"box": "?"},
        {"face": "٣", "box": "threes"},  # an Arabic-Indic three: int() would take it
        {"face": " 3", "box": "threes"},
        {"face": "03", "box": "threes"},
    ],
)
def test_joker_rejects_malformed_requests(org_client, card, ana, data):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]), data, headers={"HX-Request": "true"}
    )
    assert response.status_code in (400, 409)
    assert Change.objects.count() == 1


# Corrections and undo


def test_undo_restores_the_latest_change_then_the_one_before(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "ones", "3")
    write(org_client, card, seat, "ones", "4", was="3")
    org_client.post(reverse("undo", args=[card.pk]))
    assert seat_of(card, ana).ones == 3
    org_client.post(reverse("undo", args=[card.pk]))
    assert seat_of(card, ana).ones is None
    response = org_client.post(reverse("undo", args=[card.pk]), headers={"HX-Request": "true"})
    assert response.status_code == 409
    assert "No hay nada que deshacer" in response.text
    assert Change.objects.filter(kind="undo").count() == 2


def test_undo_of_a_joker_removes_the_box_and_the_bonus(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    org_client.post(reverse("joker", args=[card.pk, seat.pk]), {"face": "2", "box": "twos"})
    org_client.post(reverse("undo", args=[card.pk]))
    seat.refresh_from_db()
    assert (seat.twos, seat.yahtzee_bonuses, seat.yahtzee) == (None, 0, 50)


def test_recent_changes_are_listed_on_the_card(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "twos", "6")
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert "Últimos cambios" in response.text
    assert "Ana, Doses: sin anotar → 6" in response.text


# Finalizing


def test_what_a_column_lacks_is_said_in_the_language_asked_each_time(card, ana):
    from django.utils import translation

    seat = seat_of(card, ana)
    seat.yahtzee_bonuses = 1  # with no 50 in Yahtzee: an inconsistency too
    said = {}
    for language in ("es", "en", "es"):
        with translation.override(language):
            said.setdefault(language, []).append(seat.problems)
    assert said["es"][0] == said["es"][1]
    assert said["es"][0][0].startswith("Sin anotar: Unos, Doses")
    assert said["en"][0][0].startswith("Not scored yet: Ones, Twos")
    assert len(said["en"][0]) == len(said["es"][0]) == 3
    assert "the Yahtzee box does not hold 50" in said["en"][0][1]
    assert "la casilla Yahtzee no tiene 50" in said["es"][0][1]


def test_finalize_lists_what_is_missing_per_player(org_client, card, ana):
    response = org_client.post(reverse("finalize", args=[card.pk]), headers={"HX-Request": "true"})
    assert response.status_code == 409
    assert "Para finalizar falta" in response.text
    assert "Sin anotar: Unos, Doses" in response.text
    card.refresh_from_db()
    assert not card.is_finalized


def test_finalize_stores_totals_positions_and_locks_the_card(org_client, card, ana, ben):
    fill(card)
    seat = seat_of(card, ben)
    seat.chance = 23
    seat.save()
    response = org_client.post(reverse("finalize", args=[card.pk]))
    assert response.status_code == 302
    card.refresh_from_db()
    assert card.is_finalized
    a, b = seat_of(card, ana), seat_of(card, ben)
    assert (a.total, a.place, b.total, b.place) == (63 + 35 + 147, 2, 63 + 35 + 148, 1)
    response = write(org_client, card, a, "ones", "", was="3", htmx=True)
    assert response.status_code == 409
    assert seat_of(card, ana).ones == 3


def test_a_finalized_card_says_no_bonus_rather_than_what_was_missing(org_client, card, ana):
    fill(card, ones=0, twos=2)  # an upper sum under 63
    org_client.post(reverse("finalize", args=[card.pk]))
    row = re.search(
        r'<tr id="row-upper_bonus".*?</tr>',
        org_client.get(reverse("scorecard", args=[card.pk])).text,
        re.S,
    ).group(0)
    assert "faltan" not in row
    assert row.count("<td>0</td>") == 2


def test_ties_share_a_position(org_client, card, ana, ben):
    fill(card)
    org_client.post(reverse("finalize", args=[card.pk]))
    assert [s.place for s in card.seats.all()] == [1, 1]


def test_an_inconsistent_card_cannot_be_finalized(org_client, card, ana):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ana).pk).update(yahtzee=0, yahtzee_bonuses=1)
    response = org_client.post(reverse("finalize", args=[card.pk]), follow=True)
    assert "la casilla Yahtzee no tiene 50" in response.text
    card.refresh_from_db()
    assert not card.is_finalized


def test_two_finalize_requests_give_one_success(card):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    with pytest.raises(Refused) as refused:
        services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    assert refused.value.status == 409


def test_the_model_refuses_to_change_a_finalized_seat(card, ana):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    seat = seat_of(card, ana)
    seat.ones = 0
    with pytest.raises(FinalizedError):
        seat.save()
    with pytest.raises(FinalizedError):
        Scorecard.objects.get(pk=card.pk).delete()


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE scorecards_seat SET ones = 0",
        "DELETE FROM scorecards_seat",
        "UPDATE scorecards_scorecard SET finalized_at = NULL",
        "DELETE FROM scorecards_scorecard",
        "UPDATE scorecards_change SET items = '[]'",
        "DELETE FROM scorecards_change",
        "INSERT INTO scorecards_change (scorecard_id, author_id, created_at, kind, items)"
        " SELECT id, organizer_id, created_at, 'box', '[]' FROM scorecards_scorecard",
    ],
)
def test_the_database_refuses_to_change_a_finalized_card(org_client, card, ana, sql):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert seat_of(card, ana).ones == 3
    assert Scorecard.objects.get(pk=card.pk).is_finalized


def test_the_database_refuses_an_impossible_score(card, ana):
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.filter(pk=seat_of(card, ana).pk).update(fives=17)


def test_a_player_with_games_cannot_be_deleted(card, ana):
    with pytest.raises(ProtectedError):
        ana.delete()
    ana.is_active = False
    ana.save()


def test_the_game_appears_in_every_players_history(client, card, ana, ben):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    for player in (ana, ben):
        client.force_login(player)
        response = client.get(reverse("history"))
        assert "presencial" in response.text
        assert "Tu total <strong>245</strong> · 1º de 2" in response.text


def test_discard_asks_first_and_then_deletes(org_client, card):
    assert "¿Descartar esta tarjeta?" in org_client.get(reverse("discard", args=[card.pk])).text
    assert org_client.post(reverse("discard", args=[card.pk])).status_code == 302
    assert not Scorecard.objects.exists()


def test_a_card_with_an_undone_change_can_be_discarded(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    assert org_client.post(reverse("undo", args=[card.pk])).status_code == 302
    assert Change.objects.filter(undoes__isnull=False).count() == 1
    assert org_client.post(reverse("discard", args=[card.pk])).status_code == 302
    assert not Scorecard.objects.exists()
    assert not Change.objects.exists()


def test_a_finalized_card_cannot_be_discarded(org_client, card):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    response = org_client.post(reverse("discard", args=[card.pk]), headers={"HX-Request": "true"})
    assert response.status_code == 409
    assert Scorecard.objects.filter(pk=card.pk).exists()


# Who may do what


def test_a_player_sees_the_card_without_edit_controls(client, card, ana):
    client.force_login(ana)
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    assert "casilla/" not in response.text
    assert "Finalizar" not in response.text
    seat = seat_of(card, ana)
    assert write(client, card, seat, "ones", "3").status_code == 403
    assert client.post(reverse("undo", args=[card.pk])).status_code == 403
    assert client.post(reverse("finalize", args=[card.pk])).status_code == 403
    assert seat_of(card, ana).ones is None


def test_a_stranger_gets_404_everywhere(client, card, ana):
    client.force_login(UserFactory())
    seat = seat_of(card, ana)
    assert client.get(reverse("scorecard", args=[card.pk])).status_code == 404
    assert write(client, card, seat, "ones", "3").status_code == 404
    assert client.post(reverse("discard", args=[card.pk])).status_code == 404


def test_staff_may_edit_any_card(client, card, ana):
    client.force_login(UserFactory(is_staff=True))
    assert write(client, card, seat_of(card, ana), "ones", "3").status_code == 302
    assert seat_of(card, ana).ones == 3


def test_anonymous_visitors_are_sent_to_log_in(client, card):
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


@pytest.mark.parametrize("name", ["undo", "finalize", "scorecard_create"])
def test_writes_reject_get(org_client, card, name):
    args = [] if name == "scorecard_create" else [card.pk]
    assert org_client.get(reverse(name, args=args)).status_code == 405


# Query budgets


@pytest.mark.parametrize("n", [2, 8])
def test_the_card_page_and_a_write_cost_the_same_for_2_and_8_players(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    client.force_login(organizer)
    seat = card.seats.first()
    write(client, card, seat, "ones", "1")
    # session, user, the card with organizer, seats and players; the sheet is not yet
    # cached for this version: its latest changes with their items and authors
    with django_assert_num_queries(4):
        client.get(reverse("scorecard", args=[card.pk]))
    # the same sheet again comes from the cache
    with django_assert_num_queries(3):
        client.get(reverse("scorecard", args=[card.pk]))
    # A write reads the card with its seats and players, then writes on the condition
    # that the card is still at that version. On PostgreSQL both are one statement; on
    # SQLite the read, then the version, the seat and the change in a savepoint of the
    # test's transaction.
    writes = 1 if connection.vendor == "postgresql" else 6
    # session, user, the card and the writes; then the new version's sheet: its changes
    with django_assert_num_queries(2 + writes + 1):
        write(client, card, seat, "twos", "2", htmx=True)
    # a poll that is behind: session, user, the version, the card; the sheet the write
    # rendered is cached
    with django_assert_num_queries(4):
        client.get(reverse("scorecard_live", args=[card.pk]) + "?v=0")
    # a write from the current page reads nothing after its writes
    card.refresh_from_db()
    with django_assert_num_queries(2 + writes):
        response = client.post(
            reverse("box", args=[card.pk, seat.pk, "threes"]),
            {"value": "3", "was": "", "version": card.version, "answer": "cells"},
            headers={"HX-Request": "true"},
        )
    assert response["HX-Reswap"] == "none"


def test_the_card_fragment_has_no_page_around_it(org_client, card):
    response = org_client.get(reverse("scorecard", args=[card.pk]), headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'id="sheet"' in response.text


@pytest.mark.parametrize(
    "path",
    [
        "/tarjetas/99999999999999999999999/",
        "/tarjetas/{card}/casilla/99999999999999999999999/ones/",
        "/tarjetas/{card}/yahtzee-extra/99999999999999999999999/",
    ],
)
def test_huge_ids_are_404_not_500(org_client, card, path):
    url = path.format(card=card.pk)
    assert org_client.get(url).status_code == 404
    response = org_client.post(url, {"value": "1", "face": "1", "box": "ones"})
    assert response.status_code in (302, 404, 405)
    assert Change.objects.count() == 0


def test_a_retried_write_whose_answer_was_lost_is_confirmed(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "sixes", "18")
    response = write(org_client, card, seat, "sixes", "18", was="", htmx=True)
    assert response.status_code == 200
    assert 'role="alert"' not in response.text
    assert len(logged_items()) == 1


def test_undo_refuses_when_the_card_changed_since_it_was_seen(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "ones", "3")
    seen = Scorecard.objects.get(pk=card.pk).version
    write(org_client, card, seat, "twos", "4")
    response = org_client.post(
        reverse("undo", args=[card.pk]), {"version": seen}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 409
    assert "revisa antes de deshacer" in response.text
    assert seat_of(card, ana).twos == 4
    current = Scorecard.objects.get(pk=card.pk).version
    response = org_client.post(reverse("undo", args=[card.pk]), {"version": current})
    assert seat_of(card, ana).twos is None


def test_the_cached_card_table_follows_writes_names_and_roles(org_client, client, card, ana):
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert 'aria-label="Unos — Ana: sin anotar"' in page
    write(org_client, card, seat_of(card, ana), "ones", "2")
    assert 'aria-label="Unos — Ana: 2"' in org_client.get(reverse("scorecard", args=[card.pk])).text
    ana.display_name = "Anabel"
    ana.save()
    assert "Unos — Anabel: 2" in org_client.get(reverse("scorecard", args=[card.pk])).text
    client.force_login(ana)
    assert "casilla/" not in client.get(reverse("scorecard", args=[card.pk])).text


# A write answers the page that made it with only what changed


def oob_write(client, card, seat, box, value, was="", version=None):
    card.refresh_from_db()
    return client.post(
        reverse("box", args=[card.pk, seat.pk, box]),
        {
            "value": value,
            "was": was,
            "version": card.version if version is None else version,
            "answer": "cells",
        },
        headers={"HX-Request": "true"},
    )


def test_a_write_from_the_current_page_answers_with_what_changed(org_client, card, ana, ben):
    card.refresh_from_db()
    before = card.version
    seat, other = seat_of(card, ana), seat_of(card, ben)
    response = oob_write(org_client, card, seat, "fives", "15")
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    # the version it patches: the page drops the patch if a refresh got past it meanwhile
    assert response["X-Dados-Base"] == str(before)
    html = response.text
    assert 'id="sheet"' not in html
    assert "<html" not in html
    # the written box's cell (in a template, so table cells parse), not its whole row,
    # and the sum rows it counts in (in another template: a row after a cell would not
    # parse): an upper box changes the upper sum and its bonus, the total, positions
    cell = f'<td id="c{seat.pk}-fives" hx-swap-oob="true">'
    assert html.index("<template>") < html.index(cell) < html.index("</template><template>")
    assert html.index("</template><template>") < html.index('<tr id="row-upper" class=')
    assert 'aria-label="Cincos — Ana: 15"' in html
    assert f'id="c{other.pk}-fives"' not in html
    assert 'id="row-fives"' not in html
    assert 'id="row-ones"' not in html
    for row in ("upper", "upper_bonus", "total", "place"):
        assert f'<tr id="row-{row}" class=' in html
    for row in ("lower", "yahtzee_bonuses"):
        assert f'id="row-{row}"' not in html
    card.refresh_from_db()
    # the new version for the poll and the next write, undo enabled, the error cleared
    assert f"vivo/?v={card.version}&amp;t=" in html
    assert f'id="sheet-version" name="version" value="{card.version}" hx-swap-oob="true"' in html
    assert '<button type="submit" id="undo-button" hx-swap-oob="true">' in html
    assert '<div id="sheet-alert" hx-swap-oob="true"></div>' in html
    # what is missing, and the new entry on top of «Últimos cambios»
    assert '<div id="sheet-problems" hx-swap-oob="true">' in html
    assert 'hx-swap-oob="afterbegin:#recent-changes"' in html
    assert "Ana, Cincos: sin anotar → 15" in html
    # the players' poll gets the whole new sheet
    sheet = org_client.get(reverse("scorecard_live", args=[card.pk]), {"v": card.version - 1})
    assert 'aria-label="Cincos — Ana: 15"' in sheet.text


@pytest.mark.parametrize(
    ("box", "value", "sums"),
    [
        ("chance", "20", {"lower"}),
        ("yahtzee", "50", {"lower", "yahtzee_bonuses"}),  # it brings «Yahtzee adicional»
        (BONUS, "1", {"yahtzee_bonuses"}),
    ],
)
def test_a_write_answers_with_the_sum_rows_its_box_counts_in(
    org_client, card, ana, box, value, sums
):
    was = "0" if box == BONUS else ""
    html = oob_write(org_client, card, seat_of(card, ana), box, value, was=was).text
    shown = {
        row
        for row in ("upper", "upper_bonus", "lower", "yahtzee_bonuses")
        if f'id="row-{row}"' in html
    }
    assert shown == sums
    assert '<tr id="row-total" class=' in html
    assert '<tr id="row-place" class=' in html


def test_a_write_from_a_page_that_missed_a_change_gets_the_whole_sheet(org_client, card, ana):
    card.refresh_from_db()
    seen = card.version
    write(org_client, card, seat_of(card, ana), "ones", "2")  # another device
    response = oob_write(org_client, card, seat_of(card, ana), "twos", "4", version=seen)
    assert response.status_code == 200
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert 'aria-label="Unos — Ana: 2"' in response.text  # the change this page missed


@pytest.mark.parametrize("version", ["", "abc", "-1", "99999999999999999999"])
def test_a_write_without_a_usable_version_gets_the_whole_sheet(org_client, card, ana, version):
    response = oob_write(org_client, card, seat_of(card, ana), "twos", "4", version=version)
    assert response.status_code == 200
    assert 'id="sheet"' in response.text
    assert Seat.objects.get(pk=seat_of(card, ana).pk).twos == 4


def test_a_write_from_a_page_whose_cells_have_no_ids_gets_the_whole_sheet(org_client, card, ana):
    """A page rendered before the cells had ids, open during a deploy, sends no answer
    format: the written cells alone would find nothing to replace there."""
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert '<input type="hidden" id="sheet-answer" name="answer" value="cells">' in page
    seat = seat_of(card, ana)
    picker = org_client.get(reverse("box", args=[card.pk, seat.pk, "twos"])).text
    assert 'hx-include="#sheet-version, #sheet-answer"' in picker
    card.refresh_from_db()
    response = org_client.post(
        reverse("box", args=[card.pk, seat.pk, "twos"]),
        {"value": "4", "was": "", "version": card.version},
        headers={"HX-Request": "true"},
    )
    assert response.status_code == 200
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert f'id="c{seat.pk}-twos"' in response.text  # from now on the page has them


def test_a_retried_write_gets_the_whole_sheet(org_client, card, ana):
    assert oob_write(org_client, card, seat_of(card, ana), "twos", "4")["HX-Reswap"] == "none"
    # the answer was lost and the page retries: nothing to write, the whole sheet
    response = oob_write(org_client, card, seat_of(card, ana), "twos", "4", version=0)
    assert 'id="sheet"' in response.text
    assert Change.objects.filter(scorecard=card).count() == 1


def test_a_joker_and_an_undo_answer_with_their_rows(org_client, card, ana):
    seat = seat_of(card, ana)
    oob_write(org_client, card, seat, "yahtzee", "50")
    card.refresh_from_db()
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]),
        {"face": "3", "box": "threes", "version": card.version, "answer": "cells"},
        headers={"HX-Request": "true"},
    )
    assert response["HX-Reswap"] == "none"
    assert f'<td id="c{seat.pk}-threes" hx-swap-oob="true">' in response.text
    assert '<tr id="row-yahtzee_bonuses" class="sum" hx-swap-oob="true">' in response.text
    assert "Ana, Bonus Yahtzee: 0 → 1" in response.text
    card.refresh_from_db()
    response = org_client.post(
        reverse("undo", args=[card.pk]),
        {"version": card.version, "answer": "cells"},
        headers={"HX-Request": "true"},
    )
    assert response["HX-Reswap"] == "none"
    assert f'<td id="c{seat.pk}-threes" hx-swap-oob="true">' in response.text
    assert "deshizo un cambio" in response.text
    seat.refresh_from_db()
    assert (seat.threes, seat.yahtzee_bonuses) == (None, 0)


def test_a_refused_write_still_answers_with_the_whole_sheet_and_why(org_client, card, ana):
    response = oob_write(org_client, card, seat_of(card, ana), "twos", "5")
    assert response.status_code == 400
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert 'role="alert"' in response.text


def test_a_sheet_whose_log_is_newer_than_its_table_is_served_but_not_cached(
    rf, card, ana, django_assert_num_queries
):
    from scorecards import sheet

    request = rf.get("/")
    request.user = card.organizer
    loaded = Scorecard.objects.with_seats(card.pk)
    # a write commits between reading the card and reading its log
    services.box_write(
        scorecard_id=card.pk,
        seat_id=seat_of(card, ana).pk,
        box="ones",
        value="3",
        was="",
        author=card.organizer,
    )
    html = sheet.sheet_html(request, loaded)
    assert 'aria-label="Unos — Ana: sin anotar"' in html  # the table as loaded
    assert "Ana, Unos: sin anotar → 3" in html  # the log as it is now
    with django_assert_num_queries(1):  # not from the cache: the log is read again
        sheet.sheet_html(request, loaded)
    fresh = Scorecard.objects.with_seats(card.pk)
    sheet.sheet_html(request, fresh)
    with django_assert_num_queries(0):  # a consistent sheet is cached
        sheet.sheet_html(request, fresh)


@pytest.mark.parametrize("script_prefix", ["/", "/dados/"])
def test_the_sheets_card_url_is_the_one_reverse_builds(script_prefix):
    from django.urls import set_script_prefix

    from scorecards import sheet

    set_script_prefix(script_prefix)
    try:
        for pk in (1, 42, 987654321, 2**40):
            assert sheet.card_url(pk) == reverse("scorecard", args=[pk])
        assert sheet.card_url(7) == f"{script_prefix}tarjetas/7/"
    finally:
        set_script_prefix("/")


PAGES = ["home", "scorecard_new", "history", "ranking", "profile", "logout", "set_language"]


@pytest.mark.parametrize("script_prefix", ["/", "/dados/"])
def test_the_headers_page_urls_are_the_ones_reverse_builds(script_prefix, monkeypatch):
    from django.template import engines
    from django.urls import set_script_prefix

    from scorecards.templatetags import dados

    template = engines["django"].from_string(
        "{% load dados %}" + " ".join(f"{{% page_url '{name}' %}}" for name in PAGES)
    )
    expected = " ".join(reverse(name) for name in PAGES)
    dados._page_url.cache_clear()
    reversed_names = []
    monkeypatch.setattr(
        dados, "reverse", lambda name, urlconf: reversed_names.append(name) or reverse(name)
    )
    set_script_prefix(script_prefix)
    try:
        for _ in range(3):
            assert template.render({}) == " ".join(reverse(name) for name in PAGES)
        assert f"{script_prefix}historial/" in template.render({})
    finally:
        set_script_prefix("/")
    assert reversed_names == PAGES  # worked out once each, then remembered
    assert template.render({}) == expected


def test_the_page_and_card_urls_follow_the_url_configuration(settings):
    from django.template import engines
    from django.urls import clear_url_caches, set_urlconf

    from scorecards import sheet

    template = engines["django"].from_string("{% load dados %}{% page_url 'history' %}")
    assert (template.render({}), sheet.card_url(7)) == ("/historial/", "/tarjetas/7/")
    settings.ROOT_URLCONF = "tests.urls_elsewhere"  # as a test or a command would
    clear_url_caches()
    expected = ("/otro/historial/", "/otro/tarjetas/7/")
    assert (template.render({}), sheet.card_url(7)) == expected
    set_urlconf("tests.urls_elsewhere")  # as a request does
    try:
        assert (template.render({}), sheet.card_url(7)) == expected
    finally:
        set_urlconf(None)


def test_page_url_refuses_namespaced_names():
    from django.template import engines

    template = engines["django"].from_string("{% load dados %}{% page_url 'admin:index' %}")
    with pytest.raises(ValueError, match="without a namespace"):
        template.render({})


def test_the_sheets_escaping_is_djangos():
    from django.utils import html

    from scorecards import sheet

    text = "<Ana & \"Ben\" 'C'>"
    assert sheet.escape(text) == html.escape(text)
    assert sheet.conditional_escape(text) == html.conditional_escape(text)
    safe = html.escape(text)
    assert sheet.conditional_escape(safe) == html.conditional_escape(safe) == safe
    assert sheet.escape(5) == "5"


@pytest.mark.parametrize("box", [category.value for category in Category])
def test_the_database_takes_every_possible_score_and_no_other(card, ana, box):
    seat = Seat.objects.filter(pk=seat_of(card, ana).pk)
    allowed = rules.allowed_scores(box)
    for value in [*sorted(allowed), None]:
        seat.update(**{box: value})
        assert seat.values_list(box, flat=True).get() == value
    for value in sorted(set(range(-1, 52)) - allowed):
        with pytest.raises(IntegrityError), transaction.atomic():
            seat.update(**{box: value})
    assert seat.values_list(box, flat=True).get() is None


@pytest.mark.parametrize(
    ("field", "good", "bad"),
    [("yahtzee_bonuses", [0, 12], [-1, 13]), ("total", [0, 375], [-1]), ("place", [1], [-1])],
)
def test_the_database_refuses_a_count_out_of_range(card, ana, field, good, bad):
    seat = Seat.objects.filter(pk=seat_of(card, ana).pk)
    for value in good:
        seat.update(**{field: value})
    for value in bad:
        with pytest.raises(IntegrityError), transaction.atomic():
            seat.update(**{field: value})
    assert seat.values_list(field, flat=True).get() == good[-1]
