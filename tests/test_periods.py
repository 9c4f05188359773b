"""«Clasificación», a player's statistics, the head-to-head and «Historial» with its CSV by
period: «Siempre» (the default), «Este mes», «Este año», or between two dates, by the day a
game was finalized on the club's clock (Europe/Madrid), combined with the mode filter."""

import csv
import io
import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from scorecards import rules, stats
from scorecards.forms import PeriodForm
from scorecards.models import Scorecard, Seat
from scorecards.stats import Period
from tests.factories import UserFactory, full_card

pytestmark = pytest.mark.django_db

MADRID = ZoneInfo("Europe/Madrid")
PRESENCIAL, DIGITAL = Scorecard.PRESENCIAL, Scorecard.DIGITAL
# full_card() totals 245 with 22 in Chance.
BASE = 245 - 22
# «Today» in these tests: mid-March 2026, in the past, so the test client's session holds.
TODAY = datetime(2026, 3, 15, 12, 0, tzinfo=MADRID)


def local(*args) -> datetime:
    return datetime(*args, tzinfo=MADRID)


def game(moment, players, chances, *, mode=PRESENCIAL) -> Scorecard:
    """A game among players finalized at moment, each player's Chance as given (so a total
    of BASE + it); written in bulk, its finalized_at last (a finalized card never changes)."""
    card = Scorecard.objects.create(organizer=players[0], mode=mode)
    totals = [BASE + c for c in chances]
    Seat.objects.bulk_create(
        Seat(scorecard=card, player=p, order=i, total=t, place=place, **full_card(chance=c))
        for i, (p, c, t, place) in enumerate(
            zip(players, chances, totals, rules.positions(totals), strict=True)
        )
    )
    Scorecard.objects.filter(pk=card.pk).update(finalized_at=moment)
    card.refresh_from_db()
    return card


@pytest.fixture
def today(monkeypatch):
    """The clock stopped at TODAY: «Este mes» is March 2026, «Este año» 2026."""
    monkeypatch.setattr(timezone, "now", lambda: TODAY.astimezone(UTC))
    return TODAY.date()


@pytest.fixture
def carla(db):
    return UserFactory(username="carla", display_name="Carla")


@pytest.fixture
def season(ana, ben, carla):
    """Ana's games either side of the year's and the month's first midnight in Madrid;
    around each, the UTC date is the day before the local one.

                                          Ana   Ben   Carla   mode
    last_year  31/12/2025 23:30 (22:30 UTC)  253   233   243     presencial
    new_year    1/1/2026  00:10 (23:10 UTC)  233   243           presencial
    february   28/2/2026  23:30 (22:30 UTC)  243   243           digital
    march       1/3/2026  00:10 (23:10 UTC)  228   238           presencial
    """
    return {
        "last_year": game(local(2025, 12, 31, 23, 30), [ana, ben, carla], (30, 10, 20)),
        "new_year": game(local(2026, 1, 1, 0, 10), [ana, ben], (10, 20)),
        "february": game(local(2026, 2, 28, 23, 30), [ana, ben], (20, 20), mode=DIGITAL),
        "march": game(local(2026, 3, 1, 0, 10), [ana, ben], (5, 15)),
    }


@pytest.fixture
def viewer(db):
    """Another player looking at the statistics; ana_client is the test's client."""
    viewer = Client()
    viewer.force_login(UserFactory(display_name="Mirón"))
    return viewer


def games_of(text) -> int:
    return int(re.search(r"<dt>Partidas</dt><dd>(\d+)</dd>", text)[1])


def links(text, nav) -> list[tuple[str, str, bool]]:
    """A filter's links: (href, label, whether it is the current one)."""
    nav = re.search(rf'<nav class="filter-actions {nav}".*?</nav>', text, flags=re.S)[0]
    return [
        (href, label, current == ' aria-current="page"')
        for href, current, label in re.findall(r'href="([^"]*)"([^>]*)>([^<]*)</a>', nav)
    ]


def csv_cards(response) -> list[int]:
    body = response.content.decode("utf-8").lstrip("\ufeff")
    return [int(row[6]) for row in list(csv.reader(io.StringIO(body), delimiter=";"))[1:]]


