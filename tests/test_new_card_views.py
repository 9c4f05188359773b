"""«Tarjeta de puntos», «Orden en la mesa» and «Crear tarjeta»: choosing the players,
their order and who starts, and the card they make; who may open each page."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from scorecards import services, turns
from scorecards.models import Scorecard
from tests.factories import UserFactory, fill
from tests.screens import HTMX, finalize

pytestmark = pytest.mark.django_db


# «Tarjeta de puntos»: choosing the players


def test_the_new_card_page_lists_active_players_only(org_client, ana):
    UserFactory(username="gone", display_name="Ausente", is_active=False)
    response = org_client.get(reverse("scorecard_new"))
    assert response.status_code == 200
    assert "<html" in response.text
    assert "Ana" in response.text
    assert "Ausente" not in response.text


def test_it_finds_players_by_name(org_client, ana, ben):
    response = org_client.get(reverse("scorecard_new"), {"q": "be"})
    assert "Ben" in response.text
    assert ">Ana<" not in response.text.replace(" Ana<", ">Ana<")


def test_the_search_never_matches_a_username(org_client):
    """Players do not see each other's usernames, so a search cannot reveal one."""
    UserFactory(username="zorro", display_name="Pepa")
    UserFactory(username="lola", display_name="")  # no display name: the list shows «lola»
    listed = org_client.get(reverse("scorecard_new"), {"q": "zorro"}).text
    assert "Pepa" not in listed
    assert 'id="player-list-empty" hidden' not in listed  # «No hay jugadores con ese nombre.»
    assert "lola" in org_client.get(reverse("scorecard_new"), {"q": "LOL"}).text


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
    from scorecards.views import new

    monkeypatch.setattr(new, "PLAYERS_LISTED", 3)
    players = [UserFactory(display_name=f"Jugador {n:02}") for n in range(5)]
    response = org_client.get(reverse("scorecard_new"), {"p": [players[4].pk]})
    listed = re.findall(r'name="p" value="(\d+)"', response.text)
    assert len(listed) == 4  # the first three, and the one ticked
    assert str(players[4].pk) in listed
    assert "Hay 2 jugadores más: búscalos por su nombre." in response.text


# «Orden en la mesa» and «¿Quién empieza?»


def test_the_order_page_sets_the_seating_order(org_client, ana, ben):
    response = org_client.get(reverse("scorecard_order"), {"p": [ben.pk, ana.pk]})
    assert response.status_code == 200
    assert response.text.index("Ben") < response.text.index("Ana")
    assert f'name="p" value="{ben.pk}"' in response.text
    assert "¿Quién empieza?" in response.text


def test_the_order_page_moves_a_player_up_or_down(org_client, ana, ben, carla):
    response = org_client.get(reverse("scorecard_order"), {"p": [ana.pk, ben.pk, carla.pk]})
    assert f'href="?p={ben.pk}&amp;p={ana.pk}&amp;p={carla.pk}"' in response.text
    # Names in an attribute are isolated with FSI … PDI (no <bdi> there).
    assert 'aria-label="Bajar a \u2068Ana\u2069"' in response.text
    assert 'aria-label="Subir a \u2068Carla\u2069"' in response.text
    assert 'aria-label="Subir a \u2068Ana\u2069"' not in response.text
    assert 'aria-label="Bajar a \u2068Carla\u2069"' not in response.text


def test_one_player_is_not_asked_who_starts(org_client, ana):
    response = org_client.get(reverse("scorecard_order"), {"p": [ana.pk]})
    assert "¿Quién empieza?" not in response.text


@pytest.mark.parametrize("players", [[], ["abc"], ["999999"], "inactive"])
def test_the_order_page_without_players_goes_back_to_choose(org_client, players):
    if players == "inactive":
        players = [UserFactory(is_active=False).pk]
    response = org_client.get(reverse("scorecard_order"), {"p": players})
    assert response.status_code == 302
    assert response.url == reverse("scorecard_new")
    assert "Elige al menos un jugador." in org_client.get(response.url).text


def test_the_order_page_refuses_more_than_ten_players(org_client):
    ids = [UserFactory().pk for _ in range(11)]
    response = org_client.get(reverse("scorecard_order"), {"p": ids})
    assert response.status_code == 302
    assert response.url.startswith(reverse("scorecard_new") + f"?p={ids[0]}&p=")
    assert "Como mucho 10 jugadores por tarjeta." in org_client.get(response.url).text


