from types import SimpleNamespace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from scorecards import records, rules
from scorecards.models import Scorecard, Seat
from tests.factories import full_card
from tests.test_stats import column, play

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(ana, ben):
    """Five finalized games, Ana seated first in each.

    The factory card totals 245 with exactly 63 above (bonus) and one Yahtzee; with two
    Yahtzee bonuses and 24 in Seises, 451 with 69 above and three Yahtzees.
                 Ana                  Ben
    game 1       245 (1st)            235 (2nd)          margin 10
    game 2       235 (2nd)            245 (1st)          margin 10
    game 3       451 (1st)            207, 60 above      margin 244
    game 4       245 (1st =)          245 (1st =)
    game 5       245 (2nd)            451 (1st)          margin 206
    """
    big = {"bonuses": 2, "sixes": 24}
    games = [
        play(column(ana), column(ben, chance=12)),
        play(column(ana, chance=12), column(ben)),
        play(column(ana, **big), column(ben, ones=0)),
        play(column(ana), column(ben)),
        play(column(ana), column(ben, **big)),
    ]
    return SimpleNamespace(games=[game.pk for game in games])


def named(record):
    return [(h.player_id, h.game_id) for h in record.holders]


def previously(record):
    return record.previous_value, [(h.player_id, h.game_id) for h in record.previous]


def test_the_history_has_the_totals_it_says(history, ana):
    totals = [
        list(Seat.objects.filter(scorecard=g).order_by("order").values_list("total", "place"))
        for g in history.games
    ]
    assert totals == [
        [(245, 1), (235, 2)],
        [(235, 2), (245, 1)],
        [(451, 1), (207, 2)],
        [(245, 1), (245, 1)],
        [(245, 2), (451, 1)],
    ]


def test_a_record_tied_names_both_holders_and_keeps_the_ones_before(history, ana, ben):
    g1, g2, g3, _g4, g5 = history.games
    found = records.compute().records
    best = found[records.BEST_GAME]
    assert (best.value, named(best)) == (451, [(ana.pk, g3), (ben.pk, g5)])
    assert previously(best) == (245, [(ana.pk, g1), (ben.pk, g2)])
    yahtzees = found[records.MOST_YAHTZEES]
    assert (yahtzees.value, named(yahtzees)) == (3, [(ana.pk, g3), (ben.pk, g5)])
    # Everyone had one Yahtzee in games 1 and 2.
    assert previously(yahtzees) == (
        1,
        [(ana.pk, g1), (ben.pk, g1), (ana.pk, g2), (ben.pk, g2)],
    )
    upper = found[records.BEST_UPPER]
    assert (upper.value, named(upper)) == (69, [(ana.pk, g3), (ben.pk, g5)])
    assert previously(upper)[0] == 63


def test_runs_count_a_players_games_in_a_row(history, ana, ben):
    g1, g2, _g3, g4, g5 = history.games
    found = records.compute().records
    # Ana had the bonus in all five; Ben lost it in game 3: his best run is 2.
    bonuses = found[records.UPPER_BONUS_RUN]
    assert (bonuses.value, named(bonuses)) == (5, [(ana.pk, g5)])
    assert previously(bonuses) == (2, [(ben.pk, g2)])
    # Ana won games 3 and 4 (a shared first place is a win), Ben 4 and 5.
    wins = found[records.WIN_RUN]
    assert (wins.value, named(wins)) == (2, [(ana.pk, g4), (ben.pk, g5)])
    assert previously(wins) == (1, [(ana.pk, g1), (ben.pk, g2)])


def test_the_biggest_margin_is_the_winners_and_a_tie_wins_by_nothing(history, ana, ben):
    g1, g2, g3, _g4, _g5 = history.games
    margin = records.compute().records[records.WIN_MARGIN]
    assert (margin.value, named(margin)) == (244, [(ana.pk, g3)])
    assert previously(margin) == (10, [(ana.pk, g1), (ben.pk, g2)])


def test_each_game_knows_the_records_it_beat_and_the_best_games_it_was(history, ana, ben):
    _g1, g2, g3, g4, g5 = history.games
    club = records.compute()
    assert club.set_by == {
        g2: [(records.UPPER_BONUS_RUN, 2, ana.pk)],
        g3: [
            (records.BEST_GAME, 451, ana.pk),
            (records.MOST_YAHTZEES, 3, ana.pk),
            (records.BEST_UPPER, 69, ana.pk),
            (records.UPPER_BONUS_RUN, 3, ana.pk),
            (records.WIN_MARGIN, 244, ana.pk),
        ],
        g4: [(records.WIN_RUN, 2, ana.pk)],
    }
    # Game 1 was everyone's first; Ben's 245 in game 4 only equals his best.
    assert club.best_of == {g2: [ben.pk], g3: [ana.pk], g5: [ben.pk]}


def test_records_filter_by_mode_and_period(history):
    assert records.compute(mode=Scorecard.DIGITAL).records[records.BEST_GAME].value is None
    assert records.compute(mode=Scorecard.PRESENCIAL).records[records.BEST_GAME].value == 451


def test_the_records_page_names_holders_dates_and_games(history, ana_client, ana, ben):
    _g1, _g2, g3, _g4, g5 = history.games
    page = ana_client.get(reverse("records")).content.decode()
    best = page[page.index('id="record-best_game"') :]
    best = best[: best.index("</li>\n")]
    assert "451 puntos" in best
    assert "Ana" in best
    assert "Ben" in best
    assert reverse("scorecard", args=[g3]) in best
    assert reverse("scorecard", args=[g5]) in best
    assert "Antes: 245 puntos" in page
    assert (
        timezone.localtime(Scorecard.objects.get(pk=g3).finalized_at).strftime("%-d/%-m/%Y") in best
    )


