"""The game's mode («presencial» or «digital») in «Historial», the exports, the statistics
and «Clasificación», with a filter by mode that shows every game by default."""

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from scorecards import rules, services, stats, turns
from scorecards.models import Roll, Scorecard, Seat
from scorecards.rules import Category
from tests.dice import Scripted
from tests.factories import UserFactory, full_card

pytestmark = pytest.mark.django_db

PRESENCIAL, DIGITAL = Scorecard.PRESENCIAL, Scorecard.DIGITAL
# full_card() totals 245 with 22 in Chance: a column with Chance c totals BASE + c.
BASE = 245 - 22


def finished(mode, players, *chances, organizer=None, start=None):
    """Finalized games of that mode among players, one a day from start, written in bulk:
    one game per entry of chances, each player's Chance (so a total of BASE + it).

    Like tests.factories.finalized_games, but the mode is set when the card is created:
    the database refuses any change to a finalized card.
    """
    start = start or timezone.now() - timedelta(days=60)
    organizer = organizer or players[0]
    cards = Scorecard.objects.bulk_create(
        Scorecard(organizer=organizer, mode=mode) for _ in chances
    )
    seats = []
    for card, game in zip(cards, chances, strict=True):
        totals = [BASE + c for c in game]
        for i, (player, chance, place) in enumerate(
            zip(players, game, rules.positions(totals), strict=True)
        ):
            seats.append(
                Seat(
                    scorecard=card,
                    player=player,
                    order=i,
                    total=BASE + chance,
                    place=place,
                    **full_card(chance=chance),
                )
            )
    Seat.objects.bulk_create(seats)
    for day, card in enumerate(cards):
        Scorecard.objects.filter(pk=card.pk).update(finalized_at=start + timedelta(days=day))
    return cards


@pytest.fixture
def both_modes(ana, ben):
    """Ana and Ben: three games in person, then two digital ones, all organized by Ben.

                   Ana                 Ben
    presencial 1   253 (1st)           233 (2nd)
    presencial 2   233 (2nd)           243 (1st)
    presencial 3   243 (1st =)         243 (1st =)
    digital 1      228 (2nd)           238 (1st)
    digital 2      248 (1st)           238 (2nd)
    """
    start = timezone.now() - timedelta(days=30)
    presencial = finished(
        PRESENCIAL, [ana, ben], (30, 10), (10, 20), (20, 20), organizer=ben, start=start
    )
    digital = finished(
        DIGITAL, [ana, ben], (5, 15), (25, 15), organizer=ben, start=start + timedelta(days=10)
    )
    return presencial, digital


@pytest.fixture
def viewer(db):
    """Another player looking at the statistics, in a client of its own: ana_client is
    the test's client."""
    viewer = Client()
    viewer.force_login(UserFactory(display_name="Mirón"))
    return viewer


def history_links(client, **params) -> list[int]:
    """The finalized games a history page lists, by card id, in order."""
    text = client.get(reverse("history"), params).text
    text = text[text.index("Partidas finalizadas") :]
    return [int(pk) for pk in re.findall(r'class="game-link" href="/tarjetas/(\d+)/"', text)]


def ids(cards) -> list[int]:
    """Card ids newest first, as «Historial» lists them."""
    return [card.pk for card in reversed(cards)]


def csv_rows(response) -> list[list[str]]:
    body = response.content.decode("utf-8").lstrip("\ufeff")
    return list(csv.reader(io.StringIO(body), delimiter=";"))


HOSTILE = ["todas", "Digital", "presencial ", "x" * 5000, "digi\x00tal", "\x00", "<b>", "' OR 1=1"]


# «Historial»


def test_history_shows_each_games_mode(ana_client, both_modes):
    presencial, digital = both_modes
    text = ana_client.get(reverse("history")).text
    for cards, mode in ((presencial, "presencial"), (digital, "digital")):
        for card in cards:
            row = re.search(rf'href="/tarjetas/{card.pk}/">.*?</a>', text, flags=re.S)[0]
            assert f'<span class="badge">{mode}</span>' in row
    assert text.count('<span class="badge">digital</span>') == 2
    assert text.count('<span class="badge">presencial</span>') == 3


@pytest.mark.parametrize(
    ("modalidad", "listed"),
    [("", "both"), ("presencial", "presencial"), ("digital", "digital")],
)
def test_history_filters_by_mode(ana_client, both_modes, modalidad, listed):
    presencial, digital = both_modes
    expected = {
        "both": ids(presencial + digital),
        "presencial": ids(presencial),
        "digital": ids(digital),
    }[listed]
    assert history_links(ana_client, modalidad=modalidad) == expected