def test_who_starts_rotates_the_table_to_the_highest_sum(org_client, ana, ben, carla):
    ids = [ana.pk, ben.pk, carla.pk]
    response = org_client.get(reverse("scorecard_order"), {"p": ids, "t": ["12", "25", "20"]})
    assert "Empieza <bdi>Ben</bdi>" in response.text
    hidden = [f'name="p" value="{i}"' for i in (ben.pk, carla.pk, ana.pk)]
    positions = [response.text.index(h) for h in hidden]
    assert positions == sorted(positions)


def test_who_starts_asks_only_the_tied_players_to_roll_again(org_client, ana, ben, carla):
    ids = [ana.pk, ben.pk, carla.pk]
    response = org_client.get(reverse("scorecard_order"), {"p": ids, "t": ["25", "10", "25"]})
    assert "Empate: repiten solo <bdi>Ana</bdi> y <bdi>Carla</bdi>" in response.text
    assert f'id="s-{ben.pk}"' not in response.text
    response = org_client.get(
        reverse("scorecard_order"), {"p": ids, "s": ["25,10,25"], "t": ["8", "19"]}
    )
    assert "Empieza <bdi>Carla</bdi>" in response.text


def test_who_starts_rejects_impossible_sums(org_client, ana, ben):
    response = org_client.get(reverse("scorecard_order"), {"p": [ana.pk, ben.pk], "t": ["3", "x"]})
    assert response.status_code == 200
    assert "entre 5 y 30" in response.text


def test_a_wrong_sum_is_named_and_the_others_are_kept(org_client, ana, ben, carla):
    ids = [ana.pk, ben.pk, carla.pk]
    response = org_client.get(reverse("scorecard_order"), {"p": ids, "t": ["12", "31", "20"]})
    assert "Revisa la suma de <bdi>Ben</bdi>: con cinco dados sale entre 5 y 30." in response.text
    fields = dict(re.findall(r'id="s-(\d+)" name="t" value="([^"]*)"', response.text))
    assert fields == {str(ana.pk): "12", str(ben.pk): "31", str(carla.pk): "20"}
    wrong = re.findall(r'id="s-(\d+)"[^>]*aria-invalid="true"', response.text)
    assert wrong == [str(ben.pk)]
    # In a re-roll among the tied, the same.
    response = org_client.get(
        reverse("scorecard_order"), {"p": ids, "s": ["25,10,25"], "t": ["8", "0"]}
    )
    assert "Revisa la suma de <bdi>Carla</bdi>" in response.text
    assert f'id="s-{ben.pk}"' not in response.text
    # More sums than players to roll (a hand-made address), and fewer: a page, not a 500.
    for t in (["8", "31", "9", "9"], ["31"]):
        response = org_client.get(reverse("scorecard_order"), {"p": ids, "s": ["25,10,25"], "t": t})
        assert response.status_code == 200
        assert "con cinco dados sale entre 5 y 30" in response.text


def test_the_order_page_is_kept_for_back_but_never_reused_otherwise(org_client, ana):
    """Back after «Crear tarjeta» shows the same page, whose token leads to the card it
    made (test_browser.py); any other visit asks the server again."""
    page = org_client.get(reverse("scorecard_order"), {"p": [ana.pk]})
    cache = {part.strip() for part in page["Cache-Control"].split(",")}
    assert cache == {"private", "no-cache"}
    assert 'autocomplete="off"' in page.text


# «Crear tarjeta»


def test_creating_a_card_makes_the_creator_the_organizer(org_client, organizer, ana, ben):
    response = org_client.post(reverse("scorecard_create"), {"p": [ben.pk, ana.pk]})
    card = Scorecard.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert card.organizer == organizer
    assert [s.player for s in card.seats.all()] == [ben, ana]
    assert card.mode == "presencial"


def test_creating_a_card_from_htmx_moves_the_whole_page(org_client, ana):
    response = org_client.post(reverse("scorecard_create"), {"p": [ana.pk]}, headers=HTMX)
    card = Scorecard.objects.get()
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("scorecard", args=[card.pk])


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
    # Another rendering of the page is another card once the first one has started.
    assert _order_token(org_client, ana, ben) != token
    write_a_box(card, ana)
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


@pytest.mark.parametrize("then", ["finalized", "other players", "other order"])
def test_an_old_token_for_another_game_makes_a_new_card(org_client, organizer, ana, ben, then):
    """The order page back from the browser's history after that game: a new game."""
    token = _order_token(org_client, ana, ben)
    org_client.post(reverse("scorecard_create"), {"p": [ana.pk, ben.pk], "token": token})
    first = Scorecard.objects.get()
    players = [ana.pk, ben.pk]
    if then == "finalized":
        finalize(first)
    elif then == "other players":
        players = [ana.pk]
    else:
        # Started: not the card in play nobody has touched, which asks first (below).
        write_a_box(first, ana)
        players = [ben.pk, ana.pk]
    response = org_client.post(reverse("scorecard_create"), {"p": players, "token": token})
    second = Scorecard.objects.exclude(pk=first.pk).get()
    assert response.url == reverse("scorecard", args=[second.pk])
    assert [s.player_id for s in second.seats.all()] == players
    assert second.creation_token is None


