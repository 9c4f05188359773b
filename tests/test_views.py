"""scorecards.views: each screen as a whole page and as the fragment htmx swaps, who may
open it (403/404/405), and what each write answers. The live poll is in test_live.py."""

import json
import re
from urllib.parse import quote

import pytest
from django.urls import reverse

from scorecards import services
from scorecards.models import BONUS, Change, Scorecard, Seat
from tests.factories import UserFactory, fill, logged_items, make_scorecard, seat_of

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
SUM_ROWS = ("upper", "upper_bonus", "lower", "yahtzee_bonuses", "total", "place")


def version_of(card):
    return Scorecard.objects.get(pk=card.pk).version


def write(client, card, seat, box, value, was="", htmx=False, version=None):
    """A box write as the picker sends it; from htmx, with the version the page shows."""
    data = {"value": value, "was": was}
    if htmx:
        data["version"] = version_of(card) if version is None else version
    return client.post(
        reverse("box", args=[card.pk, seat.pk, box]), data, headers=HTMX if htmx else {}
    )


def finalize(card):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)


def card_page(client, card):
    return client.get(reverse("scorecard", args=[card.pk])).text


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
    from scorecards import views

    monkeypatch.setattr(views, "PLAYERS_LISTED", 3)
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
        players = [ben.pk, ana.pk]
    response = org_client.post(reverse("scorecard_create"), {"p": players, "token": token})
    second = Scorecard.objects.exclude(pk=first.pk).get()
    assert response.url == reverse("scorecard", args=[second.pk])
    assert [s.player_id for s in second.seats.all()] == players
    assert second.creation_token is None


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


# The card page


def test_the_card_page_shows_the_paper_card(org_client, card):
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    assert "<html" in response.text
    for text in ["Unos", "Seises", "Bonus superior", "faltan 63", "Bonus Yahtzee", "Total"]:
        assert text in response.text
    assert 'aria-label="Unos — Ana: sin anotar"' in response.text
    assert "Descartar tarjeta" in response.text
    assert "Finalizar y guardar resultados" in response.text
    assert "Todavía no hay cambios." in response.text
    assert response.headers["Vary"].count("HX-Request") == 1


def test_the_card_fragment_has_no_page_around_it(org_client, card):
    response = org_client.get(reverse("scorecard", args=[card.pk]), headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text
    assert response.text.lstrip().startswith('<div id="sheet">')
    assert 'aria-label="Unos — Ana: sin anotar"' in response.text
    assert response["X-Dados-Version"] == "0"
    assert response.headers["Vary"].count("HX-Request") == 1


def test_a_player_sees_the_card_without_edit_controls(client, card, ana):
    client.force_login(ana)
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    assert "casilla/" not in response.text
    assert "yahtzee-extra/" not in response.text
    assert "Finalizar" not in response.text
    assert "Descartar" not in response.text
    assert "Se actualiza sola." in response.text
    assert '<span class="visually-hidden">Unos — <bdi>Ana</bdi>: sin anotar</span>' in response.text


def test_staff_see_any_card_with_edit_controls(client, card):
    client.force_login(UserFactory(is_staff=True))
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    assert "casilla/" in response.text


def test_a_stranger_gets_404(client, card):
    client.force_login(UserFactory())
    assert client.get(reverse("scorecard", args=[card.pk])).status_code == 404
    assert client.get(reverse("scorecard", args=[card.pk]), headers=HTMX).status_code == 404


def test_anonymous_visitors_are_sent_to_log_in(client, card):
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={quote(reverse('scorecard', args=[card.pk]))}"


def test_the_card_page_rejects_post(org_client, card):
    assert org_client.post(reverse("scorecard", args=[card.pk])).status_code == 405


def test_the_card_page_follows_writes_names_and_roles(org_client, client, card, ana):
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert 'aria-label="Unos — Ana: sin anotar"' in page
    write(org_client, card, seat_of(card, ana), "ones", "2")
    assert 'aria-label="Unos — Ana: 2"' in org_client.get(reverse("scorecard", args=[card.pk])).text
    ana.display_name = "Anabel"
    ana.save()
    assert "Unos — Anabel: 2" in org_client.get(reverse("scorecard", args=[card.pk])).text
    client.force_login(ana)
    assert "casilla/" not in client.get(reverse("scorecard", args=[card.pk])).text


def test_recent_changes_are_listed_on_the_card(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "twos", "6")
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert "Últimos cambios" in response.text
    assert "<bdi>Olga</bdi> anotó 6 en Doses de <bdi>Ana</bdi>" in response.text


def test_a_finalized_card_shows_its_whole_log_and_stops_polling(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    write(org_client, card, seat_of(card, ana), "ones", "", was="3")
    finalize(card)
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert "Registro de cambios" in page
    assert "2 cambios: 1 anotación, 1 corrección, 0 Yahtzees adicionales y 0 deshechos." in page
    assert reverse("scorecard_json", args=[card.pk]) in page
    assert "vivo/" not in page
    assert "casilla/" not in page
    assert "Descartar" not in page
    assert "Finalizada el" in page


def test_a_finalized_card_says_no_bonus_rather_than_what_was_missing(org_client, card, ana):
    fill(card, ones=0, twos=2)  # an upper sum under 63
    org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    row = re.search(
        r'<tr id="row-upper_bonus".*?</tr>',
        org_client.get(reverse("scorecard", args=[card.pk])).text,
        re.S,
    ).group(0)
    assert "faltan" not in row
    assert row.count("<td>0</td>") == 2


@pytest.mark.parametrize(
    "path",
    [
        "/tarjetas/99999999999999999999999/",
        "/tarjetas/{card}/casilla/99999999999999999999999/ones/",
        "/tarjetas/{card}/yahtzee-extra/99999999999999999999999/",
        "/tarjetas/99999999999999999999999/exportar.json",
        "/tarjetas/99999999999999999999999/descartar/",
    ],
)
def test_huge_ids_are_404_not_500(org_client, card, path):
    url = path.format(card=card.pk)
    assert org_client.get(url).status_code == 404
    response = org_client.post(url, {"value": "1", "face": "1", "box": "ones"}, headers=HTMX)
    assert response.status_code in (404, 405)
    assert Change.objects.count() == 0


# The box picker (GET)


def test_the_picker_offers_only_allowed_values(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, "fours"]))
    assert response.status_code == 200
    assert "<html" in response.text
    values = [v for v in (0, 4, 8, 12, 16, 20) if f'name="value" value="{v}"' in response.text]
    assert values == [0, 4, 8, 12, 16, 20]
    assert 'name="value" value="3"' not in response.text
    assert "Sin anotar" in response.text
    assert "Ahora: sin anotar" in response.text