def test_the_mode_filter_defaults_to_all_and_keeps_its_choice(ana_client, both_modes):
    text = ana_client.get(reverse("history")).text
    assert '<label for="id_modalidad">Modalidad</label>' in text
    assert '<option value="" selected>Todas</option>' in text
    assert '<option value="presencial">Presencial</option>' in text
    assert '<option value="digital">Digital</option>' in text
    text = ana_client.get(reverse("history"), {"modalidad": "digital"}).text
    select = re.search(r'<select name="modalidad".*?</select>', text, flags=re.S)[0]
    assert '<option value="digital" selected>Digital</option>' in select
    assert '<option value="">Todas</option>' in select
    assert f'href="{reverse("history_csv")}?modalidad=digital"' in text
    assert "2 partidas." in text


def test_the_mode_filter_goes_with_the_others(ana_client, ana, ben, carla, both_modes):
    presencial, digital = both_modes
    # Ana organizes a digital game for Ben and Carla, and plays one in person with Carla.
    start = timezone.now() - timedelta(days=5)
    (organized,) = finished(DIGITAL, [ben, carla], (10, 20), organizer=ana, start=start)
    (with_carla,) = finished(PRESENCIAL, [ana, carla], (10, 20), start=start + timedelta(days=1))
    assert history_links(ana_client, modalidad="digital", partidas="organizadas") == [organized.pk]
    assert history_links(ana_client, modalidad="digital", partidas="jugadas") == ids(digital)
    assert history_links(ana_client, modalidad="digital", jugador=carla.pk) == [organized.pk]
    assert history_links(ana_client, modalidad="presencial", jugador=carla.pk) == [with_carla.pk]
    assert history_links(ana_client, modalidad="presencial", jugador=ben.pk) == ids(presencial)
    digital[0].refresh_from_db()
    day = timezone.localdate(digital[0].finalized_at)
    assert history_links(ana_client, modalidad="digital", desde=day, hasta=day) == [digital[0].pk]
    assert history_links(ana_client, modalidad="presencial", desde=day, hasta=day) == []


def test_the_pages_of_a_filtered_history_keep_the_mode(ana_client, ana, ben):
    digital = finished(DIGITAL, [ana, ben], *[(10, 20)] * 22)
    finished(PRESENCIAL, [ana, ben], *[(10, 20)] * 5, start=timezone.now() - timedelta(days=3))
    text = ana_client.get(reverse("history"), {"modalidad": "digital"}).text
    assert "22 partidas." in text
    assert "Página 1 de 2" in text
    assert 'href="?modalidad=digital&amp;pagina=2"' in text
    second = history_links(ana_client, modalidad="digital", pagina=2)
    assert second == ids(digital[:2])


def test_an_unknown_mode_is_explained_in_spanish_and_ignored(ana_client, both_modes):
    response = ana_client.get(reverse("history"), {"modalidad": "online"})
    assert response.status_code == 200
    assert "Elige todas, presencial o digital." in response.text
    assert len(history_links(ana_client, modalidad="online")) == 5


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_modes_never_break_a_page(ana_client, ana, both_modes, value):
    for name in ("history", "history_csv", "ranking"):
        response = ana_client.get(reverse(name), {"modalidad": value})
        assert response.status_code == 200, name
    response = ana_client.get(reverse("player", args=[ana.pk]), {"modalidad": value})
    assert response.status_code == 200
    # Said without repeating the value; every game counts, as with no filter.
    assert (
        '<div role="alert"><ul class="errorlist">'
        "<li>Elige todas, presencial o digital. Se muestran todas.</li></ul></div>"
    ) in response.text
    assert "<dt>Partidas</dt><dd>5</dd>" in response.text


# Exports


def test_the_csv_writes_each_games_mode_and_honours_the_filter(ana_client, both_modes):
    presencial, digital = both_modes
    rows = csv_rows(ana_client.get(reverse("history_csv")))
    assert rows[0][1] == "modalidad"
    modes = {int(row[6]): row[1] for row in rows[1:]}
    assert modes == {card.pk: "presencial" for card in presencial} | {
        card.pk: "digital" for card in digital
    }
    for value, cards in (("digital", digital), ("presencial", presencial)):
        rows = csv_rows(ana_client.get(reverse("history_csv"), {"modalidad": value}))
        assert [int(row[6]) for row in rows[1:]] == ids(cards)
        assert {row[1] for row in rows[1:]} == {value}
    # With other filters too, and an invalid one ignores them all as the page does.
    rows = csv_rows(
        ana_client.get(reverse("history_csv"), {"modalidad": "digital", "partidas": "jugadas"})
    )
    assert [int(row[6]) for row in rows[1:]] == ids(digital)
    assert len(csv_rows(ana_client.get(reverse("history_csv"), {"modalidad": "x"}))) == 6


