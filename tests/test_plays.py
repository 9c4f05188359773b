"""«Juega»: an account that does not play (the first admin's, until it is ticked) is never
offered as a player, nor listed among them; it may still organize a card."""

import uuid

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from scorecards.forms import HistoryFilterForm
from scorecards.models import Scorecard
from tests.factories import UserFactory, fill, finalized_games, make_scorecard

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return UserFactory(
        username="admin", display_name="Admin", is_staff=True, is_superuser=True, plays=False
    )


def offered(client, **query):
    return [p.pk for p in client.get(reverse("scorecard_new"), query).context["players"]]


def test_a_new_account_plays():
    assert UserFactory().plays is True


def test_a_new_card_does_not_offer_who_does_not_play(org_client, organizer, ana, admin):
    assert offered(org_client) == [ana.pk, organizer.pk]
    assert offered(org_client, q="adm") == []
    admin.plays = True  # «Juega» ticked in the admin
    admin.save()
    assert offered(org_client) == [admin.pk, ana.pk, organizer.pk]


def test_the_order_page_sends_a_non_player_back(org_client, ana, admin):
    response = org_client.get(reverse("scorecard_order"), {"p": [ana.pk, admin.pk]})
    assert response.status_code == 302
    assert response.url == reverse("scorecard_new") + f"?p={ana.pk}"
    said = [str(m) for m in get_messages(response.wsgi_request)]
    # Each name isolated: a right-to-left one cannot reorder the sentence.
    assert said == ["\u2068Admin\u2069 no juega en Dados y no puede estar en una tarjeta."]
    alone = org_client.get(reverse("scorecard_order"), {"p": [admin.pk]})
    assert alone.url == reverse("scorecard_new")


def test_a_card_with_a_non_player_is_refused(org_client, ana, ben, admin):
    other = UserFactory(display_name="Otra", plays=False)
    response = org_client.post(
        reverse("scorecard_create"),
        {"p": [ana.pk, admin.pk, ben.pk, other.pk], "token": str(uuid.uuid4())},
    )
    assert response.url == reverse("scorecard_new")
    said = [str(m) for m in get_messages(response.wsgi_request)]
    assert said == [
        "\u2068Admin\u2069 y \u2068Otra\u2069 no juegan en Dados y no pueden estar en una tarjeta."
    ]
    assert not Scorecard.objects.exists()


def test_an_account_that_does_not_play_may_organize(client, admin, ana, ben):
    client.force_login(admin)
    response = client.post(
        reverse("scorecard_create"), {"p": [ana.pk, ben.pk], "token": str(uuid.uuid4())}
    )
    card = Scorecard.objects.get()
    assert response.url == reverse("scorecard", args=[card.pk])
    assert card.organizer == admin


def test_the_history_filter_offers_players_and_whoever_sat_at_a_card(ana, admin):
    retired = UserFactory(display_name="Retirada")
    fill(make_scorecard(players=[ana, retired]))
    retired.plays = False
    retired.save()
    offered = list(HistoryFilterForm().fields["jugador"].queryset)
    assert admin not in offered
    assert ana in offered
    assert retired in offered  # her games are still in others' history
    form = HistoryFilterForm({"jugador": admin.pk})
    assert not form.is_valid()


def test_the_ranking_leaves_out_who_does_not_play(client, ana, ben):
    finalized_games([ana, ben], 5)
    ben.plays = False
    ben.save()
    client.force_login(ana)
    response = client.get(reverse("ranking"))
    listed = [row["player"] for row in response.context["ranked"] + response.context["unranked"]]
    assert listed == [ana]


def test_an_account_that_never_played_has_no_player_page(client, ana, admin):
    client.force_login(ana)
    assert client.get(reverse("player", args=[admin.pk])).status_code == 404
    assert client.get(reverse("player", args=[ana.pk])).status_code == 200
    client.force_login(admin)
    assert reverse("player", args=[admin.pk]) not in client.get(reverse("home")).text


def test_one_who_played_and_stopped_keeps_their_page(client, ana, ben):
    finalized_games([ana, ben], 1)
    ben.plays = False
    ben.save()
    client.force_login(ana)
    assert client.get(reverse("player", args=[ben.pk])).status_code == 200
    client.force_login(ben)
    assert reverse("player", args=[ben.pk]) in client.get(reverse("home")).text