# The one place a period is read: PeriodForm


FEB_1 = date(2026, 2, 1)


@pytest.mark.parametrize(
    ("params", "period"),
    [
        ({}, None),
        ({"periodo": ""}, None),
        ({"periodo": "mes"}, Period(first=date(2026, 3, 1))),
        ({"periodo": "anio"}, Period(first=date(2026, 1, 1))),
        ({"desde": "2026-02-01", "hasta": "2026-02-28"}, Period(FEB_1, date(2026, 2, 28))),
        ({"desde": "2026-02-01", "hasta": "2026-02-01"}, Period(FEB_1, FEB_1)),
        ({"desde": "2026-02-01"}, Period(first=date(2026, 2, 1))),
        ({"hasta": "2026-02-01"}, Period(last=date(2026, 2, 1))),
        # As a Spanish speaker types it where the browser has no date picker.
        ({"desde": "1/2/2026"}, Period(first=date(2026, 2, 1))),
    ],
)
def test_a_period_is_read_from_the_address(today, params, period):
    form = PeriodForm(params)
    assert form.period == period
    assert form.problems == []


def test_the_month_and_year_start_on_the_clubs_day_not_utcs(monkeypatch):
    # 00:30 on 1 March in Madrid is still 28 February in UTC.
    monkeypatch.setattr(timezone, "now", lambda: local(2026, 3, 1, 0, 30).astimezone(UTC))
    assert PeriodForm({"periodo": "mes"}).period == Period(first=date(2026, 3, 1))
    monkeypatch.setattr(timezone, "now", lambda: local(2026, 1, 1, 0, 30).astimezone(UTC))
    assert PeriodForm({"periodo": "anio"}).period == Period(first=date(2026, 1, 1))
    assert PeriodForm({"periodo": "mes"}).period == Period(first=date(2026, 1, 1))


BOTH = "Elige un periodo o unas fechas, no las dos cosas."
BAD = [
    ({"periodo": "semana"}, "Elige siempre, este mes, este año o unas fechas."),
    ({"periodo": "Mes"}, "Elige siempre, este mes, este año o unas fechas."),
    ({"desde": "2026-13-45"}, "Revisa las fechas."),
    ({"hasta": "ayer"}, "Revisa las fechas."),
    ({"desde": "2026-03-02", "hasta": "2026-03-01"}, "«Desde» no puede ser posterior a «Hasta»."),
    ({"periodo": "mes", "desde": "2026-03-01"}, BOTH),
]
HOSTILE = ["x" * 5000, "\x00", "2026-03-01\x00", "<b>", "' OR 1=1", "0000-01-01", "99999-01-01"]


@pytest.mark.parametrize(("params", "problem"), BAD)
def test_bad_input_means_always_and_says_why(today, params, problem):
    form = PeriodForm(params)
    assert form.period is None
    assert form.params == {}
    assert form.problems == [problem]


# The statistics


def test_each_statistic_counts_only_the_games_of_the_period(season, ana, ben, carla):
    year, march = Period(first=date(2026, 1, 1)), Period(first=date(2026, 3, 1))
    assert stats.player_summary(ana)["games"] == 4
    assert stats.player_summary(ana, period=year)["games"] == 3
    summary = stats.player_summary(ana, period=march)
    assert (summary["games"], summary["wins"], summary["best"]) == (1, 0, 228)
    assert [t for _, t in stats.totals_over_time(ana, period=year)] == [233, 243, 228]
    assert stats.histogram(ana, period=march) == [{"low": 225, "high": 249, "count": 1}]
    # The last day of February in Madrid, not in UTC: 1 March's 00:10 is not in it.
    february = Period(date(2026, 2, 28), date(2026, 2, 28))
    assert [t for _, t in stats.totals_over_time(ana, period=february)] == [243]
    last_year = Period(last=date(2025, 12, 31))
    assert [t for _, t in stats.totals_over_time(ana, period=last_year)] == [253]

    def record(**filters):
        return [
            (r["opponent"], r["games"], r["wins"], r["losses"], r["ties"])
            for r in stats.head_to_head(ana, **filters)
        ]

    assert record() == [(ben, 4, 1, 2, 1), (carla, 1, 1, 0, 0)]
    assert record(period=year) == [(ben, 3, 0, 2, 1)]
    assert record(period=year, mode=DIGITAL) == [(ben, 1, 0, 0, 1)]
    assert record(period=march, mode=DIGITAL) == []
    assert stats.ranking(min_games=3, period=year)[0][0]["player"] == ben
    assert stats.ranking(min_games=1, period=last_year)[0][0]["player"] == ana
    assert stats.ranking(min_games=1, period=year, mode=PRESENCIAL)[0][1]["games"] == 2


