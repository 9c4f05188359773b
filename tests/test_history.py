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
    assert f"Gana: {winner.player.display_name}" in text
    assert f"Tu total <strong>{seats['Ana'].total}</strong> · {seats['Ana'].place}º de 3" in text


def test_a_shared_win_names_every_winner(ana_client, ana, ben):
    card = make_scorecard(players=[ana, ben])
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    assert "Ganan: Ana y Ben" in ana_client.get(reverse("history")).text


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
        f'<li><a href="/tarjetas/{playing.pk}/">Tarjeta del 30/11/2026 08:00 · Ana y Carla</a></li>'
    )
    oldest = (
        f'<li><a href="/tarjetas/{mine.pk}/">Tarjeta del 29/11/2026 21:05 · Ben y Carla</a></li>'
    )
    assert section.index(newest) < section.index(oldest)
    assert f"/tarjetas/{not_mine.pk}/" not in section
    assert f"/tarjetas/{done.pk}/" not in section

    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = ana_client.get(reverse("history")).text
    assert (
        f'<a href="/tarjetas/{mine.pk}/">Scorecard of 29/11/2026 21:05 · Ben and Carla</a>' in text
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
    newer = f'<a href="/tarjetas/{second.pk}/">Tarjeta del 30/11/2026 19:00 · Carla, Ben y Ana</a>'
    older = f'<a href="/tarjetas/{first.pk}/">Tarjeta del 30/11/2026 19:00 · Ana y Ben</a>'
    assert f"<li>{newer}</li><li>{older}</li>" in text


def test_history_links_follow_a_rename_a_new_card_and_a_finalized_one(ana_client, ana, ben, carla):
    # The links are built once per distinct list of cards: each of these changes the list.
    first = make_scorecard(organizer=ana, players=[ana, ben])
    assert "Ana y Ben</a>" in ana_client.get(reverse("history")).text
    ben.display_name = "Benito"
    ben.save()
    assert "Ana y Benito</a>" in ana_client.get(reverse("history")).text
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
        ({"desde": "2026-13-45"}, "Introduzca una fecha válida"),
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
    services.change_undo(scorecard_id=card.pk, author=card.organizer)
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
    # session, user, count, page of seats + cards, their seats + players, the player
    # filter's options, in-progress cards (none: no seats to read for them)
    with django_assert_num_queries(7):
        ana_client.get(reverse("history"))
    # session, user, my seats + cards, their seats + players
    with django_assert_num_queries(4):
        ana_client.get(reverse("history_csv"))
    # session, user, the card and organizer, its seats and players, its changes
    with django_assert_num_queries(5):
        ana_client.get(reverse("scorecard", args=[cards[-1].pk]))
    assert Scorecard.objects.count() == n