def test_the_records_page_links_only_the_games_the_viewer_sees(history, client, carla):
    client.force_login(carla)
    page = client.get(reverse("records")).content.decode()
    assert "451 puntos" in page
    for game in history.games:
        assert f'href="{reverse("scorecard", args=[game])}"' not in page


def test_the_records_page_with_no_games_says_so(ana_client):
    page = ana_client.get(reverse("records")).content.decode()
    assert "Todavía no ha terminado ninguna partida." in page


def test_ranking_and_player_pages_link_to_the_records(history, ana_client, ben):
    for url in (reverse("ranking"), reverse("player", args=[ben.pk])):
        assert reverse("records") in ana_client.get(url).content.decode()


def test_a_players_page_has_their_personal_bests(history, ana_client, ana):
    g3 = history.games[2]
    bests = records.personal(ana)
    assert (bests["best"]["total"], bests["best"]["scorecard_id"]) == (451, g3)
    assert bests["recent"] == 5
    assert bests["recent_average"] == (245 + 235 + 451 + 245 + 245) / 5
    assert bests["win_run"] == 2
    page = ana_client.get(reverse("player", args=[ana.pk])).content.decode()
    assert "<dt>Media de las últimas 5</dt>" in page
    assert "<dd>284,2</dd></div>\n  <div><dt>Mejor racha" in page
    assert "Mejor racha de victorias" in page
    assert f'href="{reverse("scorecard", args=[g3])}">451<' in page


def test_the_average_of_the_last_ten_counts_only_the_last_ten(ana, ben):
    for chance in (5, 5, 5, 22, 22, 22, 22, 22, 22, 22, 22, 22):
        play(column(ana, chance=chance), column(ben))
    assert records.personal(ana)["recent"] == 10
    assert records.personal(ana)["recent_average"] == (1 * 228 + 9 * 245) / 10


# The record message


def test_a_game_that_sets_a_record_says_so_on_its_page(history, ana_client):
    _g1, _g2, g3, _g4, _g5 = history.games
    page = ana_client.get(reverse("scorecard", args=[g3])).content.decode()
    assert "¡Récord del club: 451, el mejor de la historia!" in page
    assert "Mejor partida de <bdi>Ana</bdi>" in page
    assert "Victoria por más diferencia: 244 puntos, de <bdi>Ana</bdi>" in page


def test_a_game_that_sets_none_says_nothing(history, ana_client):
    g1, _g2, _g3, _g4, g5 = history.games
    for game in (g1, g5):
        page = ana_client.get(reverse("scorecard", args=[game])).content.decode()
        assert "Récord del club" not in page
    # Game 5 equals the club's best: only Ben's own best.
    assert "Mejor partida de <bdi>Ben</bdi>" in page


def test_the_finalize_screen_says_which_records_the_game_would_set(history, ana, ben, client):
    client.force_login(ana)
    beaten = play(column(ana, bonuses=3, sixes=24, fives=25), column(ben), finalize=False)
    page = client.get(reverse("finalize", args=[beaten.pk])).content.decode()
    assert "¡Récord del club: 561, el mejor de la historia!" in page
    assert "Mejor partida de <bdi>Ana</bdi>" in page
    ordinary = play(column(ana), column(ben, chance=12), finalize=False)
    page = client.get(reverse("finalize", args=[ordinary.pk])).content.decode()
    assert "Récord" not in page
    assert "Mejor partida" not in page


def _seed(n, players):
    """n finalized two-player games, in bulk (seats first: a finalized card takes none)."""
    cards = Scorecard.objects.bulk_create(Scorecard(organizer=players[0]) for _ in range(n))
    seats = []
    for i, card in enumerate(cards):
        for order, player in enumerate(players):
            scores = full_card(chance=5 + (i + order) % 26)
            total = 245 - 22 + scores["chance"]
            seats.append(Seat(scorecard=card, player=player, order=order, total=total, **scores))
    Seat.objects.bulk_create(seats)
    for card in cards:
        mine = [s for s in seats if s.scorecard_id == card.pk]
        for seat, place in zip(mine, rules.positions([s.total for s in mine]), strict=True):
            Seat.objects.filter(pk=seat.pk).update(place=place)
    Scorecard.objects.filter(pk__in=[c.pk for c in cards]).update(finalized_at=timezone.now())


def _queries(client, url):
    from django.core.cache import cache

    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured)


def test_the_queries_do_not_grow_with_the_games(ana_client, ana, ben, carla):
    _seed(10, [ana, ben])
    pages = [reverse("records"), reverse("player", args=[ana.pk])]
    few = [_queries(ana_client, url) for url in pages]
    _seed(90, [ana, ben])
    assert Scorecard.objects.finalized().count() == 100
    assert [_queries(ana_client, url) for url in pages] == few


def test_the_records_read_in_english(history, ana_client):
    ana_client.cookies["django_language"] = "en"
    page = ana_client.get(reverse("records")).content.decode()
    assert "<h2>Best game</h2>" in page
    assert "451 points" in page
    assert "Before: 245 points" in page
    game = ana_client.get(reverse("scorecard", args=[history.games[2]])).content.decode()
    assert "Club record: 451, the best ever!" in game
    assert "<bdi>Ana</bdi>'s best game" in game.replace("&#x27;", "'")


def test_bad_filters_show_every_game_and_say_so(history, ana_client):
    page = ana_client.get(reverse("records"), {"modalidad": "x", "desde": "nunca"})
    assert page.status_code == 200
    assert "451 puntos" in page.content.decode()
    assert 'role="alert"' in page.content.decode()
