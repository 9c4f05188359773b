"""Smaller security and operations fixes: how pages are cached, and numbers in forms and
attributes that are never localized."""

import re

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.urls import reverse

from scorecards import services
from scorecards.models import Scorecard, Seat
from tests.factories import UserFactory, enter, fill, finalized_games, make_scorecard, seat_of

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def cache_control(response) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part}


# Cache-Control


def test_pages_for_a_logged_in_player_are_private_and_revalidated(org_client, card, ana):
    seat = seat_of(card, ana)
    enter(card, seat, card.organizer, ones=3)
    version = Scorecard.objects.get(pk=card.pk).version
    responses = [
        org_client.get(reverse("home")),
        org_client.get(reverse("history")),
        org_client.get(reverse("ranking")),
        org_client.get(reverse("player", args=[ana.pk])),
        org_client.get(reverse("scorecard", args=[card.pk])),
        org_client.get(reverse("scorecard", args=[card.pk]), headers=HTMX),
        org_client.get(reverse("box", args=[card.pk, seat.pk, "twos"]), headers=HTMX),
        org_client.get(reverse("scorecard_live", args=[card.pk]), {"version": 0}),
        org_client.get(reverse("scorecard", args=[card.pk + 1])),  # a 404
        org_client.post(reverse("box", args=[card.pk, seat.pk, "twos"]), {"value": "4"}),
    ]
    assert [r.status_code for r in responses] == [200] * 8 + [404, 302]
    for response in responses:
        assert cache_control(response) == {"private", "no-cache"}, response.request
    # The unchanged card's poll is still an empty 204, just as private.
    poll = org_client.get(reverse("scorecard_live", args=[card.pk]), {"version": version + 1})
    assert (poll.status_code, poll.content) == (204, b"")
    assert cache_control(poll) == {"private", "no-cache"}


def test_views_that_say_how_they_are_cached_keep_it(org_client, ana, client):
    order = org_client.get(reverse("scorecard_order"), {"p": [ana.pk]})
    assert cache_control(order) == {"private", "no-cache"}
    # Django's own log-in page and admin say never_cache: no-store stays.
    staff = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(staff)
    assert "no-store" in cache_control(client.get(reverse("admin:index")))
    client.logout()
    assert "no-store" in cache_control(client.get(reverse("login")))


def test_pages_for_nobody_in_particular_are_left_as_they_are(client, card):
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 302  # to log in
    assert "Cache-Control" not in response


def test_exports_are_never_stored(ana_client, ana, ben):
    (card,) = finalized_games([ana, ben], 1)
    for response in (
        ana_client.get(reverse("history_csv")),
        ana_client.get(reverse("scorecard_json", args=[card.pk])),
    ):
        assert response.status_code == 200
        assert "attachment" in response["Content-Disposition"]
        assert cache_control(response) == {"private", "no-store"}


# Numbers in forms and attributes


# An attribute that carries a number to the server or to the page's script; text for
# people (aria-label, title) may show a number as the language writes it.
ATTRIBUTE = re.compile(r'\s((?:value|id|for|name|href|hx-[a-z]+|data-[a-z-]+|form))="([^"]*)"')
GROUPED = re.compile(r"\d[\xa0\u202f ,.]\d{3}(?!\d)")


def grouped_attributes(html: str) -> list[str]:
    """Attributes in which a number was written with a thousands separator."""
    return [f"{name}={value!r}" for name, value in ATTRIBUTE.findall(html) if GROUPED.search(value)]


@pytest.fixture
def big_card(organizer):
    """A card at version 10,000 whose seats and players have ids above 10,000: every
    number it puts in a form or attribute would be grouped if localized."""
    ana = UserFactory(pk=12345, username="ana", display_name="Ana")
    ben = UserFactory(pk=23456, username="ben", display_name="Ben")
    card = make_scorecard(organizer, [ana, ben])
    for offset, seat in enumerate(card.seats.order_by("order"), start=1):
        Seat.objects.filter(pk=seat.pk).update(id=30000 + offset)
    Scorecard.objects.filter(pk=card.pk).update(version=10_000)
    return Scorecard.objects.get(pk=card.pk)


LOCALIZED = [
    pytest.param("es", True, id="es-separator"),
    pytest.param("en", True, id="en-separator"),
    pytest.param("es", False, id="as-configured"),
]


def shown_version(html: str) -> str:
    return re.search(r'<input type="hidden" id="sheet-version"[^>]* value="([^"]*)"', html)[1]


