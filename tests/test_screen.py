"""«Pantalla del club»: who sees it (staff, a screen link's token), what it shows (every
card in play, tonight's results, the newest record), and what its updates cost."""

import re
from datetime import timedelta

import pytest
from django.contrib.admin.sites import site
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from scorecards import records, screen, services
from scorecards.models import Scorecard, Screen
from tests.factories import UserFactory, enter, finalized_games, make_scorecard, seat_of
from tests.test_stats import column, play

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(db):
    return UserFactory(username="admin_olga", display_name="Olga", is_staff=True)


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def tv(db):
    return Screen.objects.create(name="Tele del salón")


def page_of(tv):
    return reverse("screen_token", args=[tv.token])


def live_of(tv):
    return reverse("screen_token_live", args=[tv.token])


def tables(html) -> int:
    return len(re.findall(r'<article class="table', html))


def cards_in_play(n, organizer=None):
    organizer = organizer or UserFactory()
    return [make_scorecard(organizer, n=3) for _ in range(n)]


# Who sees it


def test_staff_find_the_screen_on_their_home_page_and_players_do_not(staff_client, client):
    tile = f'href="{reverse("screen")}"'
    assert tile in staff_client.get(reverse("home")).content.decode()
    client.force_login(UserFactory())
    assert tile not in client.get(reverse("home")).content.decode()


def test_staff_see_the_screen(staff_client, card):
    response = staff_client.get("/pantalla/")
    assert response.status_code == 200
    assert tables(response.content.decode()) == 1


def test_a_screen_link_shows_it_without_logging_in(client, tv, card):
    response = client.get(page_of(tv))
    assert response.status_code == 200
    assert tables(response.content.decode()) == 1
    # The token is no session: nothing is kept on the device but the link.
    assert "sessionid" not in response.cookies
    assert "csrftoken" not in response.cookies
    assert client.get(live_of(tv)).status_code == 200


def test_a_screen_link_says_when_it_was_last_seen(client, tv):
    client.get(page_of(tv))
    tv.refresh_from_db()
    assert tv.last_seen is not None


@pytest.mark.parametrize("withdraw", ["inactive", "deleted"])
def test_a_withdrawn_link_answers_404_for_the_page_and_its_updates(client, tv, withdraw):
    page, live = page_of(tv), live_of(tv)
    if withdraw == "inactive":
        Screen.objects.filter(pk=tv.pk).update(active=False)
    else:
        tv.delete()
    assert client.get(page).status_code == 404
    assert client.get(live).status_code == 404


def test_an_unknown_token_answers_404(client, tv):
    assert client.get("/pantalla/no-es-un-codigo/").status_code == 404
    assert client.get("/pantalla/no-es-un-codigo/vivo/").status_code == 404


def test_a_player_who_is_not_staff_cannot_see_it(ana_client):
    for address in ("/pantalla/", "/pantalla/vivo/"):
        response = ana_client.get(address)
        assert response.status_code == 403
        assert "La pantalla del club es de la administración" in response.content.decode()


def test_a_stranger_is_sent_to_log_in(client):
    response = client.get("/pantalla/")
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_screen_link_opens_nothing_else(client, tv, card, ana):
    client.get(page_of(tv))
    for address in (
        reverse("scorecard", args=[card.pk]),
        reverse("history"),
        reverse("player", args=[ana.pk]),
        reverse("ranking"),
        reverse("records"),
        "/pantalla/",
    ):
        assert client.get(address).status_code == 302, address  # to log in


def test_it_answers_only_get(staff_client, tv):
    assert staff_client.post("/pantalla/").status_code == 405
    assert staff_client.post(live_of(tv)).status_code == 405


# What it shows


def test_the_page_has_no_username_and_no_link_into_the_app(client, tv):
    berto = UserFactory(username="berto_login", display_name="Berto")
    ana = UserFactory(username="ana_login", display_name="Ana")
    card = make_scorecard(UserFactory(username="org_login", display_name="Olga"), [ana, berto])
    enter(card, seat_of(card, ana), card.organizer, chance=22)
    play(column(ana), column(berto, chance=12))
    text = client.get(page_of(tv)).content.decode()
    assert "Berto" in text
    assert "Ana" in text
    assert "_login" not in text
    assert "<a " not in text
    assert "csrfmiddlewaretoken" not in text
    assert "<form" not in text
    # Its only addresses: its stylesheet, script, icon, and its own updates.
    addresses = re.findall(r'(?:href|src|data-live)="([^"]+)"', text)
    assert all(a.startswith(("/static/", live_of(tv))) for a in addresses), addresses


