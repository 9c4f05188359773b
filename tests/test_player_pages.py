import pytest
from django.urls import reverse

from scorecards import services
from tests.factories import UserFactory, fill, finalized_games, make_scorecard

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client):
    client.force_login(UserFactory(display_name="Mirón"))
    return client


def test_any_player_sees_another_players_statistics(viewer, ana, ben):
    card = make_scorecard(players=[ana, ben])
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk)
    response = viewer.get(reverse("player", args=[ana.pk]))
    assert response.status_code == 200
    text = response.text
    assert "<dt>Partidas</dt><dd>1</dd>" in text
    assert "<dt>Victorias</dt><dd>1</dd>" in text
    assert "Un primer puesto compartido cuenta como victoria" in text
    assert "<dt>Media</dt><dd>245,0</dd>" in text
    assert "<dt>Yahtzees</dt><dd>1</dd>" in text
    assert "<dt>Bonus superior</dt><dd>100 %</dd>" in text
    assert 'class="chart" viewBox=' in text
    assert 'role="img"' in text
    assert "Ver como tabla" in text
    assert ">Ben</a></th><td>1</td><td>0</td><td>0</td><td>1</td>" in text


def test_a_player_without_games_has_a_plain_page(viewer, ana):
    response = viewer.get(reverse("player", args=[ana.pk]))
    assert response.status_code == 200
    assert "Todavía no ha terminado ninguna partida" in response.text


def test_an_unknown_player_is_404(viewer):
    assert viewer.get(reverse("player", args=[999999])).status_code == 404
    assert viewer.get("/jugadores/99999999999999999999999/").status_code == 404


def test_player_pages_and_ranking_need_log_in(client, ana):
    for url in (reverse("player", args=[ana.pk]), reverse("ranking")):
        response = client.get(url)
        assert response.status_code == 302
        assert response.url.startswith(reverse("login"))


def test_the_ranking_states_its_measure_and_orders_by_average(viewer, ana, ben):
    carla = UserFactory(display_name="Carla")
    finalized_games([ana, ben], 5)
    finalized_games([carla, ana], 2)
    response = viewer.get(reverse("ranking"))
    text = response.text
    assert "ordenados por su media de puntos, con al menos 5 partidas" in text
    assert "Con menos de 5 partidas" in text
    ranked = text.split("Con menos de")[0]
    assert ">Ana</a>" in ranked
    assert ">Ben</a>" in ranked
    assert ">Carla</a>" not in ranked


def test_inactive_players_are_not_ranked(viewer, ana, ben):
    finalized_games([ana, ben], 5)
    ben.is_active = False
    ben.save()
    text = viewer.get(reverse("ranking")).text
    assert ">Ana</a>" in text
    assert ">Ben</a>" not in text


@pytest.mark.parametrize("n", [10, 500])
def test_statistics_pages_cost_the_same_at_10_and_500_games(
    viewer, ana, ben, django_assert_num_queries, n
):
    finalized_games([ana, ben, UserFactory()], n)
    # session, user, the player, stats version; not yet cached: summary,
    # head-to-head (+ opponents), totals, histogram
    with django_assert_num_queries(9):
        assert viewer.get(reverse("player", args=[ana.pk])).status_code == 200
    with django_assert_num_queries(4):  # cached: session, user, the player, version
        assert viewer.get(reverse("player", args=[ana.pk])).status_code == 200
    # session, user, version, the ranking
    with django_assert_num_queries(4):
        assert viewer.get(reverse("ranking")).status_code == 200
    with django_assert_num_queries(3):
        assert viewer.get(reverse("ranking")).status_code == 200


def test_cached_pages_change_when_a_game_is_finalized_or_a_player_renamed(viewer, ana, ben):
    finalized_games([ana, ben], 5)
    assert "<dt>Partidas</dt><dd>5</dd>" in viewer.get(reverse("player", args=[ana.pk])).text
    card = make_scorecard(players=[ana, ben])
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk)
    assert "<dt>Partidas</dt><dd>6</dd>" in viewer.get(reverse("player", args=[ana.pk])).text
    assert ">Ana</a>" in viewer.get(reverse("ranking")).text
    ana_client = type(viewer)()
    ana_client.force_login(ana)
    ana_client.post(reverse("profile"), {"display_name": "Ana María"})
    assert ">Ana María</a>" in viewer.get(reverse("ranking")).text


def test_cached_pages_follow_the_language(viewer, ana, ben):
    finalized_games([ana, ben], 5)
    assert "Victorias" in viewer.get(reverse("player", args=[ana.pk])).text
    viewer.post("/idioma/", {"language": "en", "next": "/"})
    assert "Wins" in viewer.get(reverse("player", args=[ana.pk])).text