def write_a_box(card, player):
    seat = card.seats.get(player=player)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="ones", value="3", was="", author=card.organizer
    )


def create(client, players, token, **extra):
    return client.post(
        reverse("scorecard_create"), {"p": [p.pk for p in players], "token": token, **extra}
    )


@pytest.fixture
def unstarted(org_client, ana, ben):
    """A card made from the order page and left as it was: back on the order page, a new
    «¿Quién empieza?» puts Ben first, and «Crear tarjeta» again."""
    create(org_client, [ana, ben], _order_token(org_client, ana, ben))
    return Scorecard.objects.get(), _order_token(org_client, ben, ana)


def test_a_second_card_for_the_same_table_asks_first(org_client, ana, ben, unstarted):
    card, token = unstarted
    response = create(org_client, [ben, ana], token)
    assert response.status_code == 200
    text = response.text
    assert '<h1 id="twin-title">¿Seguir con la tarjeta en juego?</h1>' in text
    assert "Ya tienes una tarjeta en juego con <bdi>Ben</bdi> y <bdi>Ana</bdi>" in text
    assert "y nadie ha anotado nada en ella." in text
    # Two answers: the card in play, or this order page's form again with the card to discard.
    continue_link = f'<a class="button primary" href="{reverse("scorecard", args=[card.pk])}">'
    assert continue_link + "Seguir con esa tarjeta</a>" in text
    assert f'name="descartar" value="{card.pk}"' in text
    assert f'name="token" value="{token}"' in text
    assert re.findall(r'name="p" value="(\d+)"', text) == [str(ben.pk), str(ana.pk)]
    assert "Descartarla y empezar de nuevo</button>" in text
    assert Scorecard.objects.get() == card


def test_continuing_leaves_the_card_in_play_as_it_was(org_client, ana, ben, unstarted):
    card, token = unstarted
    create(org_client, [ben, ana], token)
    assert org_client.get(reverse("scorecard", args=[card.pk])).status_code == 200
    assert Scorecard.objects.get() == card
    assert [s.player for s in card.seats.all()] == [ana, ben]


def test_discarding_makes_the_new_card_in_the_new_order_once(org_client, ana, ben, unstarted):
    card, token = unstarted
    response = create(org_client, [ben, ana], token, descartar=card.pk)
    new = Scorecard.objects.get()
    assert new != card
    assert response.url == reverse("scorecard", args=[new.pk])
    assert [s.player for s in new.seats.all()] == [ben, ana]
    # Sent again (a double tap, Back and «Crear tarjeta»): the card it made, no question.
    assert create(org_client, [ben, ana], token, descartar=card.pk).url == response.url
    assert create(org_client, [ben, ana], token).url == response.url
    assert Scorecard.objects.get() == new


def test_a_card_started_since_the_question_is_never_discarded(org_client, ana, ben, unstarted):
    card, token = unstarted
    create(org_client, [ben, ana], token)
    write_a_box(card, ana)  # on another phone, while the question was on screen
    response = create(org_client, [ben, ana], token, descartar=card.pk)
    new = Scorecard.objects.exclude(pk=card.pk).get()
    assert response.url == reverse("scorecard", args=[new.pk])
    assert card.seats.get(player=ana).ones == 3


def test_a_plain_back_and_create_still_goes_to_the_card_made(org_client, ana, ben):
    token = _order_token(org_client, ana, ben)
    first = create(org_client, [ana, ben], token)
    assert create(org_client, [ana, ben], token).url == first.url
    assert Scorecard.objects.count() == 1


@pytest.mark.parametrize("then", ["box written", "digital", "other players", "finalized"])
def test_no_question_for_a_card_that_is_not_the_same_unstarted_game(
    org_client, ana, ben, carla, unstarted, then
):
    card, token = unstarted
    players, extra = [ben, ana], {}
    if then == "box written":
        write_a_box(card, ben)
    elif then == "digital":
        extra = {"modo": "digital"}
    elif then == "other players":
        players = [ben, ana, carla]
    else:
        fill(card)
        finalize(card)
    response = create(org_client, players, token, **extra)
    assert response.status_code == 302
    assert Scorecard.objects.count() == 2