def test_each_table_shows_its_players_totals_and_whose_turn_it_is(staff_client, ana, ben):
    card = make_scorecard(UserFactory(), [ana, ben])
    for round_, (a, b) in enumerate([(6, 3), (20, 8)], start=1):
        enter(card, seat_of(card, ana), card.organizer, **{["twos", "fours"][round_ - 1]: a})
        enter(card, seat_of(card, ben), card.organizer, **{["threes", "twos"][round_ - 1]: b})
    enter(card, seat_of(card, ana), card.organizer, chance=22)
    text = staff_client.get("/pantalla/").content.decode()
    assert "<span>Ronda 3 de 13</span> <span>le toca a <bdi>Ben</bdi></span>" in text
    players = re.findall(
        r'<li class="([^"]*)"><span class="name"><bdi>(\w+)</bdi></span> '
        r'<span class="total">(\d+)</span>',
        text,
    )
    assert players == [(" leads", "Ana", "48"), ("turn", "Ben", "11")]


def test_a_card_that_hides_its_totals_hides_them_on_the_screen_too(staff_client, ana, ben):
    card = make_scorecard(UserFactory(), [ana, ben])
    enter(card, seat_of(card, ana), card.organizer, chance=22)
    services.scorecard_settings(
        scorecard_id=card.pk, author=card.organizer, hide_totals=True, show_bonus_pace=False
    )
    text = staff_client.get("/pantalla/").content.decode()
    assert "Totales ocultos hasta el final" in text
    assert 'class="total"' not in text
    assert "leads" not in text
    services.scorecard_settings(
        scorecard_id=card.pk, author=card.organizer, hide_totals=False, show_bonus_pace=False
    )
    text = staff_client.get("/pantalla/").content.decode()
    assert '<span class="total">22</span>' in text


def test_tonight_shows_the_games_finished_today_with_their_winners(staff_client, ana, ben):
    finalized_games([ana, ben], 1, start=screen.tonight_began() - timedelta(minutes=1))
    play(column(ana, chance=12), column(ben))
    play(column(ana), column(ben))
    text = staff_client.get("/pantalla/").content.decode()
    tonight = text.split('class="tonight"')[1]
    # Not yesterday's, finished a minute before midnight.
    assert tonight.count("<li>") == 2
    assert "Gana <bdi>Ben</bdi> · 245" in tonight
    assert "Empatan <bdi>Ana</bdi> y <bdi>Ben</bdi> · 245" in tonight
    assert "<bdi>Ana</bdi> 235" in tonight


def test_the_newest_record_shows(staff_client, ana, ben):
    play(column(ana), column(ben, chance=12))
    text = staff_client.get("/pantalla/").content.decode()
    # No record beaten yet: the club's best game.
    assert "Mejor partida" in text
    assert "245 puntos" in text
    play(column(ana), column(ben, bonuses=2, sixes=24))
    text = staff_client.get("/pantalla/").content.decode()
    record = text.split('class="record"')[1]
    assert "451 puntos" in record
    assert "<bdi>Ben</bdi>" in record


def test_without_cards_or_games_it_says_so(staff_client):
    text = staff_client.get("/pantalla/").content.decode()
    assert "Ninguna partida en juego." in text
    assert "Aún no ha terminado ninguna partida." in text


def test_more_than_eight_tables_are_all_on_the_board_for_its_pages(staff_client):
    cards_in_play(11)
    text = staff_client.get("/pantalla/").content.decode()
    assert tables(text) == 11
    assert 'data-per-page="8"' in text


# Its updates


def test_nothing_moved_answers_204_and_a_write_brings_the_new_board(client, tv, ana, ben):
    card = make_scorecard(UserFactory(), [ana, ben])
    text = client.get(page_of(tv)).content.decode()
    state = re.search(r'data-state="(\w+)"', text)[1]
    assert client.get(live_of(tv), {"estado": state}).status_code == 204
    enter(card, seat_of(card, ana), card.organizer, chance=22)
    response = client.get(live_of(tv), {"estado": state})
    assert response.status_code == 200
    assert response["X-Dados-Screen"] != state
    assert "<html" not in response.content.decode()
    assert '<span class="total">22</span>' in response.content.decode()
    assert client.get(live_of(tv), {"estado": response["X-Dados-Screen"]}).status_code == 204


@pytest.mark.parametrize("change", ["created", "finalized", "discarded"])
def test_the_state_moves_with_the_cards_in_play(ana, ben, change):
    card = make_scorecard(ana, [ana, ben])
    before = screen.state()
    if change == "created":
        make_scorecard(ana, [ana, ben])
    elif change == "finalized":
        Scorecard.objects.filter(pk=card.pk).delete()
        play(column(ana), column(ben))
        before = screen.state()
        play(column(ana), column(ben))
    else:
        from scorecards.services import scorecard_discard

        scorecard_discard(scorecard_id=card.pk, author=ana)
    assert screen.state() != before


def test_at_midnight_tonights_games_are_yesterdays(ana, ben, monkeypatch):
    play(column(ana), column(ben))
    before = screen.state()
    assert len(tonight_results()) == 1
    monkeypatch.setattr(screen, "tonight_began", lambda: timezone.now() + timedelta(seconds=1))
    assert screen.state() != before
    assert tonight_results() == []


