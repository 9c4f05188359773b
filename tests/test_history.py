import csv
import io
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from scorecards import services
from scorecards.models import Scorecard
from tests.factories import UserFactory, fill, finalized_games, make_scorecard

pytestmark = pytest.mark.django_db


def live(client, card, version, htmx=True, token=None):
    headers = {"HX-Request": "true"} if htmx else {}
    query = {"v": version} if token is None else {"v": version, "t": token}
    return client.get(reverse("scorecard_live", args=[card.pk]), query, headers=headers)


def shown_poll(client, card):
    """The poll's version and token, as the card page shows them to this client."""
    page = client.get(reverse("scorecard", args=[card.pk])).text
    found = re.search(r'hx-get="/tarjetas/\d+/vivo/\?v=(\d+)&amp;t=(\w+)"', page)
    return found[1], found[2]


# Live card


def test_history_lists_my_games_newest_first_with_winners(ana_client, ana, ben):
    carla = UserFactory(display_name="Carla")
    old, new = finalized_games([ana, ben, carla], 2)
    response = ana_client.get(reverse("history"))
    assert response.status_code == 200
    text = response.text
    assert text.index(f"/tarjetas/{new.pk}/") < text.index(f"/tarjetas/{old.pk}/")
    assert "presencial" in text
    seats = {s.player.display_name: s for s in new.seats.all()}
    winner = max(seats.values(), key=lambda s: s.total)
    assert f"Gana: <bdi>{winner.player.display_name}</bdi>" in text
    assert f"Tu total <strong>{seats['Ana'].total}</strong> · {seats['Ana'].place}º de 3" in text


def test_a_shared_win_names_every_winner(ana_client, ana, ben):
    card = make_scorecard(players=[ana, ben])
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    assert "Ganan: <bdi>Ana</bdi> y <bdi>Ben</bdi>" in ana_client.get(reverse("history")).text


def test_history_does_not_show_games_i_did_not_play(ana_client, ana, ben):
    carla = UserFactory(display_name="Carla")
    (card,) = finalized_games([ben, carla], 1)
    assert f"/tarjetas/{card.pk}/" not in ana_client.get(reverse("history")).text


def test_history_links_my_cards_in_progress_newest_first_in_local_time(ana_client, ana, ben, carla):
    mine = make_scorecard(organizer=ana, players=[ben, carla])
    playing = make_scorecard(organizer=ben, players=[ana, carla])
    not_mine = make_scorecard(organizer=ben, players=[ben, carla])
    (done,) = finalized_games([ana, ben], 1)
    # 21:05 and 08:00 in Madrid
    Scorecard.objects.filter(pk=mine.pk).update(
        created_at=datetime(2026, 11, 29, 20, 5, tzinfo=UTC)
    )
    Scorecard.objects.filter(pk=playing.pk).update(created_at=datetime(2026, 11, 30, 7, tzinfo=UTC))
    text = ana_client.get(reverse("history")).text
    section = text[text.index("<h2>En juego</h2>") : text.index("Partidas finalizadas")]
    newest = (
        f'<li><a href="/tarjetas/{playing.pk}/">Tarjeta del 30/11/2026 08:00 · '
        '<bdi>Ana</bdi> y <bdi>Carla</bdi></a> <span class="badge">presencial</span></li>'
    )
    oldest = (
        f'<li><a href="/tarjetas/{mine.pk}/">Tarjeta del 29/11/2026 21:05 · '
        '<bdi>Ben</bdi> y <bdi>Carla</bdi></a> <span class="badge">presencial</span></li>'
    )
    assert section.index(newest) < section.index(oldest)
    assert f"/tarjetas/{not_mine.pk}/" not in section
    assert f"/tarjetas/{done.pk}/" not in section

    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = ana_client.get(reverse("history")).text
    assert (
        f'<a href="/tarjetas/{mine.pk}/">Scorecard of 29 Nov 2026 21:05 · '
        "<bdi>Ben</bdi> and <bdi>Carla</bdi></a>" in text
    )