def test_the_picker_fragment_has_no_page_around_it(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, "chance"]), headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text
    assert response.text.lstrip().startswith('<div class="picker">')
    assert 'name="value" value="0"' not in response.text  # Chance cannot be scratched
    assert response.headers["Vary"].count("HX-Request") == 1


def test_the_picker_shows_what_the_box_holds(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "fours", "12")
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, "fours"]), headers=HTMX)
    assert "Ahora: 12" in response.text
    assert 'name="value" value="12" aria-pressed="true"' in response.text
    assert 'name="was" value="12"' in response.text


def test_the_bonus_picker_counts_bonuses_without_dice(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, BONUS]), headers=HTMX)
    values = re.findall(r'name="value" value="(\d+)"', response.text)
    assert values == [str(n) for n in range(13)]
    assert "Con dados" not in response.text
    assert "tachar" not in response.text


def test_the_picker_proposes_the_score_of_the_dice(org_client, card, ana):
    seat = seat_of(card, ana)
    url = reverse("box", args=[card.pk, seat.pk, "three_of_a_kind"])
    assert 'value="19" class="primary">Anotar 19' in org_client.get(url, {"dados": "55513"}).text
    assert 'value="0" class="primary">Anotar 0' in org_client.get(url, {"dados": "12345"}).text
    partial = org_client.get(url, {"dados": "555"}).text
    assert "Anotar" not in partial
    assert "(3 de 5)" in partial


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


def test_the_picker_of_a_box_or_seat_that_is_not_on_the_card_is_404(org_client, card, ana):
    seat = seat_of(card, ana)
    foreign = seat_of(make_scorecard(card.organizer, [ana]), ana)
    assert org_client.get(reverse("box", args=[card.pk, seat.pk, "sevens"])).status_code == 404
    assert org_client.get(reverse("box", args=[card.pk, foreign.pk, "ones"])).status_code == 404


def test_a_player_may_not_open_a_picker_and_a_stranger_finds_nothing(client, card, ana):
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    client.force_login(ana)
    assert client.get(url).status_code == 403
    assert client.get(url, headers=HTMX).status_code == 403
    client.force_login(UserFactory())
    assert client.get(url).status_code == 404


def test_the_picker_of_a_finalized_card_sends_back_to_it(org_client, card, ana):
    finalize(card)
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    response = org_client.get(url)
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in card_page(org_client, card)
    response = org_client.get(url, headers=HTMX)
    assert response.status_code == 409
    assert "Esta tarjeta ya está finalizada" in response.text


def test_a_box_takes_get_and_post_only(org_client, card, ana):
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    assert org_client.put(url).status_code == 405
    assert org_client.delete(url).status_code == 405


# The box write (POST)


