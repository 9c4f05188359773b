"""Starting a digital game: «Con dados virtuales», «¿Quién empieza?» with the app's dice,
and the card it creates."""

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core import signing
from django.urls import reverse

from scorecards.dice import WHO_STARTS_SALT
from scorecards.models import Scorecard
from tests.screens import seen

pytestmark = pytest.mark.django_db


def _who_rolled(html) -> list[str]:
    """«¿Quién empieza?» as it is read: each round's name, then each player's line."""
    section = re.search(r'<section class="who-rolled".*?</section>', html, re.S)[0]
    lines = re.findall(r'<(?:p class="round-name"|li[^>]*)>(.*?)</(?:p|li)>', section, re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", line)).strip() for line in lines]


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
    query = parse_qs(urlsplit(response.url).query)
    assert query["p"] == [str(ana.pk), str(ben.pk), str(carla.pk)]
    assert query["modo"] == ["digital"]
    assert "s" not in query  # the rolls travel only signed
    # The result lives in the address: reloading it rolls nothing (scripted is empty).
    text = org_client.get(response.url).text
    assert "Empieza <bdi>Carla</bdi>" in text
    # Each player's dice beside their sum, read out one by one; the best of each round
    # in bold.
    assert _who_rolled(text) == [
        "Todos:",
        "Ana: 3 3 3 3 3, suma 15",
        "Ben: 4 4 4 4 4, suma 20",
        "Carla: 4 4 4 4 4, suma 20",
        "Desempate:",
        "Ben: 2 2 2 3 3, suma 12",
        "Carla: 5 5 5 5 5, suma 25",
    ]
    assert text.count('<li class="best"><strong>') == 3
    assert (
        '<span class="mini-dice"><span class="mini-die">2</span> <span class="mini-die">2</span>'
        in text
    )
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
        text = seen(client.get(url).text)
        assert heading in text
        assert (roll in text) is sees_roll
        assert '<span class="badge">digital</span>' in text
        # The dice decide: no box is written by hand, nothing to undo, no finalize button.
        assert "/casilla/" not in text
        assert 'id="undo-button"' not in text
        assert "Finalizar y guardar resultados" not in text


# «¿Quién empieza?» with the app's dice: the address carries the rolls signed, bound to
# the players they were rolled for; nothing else in it may decide who starts.

FORGED = "Esas tiradas no las hizo la app: vuelve a tirar los dados."
TYPED = "Con dados virtuales no se escriben las sumas: las tira la app."


def _roll_who_starts(org_client, scripted, players):
    """Ana rolls 15, Ben 20 and Carla 20 (those of them given), then the tied Ben 12 and
    Carla 25: the address the app sends the organizer to, and its signed `tiradas`."""
    scripted += [3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4][: 5 * len(players)]
    scripted += [2, 2, 2, 3, 3, 5, 5, 5, 5, 5]
    response = org_client.get(
        reverse("scorecard_order"),
        {"p": [p.pk for p in players], "modo": "digital", "tirar": "1"},
    )
    assert response.status_code == 302
    query = parse_qs(urlsplit(response.url).query)
    assert list(query) == ["p", "modo", "tiradas"]
    return response.url, query["tiradas"][0]


def _order(org_client, players, **query):
    return org_client.get(
        reverse("scorecard_order"), {"p": [p.pk for p in players], "modo": "digital"} | query
    )


def _refused(response, message, players):
    """The page says why, shows no result and leaves the table as it was sent."""
    assert response.status_code == 200
    assert f'<p class="alert alert-error" role="alert" id="who-error">{message}</p>' in (
        response.text
    )
    assert "Empieza" not in response.text
    assert "Tirar los dados para decidirlo" in response.text
    seated = re.findall(r'name="p" value="(\d+)"', response.text)
    assert seated[: len(players)] == [str(p.pk) for p in players]


def test_the_seating_links_keep_the_result_the_app_rolled(org_client, ana, ben, carla, scripted):
    url, _signed = _roll_who_starts(org_client, scripted, [ana, ben, carla])
    text = org_client.get(url).text
    assert "Empieza <bdi>Carla</bdi>" in text
    # Carla's seat is the dice's: neither she nor the player after her may move past it.
    assert 'aria-label="Bajar a \u2068Carla\u2069"' not in text
    assert 'aria-label="Subir a \u2068Ana\u2069"' not in text
    down = re.search(r'href="\?([^"]*)" aria-label="Bajar a \u2068Ana\u2069"', text).group(1)
    text = org_client.get(reverse("scorecard_order") + "?" + down.replace("&amp;", "&")).text
    assert "Empieza <bdi>Carla</bdi>" in text
    assert "Carla: 5 5 5 5 5, suma 25" in _who_rolled(text)
    assert "Ana: 3 3 3 3 3, suma 15" in _who_rolled(text)
    assert re.findall(r'name="p" value="(\d+)"', text)[:3] == [
        str(carla.pk),
        str(ben.pk),
        str(ana.pk),
    ]


def test_the_signed_rolls_seat_the_starter_first_in_any_order(
    org_client, ana, ben, carla, scripted
):
    _url, signed = _roll_who_starts(org_client, scripted, [ana, ben, carla])
    text = _order(org_client, [ben, carla, ana], tiradas=signed).text
    assert "Empieza <bdi>Carla</bdi>" in text
    assert re.findall(r'name="p" value="(\d+)"', text)[:3] == [
        str(carla.pk),
        str(ana.pk),
        str(ben.pk),
    ]


@pytest.mark.parametrize("rounds", [["5,30"], ["30,5"], ["20,20", "5,30"], ["9" * 5000], ["ñ,€"]])
def test_rolls_written_in_a_digital_address_are_refused(org_client, ana, ben, rounds):
    _refused(_order(org_client, [ana, ben], s=rounds), FORGED, [ana, ben])


def test_plain_rolls_beside_signed_ones_are_refused(org_client, ana, ben, scripted):
    _url, signed = _roll_who_starts(org_client, scripted, [ana, ben])
    response = _order(org_client, [ana, ben], tiradas=signed, s=["5,30"])
    _refused(response, FORGED, [ana, ben])


def test_typed_sums_are_refused_in_a_digital_game(org_client, ana, ben, scripted):
    for typed in (["12", "25"], ["9" * 5000], ["ñ", "x", "30"]):
        _refused(_order(org_client, [ana, ben], t=typed), TYPED, [ana, ben])
    _url, signed = _roll_who_starts(org_client, scripted, [ana, ben])
    _refused(_order(org_client, [ana, ben], tiradas=signed, t=["5"]), TYPED, [ana, ben])


def test_tampered_signed_rolls_are_refused(org_client, ana, ben, scripted):
    _url, signed = _roll_who_starts(org_client, scripted, [ana, ben])
    assert "Empieza <bdi>Ben</bdi>" in _order(org_client, [ana, ben], tiradas=signed).text
    payload, signature = signed.rsplit(":", 1)
    rolled = json.loads(signing.b64_decode(payload.encode()))
    assert rolled == [[ana.pk, ben.pk], ["33333,44444"]]
    other = signing.b64_encode(json.dumps([[ana.pk, ben.pk], ["30,5"]]).encode()).decode()
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    unsalted = signing.Signer().sign_object([[ana.pk, ben.pk], ["30,5"]])
    for forged in (f"{other}:{signature}", f"{payload}:{flipped}", unsalted):
        _refused(_order(org_client, [ana, ben], tiradas=forged), FORGED, [ana, ben])


def test_signed_rolls_are_refused_for_other_players(org_client, ana, ben, carla, scripted):
    _url, signed = _roll_who_starts(org_client, scripted, [ana, ben])
    for players in ([ana, carla], [carla, ben], [ana, ben, carla], [ana]):
        response = _order(org_client, players, tiradas=signed)
        if len(players) > 1:
            _refused(response, FORGED, players)
        else:
            assert "Empieza" not in response.text


@pytest.mark.parametrize(
    "junk", ["", "x", ":", "a:b:c", "9" * 5000, "ñandú:€", "\x00", "e30:" + "A" * 27]
)
def test_junk_signed_rolls_are_refused_not_a_500(org_client, ana, ben, junk):
    _refused(_order(org_client, [ana, ben], tiradas=junk), FORGED, [ana, ben])


def test_the_dice_that_decided_are_said_in_english_too(org_client, ana, ben, scripted):
    url, _signed = _roll_who_starts(org_client, scripted, [ana, ben])
    org_client.cookies["django_language"] = "en"
    text = org_client.get(url).text
    assert "<bdi>Ben</bdi> starts and the turn goes around the table." in text
    assert _who_rolled(text) == ["Ana: 3 3 3 3 3, sum 15", "Ben: 4 4 4 4 4, sum 20"]


def test_an_address_signed_with_the_sums_alone_still_says_who_starts(org_client, ana, ben):
    """Before the dice were kept in `tiradas`, its rounds were sums: such an address, kept in
    a browser's history, still decides, and shows the sums."""
    signed = signing.Signer(salt=WHO_STARTS_SALT).sign_object([[ana.pk, ben.pk], ["15,20"]])
    text = _order(org_client, [ana, ben], tiradas=signed).text
    assert "Empieza <bdi>Ben</bdi>" in text
    assert "<bdi>Ana</bdi>: 15 · <strong><bdi>Ben</bdi>: 20</strong>" in text
    assert "mini-die" not in text