def test_cards_in_progress_of_the_same_minute_are_told_apart_by_their_players(
    ana_client, ana, ben, carla
):
    first = make_scorecard(organizer=ana, players=[ana, ben])
    second = make_scorecard(organizer=ana, players=[carla, ben, ana])
    same_minute = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)
    Scorecard.objects.filter(pk__in=[first.pk, second.pk]).update(created_at=same_minute)
    text = ana_client.get(reverse("history")).text
    # In turn order; the newer card (the higher id, at the same moment) first.
    newer = (
        f'<a href="/tarjetas/{second.pk}/">Tarjeta del 30/11/2026 19:00 · '
        "<bdi>Carla</bdi>, <bdi>Ben</bdi> y <bdi>Ana</bdi></a>"
    )
    older = (
        f'<a href="/tarjetas/{first.pk}/">Tarjeta del 30/11/2026 19:00 · '
        "<bdi>Ana</bdi> y <bdi>Ben</bdi></a>"
    )
    # Each with its mode.
    badge = ' <span class="badge">presencial</span>'
    assert f"<li>{newer}{badge}</li><li>{older}{badge}</li>" in text


def test_history_links_follow_a_rename_a_new_card_and_a_finalized_one(ana_client, ana, ben, carla):
    # The links are built once per distinct list of cards: each of these changes the list.
    first = make_scorecard(organizer=ana, players=[ana, ben])
    assert "<bdi>Ana</bdi> y <bdi>Ben</bdi></a>" in ana_client.get(reverse("history")).text
    ben.display_name = "Benito"
    ben.save()
    assert "<bdi>Ana</bdi> y <bdi>Benito</bdi></a>" in ana_client.get(reverse("history")).text
    second = make_scorecard(organizer=ana, players=[carla, ana])
    text = ana_client.get(reverse("history")).text
    assert f'href="/tarjetas/{first.pk}/"' in text
    assert f'href="/tarjetas/{second.pk}/"' in text
    fill(first)
    services.scorecard_finalize(scorecard_id=first.pk, author=first.organizer)
    text = ana_client.get(reverse("history")).text
    section = text[text.index("<h2>En juego</h2>") : text.index("Partidas finalizadas")]
    assert f'href="/tarjetas/{first.pk}/"' not in section
    assert f'href="/tarjetas/{second.pk}/"' in section


def test_history_links_at_most_twenty_cards_in_progress(ana_client, ana, ben):
    cards = [make_scorecard(organizer=ana, players=[ben]) for _ in range(21)]
    text = ana_client.get(reverse("history")).text
    assert text.count('<li><a href="/tarjetas/') == 20
    assert f'href="/tarjetas/{cards[0].pk}/"' not in text  # the oldest
    assert f'href="/tarjetas/{cards[-1].pk}/"' in text


def test_history_without_cards_in_progress_has_no_en_juego(ana_client, ana, ben):
    finalized_games([ana, ben], 1)
    assert "En juego" not in ana_client.get(reverse("history")).text


def test_history_is_paginated(ana_client, ana, ben):
    cards = finalized_games([ana, ben], 25)
    first = ana_client.get(reverse("history"))
    assert "Página 1 de 2" in first.text
    assert f"/tarjetas/{cards[0].pk}/" not in first.text
    second = ana_client.get(reverse("history"), {"pagina": 2})
    assert f"/tarjetas/{cards[0].pk}/" in second.text
    assert ana_client.get(reverse("history"), {"pagina": "zzz"}).status_code == 200
    assert ana_client.get(reverse("history"), {"pagina": "999"}).status_code == 200


def test_history_filters_by_another_player(ana_client, ana, ben):
    carla = UserFactory(display_name="Carla")
    (with_ben,) = finalized_games([ana, ben], 1)
    (with_carla,) = finalized_games([ana, carla], 1)
    response = ana_client.get(reverse("history"), {"jugador": carla.pk})
    assert f"/tarjetas/{with_carla.pk}/" in response.text
    assert f"/tarjetas/{with_ben.pk}/" not in response.text