def test_a_plain_post_redirects_back_to_the_card(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "ones", "0")
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert seat_of(card, ana).ones == 0


def test_a_write_from_the_current_page_answers_with_what_changed(org_client, card, ana, ben):
    seat, other = seat_of(card, ana), seat_of(card, ben)
    response = write(org_client, card, seat, "fives", "15", htmx=True, version=0)
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    # the version it patches: the page drops the patch if a refresh got past it meanwhile
    assert response["X-Dados-Base"] == "0"
    html = response.text
    assert "<html" not in html
    assert 'id="sheet"' not in html
    # the written box's cell, in a template so that a lone <td> parses, and not its row
    cell = f'<td id="c{seat.pk}-fives" hx-swap-oob="true">'
    assert html.index("<template>") < html.index(cell) < html.index("</template>")
    assert 'aria-label="Cincos — Ana: 15"' in html
    assert re.search(r'<tr id="row-total".*?<td>15</td><td>0</td></tr>', html)
    assert re.search(r'<tr id="row-place".*?<td>1º</td><td>2º</td></tr>', html)
    assert f'id="c{other.pk}-fives"' not in html
    assert 'id="row-fives"' not in html
    # every sum row, in a template of their own (a row after a cell would not parse)
    rows = html.index("<template>", html.index("</template>"))
    for row in SUM_ROWS:
        assert html.index(f'<tr id="row-{row}" class=') > rows
        assert re.search(rf'<tr id="row-{row}" class="\w+" hx-swap-oob="true">', html)
    # the new version for the poll and the next write (the poll itself stays in place),
    # undo enabled, the error cleared
    assert (
        '<input type="hidden" id="sheet-version" name="version" form="undo-form" value="1"'
        " hx-swap-oob" in html
    )
    assert 'id="sheet-poll"' not in html
    assert '<button type="submit" id="undo-button" hx-swap-oob="true">' in html
    assert '<div id="sheet-alert" hx-swap-oob="true"></div>' in html
    # what is missing, and «Últimos cambios» with the new entry on top
    assert '<div id="sheet-problems" hx-swap-oob="true">' in html
    assert '<ol id="recent-changes" hx-swap-oob="true">' in html
    assert "<bdi>Olga</bdi> anotó 15 en Cincos de <bdi>Ana</bdi>" in html
    assert seat_of(card, ana).fives == 15


@pytest.mark.parametrize(
    ("box", "value", "shows"),
    [
        ("chance", "20", '<td id="c{seat}-chance" hx-swap-oob="true">'),
        ("yahtzee", "50", '<td id="c{seat}-yahtzee" hx-swap-oob="true">'),
        (BONUS, "1", 'aria-label="Bonus Yahtzee — Ana: 1 '),
    ],
)
def test_a_write_answers_with_every_sum_row(org_client, card, ana, box, value, shows):
    seat = seat_of(card, ana)
    was = "0" if box == BONUS else ""
    if box == BONUS:
        write(org_client, card, seat, "yahtzee", "50")  # no bonus without it
    html = write(org_client, card, seat, box, value, was=was, htmx=True).text
    assert shows.format(seat=seat.pk) in html
    for row in SUM_ROWS:
        assert f'<tr id="row-{row}" class=' in html
    if box == BONUS:
        assert "<td id=" not in html  # the bonus line is a sum row, not a cell


def test_a_write_from_a_page_that_missed_a_change_gets_the_whole_sheet(org_client, card, ana):
    seen = version_of(card)
    write(org_client, card, seat_of(card, ana), "ones", "2")  # another device
    response = write(org_client, card, seat_of(card, ana), "twos", "4", htmx=True, version=seen)
    assert response.status_code == 200
    assert "HX-Reswap" not in response
    assert response["X-Dados-Version"] == "2"
    assert response.text.lstrip().startswith('<div id="sheet">')
    assert 'aria-label="Unos — Ana: 2"' in response.text  # the change this page missed
    assert 'aria-label="Doses — Ana: 4"' in response.text


@pytest.mark.parametrize("version", ["", "abc", "-1", "1", "99999999999999999999"])
def test_a_write_without_the_version_just_before_gets_the_whole_sheet(
    org_client, card, ana, version
):
    response = write(org_client, card, seat_of(card, ana), "twos", "4", htmx=True, version=version)
    assert response.status_code == 200
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert Seat.objects.get(pk=seat_of(card, ana).pk).twos == 4


def test_a_retried_write_whose_answer_was_lost_is_confirmed_with_the_whole_sheet(
    org_client, card, ana
):
    seat = seat_of(card, ana)
    assert write(org_client, card, seat, "sixes", "18", htmx=True)["HX-Reswap"] == "none"
    # the answer was lost and the page retries: nothing to write, the whole sheet
    response = write(org_client, card, seat, "sixes", "18", was="", htmx=True, version=0)
    assert response.status_code == 200
    assert 'id="sheet"' in response.text
    assert 'role="alert"' not in response.text
    assert len(logged_items()) == 1