def tonight_results() -> list:
    return screen.tonight_context([card.pk for card in screen.state().finished])["results"]


# What it costs


def queries(client, address, **params) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(address, params)
    assert response.status_code in (200, 204)
    return len(captured)


@pytest.mark.parametrize("n", [2, 8])
def test_the_page_reads_as_many_queries_whatever_the_number_of_cards(client, tv, n):
    cards_in_play(n)
    play(column(UserFactory()), column(UserFactory()))
    records.club()  # computed once and kept until another game is finished
    Screen.objects.filter(pk=tv.pk).update(last_seen=timezone.now())
    # The screen link; the board's state; the cards in play, and their seats and players;
    # tonight's games, and their seats and players; the finished games' state
    # (records.club, from the cache); the record's holder, and its game.
    assert queries(client, page_of(tv)) == 9


@pytest.mark.parametrize("n", [2, 8])
def test_a_write_on_one_card_renders_its_table_alone(client, tv, n):
    cards = cards_in_play(n)
    play(column(UserFactory()), column(UserFactory()))
    state = re.search(r'data-state="(\w+)"', client.get(page_of(tv)).text)[1]
    card = cards[0]
    enter(card, card.seats.first(), card.organizer, chance=22)
    Screen.objects.filter(pk=tv.pk).update(last_seen=timezone.now())
    # The screen link; the board's state; the card written, and its seats and players.
    assert queries(client, live_of(tv), estado=state) == 4


@pytest.mark.parametrize("n", [2, 8])
def test_nothing_moved_costs_two_queries_by_link_and_three_for_staff(client, staff, tv, n):
    cards_in_play(n)
    state = screen.state().digest
    Screen.objects.filter(pk=tv.pk).update(last_seen=timezone.now())
    # The screen link; the board's state.
    assert queries(client, live_of(tv), estado=state) == 2
    client.force_login(staff)
    # The session; its user; the board's state.
    assert queries(client, reverse("screen_live"), estado=state) == 3


def test_a_moved_board_is_rendered_once_for_every_screen(client, tv):
    cards_in_play(3)
    first = queries(client, live_of(tv), estado="old")
    Screen.objects.filter(pk=tv.pk).update(last_seen=timezone.now())
    # Another screen, at the same state: the board from the cache.
    assert queries(client, live_of(tv), estado="old") == 2
    assert first > 2


# The admin


def test_the_admin_shows_a_screen_link_to_copy_and_withdraws_it(admin_client, tv):
    response = admin_client.get(reverse("admin:scorecards_screen_change", args=[tv.pk]))
    assert response.status_code == 200
    assert f"/pantalla/{tv.token}/" in response.content.decode()
    assert 'class="screen-link"' in response.content.decode()
    response = admin_client.post(
        reverse("admin:scorecards_screen_changelist"),
        {"action": "withdraw", "_selected_action": [tv.pk]},
    )
    assert response.status_code == 302
    tv.refresh_from_db()
    assert not tv.active
    assert site.is_registered(Screen)


def test_each_screen_has_its_own_unguessable_token(db):
    one, two = Screen.objects.create(name="Uno"), Screen.objects.create(name="Dos")
    assert one.token != two.token
    assert len(one.token) >= 32


def test_the_screens_admin_is_all_spanish(admin_client, tv):
    from tests.test_admin import ENGLISH, ENGLISH_WORDS, visible_text

    for url in (
        reverse("admin:scorecards_screen_changelist"),
        reverse("admin:scorecards_screen_add"),
        reverse("admin:scorecards_screen_change", args=[tv.pk]),
    ):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        text = visible_text(response.text)
        assert [e for e in ENGLISH if e in text] == [], url
        assert ENGLISH_WORDS.findall(text) == [], url


def test_the_admin_makes_a_screen_with_its_link(admin_client):
    response = admin_client.post(
        reverse("admin:scorecards_screen_add"), {"name": "Portátil de la barra", "active": "on"}
    )
    assert response.status_code == 302
    made = Screen.objects.get()
    assert made.active
    assert made.token
    assert client_sees(made)


def client_sees(made) -> bool:
    from django.test import Client

    return Client().get(page_of(made)).status_code == 200


def test_the_bench_seeds_screen_links_that_open_the_screen(client, ana):
    from bench.seed import tables

    night = tables(1, floors=0, screens=2)  # past the club (Ana), newcomers
    assert len(night["screens"]) == 2
    for link in night["screens"]:
        assert client.get(link).status_code == 200
        assert client.get(f"{link}vivo/").status_code == 200


def test_the_screen_speaks_english_when_chosen(staff_client, settings, ana, ben):
    make_scorecard(UserFactory(), [ana, ben])
    staff_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = staff_client.get("/pantalla/").text
    assert "<title>Club screen · Dados</title>" in text
    assert "<span>Round 1 of 13</span> <span><bdi>Ana</bdi>'s turn</span>" in text
    assert 'data-page-said="Page %(page)s of %(pages)s"' in text
    assert "No game has finished yet." in text