def turn(card, author, box, *rolls):
    """One turn of a digital game: each roll's new faces (queued for the dice) and the
    positions kept before it, then the box. Returns the card after the turn."""
    for faces, keep in rolls:
        Scripted.faces[:] = faces
        card = turns.turn_roll(
            scorecard_id=card.pk,
            author=author,
            version=str(card.version),
            shown=card.turn_rolls[-1][0] if card.turn_rolls else "",
            keep=[str(position) for position in keep],
        ).scorecard
        assert Scripted.faces == []
    return turns.turn_score(
        scorecard_id=card.pk, author=author, version=str(card.version), box=box
    ).scorecard


def test_the_json_of_a_digital_game_has_its_mode_and_every_roll(scripted, ana_client, ana, ben):
    card = services.scorecard_create(organizer=ana, players=[ana, ben], mode=DIGITAL)
    card = turn(card, ana, "chance", ([3, 1, 4, 5, 6], []), ([2, 6, 6], [1, 3]))
    card = turn(card, ben, "yahtzee", ([6, 6, 6, 6, 6], []))
    # Ana's second turn is in progress: its roll is not a Roll yet.
    Scripted.faces[:] = [1, 1, 2, 2, 3]
    card = turns.turn_roll(
        scorecard_id=card.pk, author=ana, version=str(card.version), shown="", keep=[]
    ).scorecard
    assert card.turn_rolls[0][0] == "11223"
    data = json.loads(ana_client.get(reverse("scorecard_json", args=[card.pk])).content)
    assert data["modalidad"] == "digital"
    rolled = [
        (r["jugador"], r["ronda"], r["tirada"], r["dados"], r["guardados"]) for r in data["tiradas"]
    ]
    assert rolled == [
        ("Ana", 1, 1, "31456", ""),
        ("Ana", 1, 2, "32466", "13"),
        ("Ben", 1, 1, "66666", ""),
    ]
    # Each roll says the box its turn ended in.
    assert [r["casilla"] for r in data["tiradas"]] == ["chance", "chance", "yahtzee"]
    stored = Roll.objects.filter(scorecard=card).order_by("pk")
    assert [r["hora"] for r in data["tiradas"]] == [r.rolled_at.isoformat() for r in stored]
    assert data["jugadores"][0]["casillas"]["chance"] == 3 + 2 + 4 + 6 + 6
    assert data["jugadores"][1]["casillas"]["yahtzee"] == 50


def test_a_whole_digital_game_is_in_history_and_its_json(scripted, ana_client, ana, ben):
    card = services.scorecard_create(organizer=ana, players=[ana, ben], mode=DIGITAL)
    for category in Category:
        for player in (ana, ben):
            card = turn(card, player, category.value, ([1, 2, 3, 4, 5], []))
    card.refresh_from_db()
    assert card.is_finalized
    assert history_links(ana_client, modalidad="digital") == [card.pk]
    assert history_links(ana_client, modalidad="presencial") == []
    assert '<span class="badge">digital</span>' in ana_client.get(reverse("history")).text
    data = json.loads(ana_client.get(reverse("scorecard_json", args=[card.pk])).content)
    assert data["modalidad"] == "digital"
    assert len(data["tiradas"]) == 2 * len(Category)
    assert [(r["jugador"], r["ronda"]) for r in data["tiradas"][:3]] == [
        ("Ana", 1),
        ("Ben", 1),
        ("Ana", 2),
    ]
    assert {r["dados"] for r in data["tiradas"]} == {"12345"}
    rows = csv_rows(ana_client.get(reverse("history_csv"), {"modalidad": "digital"}))
    assert [(row[1], row[6]) for row in rows[1:]] == [("digital", str(card.pk))]


def test_the_json_of_a_game_in_person_has_no_rolls(ana_client, both_modes):
    presencial, _ = both_modes
    data = json.loads(ana_client.get(reverse("scorecard_json", args=[presencial[0].pk])).content)
    assert data["modalidad"] == "presencial"
    assert "tiradas" not in data