def test_a_stale_write_is_refused_rather_than_overwriting(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "sixes", "18")
    response = write(org_client, card, seat, "sixes", "24", was="", htmx=True)
    assert response.status_code == 409
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert "\u2068Ana\u2069, Seises cambió mientras tanto (ahora: 18)." in response.text
    assert 'aria-label="Seises — Ana: 18"' in response.text
    assert seat_of(card, ana).sixes == 18
    assert version_of(card) == 1


def test_sin_anotar_clears_a_box(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    write(org_client, card, seat_of(card, ana), "ones", "", was="3")
    assert seat_of(card, ana).ones is None
    assert logged_items()[-1][3] is None


@pytest.mark.parametrize(
    ("box", "value", "message"),
    [
        ("fives", "17", "Cincos: 17 no es una puntuación posible."),
        ("chance", "0", "Libre (Chance): 0 no es una puntuación posible."),
        ("full_house", "20", "Full: 20 no es una puntuación posible."),
        ("ones", "-1", "«-1» no es una puntuación."),
        ("ones", "1e3", "«1e3» no es una puntuación."),
        ("ones", "٣", "«٣» no es una puntuación."),
        ("ones", "99999999999999999999", "«99999999999999999999» no es una puntuación."),
        (BONUS, "13", "Bonus Yahtzee: 13 no es una puntuación posible."),
        ("ones", "x", "«x» no es una puntuación."),
    ],
)
def test_an_impossible_value_is_refused_in_spanish_and_nothing_changes(
    org_client, card, ana, box, value, message
):
    response = write(org_client, card, seat_of(card, ana), box, value, htmx=True)
    assert response.status_code == 400
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert f'<div class="alert alert-error" role="alert">{message}</div>' in response.text
    assert Change.objects.count() == 0
    assert getattr(seat_of(card, ana), box) in (None, 0)


def test_a_refusal_without_htmx_is_said_on_the_card(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "fives", "17")
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert "Cincos: 17 no es una puntuación posible." in card_page(org_client, card)


def test_a_box_that_does_not_exist_is_404(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "sevens", "7", htmx=True)
    assert response.status_code == 404
    assert "Esa casilla no existe." in response.text
    assert write(org_client, card, seat_of(card, ana), "sevens", "7").status_code == 302
    assert Change.objects.count() == 0


def test_a_seat_of_another_card_is_refused(org_client, card, organizer):
    foreign = make_scorecard(organizer).seats.first()
    response = write(org_client, card, foreign, "ones", "1", htmx=True)
    assert response.status_code == 404
    assert "Ese jugador no está en esta tarjeta." in response.text
    assert Seat.objects.get(pk=foreign.pk).ones is None


def test_the_bonus_line_is_correctable(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    write(org_client, card, seat, BONUS, "2", was="0")
    write(org_client, card, seat, BONUS, "1", was="2")
    seat.refresh_from_db()
    assert seat.yahtzee_bonuses == 1
    # A card from before bonuses needed a 50: the card says the bonus does not hold.
    Seat.objects.filter(pk=seat.pk).update(yahtzee=0)
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert "la casilla Yahtzee no tiene 50" in response.text


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_writes_a_box(client, card, ana, who, status):
    client.force_login(ana if who == "player" else UserFactory())
    seat = seat_of(card, ana)
    assert write(client, card, seat, "ones", "3").status_code == status
    assert write(client, card, seat, "ones", "3", htmx=True).status_code == status
    # whatever the data: a stranger learns nothing from how it is wrong
    assert write(client, card, seat, "sevens", "x", htmx=True).status_code == status
    assert seat_of(card, ana).ones is None
    assert not Change.objects.exists()


def test_staff_may_edit_any_card(client, card, ana):
    client.force_login(UserFactory(is_staff=True))
    assert write(client, card, seat_of(card, ana), "ones", "3").status_code == 302
    assert seat_of(card, ana).ones == 3


def test_a_write_on_a_finalized_card_is_refused(org_client, card, ana):
    finalize(card)
    response = write(org_client, card, seat_of(card, ana), "ones", "", was="3", htmx=True)
    assert response.status_code == 409
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in response.text
    assert seat_of(card, ana).ones == 3


# «Yahtzee adicional»


def test_the_joker_picker_asks_the_face_then_offers_the_allowed_boxes(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    url = reverse("joker", args=[card.pk, seat.pk])
    page = org_client.get(url)
    assert page.status_code == 200
    assert "<html" in page.text
    assert "¿Qué número salió en los cinco dados?" in page.text
    assert "Suma +100" in page.text
    assert 'name="box"' not in page.text
    fragment = org_client.get(url, {"cara": "4"}, headers=HTMX)
    assert "<html" not in fragment.text
    assert fragment.text.lstrip().startswith('<div class="picker">')
    assert 'value="fours">Cuatros <strong>20</strong>' in fragment.text
    assert 'value="chance"' not in fragment.text
    assert fragment.headers["Vary"].count("HX-Request") == 1


def test_the_joker_picker_needs_the_yahtzee_box_used(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("joker", args=[card.pk, seat.pk]), {"cara": "4"})
    assert "Anota primero la casilla Yahtzee" in response.text
    assert 'name="box"' not in response.text


def test_the_joker_picker_with_a_scratched_yahtzee_promises_no_bonus(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "0")
    response = org_client.get(reverse("joker", args=[card.pk, seat.pk]), {"cara": "4"})
    assert "Yahtzee está tachado: no hay bonus" in response.text


def test_the_joker_picker_says_when_no_box_is_left(org_client, card, ana):
    fill(card)
    response = org_client.get(
        reverse("joker", args=[card.pk, seat_of(card, ana).pk]), {"cara": "4"}
    )
    assert "No queda ninguna casilla libre." in response.text
    assert 'name="box"' not in response.text


def test_joker_with_50_writes_the_upper_box_and_the_bonus_together(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]), {"face": "4", "box": "fours"}
    )
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    seat.refresh_from_db()
    assert (seat.fours, seat.yahtzee_bonuses) == (20, 1)
    assert Change.objects.latest("pk").kind == "joker"


def test_a_joker_from_the_current_page_answers_with_its_cell_and_the_sums(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]),
        {"face": "3", "box": "threes", "version": 1},
        headers=HTMX,
    )
    assert response["HX-Reswap"] == "none"
    assert response["X-Dados-Base"] == "1"
    assert f'<td id="c{seat.pk}-threes" hx-swap-oob="true">' in response.text
    assert f'id="c{seat.pk}-{BONUS}"' not in response.text
    assert '<tr id="row-yahtzee_bonuses" class="sum" hx-swap-oob="true">' in response.text
    assert (
        "<bdi>Olga</bdi> anotó un Yahtzee adicional de <bdi>Ana</bdi>: 15 en Treses"
        " (+100 de bonus)" in response.text
    )


