import re

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from scorecards import records, services, stats
from tests.factories import UserFactory, fill, finalized_games, make_scorecard

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(client):
    client.force_login(UserFactory(display_name="Mirón"))
    return client


def finalize(card):
    return services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)


def svgs(text):
    return re.findall(r"<svg\b.*?</svg>", text, flags=re.S)


def test_any_player_sees_another_players_statistics(viewer, ana, ben):
    card = make_scorecard(players=[ana, ben])
    fill(card)
    finalize(card)
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
    assert "<bdi>Ben</bdi></a></th><td>1</td><td>0</td><td>0</td><td>1</td>" in text


def test_the_player_page_draws_both_charts_as_named_images(viewer, ana, ben):
    finalized_games([ana, ben], 3)
    text = viewer.get(reverse("player", args=[ana.pk])).text
    line, histogram = svgs(text)
    for svg, prefix in ((line, "totals"), (histogram, "histogram")):
        assert 'role="img"' in svg
        assert f'aria-labelledby="{prefix}-title" aria-describedby="{prefix}-desc"' in svg
        assert f'<desc id="{prefix}-desc">3 partidas' in svg
    assert '<title id="totals-title">Totales de \u2068Ana\u2069 en el tiempo</title>' in line
    assert '<title id="histogram-title">Histograma de totales de \u2068Ana\u2069</title>' in (
        histogram
    )
    assert line.count('class="chart-point"') == 3
    assert 'class="chart-bar"' in histogram


def test_the_charts_escape_names_and_use_no_inline_style_or_script(viewer, ben):
    mallory = UserFactory(display_name='<b onclick="x()">Mal & Ory</b>')
    finalized_games([mallory, ben], 2)
    for svg in svgs(viewer.get(reverse("player", args=[mallory.pk])).text):
        assert "&lt;b onclick=&quot;x()&quot;&gt;Mal &amp; Ory&lt;/b&gt;" in svg
        assert "<b" not in svg
        assert "style" not in svg.lower()
        assert "<script" not in svg.lower()
        assert "currentColor" in svg


def test_chart_coordinates_keep_a_decimal_point_in_spanish(viewer, ana, ben):
    finalized_games([ana, ben], 3)
    line, histogram = svgs(viewer.get(reverse("player", args=[ana.pk])).text)
    assert re.search(r'cx="\d+\.\d"', line)
    assert re.search(r'height="\d+\.\d"', histogram)
    assert not re.search(r'="\d+,\d', line + histogram)


def test_the_player_template_follows_the_views_context(ana, ben):
    finalized_games([ana, ben], 2)
    over_time, buckets = stats.totals_over_time(ana), stats.histogram(ana)
    context = {
        "person": ana,
        "summary": stats.player_summary(ana),
        "bests": records.personal(ana),
        "rivals": stats.head_to_head(ana),
        "over_time": over_time,
        "buckets": buckets,
        "line_chart": stats.line_chart(over_time),
        "histogram_chart": stats.histogram_chart(buckets),
    }
    line, histogram = svgs(render_to_string("scorecards/player.html", context))
    assert line.count('class="chart-point"') == 2
    title = '<title id="histogram-title">Histograma de totales de \u2068Ana\u2069</title>'
    assert title in histogram


@pytest.mark.parametrize(
    ("template", "chart"),
    [("line", stats.line_chart([])), ("histogram", stats.histogram_chart([]))],
)
def test_an_empty_chart_says_so(template, chart):
    svg = render_to_string(
        f"scorecards/charts/{template}.html",
        {"chart": chart, "title": "Nada", "id_prefix": "empty"},
    )
    assert svg.startswith(
        '<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 360 60"'
    )
    assert 'aria-labelledby="empty-title">' in svg
    assert '<title id="empty-title">Nada</title>' in svg
    assert "Sin partidas</text>" in svg
    assert "<desc" not in svg


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
    assert "<bdi>Ana</bdi></a>" in ranked
    assert "<bdi>Ben</bdi></a>" in ranked
    assert "<bdi>Carla</bdi></a>" not in ranked


def test_players_short_of_the_ranking_are_listed_best_first_with_what_they_lack(viewer):
    berto = UserFactory(display_name="Berto")
    carmen = UserFactory(display_name="Carmen")
    finalized_games([berto, carmen], 1)  # Berto 228, Carmen 239
    text = viewer.get(reverse("ranking")).text
    assert "Nadie tiene aún 5 partidas finalizadas." in text
    assert "Por su media, de mayor a menor. Entran en la clasificación al llegar a 5" in text
    listed = re.findall(r"<bdi>(\w+)</bdi></a> · ([^<]*)<span class=\"missing\">([^<]*)", text)
    assert listed == [
        ("Carmen", "1 partida, media 239,0, mejor 239 · ", "le faltan 4 para entrar"),
        ("Berto", "1 partida, media 228,0, mejor 228 · ", "le faltan 4 para entrar"),
    ]
    finalized_games([berto], 3)
    viewer.cookies["django_language"] = "en"
    text = viewer.get(reverse("ranking")).text
    assert "By average, highest first. Players enter the ranking once they have 5 games." in text
    assert '4 games, average 233.3, best 242 · <span class="missing">1 more to be ranked' in text


def test_inactive_players_are_not_ranked(viewer, ana, ben):
    finalized_games([ana, ben], 5)
    ben.is_active = False
    ben.save()
    text = viewer.get(reverse("ranking")).text
    assert "<bdi>Ana</bdi></a>" in text
    assert "<bdi>Ben</bdi></a>" not in text


@pytest.mark.parametrize("n", [10, 500])
def test_statistics_pages_cost_the_same_at_10_and_500_games(
    viewer, ana, ben, django_assert_num_queries, n
):
    finalized_games([ana, ben, UserFactory()], n)
    # The session, its user, the player; the summary, head-to-head and its opponents,
    # the totals over time, the histogram and the personal bests (scorecards.records).
    with django_assert_num_queries(9):
        assert viewer.get(reverse("player", args=[ana.pk])).status_code == 200
    # The session, its user, the finalized games' count, the players' numbers, the
    # players who play; the numbers are kept until another game is finalized.
    with django_assert_num_queries(5):
        assert viewer.get(reverse("ranking")).status_code == 200
    with django_assert_num_queries(4):
        assert viewer.get(reverse("ranking")).status_code == 200


def test_pages_change_when_a_game_is_finalized_or_a_player_renamed(viewer, ana, ben):
    finalized_games([ana, ben], 5)
    assert "<dt>Partidas</dt><dd>5</dd>" in viewer.get(reverse("player", args=[ana.pk])).text
    card = make_scorecard(players=[ana, ben])
    fill(card)
    finalize(card)
    assert "<dt>Partidas</dt><dd>6</dd>" in viewer.get(reverse("player", args=[ana.pk])).text
    assert "<bdi>Ana</bdi></a>" in viewer.get(reverse("ranking")).text
    ana_client = type(viewer)()
    ana_client.force_login(ana)
    ana_client.post(reverse("profile"), {"display_name": "Ana María"})
    assert "<bdi>Ana María</bdi></a>" in viewer.get(reverse("ranking")).text


def test_pages_follow_the_language(viewer, ana, ben):
    finalized_games([ana, ben], 5)
    assert "Victorias" in viewer.get(reverse("player", args=[ana.pk])).text
    viewer.post("/idioma/", {"language": "en", "next": "/"})
    assert "Wins" in viewer.get(reverse("player", args=[ana.pk])).text
