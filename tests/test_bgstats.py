"""«Registrar en BG Stats»: the play's JSON, as BG Stats documents it, parsed back; and
its link on a finished game, on a 360 px phone."""

import html
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from scorecards import bgstats, services
from scorecards.models import Change
from tests.browsing import log_in, screenshot
from tests.factories import UserFactory, fill
from tests.test_stats import column, play

ARTIFACTS = Path(__file__).parent / "artifacts"

# Every field the play carries, the game's and each player's.
PLAY_FIELDS = {"sourceName", "sourcePlayId", "playDate", "durationMin", "game", "players"}
GAME_FIELDS = {"name", "bggId", "highestWins", "noPoints", "sourceGameId"}
PLAYER_FIELDS = {"name", "score", "rank", "winner", "startPlayer", "sourcePlayerId"}


def parsed(url):
    """The play a createPlay link carries."""
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == bgstats.CREATE_PLAY
    (data,) = parse_qs(parts.query, strict_parsing=True)["data"]
    return json.loads(data)


@pytest.mark.django_db
def test_the_play_has_every_field_bg_stats_documents_with_ranks_shared_on_a_tie(ana, ben, carla):
    # Ana and Ben tie on 245, Carla 207; Ana sits first, so she started.
    card = play(column(ana), column(ben), column(carla, ones=0))
    first = datetime(2026, 12, 5, 19, 30, tzinfo=UTC)
    log = [SimpleNamespace(created_at=first + timedelta(minutes=m)) for m in (41.6, 0, 12)]
    data = parsed(bgstats.link(card, log))
    assert set(data) == PLAY_FIELDS
    assert data["sourceName"] == "Dados"
    assert data["sourcePlayId"] == str(card.pk)
    assert data["playDate"] == "2026-12-05 19:30:00"
    assert data["durationMin"] == 42
    assert data["game"] == {
        "name": "Yahtzee",
        "bggId": 2243,
        "highestWins": True,
        "noPoints": False,
        "sourceGameId": "dados-yahtzee",
    }
    assert all(set(player) == PLAYER_FIELDS for player in data["players"])
    assert [
        (p["name"], p["score"], p["rank"], p["winner"], p["startPlayer"]) for p in data["players"]
    ] == [
        ("Ana", 245, 1, True, True),
        ("Ben", 245, 1, True, False),
        ("Carla", 207, 3, False, False),
    ]
    ids = [p["sourcePlayerId"] for p in data["players"]]
    assert ids == [f"dados-{ana.pk}", f"dados-{ben.pk}", f"dados-{carla.pk}"]


@pytest.mark.django_db
def test_a_players_source_id_stays_when_their_name_changes(ana, ben):
    card = play(column(ana), column(ben))
    before = parsed(bgstats.link(card, []))["players"][0]
    ana.display_name = "Ana María"
    ana.save()
    card.refresh_from_db()
    after = parsed(bgstats.link(card, []))["players"][0]
    assert after["name"] == "Ana María"
    assert after["sourcePlayerId"] == before["sourcePlayerId"]


@pytest.mark.django_db
def test_a_game_without_a_log_lasts_from_its_creation_to_its_end(ana, ben):
    card = play(column(ana), column(ben))
    data = parsed(bgstats.link(card, []))
    assert data["playDate"] == card.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert data["durationMin"] == round((card.finalized_at - card.created_at).seconds / 60)


@pytest.mark.django_db
def test_the_finished_games_page_links_to_bg_stats_with_its_log(ana, ben, ana_client):
    card = play(column(ana), column(ben, chance=12), finalize=False)
    seat = card.seats.get(player=ana)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="chance", value="23", was="22", author=ana
    )
    services.scorecard_finalize(scorecard_id=card.pk, author=ana)
    written = Change.objects.get(scorecard=card).created_at
    page = ana_client.get(reverse("scorecard", args=[card.pk])).content.decode()
    (href,) = re.findall(r'href="(https://app\.bgstatsapp\.com/[^"]+)"', page)
    data = parsed(html.unescape(href))
    assert data["playDate"] == written.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert data["durationMin"] == 0
    assert [p["score"] for p in data["players"]] == [246, 235]


@pytest.mark.django_db
def test_a_game_in_play_has_no_bg_stats_link(card, org_client):
    page = org_client.get(reverse("scorecard", args=[card.pk])).content.decode()
    assert "bgstatsapp" not in page


@pytest.mark.browser
def test_a_participant_sees_registrar_en_bg_stats_on_a_phone_and_staff_do_not(browser, server):
    olga = UserFactory(username="olga", display_name="Olga")
    players = [UserFactory(username=n.lower(), display_name=n) for n in ("Ana", "Ben")]
    UserFactory(username="admin2", display_name="Admin", is_staff=True)
    card = services.scorecard_create(organizer=olga, players=players)
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=olga)
    shown = {}
    for username in ("ana", "admin2"):
        context = browser.new_context(viewport={"width": 360, "height": 740}, base_url=server)
        try:
            page = context.new_page()
            log_in(page, username)
            page.goto(f"/tarjetas/{card.pk}/")
            link = page.get_by_role("link", name="Registrar en BG Stats")
            shown[username] = link.is_visible()
            if shown[username]:
                box = link.bounding_box()
                assert box["height"] >= 44
                assert box["x"] >= 0
                assert box["x"] + box["width"] <= 360
                assert parsed(link.get_attribute("href"))["sourcePlayId"] == str(card.pk)
            screenshot(page, ARTIFACTS / f"bgstats-360-{username}.png", full_page=True)
        finally:
            context.close()
    assert shown == {"ana": True, "admin2": False}