def test_joker_refuses_a_box_out_of_the_forced_order(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]), {"face": "4", "box": "chance"}, headers=HTMX
    )
    assert response.status_code == 409
    assert "El orden del comodín no permite anotar en Libre (Chance)." in response.text
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
    response = org_client.post(reverse("joker", args=[card.pk, seat.pk]), data, headers=HTMX)
    assert response.status_code == 400
    assert "Elige la cara de los dados y una casilla." in response.text
    assert Change.objects.count() == 1


def test_the_joker_of_a_seat_not_on_the_card_is_404(org_client, card, ana):
    foreign = seat_of(make_scorecard(card.organizer, [ana]), ana)
    assert org_client.get(reverse("joker", args=[card.pk, foreign.pk])).status_code == 404


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_opens_or_sends_a_joker(client, card, ana, who, status):
    seat = seat_of(card, ana)
    services.box_write(
        scorecard_id=card.pk,
        seat_id=seat.pk,
        box="yahtzee",
        value="50",
        was="",
        author=card.organizer,
    )
    client.force_login(ana if who == "player" else UserFactory())
    url = reverse("joker", args=[card.pk, seat.pk])
    assert client.get(url, {"cara": "4"}).status_code == status
    assert client.post(url, {"face": "4", "box": "fours"}).status_code == status
    assert client.post(url, {"face": "4", "box": "fours"}, headers=HTMX).status_code == status
    assert Change.objects.count() == 1


def test_a_joker_takes_get_and_post_only(org_client, card, ana):
    assert (
        org_client.put(reverse("joker", args=[card.pk, seat_of(card, ana).pk])).status_code == 405
    )


# «Deshacer»


def test_undo_restores_the_latest_change_then_the_one_before(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "ones", "3")
    write(org_client, card, seat, "ones", "4", was="3")
    undo = reverse("undo", args=[card.pk])
    response = org_client.post(undo, {"version": version_of(card)})
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert seat_of(card, ana).ones == 3
    org_client.post(undo, {"version": version_of(card)})
    assert seat_of(card, ana).ones is None
    response = org_client.post(undo, {"version": version_of(card)}, headers=HTMX)
    assert response.status_code == 409
    assert "No hay nada que deshacer." in response.text
    assert Change.objects.filter(kind="undo").count() == 2