def test_the_con_filter_leaves_out_the_viewer(ana_client, ana, ben):
    """Every game of Ana's history is with Ana: «Con» offers the others, and asking for
    her own games with herself is refused as any unknown player is."""
    finalized_games([ana, ben], 1)
    response = ana_client.get(reverse("history"))
    offered = list(response.context["form"].fields["jugador"].queryset)
    assert ben in offered
    assert ana not in offered
    assert f'<option value="{ana.pk}"' not in response.text
    response = ana_client.get(reverse("history"), {"jugador": ana.pk})
    assert "Ese jugador no existe." in response.text


def test_history_filters_by_date_range(ana_client, ana, ben):
    start = timezone.now() - timedelta(days=30)
    cards = finalized_games([ana, ben], 10, start=start)
    desde = timezone.localdate(start + timedelta(days=3))
    hasta = desde + timedelta(days=2)
    response = ana_client.get(reverse("history"), {"desde": desde, "hasta": hasta})
    shown = [c.pk for c in cards if f"/tarjetas/{c.pk}/" in response.text]
    assert shown == [cards[3].pk, cards[4].pk, cards[5].pk]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"desde": "2026-13-45"}, "Escribe una fecha válida"),
        ({"desde": "2026-05-02", "hasta": "2026-05-01"}, "no puede ser posterior"),
        ({"jugador": "99999"}, "Ese jugador no existe"),
        ({"jugador": "abc"}, "Ese jugador no existe"),
    ],
)
def test_bad_filters_get_a_spanish_message_and_are_ignored(ana_client, ana, ben, params, message):
    (card,) = finalized_games([ana, ben], 1)
    response = ana_client.get(reverse("history"), params)
    assert response.status_code == 200
    assert message in response.text
    assert f"/tarjetas/{card.pk}/" in response.text


# The organizer's own history


def history_links(client, **params) -> list[int]:
    """The finalized games a history page lists, by card id, in order."""
    text = client.get(reverse("history"), params).text
    text = text[text.index("Partidas finalizadas") :]
    return [int(pk) for pk in re.findall(r'class="game-link" href="/tarjetas/(\d+)/"', text)]


def test_an_organizer_who_did_not_play_keeps_the_game_in_history(client, organizer, ana, ben):
    (card,) = finalized_games([ana, ben], 1, organizer=organizer)
    client.force_login(organizer)
    text = client.get(reverse("history")).text
    assert history_links(client) == [card.pk]
    assert '<span class="badge">organizaste</span>' in text
    assert "No jugaste: la organizaste." in text
    assert "Tu total" not in text
    assert "1 partida." in text
    client.force_login(ana)
    text = client.get(reverse("history")).text
    assert history_links(client) == [card.pk]
    assert "organizaste" not in text
    assert "Tu total <strong>" in text


def test_a_game_played_and_organized_appears_once(ana_client, ana, ben):
    (card,) = finalized_games([ana, ben], 1)  # Ana organizes and plays
    text = ana_client.get(reverse("history")).text
    assert history_links(ana_client) == [card.pk]
    assert text.count('<span class="badge">organizaste</span>') == 1
    assert "Tu total <strong>" in text
    assert "No jugaste" not in text


@pytest.fixture
def three_ways(ana, ben, carla):
    """Games Ana played for Ben, organized without playing, and organized and played:
    one a day, in that order."""
    start = timezone.now() - timedelta(days=10)
    (played,) = finalized_games([ben, ana], 1, start=start)
    (organized,) = finalized_games([ben, carla], 1, start=start + timedelta(days=1), organizer=ana)
    (both,) = finalized_games([ana, carla], 1, start=start + timedelta(days=2))
    return played, organized, both


@pytest.mark.parametrize(
    ("partidas", "listed"),
    [
        ("", ["both", "organized", "played"]),
        ("jugadas", ["both", "played"]),
        ("organizadas", ["both", "organized"]),
    ],
)
def test_history_filters_on_the_games_i_played_or_organized(
    ana_client, three_ways, partidas, listed
):
    played, organized, both = three_ways
    names = {played.pk: "played", organized.pk: "organized", both.pk: "both"}
    shown = history_links(ana_client, partidas=partidas)
    assert [names[pk] for pk in shown] == listed