@pytest.mark.parametrize(("language", "separator"), LOCALIZED)
def test_an_undo_at_version_10000_works_whatever_the_locale(
    org_client, big_card, language, separator
):
    org_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    seat = big_card.seats.get(player__username="ana")
    enter(big_card, seat, big_card.organizer, ones=3)
    with override_settings(USE_THOUSAND_SEPARATOR=separator):
        page = org_client.get(reverse("scorecard", args=[big_card.pk])).text
        version = shown_version(page)
        assert version == "10001"
        # The page's poll, with the version it shows: nothing new.
        poll = org_client.get(reverse("scorecard_live", args=[big_card.pk]), {"version": version})
        assert poll.status_code == 204
        response = org_client.post(
            reverse("undo", args=[big_card.pk]), {"version": version}, headers=HTMX
        )
    assert response.status_code == 200, response.text
    assert Seat.objects.get(pk=seat.pk).ones is None
    assert Scorecard.objects.get(pk=big_card.pk).version == 10_002


@pytest.mark.parametrize(("language", "separator"), LOCALIZED)
def test_no_form_or_attribute_groups_the_digits_of_a_number(
    org_client, big_card, language, separator
):
    """Every page that sends a number back, or names an element by one, writes it plainly."""
    org_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    ana = big_card.seats.get(player__username="ana")
    enter(big_card, ana, big_card.organizer, yahtzee=50)
    players = [ana.player_id, big_card.seats.get(player__username="ben").player_id]
    card_url = reverse("scorecard", args=[big_card.pk])
    pages = {
        "new": (reverse("scorecard_new"), {"p": players}),
        "order": (reverse("scorecard_order"), {"p": players, "t": ["20", "20"]}),
        "card": (card_url, {}),
        "picker": (reverse("box", args=[big_card.pk, ana.pk, "ones"]), {"dados": "11123"}),
        "bonus": (reverse("box", args=[big_card.pk, ana.pk, "yahtzee_bonuses"]), {}),
        "joker": (reverse("joker", args=[big_card.pk, ana.pk]), {"cara": "3"}),
        "history": (reverse("history"), {}),
    }
    with override_settings(USE_THOUSAND_SEPARATOR=separator):
        found = {}
        for name, (url, query) in pages.items():
            response = org_client.get(url, query)
            assert response.status_code == 200, name
            if bad := grouped_attributes(response.text):
                found[name] = bad
    assert found == {}
    assert f'value="{players[0]}"' in org_client.get(*pages["new"]).text


def test_numbers_are_not_grouped_as_the_app_is_configured():
    """Django groups digits in templates only when told to; Dados never tells it."""
    assert settings.USE_THOUSAND_SEPARATOR is False


def test_the_history_pages_link_to_plain_page_numbers(ana_client, ana, ben, monkeypatch):
    monkeypatch.setattr("scorecards.views.history.HISTORY_PAGE", 1)
    finalized_games([ana, ben], 1001)
    with override_settings(USE_THOUSAND_SEPARATOR=True):
        text = ana_client.get(reverse("history"), {"pagina": 1000}).text
    assert "Página 1\xa0000 de 1\xa0001" in text  # text for people is localized
    assert 'href="?pagina=999"' in text
    assert 'href="?pagina=1001"' in text


def test_a_finalized_card_keeps_its_numbers_plain(org_client, big_card):
    fill(big_card)
    services.scorecard_finalize(scorecard_id=big_card.pk, author=big_card.organizer)
    with override_settings(USE_THOUSAND_SEPARATOR=True):
        page = org_client.get(reverse("scorecard", args=[big_card.pk])).text
    assert grouped_attributes(page) == []


# Database connections


READ_ONLY = {
    "sqlite": "PRAGMA query_only = ON",
    "postgresql": "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
}


@pytest.mark.django_db(transaction=True)
def test_a_connection_left_read_only_is_replaced_after_one_failed_write():
    """The database was read-only when this connection opened; it is writable again, but
    the connection is not. One write fails; the next one, on a new connection, is saved."""
    organizer = UserFactory()
    card = make_scorecard(organizer, [UserFactory()])
    seat = card.seats.get()
    client = Client(raise_request_exception=False)
    client.force_login(organizer)
    url = reverse("box", args=[card.pk, seat.pk, "ones"])
    with connection.cursor() as cursor:
        cursor.execute(READ_ONLY[connection.vendor])
    assert client.post(url, {"value": "3", "was": ""}).status_code == 500
    assert client.post(url, {"value": "3", "was": ""}).status_code == 302
    assert Seat.objects.get(pk=seat.pk).ones == 3