def test_an_undo_from_the_current_page_answers_with_what_it_restored(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    org_client.post(reverse("joker", args=[card.pk, seat.pk]), {"face": "3", "box": "threes"})
    response = org_client.post(reverse("undo", args=[card.pk]), {"version": 2}, headers=HTMX)
    assert response["HX-Reswap"] == "none"
    assert response["X-Dados-Base"] == "2"
    assert f'<td id="c{seat.pk}-threes" hx-swap-oob="true">' in response.text
    assert '<tr id="row-yahtzee_bonuses" class="sum" hx-swap-oob="true">' in response.text
    assert "<bdi>Olga</bdi> deshizo un cambio: Treses de <bdi>Ana</bdi>, 15 → sin anotar;" in (
        response.text
    )
    assert "Bonus Yahtzee de <bdi>Ana</bdi>, 1 → 0" in response.text
    seat.refresh_from_db()
    assert (seat.threes, seat.yahtzee_bonuses) == (None, 0)


def test_the_undo_button_is_disabled_until_there_is_a_change(org_client, card, ana):
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert '<button type="submit" id="undo-button" disabled>' in page
    write(org_client, card, seat_of(card, ana), "ones", "3")
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert '<button type="submit" id="undo-button">' in page


def test_undo_refuses_when_the_card_changed_since_it_was_seen(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "ones", "3")
    seen = version_of(card)
    write(org_client, card, seat, "twos", "4")
    response = org_client.post(reverse("undo", args=[card.pk]), {"version": seen}, headers=HTMX)
    assert response.status_code == 409
    assert "La tarjeta ha cambiado desde que la viste: revisa antes de deshacer." in response.text
    assert seat_of(card, ana).twos == 4
    org_client.post(reverse("undo", args=[card.pk]), {"version": version_of(card)})
    assert seat_of(card, ana).twos is None


@pytest.mark.parametrize("sent", [{}, {"version": ""}, {"version": "1.0"}, {"version": "x"}])
def test_undo_without_the_version_it_was_based_on_changes_nothing(org_client, card, ana, sent):
    """A replayed or hand-made undo that does not say which version it saw is refused,
    not let through the stale check."""
    write(org_client, card, seat_of(card, ana), "ones", "3")
    message = "No sabemos qué versión de la tarjeta estás viendo: recárgala y vuelve a deshacer."
    response = org_client.post(reverse("undo", args=[card.pk]), sent, headers=HTMX)
    assert response.status_code == 400
    assert message in response.text
    assert "<html" not in response.text
    response = org_client.post(reverse("undo", args=[card.pk]), sent)
    assert response.status_code == 302
    assert message in org_client.get(response.url).text
    assert seat_of(card, ana).ones == 3
    assert version_of(card) == 1
    assert not Change.objects.filter(kind="undo").exists()


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_undoes(client, card, ana, who, status):
    services.box_write(
        scorecard_id=card.pk,
        seat_id=seat_of(card, ana).pk,
        box="ones",
        value="3",
        was="",
        author=card.organizer,
    )
    client.force_login(ana if who == "player" else UserFactory())
    assert client.post(reverse("undo", args=[card.pk])).status_code == status
    assert client.post(reverse("undo", args=[card.pk]), headers=HTMX).status_code == status
    assert seat_of(card, ana).ones == 3


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
@pytest.mark.parametrize("htmx", [False, True])
def test_a_malformed_joker_or_undo_is_still_answered_by_who_asks(
    client, card, ana, who, status, htmx
):
    """As a box write is: a stranger gets 404 and a player 403 whatever they sent, not a
    message about the data (and, without htmx, a redirect to a card they cannot see)."""
    seat = seat_of(card, ana)
    client.force_login(ana if who == "player" else UserFactory())
    headers = HTMX if htmx else {}
    joker = client.post(reverse("joker", args=[card.pk, seat.pk]), {"face": "9"}, headers=headers)
    undo = client.post(reverse("undo", args=[card.pk]), {"version": "abc"}, headers=headers)
    assert (joker.status_code, undo.status_code) == (status, status)


# «Finalizar y guardar resultados»


def test_finalize_lists_what_is_missing_per_player(org_client, card, ana):
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
    )
    assert response.status_code == 409
    assert "Aún no se puede finalizar." in response.text
    assert "Para finalizar falta:" in response.text
    assert "<strong><bdi>Ana</bdi></strong>: 13 casillas sin anotar." in response.text
    assert '<section class="problems"' in response.text
    assert not Scorecard.objects.get(pk=card.pk).is_finalized


def test_an_inconsistent_card_cannot_be_finalized(org_client, card, ana):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ana).pk).update(yahtzee=0, yahtzee_bonuses=1)
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, follow=True
    )
    assert "Aún no se puede finalizar." in response.text
    assert "la casilla Yahtzee no tiene 50" in response.text
    assert not Scorecard.objects.get(pk=card.pk).is_finalized