def test_the_rolls_cost_one_query_and_only_for_a_digital_game(
    ana_client, both_modes, django_assert_num_queries
):
    presencial, digital = both_modes
    # The session, its user, the card and its organizer, its seats and players.
    with django_assert_num_queries(4):
        ana_client.get(reverse("scorecard_json", args=[presencial[0].pk]))
    # And its rolls.
    with django_assert_num_queries(5):
        data = json.loads(ana_client.get(reverse("scorecard_json", args=[digital[0].pk])).content)
    assert data["tiradas"] == []  # written in bulk, without playing


# Statistics


def test_each_statistic_counts_only_the_games_of_the_mode_asked(both_modes, ana, ben):
    expected = {
        None: {"games": 5, "wins": 3, "average": (253 + 233 + 243 + 228 + 248) / 5},
        PRESENCIAL: {"games": 3, "wins": 2, "average": (253 + 233 + 243) / 3},
        DIGITAL: {"games": 2, "wins": 1, "average": (228 + 248) / 2},
    }
    for mode, numbers in expected.items():
        summary = stats.player_summary(ana, mode=mode)
        assert {key: summary[key] for key in numbers} == {
            **numbers,
            "average": pytest.approx(numbers["average"]),
        }
    assert stats.player_summary(ana, mode=DIGITAL)["best"] == 248
    assert stats.player_summary(ana, mode=PRESENCIAL)["worst"] == 233

    def record(mode):
        return [
            (r["opponent"], r["games"], r["wins"], r["losses"], r["ties"])
            for r in stats.head_to_head(ana, mode=mode)
        ]

    assert record(None) == [(ben, 5, 2, 2, 1)]
    assert record(PRESENCIAL) == [(ben, 3, 1, 1, 1)]
    assert record(DIGITAL) == [(ben, 2, 1, 1, 0)]
    assert [t for _, t in stats.totals_over_time(ana, mode=DIGITAL)] == [228, 248]
    assert [t for _, t in stats.totals_over_time(ana, mode=PRESENCIAL)] == [253, 233, 243]
    assert [t for _, t in stats.totals_over_time(ana)] == [253, 233, 243, 228, 248]
    assert stats.histogram(ana, mode=DIGITAL) == [{"low": 225, "high": 249, "count": 2}]
    assert stats.histogram(ana, mode=PRESENCIAL) == [
        {"low": 225, "high": 249, "count": 2},
        {"low": 250, "high": 274, "count": 1},
    ]


def test_the_ranking_counts_only_the_games_of_the_mode_asked(both_modes, ana, ben):
    def table(mode):
        ranked, unranked = stats.ranking(min_games=3, mode=mode)
        return (
            [(r["player"], r["rank"], r["games"], r["wins"], r["average"]) for r in ranked],
            [(r["player"], r["games"], r["average"]) for r in unranked],
        )

    assert table(None) == ([(ana, 1, 5, 3, 241), (ben, 2, 5, 3, 239)], [])
    ranked, unranked = table(PRESENCIAL)
    assert ranked == [(ana, 1, 3, 2, 243), (ben, 2, 3, 2, pytest.approx(719 / 3))]
    assert unranked == []
    assert table(DIGITAL) == ([], [(ana, 2, 238), (ben, 2, 238)])


def test_a_mode_with_no_games_has_empty_statistics(ana, ben):
    finished(PRESENCIAL, [ana, ben], (10, 20))
    assert stats.player_summary(ana, mode=DIGITAL)["games"] == 0
    assert stats.head_to_head(ana, mode=DIGITAL) == []
    assert stats.totals_over_time(ana, mode=DIGITAL) == []
    assert stats.histogram(ana, mode=DIGITAL) == []
    assert stats.ranking(min_games=1, mode=DIGITAL) == ([], [])


@pytest.mark.parametrize("mode", ["", "online", "DIGITAL", 1])
def test_the_statistics_refuse_an_unknown_mode(ana, mode):
    for statistic in (stats.player_summary, stats.head_to_head, stats.histogram):
        with pytest.raises(ValueError, match="mode must be"):
            statistic(ana, mode=mode)
    with pytest.raises(ValueError, match="mode must be"):
        stats.ranking(mode=mode)


# The player page and «Clasificación»


def mode_links(text) -> list[tuple[str, str, bool]]:
    """The mode filter's links: (href, label, whether it is the current one)."""
    nav = re.search(r'<nav class="filter-actions mode-filter".*?</nav>', text, flags=re.S)[0]
    return [
        (href, label, current == ' aria-current="page"')
        for href, current, label in re.findall(r'href="([^"]*)"([^>]*)>([^<]*)</a>', nav)
    ]