def test_a_digital_card_with_a_roll_has_started(org_client, ana, ben):
    create(org_client, [ana, ben], _order_token(org_client, ana, ben), modo="digital")
    card = Scorecard.objects.get()
    turns.turn_roll(scorecard_id=card.pk, author=ana, version=card.version, shown="", keep=[])
    response = create(org_client, [ana, ben], "", modo="digital")
    assert response.status_code == 302
    assert Scorecard.objects.count() == 2
    # Without a roll, the same table asks.
    assert create(org_client, [ana, ben], "", modo="digital").status_code == 200


def test_another_organizers_card_is_neither_asked_about_nor_discarded(org_client, ana, ben):
    other = Client()
    other.force_login(ana)
    create(other, [ana, ben], "")
    theirs = Scorecard.objects.get()
    response = create(org_client, [ana, ben], "", descartar=theirs.pk)
    assert response.status_code == 302
    assert Scorecard.objects.filter(pk=theirs.pk).exists()
    assert Scorecard.objects.count() == 2


def test_discarding_another_card_than_the_one_asked_about_discards_nothing(
    org_client, ana, ben, carla, unstarted
):
    card, token = unstarted
    create(org_client, [carla], "")
    other = Scorecard.objects.exclude(pk=card.pk).get()
    response = create(org_client, [ben, ana], token, descartar=other.pk)
    assert response.status_code == 200  # asked again
    assert set(Scorecard.objects.all()) == {card, other}


def test_the_question_speaks_english(org_client, ana, ben, unstarted):
    _card, token = unstarted
    org_client.cookies["django_language"] = "en"
    text = create(org_client, [ben, ana], token).text
    assert "Continue the card in play?" in text
    assert "You already have a card in play with <bdi>Ben</bdi> and <bdi>Ana</bdi>" in text
    assert "Continue that card</a>" in text
    assert "Discard it and start again</button>" in text


@pytest.mark.parametrize(
    ("players", "message"),
    [
        ([], "Elige entre 1 y 10 jugadores."),
        (["abc"], "La lista de jugadores no es válida."),
        (["999999"], "La lista de jugadores no es válida."),
        ("dup", "La lista de jugadores no es válida."),
        ("eleven", "Elige entre 1 y 10 jugadores."),
        ("inactive", "Solo se pueden elegir jugadores activos."),
    ],
)
def test_creating_a_bad_card_changes_nothing(org_client, ana, players, message):
    if players == "dup":
        players = [ana.pk, ana.pk]
    elif players == "eleven":
        players = [UserFactory().pk for _ in range(11)]
    elif players == "inactive":
        players = [UserFactory(is_active=False).pk]
    response = org_client.post(reverse("scorecard_create"), {"p": players}, follow=True)
    assert response.status_code == 200
    assert response.redirect_chain == [(reverse("scorecard_new"), 302)]
    assert Scorecard.objects.count() == 0
    assert f'<li class="message message-error">{message}</li>' in response.text


@pytest.mark.parametrize("name", ["scorecard_new", "scorecard_order", "scorecard_create"])
def test_the_new_card_pages_need_a_log_in(client, name):
    method = client.post if name == "scorecard_create" else client.get
    response = method(reverse(name))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


@pytest.mark.parametrize(
    ("name", "method"),
    [("scorecard_new", "post"), ("scorecard_order", "post"), ("scorecard_create", "get")],
)
def test_the_new_card_pages_take_one_method(org_client, name, method):
    assert getattr(org_client, method)(reverse(name)).status_code == 405


def _names_in_order(text, names):
    return sorted(names, key=lambda name: text.index(f"<bdi>{name}</bdi>"))


def test_the_new_card_lists_players_in_spanish_order(org_client):
    from tests.test_names import SPANISH_ORDER

    for name in reversed(SPANISH_ORDER):
        UserFactory(display_name=name)
    text = org_client.get(reverse("scorecard_new")).text
    assert _names_in_order(text, SPANISH_ORDER) == SPANISH_ORDER


def test_the_order_page_seats_players_as_the_new_card_listed_them(org_client):
    from tests.test_names import SPANISH_ORDER

    players = {name: UserFactory(display_name=name) for name in reversed(SPANISH_ORDER)}
    listed = org_client.get(reverse("scorecard_new")).text
    ticked = re.findall(r'name="p" value="(\d+)"', listed)
    wanted = {str(p.pk) for p in players.values()}
    query = "&".join(f"p={pk}" for pk in ticked if pk in wanted)
    text = org_client.get(reverse("scorecard_order") + "?" + query).text
    seating = re.findall(r'<span class="seat-name">\d+\. <bdi>([^<]*)</bdi>', text)
    assert seating == SPANISH_ORDER