@pytest.mark.parametrize(
    "ends",
    [("2026-01-01", None), (date(2026, 1, 2), date(2026, 1, 1)), (datetime(2026, 1, 1), None)],
)
def test_a_period_refuses_ends_that_are_not_days_in_order(ends):
    with pytest.raises(ValueError, match="period"):
        Period(*ends)


# «Clasificación»


def test_the_ranking_shows_the_period_asked(today, viewer, season):
    url = reverse("ranking")

    def unranked(params):
        text = viewer.get(url, params).text
        return re.findall(r"<bdi>(\w+)</bdi></a> · (\d+) partidas?", text)

    # By the period's average, then best total (Ana's 253 before Ben's 243), then name.
    assert unranked({}) == [("Carla", "1"), ("Ana", "4"), ("Ben", "4")]
    assert unranked({"periodo": "anio"}) == [("Ben", "3"), ("Ana", "3")]
    assert unranked({"periodo": "mes"}) == [("Ben", "1"), ("Ana", "1")]
    assert unranked({"desde": "2026-02-28", "hasta": "2026-02-28"}) == [("Ana", "1"), ("Ben", "1")]
    assert unranked({"hasta": "2025-12-31"}) == [("Ana", "1"), ("Carla", "1"), ("Ben", "1")]
    assert unranked({"desde": "2026-03-02"}) == []
    text = viewer.get(url, {"desde": "2026-03-02"}).text
    assert "Nadie tiene 5 partidas finalizadas en ese periodo." in text
    assert '<p class="hint">Solo partidas finalizadas desde el 2/3/2026.</p>' in text


def test_the_ranking_combines_period_and_mode(today, viewer, season):
    text = viewer.get(reverse("ranking"), {"periodo": "anio", "modalidad": PRESENCIAL}).text
    unranked = re.findall(r"<bdi>(\w+)</bdi></a> · (\d+) partidas", text)
    assert unranked == [("Ben", "2"), ("Ana", "2")]
    assert '<p class="hint">Solo partidas presenciales.</p>' in text
    assert '<p class="hint">Solo partidas finalizadas desde el 1/1/2026.</p>' in text


def test_each_filters_links_keep_the_other_and_the_players_keep_both(today, viewer, season):
    url = reverse("ranking")
    text = viewer.get(url).text
    assert links(text, "period-filter") == [
        (url, "Siempre", True),
        (f"{url}?periodo=mes", "Este mes", False),
        (f"{url}?periodo=anio", "Este año", False),
    ]
    text = viewer.get(url, {"periodo": "mes", "modalidad": PRESENCIAL}).text
    assert links(text, "period-filter") == [
        (f"{url}?modalidad=presencial", "Siempre", False),
        (f"{url}?modalidad=presencial&amp;periodo=mes", "Este mes", True),
        (f"{url}?modalidad=presencial&amp;periodo=anio", "Este año", False),
    ]
    assert links(text, "mode-filter") == [
        (f"{url}?periodo=mes", "Todas", False),
        (f"{url}?modalidad=presencial&amp;periodo=mes", "Presencial", True),
        (f"{url}?modalidad=digital&amp;periodo=mes", "Digital", False),
    ]
    ana_page = reverse("player", args=[season["march"].organizer.pk])
    assert f'href="{ana_page}?modalidad=presencial&amp;periodo=mes"><bdi>Ana</bdi>' in text
    # Between dates: no named period is current; the dates stay in their fields, and the
    # mode rides along with them.
    text = viewer.get(url, {"desde": "2026-02-01", "hasta": "2026-02-28", "modalidad": "x"}).text
    assert [current for *_, current in links(text, "period-filter")] == [False, False, False]
    assert links(text, "mode-filter")[1] == (
        f"{url}?modalidad=presencial&amp;desde=2026-02-01&amp;hasta=2026-02-28",
        "Presencial",
        False,
    )
    assert 'name="desde" value="2026-02-01"' in text
    assert 'name="hasta" value="2026-02-28"' in text
    assert '<input type="hidden" name="modalidad"' not in text
    text = viewer.get(url, {"desde": "2026-02-01", "modalidad": DIGITAL}).text
    assert '<input type="hidden" name="modalidad" value="digital">' in text
    assert f'href="{ana_page}?modalidad=digital&amp;desde=2026-02-01"><bdi>Ana</bdi>' in text


