"""Starting a digital game: «Con dados virtuales», «¿Quién empieza?» with the app's dice,
and the card it creates."""

import re

import pytest
from django.urls import reverse

from scorecards.models import Scorecard

pytestmark = pytest.mark.django_db


def _radio(text, value):
    return re.search(rf'<input type="radio" name="modo" value="{value}"( checked)?>', text)


def test_choosing_players_offers_physical_or_virtual_dice(org_client):
    text = org_client.get(reverse("scorecard_new")).text
    assert "Con dados físicos" in text
    assert "Con dados virtuales" in text
    assert _radio(text, "presencial").group(1)
    assert not _radio(text, "digital").group(1)
    # Back from the order page, the choice made is still made.
    text = org_client.get(reverse("scorecard_new"), {"modo": "digital"}).text
    assert _radio(text, "digital").group(1)
    assert not _radio(text, "presencial").group(1)


def test_the_order_page_of_a_digital_game_rolls_instead_of_asking_for_sums(org_client, ana, ben):
    response = org_client.get(
        reverse("scorecard_order"), {"p": [ana.pk, ben.pk], "modo": "digital"}
    )
    assert "Tirar los dados para decidirlo" in response.text
    assert 'name="t"' not in response.text  # no sums to type
    assert '<input type="hidden" name="modo" value="digital">' in response.text
    # Moving a player keeps the game digital.
    assert f'href="?p={ben.pk}&amp;p={ana.pk}&amp;modo=digital"' in response.text


def test_the_app_rolls_who_starts_and_only_the_tied_roll_again(
    org_client, ana, ben, carla, scripted
):
    # Ana 15, Ben 20, Carla 20: Ben and Carla roll again, 12 against 25: Carla starts.
    scripted += [3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4]
    scripted += [2, 2, 2, 3, 3, 5, 5, 5, 5, 5]
    ids = [ana.pk, ben.pk, carla.pk]
    response = org_client.get(
        reverse("scorecard_order"), {"p": ids, "modo": "digital", "tirar": "1"}
    )
    assert response.status_code == 302
    assert response.url == (
        reverse("scorecard_order")
        + f"?p={ana.pk}&p={ben.pk}&p={carla.pk}&modo=digital&s=15,20,20&s=12,25"
    )
    # The result lives in the address: reloading it rolls nothing (scripted is empty).
    text = org_client.get(response.url).text
    assert "Empieza <bdi>Carla</bdi>" in text
    assert "Todos:" in text
    assert "Desempate:" in text
    assert "<strong><bdi>Carla</bdi>: 25</strong>" in text
    # The table turns to start at Carla, and the card is created digital in that order.
    assert re.findall(r'name="p" value="(\d+)"', text)[:3] == [
        str(carla.pk),
        str(ana.pk),
        str(ben.pk),
    ]
    token = re.search(r'name="token" value="([^"]+)"', text).group(1)
    response = org_client.post(
        reverse("scorecard_create"),
        {"p": [carla.pk, ana.pk, ben.pk], "token": token, "modo": "digital"},
    )
    card = Scorecard.objects.get()
    assert response.url == reverse("scorecard", args=[card.pk])
    assert card.mode == Scorecard.DIGITAL
    assert [s.player for s in card.seats.order_by("order")] == [carla, ana, ben]


def test_a_physical_game_never_rolls_who_starts(org_client, ana, ben, scripted):
    response = org_client.get(reverse("scorecard_order"), {"p": [ana.pk, ben.pk], "tirar": "1"})
    assert response.status_code == 200
    assert 'name="t"' in response.text  # the sums are typed in
    assert scripted == []


def test_a_card_is_physical_unless_digital_is_chosen(org_client, ana, ben):
    org_client.post(reverse("scorecard_create"), {"p": [ana.pk, ben.pk]})
    assert Scorecard.objects.get().mode == Scorecard.PRESENCIAL


@pytest.mark.parametrize("mode", ["virtual", "DIGITAL", "x" * 500, "digital\x00"])
def test_an_unknown_mode_is_refused_and_creates_nothing(org_client, ana, ben, mode):
    response = org_client.post(reverse("scorecard_create"), {"p": [ana.pk, ben.pk], "modo": mode})
    assert response.status_code == 302
    assert response.url == reverse("scorecard_new")
    text = org_client.get(response.url).text
    assert "Elige si jugáis con dados físicos o con dados virtuales." in text
    assert not Scorecard.objects.exists()


def test_the_same_token_in_another_mode_is_another_game(org_client, ana, ben):
    form = {"p": [ana.pk, ben.pk], "token": "3f1c2d7e-0000-4000-8000-000000000001"}
    org_client.post(reverse("scorecard_create"), form)
    org_client.post(reverse("scorecard_create"), form | {"modo": "digital"})
    assert sorted(Scorecard.objects.values_list("mode", flat=True)) == ["digital", "presencial"]


def test_the_new_card_shows_whose_turn_and_who_may_roll(client, organizer, ana, ben):
    from scorecards import services

    card = services.scorecard_create(organizer=organizer, players=[ana, ben], mode="digital")
    url = reverse("scorecard", args=[card.pk])
    roll = f'action="{reverse("roll", args=[card.pk])}"'
    for person, sees_roll, heading in [
        (ana, True, "Ronda 1 de 13 · te toca a ti"),
        (ben, False, "Ronda 1 de 13 · Turno de <bdi>Ana</bdi>"),
        (organizer, True, "Ronda 1 de 13 · Turno de <bdi>Ana</bdi>"),
    ]:
        client.force_login(person)
        text = client.get(url).text
        assert heading in text
        assert (roll in text) is sees_roll
        assert '<span class="badge">digital</span>' in text
        # The dice decide: no box is written by hand, nothing to undo, no finalize button.
        assert "/casilla/" not in text
        assert 'id="undo-button"' not in text
        assert "Finalizar y guardar resultados" not in text