def test_finalize_stores_totals_positions_and_locks_the_card(org_client, card, ana, ben):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(chance=23)
    response = org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    page = org_client.get(response.url).text
    assert "Resultados guardados. La partida ya está en el historial." in page
    assert "<td>1º</td><td>1º</td>" not in page
    a, b = seat_of(card, ana), seat_of(card, ben)
    assert (a.total, a.place, b.total, b.place) == (245, 2, 246, 1)
    response = write(org_client, card, a, "ones", "", was="3", htmx=True)
    assert response.status_code == 409
    assert seat_of(card, ana).ones == 3


def test_finalize_from_htmx_reloads_the_whole_page(org_client, card):
    fill(card)
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("scorecard", args=[card.pk])
    assert Scorecard.objects.get(pk=card.pk).is_finalized


def test_ties_share_a_position(org_client, card):
    fill(card)
    org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    assert [s.place for s in card.seats.all()] == [1, 1]
    assert "<td>1º</td><td>1º</td>" in card_page(org_client, card)


def test_finalizing_twice_is_refused(org_client, card):
    fill(card)
    org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    response = org_client.post(
        reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
    )
    assert response.status_code == 409
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in response.text


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_finalizes(client, card, ana, who, status):
    fill(card)
    client.force_login(ana if who == "player" else UserFactory())
    assert (
        client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)}).status_code
        == status
    )
    assert (
        client.post(
            reverse("finalize", args=[card.pk]), {"version": version_of(card)}, headers=HTMX
        ).status_code
        == status
    )
    assert not Scorecard.objects.get(pk=card.pk).is_finalized


def test_staff_may_finalize_any_card(client, card):
    fill(card)
    client.force_login(UserFactory(is_staff=True))
    assert (
        client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)}).status_code
        == 302
    )
    assert Scorecard.objects.get(pk=card.pk).is_finalized


def test_the_game_appears_in_every_players_history(client, card, ana, ben):
    finalize(card)
    for player in (ana, ben):
        client.force_login(player)
        response = client.get(reverse("history"))
        assert "presencial" in response.text
        assert "Tu total <strong>245</strong> · 1º de 2" in response.text


# «Descartar tarjeta»


def test_discard_asks_first_and_then_deletes(org_client, card):
    page = org_client.get(reverse("discard", args=[card.pk]))
    assert page.status_code == 200
    assert "¿Descartar esta tarjeta?" in page.text
    assert Scorecard.objects.exists()
    response = org_client.post(reverse("discard", args=[card.pk]))
    assert response.status_code == 302
    assert response.url == reverse("home")
    assert "Tarjeta descartada." in org_client.get(response.url).text
    assert not Scorecard.objects.exists()


def test_a_card_with_an_undone_change_can_be_discarded(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    response = org_client.post(reverse("undo", args=[card.pk]), {"version": version_of(card)})
    assert response.status_code == 302
    assert Change.objects.filter(undoes__isnull=False).count() == 1
    assert org_client.post(reverse("discard", args=[card.pk])).status_code == 302
    assert not Scorecard.objects.exists()
    assert not Change.objects.exists()


def test_a_finalized_card_cannot_be_discarded(org_client, card):
    finalize(card)
    response = org_client.post(reverse("discard", args=[card.pk]), headers=HTMX)
    assert response.status_code == 409
    response = org_client.get(reverse("discard", args=[card.pk]))
    assert response.status_code == 302
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in card_page(org_client, card)
    assert Scorecard.objects.filter(pk=card.pk).exists()


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_discards(client, card, ana, who, status):
    client.force_login(ana if who == "player" else UserFactory())
    assert client.get(reverse("discard", args=[card.pk])).status_code == status
    assert client.post(reverse("discard", args=[card.pk])).status_code == status
    assert Scorecard.objects.filter(pk=card.pk).exists()


# Methods and log-in for every write


@pytest.mark.parametrize("name", ["undo"])  # a GET of finalize asks for confirmation
def test_writes_reject_get(org_client, card, name):
    assert org_client.get(reverse(name, args=[card.pk])).status_code == 405


def test_discard_takes_get_and_post_only(org_client, card):
    assert org_client.put(reverse("discard", args=[card.pk])).status_code == 405
    assert Scorecard.objects.exists()


@pytest.mark.parametrize("name", ["undo", "finalize", "discard", "box", "joker"])
def test_anonymous_writes_are_sent_to_log_in(client, card, ana, name):
    seat = seat_of(card, ana)
    args = {"box": [card.pk, seat.pk, "ones"], "joker": [card.pk, seat.pk]}.get(name, [card.pk])
    response = client.post(reverse(name, args=args), {"value": "3"})
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))
    response = client.post(reverse(name, args=args), {"value": "3"}, headers=HTMX)
    assert response["HX-Redirect"].startswith(reverse("login"))
    assert seat_of(card, ana).ones is None
    assert Scorecard.objects.exists()