def test_the_player_page_shows_the_mode_asked(viewer, both_modes, ana, ben):
    url = reverse("player", args=[ana.pk])
    text = viewer.get(url).text
    assert "<dt>Partidas</dt><dd>5</dd>" in text
    assert "<dt>Media</dt><dd>241,0</dd>" in text
    assert mode_links(text) == [
        (url, "Todas", True),
        (f"{url}?modalidad=presencial", "Presencial", False),
        (f"{url}?modalidad=digital", "Digital", False),
    ]
    assert "Solo partidas" not in text
    text = viewer.get(url, {"modalidad": "digital"}).text
    assert "<dt>Partidas</dt><dd>2</dd>" in text
    assert "<dt>Victorias</dt><dd>1</dd>" in text
    assert "<dt>Media</dt><dd>238,0</dd>" in text
    assert '<p class="hint">Solo partidas digitales.</p>' in text
    assert [current for _, _, current in mode_links(text)] == [False, False, True]
    assert '<desc id="totals-desc">2 partidas' in text
    # Head to head over the digital games; the rival's page opens on the same mode.
    rival = reverse("player", args=[ben.pk])
    assert (
        f'<a href="{rival}?modalidad=digital"><bdi>Ben</bdi></a></th>'
        "<td>2</td><td>1</td><td>1</td><td>0</td>"
    ) in text
    text = viewer.get(url, {"modalidad": "presencial"}).text
    assert "<dt>Partidas</dt><dd>3</dd>" in text
    assert "<dt>Media</dt><dd>243,0</dd>" in text
    assert '<p class="hint">Solo partidas presenciales.</p>' in text


def test_a_player_without_games_of_a_mode_says_so(viewer, ana, ben):
    finished(PRESENCIAL, [ana, ben], (10, 20))
    text = viewer.get(reverse("player", args=[ana.pk]), {"modalidad": "digital"}).text
    assert "Todavía no ha terminado ninguna partida digital." in text
    assert "<dt>Partidas</dt>" not in text
    assert [label for _, label, _ in mode_links(text)] == ["Todas", "Presencial", "Digital"]


def test_the_ranking_shows_the_mode_asked(viewer, both_modes):
    url = reverse("ranking")
    text = viewer.get(url).text
    ranked = text.split("Con menos de")[0]
    assert "<bdi>Ana</bdi></a></th><td>241,0</td><td>5</td><td>3</td>" in ranked
    assert mode_links(text)[0] == (url, "Todas", True)
    text = viewer.get(url, {"modalidad": "digital"}).text
    assert '<p class="hint">Solo partidas digitales.</p>' in text
    assert "Nadie tiene aún 5 partidas finalizadas." in text
    unranked = text.split("Con menos de 5 partidas")[1]
    assert "<bdi>Ana</bdi></a> · 2 partidas, media 238,0" in unranked
    assert '?modalidad=digital"><bdi>Ana</bdi></a>' in unranked
    assert mode_links(text)[2] == (f"{url}?modalidad=digital", "Digital", True)
    text = viewer.get(url, {"modalidad": "presencial"}).text
    assert "<bdi>Ana</bdi></a> · 3 partidas, media 243,0" in text
    assert "<bdi>Ben</bdi></a> · 3 partidas, media 239,7" in text


@pytest.mark.parametrize("modalidad", ["", "presencial", "digital", "junk"])
@pytest.mark.parametrize("n", [10, 100])
def test_filtered_pages_cost_the_same_at_any_number_of_games(
    viewer, ana_client, ana, ben, django_assert_num_queries, modalidad, n
):
    carla = UserFactory(display_name="Carla")
    finished(PRESENCIAL, [ana, ben, carla], *[(10, 20, 30)] * n)
    finished(DIGITAL, [ana, ben, carla], *[(30, 20, 10)] * n)
    params = {"modalidad": modalidad}
    # The session, its user, the player; the summary, head-to-head and its opponents,
    # the totals over time, the histogram and the personal bests (scorecards.records).
    with django_assert_num_queries(9):
        assert viewer.get(reverse("player", args=[ana.pk]), params).status_code == 200
    # The session, its user, the finalized games' count, the players' numbers, the
    # players who play; the numbers are kept until another game is finalized.
    with django_assert_num_queries(5):
        assert viewer.get(reverse("ranking"), params).status_code == 200
    with django_assert_num_queries(4):
        assert viewer.get(reverse("ranking"), params).status_code == 200
    # session, user, count, page of cards, their seats + players, the player filter's
    # options, in-progress cards
    with django_assert_num_queries(7):
        assert ana_client.get(reverse("history"), params).status_code == 200
    # session, user, my cards, their seats + players
    with django_assert_num_queries(4):
        assert ana_client.get(reverse("history_csv"), params).status_code == 200