@pytest.mark.parametrize(("params", "problem"), BAD)
def test_bad_periods_are_explained_on_the_ranking_and_show_always(
    today, viewer, season, params, problem
):
    response = viewer.get(reverse("ranking"), params)
    assert response.status_code == 200
    assert f"<li>{problem} Se muestran todas las fechas.</li>" in response.text
    assert "<bdi>Carla</bdi></a> · 1 partida" in response.text
    assert links(response.text, "period-filter")[0][2]  # «Siempre» is the one shown


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("name", ["periodo", "desde", "hasta"])
def test_hostile_periods_never_break_a_page(today, viewer, ana_client, ana, season, name, value):
    for client, url in (
        (viewer, reverse("ranking")),
        (viewer, reverse("player", args=[ana.pk])),
        (ana_client, reverse("history")),
        (ana_client, reverse("history_csv")),
    ):
        response = client.get(url, {name: value})
        assert response.status_code == 200, url
    text = viewer.get(reverse("player", args=[ana.pk]), {name: value}).text
    assert "Se muestran todas las fechas.</li>" in text
    assert games_of(text) == 4
    assert "<b>" not in text.split("<main")[1]


# A player's page and the head-to-head


def test_the_player_page_and_its_head_to_head_show_the_period_asked(
    today, viewer, season, ana, ben, carla
):
    url = reverse("player", args=[ana.pk])

    def rivals(text):
        return re.findall(
            r'<a href="[^"]*"><bdi>(\w+)</bdi></a></th><td>(\d+)</td><td>(\d+)</td>', text
        )

    text = viewer.get(url).text
    assert games_of(text) == 4
    assert rivals(text) == [("Ben", "4", "1"), ("Carla", "1", "1")]
    text = viewer.get(url, {"periodo": "anio"}).text
    assert games_of(text) == 3
    assert "<dt>Mejor</dt><dd>243</dd>" in text
    assert rivals(text) == [("Ben", "3", "0")]
    assert '<desc id="totals-desc">3 partidas' in text
    text = viewer.get(url, {"periodo": "mes"}).text
    assert games_of(text) == 1
    assert "<dt>Media</dt><dd>228,0</dd>" in text
    # The rival's page opens on the same period.
    rival = reverse("player", args=[ben.pk])
    assert f'<a href="{rival}?periodo=mes"><bdi>Ben</bdi></a></th><td>1</td>' in text
    text = viewer.get(url, {"desde": "2025-12-31", "hasta": "2025-12-31"}).text
    assert games_of(text) == 1
    assert rivals(text) == [("Ben", "1", "1"), ("Carla", "1", "1")]
    assert "Solo partidas finalizadas del 31/12/2025 al 31/12/2025." in text
    text = viewer.get(url, {"periodo": "anio", "modalidad": DIGITAL}).text
    assert games_of(text) == 1
    assert rivals(text) == [("Ben", "1", "0")]


def test_a_player_without_games_in_the_period_says_so(today, viewer, season, carla):
    text = viewer.get(reverse("player", args=[carla.pk]), {"periodo": "anio"}).text
    assert "No ha terminado ninguna partida en ese periodo." in text
    assert "<dt>Partidas</dt>" not in text