def test_the_played_or_organized_filter_goes_with_the_others(ana_client, ben, three_ways):
    played, organized, _ = three_ways
    assert history_links(ana_client, partidas="organizadas", jugador=ben.pk) == [organized.pk]
    assert history_links(ana_client, partidas="jugadas", jugador=ben.pk) == [played.pk]
    organized.refresh_from_db()
    day = timezone.localdate(organized.finalized_at)
    assert history_links(ana_client, partidas="jugadas", desde=day, hasta=day) == []
    # the filter is kept in the pages' and the CSV's links
    text = ana_client.get(reverse("history"), {"partidas": "organizadas"}).text
    assert '<option value="organizadas" selected>Las que organicé</option>' in text
    assert f'href="{reverse("history_csv")}?partidas=organizadas"' in text


def test_an_unknown_played_or_organized_value_is_explained_and_ignored(ana_client, three_ways):
    response = ana_client.get(reverse("history"), {"partidas": "ganadas"})
    assert response.status_code == 200
    assert "Elige todas, las que jugaste o las que organizaste." in response.text
    assert len(history_links(ana_client, partidas="ganadas")) == 3


def test_the_played_or_organized_filter_speaks_english(ana_client, three_ways):
    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = ana_client.get(reverse("history")).text
    assert '<span class="badge">you organized</span>' in text
    assert "You did not play: you organized it." in text
    assert "My games" in text
    assert ">Those I played</option>" in text
    assert ">Those I organized</option>" in text
    text = ana_client.get(reverse("history"), {"partidas": "x"}).text
    assert "Choose all, those you played or those you organized." in text


def test_the_csv_marks_the_games_i_organized_and_leaves_my_score_empty_if_i_did_not_play(
    ana_client, three_ways
):
    played, organized, both = three_ways
    body = ana_client.get(reverse("history_csv")).content.decode("utf-8").lstrip("\ufeff")
    rows = list(csv.reader(io.StringIO(body), delimiter=";"))
    assert rows[0] == [
        "fecha",
        "modalidad",
        "jugadores",
        "mi total",
        "mi posición",
        "ganadores",
        "partida",
        "organicé",
    ]
    by_card = {int(row[6]): row for row in rows[1:]}
    assert list(by_card) == [both.pk, organized.pk, played.pk]
    assert by_card[organized.pk][3:5] == ["", ""]
    assert by_card[organized.pk][7] == "sí"
    assert [by_card[both.pk][3] != "", by_card[both.pk][7]] == [True, "sí"]
    assert [by_card[played.pk][3] != "", by_card[played.pk][7]] == [True, "no"]
    only = ana_client.get(reverse("history_csv"), {"partidas": "organizadas"})
    rows = list(
        csv.reader(io.StringIO(only.content.decode("utf-8").lstrip("\ufeff")), delimiter=";")
    )
    assert sorted(int(row[6]) for row in rows[1:]) == sorted([organized.pk, both.pk])


def test_a_stranger_to_the_game_does_not_see_it(client, organizer, ana, ben, carla):
    finalized_games([ana, ben], 2, organizer=organizer)
    client.force_login(carla)
    assert history_links(client) == []
    assert client.get(reverse("history_csv")).content.decode("utf-8").count("\n") == 1


# The game page


def test_the_game_page_shows_the_whole_card_and_a_log_summary(ana_client, ana, ben):
    card = make_scorecard(players=[ana, ben])
    seat = card.seats.get(player=ana)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="ones", value="2", was="", author=card.organizer
    )
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="ones", value="3", was="2", author=card.organizer
    )
    version = Scorecard.objects.get(pk=card.pk).version
    services.change_undo(scorecard_id=card.pk, author=card.organizer, version=version)
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    response = ana_client.get(reverse("scorecard", args=[card.pk]))
    assert "Registro de cambios" in response.text
    assert (
        "3 cambios: 1 anotación, 1 corrección, 0 Yahtzees adicionales y 1 deshecho."
        in response.text
    )
    assert "Bonus superior" in response.text
    assert "casilla/" not in response.text


# Exports