# «Descargar JSON»


def test_the_json_export_has_every_box_total_and_position(client, card, ana, ben):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(chance=23, yahtzee_bonuses=1)
    client.force_login(ana)  # any player of the card, not only its organizer
    response = client.get(reverse("scorecard_json", args=[card.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    disposition = f'attachment; filename="dados-partida-{card.pk}.json"'
    assert response["Content-Disposition"] == disposition
    assert "Olga" in response.content.decode()  # not escaped as \u...
    data = json.loads(response.content)
    assert (data["partida"], data["modalidad"], data["organizador"]) == (
        card.pk,
        "presencial",
        "Olga",
    )
    assert data["finalizada"] is None
    first, second = data["jugadores"]
    assert (first["jugador"], first["turno"]) == ("Ana", 1)
    assert "usuario" not in first  # players never see each other's usernames
    assert first["casillas"]["chance"] == 22
    assert len(first["casillas"]) == 13
    assert (second["bonus_yahtzee"], second["totales"]["yahtzee_bonus"]) == (1, 100)
    assert second["totales"] == {
        "upper": 63,
        "upper_bonus": 35,
        "lower": 148,
        "yahtzee_bonus": 100,
        "total": 346,
    }
    assert (first["posicion"], second["posicion"]) == (2, 1)


def test_the_json_export_of_a_finalized_game_has_its_date(org_client, card):
    finalize(card)
    data = json.loads(org_client.get(reverse("scorecard_json", args=[card.pk])).content)
    assert data["finalizada"] is not None
    assert [p["posicion"] for p in data["jugadores"]] == [1, 1]


def test_the_json_export_is_404_to_strangers(client, card):
    client.force_login(UserFactory())
    assert client.get(reverse("scorecard_json", args=[card.pk])).status_code == 404
    assert client.post(reverse("scorecard_json", args=[card.pk])).status_code == 405


# Query budgets: the same for 2 and 8 players


@pytest.mark.parametrize("n", [2, 8])
def test_the_card_page_and_its_fragment_cost_five_queries(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    services.box_write(
        scorecard_id=card.pk,
        seat_id=card.seats.first().pk,
        box="ones",
        value="1",
        was="",
        author=organizer,
    )
    client.force_login(organizer)
    # session, user, the card with its organizer (and the EXISTS that says whether this
    # user plays in it), its seats with their players, its recent changes with authors
    with django_assert_num_queries(5):
        assert client.get(reverse("scorecard", args=[card.pk])).status_code == 200
    with django_assert_num_queries(5):
        assert client.get(reverse("scorecard", args=[card.pk]), headers=HTMX).status_code == 200


@pytest.mark.parametrize("n", [2, 8])
def test_a_write_costs_the_same_for_2_and_8_players(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    seat = card.seats.first()
    client.force_login(organizer)
    # session, user; SAVEPOINT; the card locked, with its organizer; its seats with their
    # players; the version UPDATE (on the condition that it is still the one read); the
    # seat's UPDATE; the change's INSERT; RELEASE SAVEPOINT; then, for the answer, the
    # recent changes with their authors
    with django_assert_num_queries(10):
        response = write(client, card, seat, "ones", "1", htmx=True, version=0)
    assert response["HX-Reswap"] == "none"
    # the whole sheet (a page that missed a change) costs the same
    with django_assert_num_queries(10):
        response = write(client, card, seat, "twos", "2", htmx=True, version=0)
    assert "HX-Reswap" not in response
    # a joker writes two boxes of one seat: one UPDATE still
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="yahtzee", value="50", was="", author=organizer
    )
    with django_assert_num_queries(10):
        response = client.post(
            reverse("joker", args=[card.pk, seat.pk]),
            {"face": "3", "box": "threes", "version": 3},
            headers=HTMX,
        )
    assert response["HX-Reswap"] == "none"
    # an undo also reads the change it undoes, after the seats
    with django_assert_num_queries(11):
        response = client.post(reverse("undo", args=[card.pk]), {"version": 4}, headers=HTMX)
    assert response["HX-Reswap"] == "none"


@pytest.mark.parametrize("n", [2, 8])
def test_the_picker_and_the_json_export_cost_four_queries(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    seat = card.seats.first()
    client.force_login(organizer)
    # session, user, the card with its organizer, its seats with their players
    with django_assert_num_queries(4):
        client.get(reverse("box", args=[card.pk, seat.pk, "ones"]), headers=HTMX)
    with django_assert_num_queries(4):
        client.get(reverse("scorecard_json", args=[card.pk]))