@pytest.mark.parametrize(("params", "problem"), BAD)
def test_bad_periods_are_explained_on_the_player_page_and_show_always(
    today, viewer, season, ana, params, problem
):
    response = viewer.get(reverse("player", args=[ana.pk]), params)
    assert response.status_code == 200
    assert f"<li>{problem} Se muestran todas las fechas.</li>" in response.text
    assert games_of(response.text) == 4
    # A mode asked for with it still counts.
    text = viewer.get(reverse("player", args=[ana.pk]), params | {"modalidad": DIGITAL}).text
    assert games_of(text) == 1


def test_a_wrong_date_is_also_said_at_its_field(today, viewer, ana, season):
    text = viewer.get(reverse("player", args=[ana.pk]), {"hasta": "2026-02-30"}).text
    assert '<div class="field field-invalid">\n  <label for="id_hasta">Hasta</label>' in text
    assert '<ul class="errorlist" id="id_hasta_error"><li>Escribe una fecha válida.</li>' in text


# «Historial» and its CSV


def test_history_and_its_csv_by_period(today, ana_client, season):
    march, february = season["march"].pk, season["february"].pk
    new_year, last_year = season["new_year"].pk, season["last_year"].pk
    cases = [
        ({}, [march, february, new_year, last_year]),
        ({"periodo": "mes"}, [march]),
        ({"periodo": "anio"}, [march, february, new_year]),
        ({"desde": "2026-02-28", "hasta": "2026-02-28"}, [february]),
        ({"desde": "2026-01-01", "hasta": "2026-03-01"}, [march, february, new_year]),
        ({"periodo": "anio", "modalidad": DIGITAL}, [february]),
    ]
    for params, expected in cases:
        text = ana_client.get(reverse("history"), params).text
        listed = [int(pk) for pk in re.findall(r'class="game-link" href="/tarjetas/(\d+)/"', text)]
        assert listed == expected, params
        assert csv_cards(ana_client.get(reverse("history_csv"), params)) == expected, params


def test_the_history_offers_the_period_and_its_csv_link_carries_it(today, ana_client, season):
    text = ana_client.get(reverse("history"), {"periodo": "mes", "modalidad": PRESENCIAL}).text
    select = re.search(r'<select name="periodo".*?</select>', text, flags=re.S)[0]
    assert '<option value="mes" selected>Este mes</option>' in select
    assert '<label for="id_periodo">Periodo</label>' in text
    csv_url = reverse("history_csv")
    assert f'href="{csv_url}?periodo=mes&amp;modalidad=presencial"' in text


@pytest.mark.parametrize(("params", "problem"), BAD)
def test_bad_periods_in_the_history_and_csv_are_ignored(today, ana_client, season, params, problem):
    response = ana_client.get(reverse("history"), params)
    assert response.status_code == 200
    # Said at the field, or above the fields for the choice and the pair.
    assert problem.replace("Revisa las fechas.", "Escribe una fecha válida.") in response.text
    assert len(csv_cards(ana_client.get(reverse("history_csv"), params))) == 4


# Constant costs


@pytest.mark.parametrize(
    "params",
    [
        {"periodo": "mes"},
        {"periodo": "anio", "modalidad": DIGITAL},
        {"desde": "2026-01-01", "hasta": "2026-03-31", "modalidad": PRESENCIAL},
        {"hasta": "2026-02-28"},
        {"periodo": "junk", "desde": "2026-13-01"},
    ],
)
@pytest.mark.parametrize("n", [10, 100])
def test_pages_by_period_cost_the_same_at_any_number_of_games(
    today, viewer, ana_client, ana, ben, carla, django_assert_num_queries, params, n
):
    # A game every third day back from yesterday: every period asked has some of them.
    for day in range(n):
        moment = local(2026, 3, 14) - timedelta(days=3 * day)
        game(moment, [ana, ben, carla], (10, 20, 30), mode=(PRESENCIAL, DIGITAL)[day % 2])
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