def test_the_csv_has_one_row_per_game_and_opens_in_a_spreadsheet(ana_client, ana, ben):
    ben.display_name = "=HYPERLINK(1)"
    ben.save()
    cards = finalized_games([ana, ben], 3)
    response = ana_client.get(reverse("history_csv"))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert "attachment" in response["Content-Disposition"]
    body = response.content.decode("utf-8")
    assert body.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(body.lstrip("\ufeff")), delimiter=";"))
    assert rows[0][:5] == ["fecha", "modalidad", "jugadores", "mi total", "mi posición"]
    assert len(rows) == 4
    newest = cards[-1]
    mine = newest.seats.get(player=ana)
    assert rows[1][1] == "presencial"
    assert rows[1][3:5] == [str(mine.total), str(mine.place)]
    assert rows[1][6] == str(newest.pk)
    assert all(not row[2].startswith("=") for row in rows[1:])


def test_the_json_of_a_game_has_every_box(ana_client, ana, ben):
    card = make_scorecard(players=[ana, ben])
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    response = ana_client.get(reverse("scorecard_json", args=[card.pk]))
    assert response["Content-Type"] == "application/json"
    data = json.loads(response.content.decode("utf-8"))
    assert data["modalidad"] == "presencial"
    assert data["finalizada"] is not None
    first = data["jugadores"][0]
    assert first["jugador"] == "Ana"
    assert first["casillas"]["fives"] == 15
    assert len(first["casillas"]) == 13
    assert first["totales"] == {
        "upper": 63,
        "upper_bonus": 35,
        "lower": 147,
        "yahtzee_bonus": 0,
        "total": 245,
    }
    assert first["posicion"] == 1


def test_exports_are_invisible_to_strangers(client, ana, ben):
    card = make_scorecard(players=[ana, ben])
    client.force_login(UserFactory())
    assert client.get(reverse("scorecard_json", args=[card.pk])).status_code == 404
    assert client.get(reverse("scorecard", args=[card.pk])).status_code == 404


def test_the_organizer_and_staff_see_a_game(client, ana, ben):
    organizer = UserFactory()
    card = make_scorecard(organizer, [ana, ben])
    for user in (organizer, UserFactory(is_staff=True)):
        client.force_login(user)
        assert client.get(reverse("scorecard_json", args=[card.pk])).status_code == 200


# Scale: queries do not grow with the number of games


@pytest.mark.parametrize("n", [10, 500])
def test_history_pages_cost_the_same_at_10_and_500_games(
    ana_client, ana, ben, django_assert_num_queries, n
):
    cards = finalized_games([ana, ben, UserFactory()], n)
    # and as many games Ana organized without playing
    finalized_games([ben, UserFactory()], n, organizer=ana)
    # session, user, count, page of cards, their seats + players, the player filter's
    # options, in-progress cards (none: no seats to read for them)
    with django_assert_num_queries(7):
        ana_client.get(reverse("history"))
    # and the chosen player, read to check the filter
    with django_assert_num_queries(8):
        ana_client.get(reverse("history"), {"partidas": "organizadas", "jugador": ben.pk})
    # session, user, my cards, their seats + players
    with django_assert_num_queries(4):
        ana_client.get(reverse("history_csv"))
    # session, user, the card and organizer, its seats and players, its changes, its
    # public link (Ana played: «Compartir» is hers); and, once per game finalized in the
    # club, the finalized games' count and the records' pass, for the records this game
    # set (kept until another game is finalized)
    with django_assert_num_queries(8):
        ana_client.get(reverse("scorecard", args=[cards[-1].pk]))
    # another game: the records kept, found by the finalized games' count
    with django_assert_num_queries(7):
        ana_client.get(reverse("scorecard", args=[cards[-2].pk]))
    assert Scorecard.objects.count() == 2 * n


def test_the_con_filter_lists_players_in_spanish_order(client):
    from tests.test_names import SPANISH_ORDER

    for name in reversed(SPANISH_ORDER):
        UserFactory(display_name=name)
    client.force_login(UserFactory(display_name="Zoe"))
    text = client.get(reverse("history")).text
    options = re.findall(r"<option value=\"\d+\"[^>]*>([^<]*)</option>", text)
    assert [o for o in options if o in SPANISH_ORDER] == SPANISH_ORDER
