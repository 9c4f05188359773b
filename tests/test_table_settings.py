"""What the table sees, by choice (issue 59): totals hidden from the players until the end,
and the upper bonus's pace («Ritmo del bonus»). Chosen with the card, changed by whoever
organizes it; the sheet stays the same for everyone, and each page decides what its viewer
sees of it. The browser's view is in test_table_settings_browser.py."""

import itertools
import re

import pytest
from django.test import Client
from django.urls import reverse

from scorecards import rules, services, sheets, turns
from scorecards.labels import signed
from scorecards.models import Scorecard
from scorecards.rules import UPPER, Category
from tests.factories import UserFactory, enter, make_scorecard, seat_of
from tests.screens import HTMX, card_page, finalize, seen, version_of

pytestmark = pytest.mark.django_db

MINUS = "\u2212"
# The rows a player does not see while the totals are hidden.
TOTAL_ROWS = ("row-upper", "row-upper_bonus", "row-lower", "row-total", "row-place")
# A pace beside an upper sum, in words for a screen reader.
PACE = '<small class="pace"><span class="visually-hidden">Ritmo del bonus: </span>{}</small>'


# The rule (rules.py)


@pytest.mark.parametrize(
    ("scores", "pace"),
    [
        ({}, 0),  # nothing filled yet: on course
        ({"fours": 16}, 4),  # four 4s: one 4 above three
        ({"threes": 6}, -3),  # two 3s: one 3 below
        ({"ones": 3, "twos": 6, "threes": 9}, 0),  # three of each
        ({"fives": 25, "sixes": 12}, 10 - 6),
        ({"sixes": 0}, -18),  # scratched: filled, three 6s missing
        ({"ones": 0, "twos": 0}, -3 - 6),
        ({"ones": None, "fours": 20, "sixes": None}, 8),  # blank boxes do not count
        ({"fours": 16, "chance": 30, "yahtzee": 50}, 4),  # the lower section does not count
        ({c.value: 3 * c.face for c in UPPER}, 0),  # 63: the bonus, exactly
        ({c.value: 5 * c.face for c in UPPER}, 105 - 63),
    ],
)
def test_the_bonus_pace_is_how_far_the_filled_upper_boxes_are_from_three_of_each(scores, pace):
    assert rules.bonus_pace(scores) == pace


def test_a_full_upper_section_is_on_pace_exactly_when_it_makes_the_bonus():
    # Every upper section a game can end with (0 to 5 of each face): its pace is its sum
    # less 63, so it makes the bonus if and only if its pace is not below 0.
    for counts in itertools.product(range(6), repeat=6):
        scores = {c: n * c.face for c, n in zip(UPPER, counts, strict=True)}
        pace = rules.bonus_pace(scores)
        assert pace == rules.totals(scores).upper - rules.UPPER_BONUS_THRESHOLD
        assert (pace >= 0) == bool(rules.totals(scores).upper_bonus)


def test_the_bonus_pace_takes_category_keys_and_refuses_what_is_no_score():
    assert rules.bonus_pace({Category.TWOS: 10}) == 4
    with pytest.raises(ValueError, match="A score is an int or None"):
        rules.bonus_pace({"twos": "10"})
    with pytest.raises(ValueError, match="A score is an int or None"):
        rules.bonus_pace({"twos": True})


def test_a_pace_is_shown_with_its_sign_and_a_real_minus():
    assert (signed(4), signed(-2), signed(0)) == ("+4", f"{MINUS}2", "0")


# Chosen with the card


def _order_token(client, *players):
    page = client.get(reverse("scorecard_order"), {"p": [p.pk for p in players]}).text
    return re.search(r'name="token" value="([^"]+)"', page)[1]


def test_the_order_page_offers_both_choices_unticked(org_client, ana, ben):
    page = org_client.get(reverse("scorecard_order"), {"p": [ana.pk, ben.pk]}).text
    form = re.search(r'<form method="post" action="/tarjetas/crear/".*?</form>', page, re.S)[0]
    assert "<legend>Lo que ve la mesa</legend>" in form
    assert '<input type="checkbox" name="ocultar_totales">' in form
    assert '<input type="checkbox" name="ritmo_bonus">' in form
    assert "Ocultar totales hasta el final" in form
    assert "Ritmo del bonus" in form


@pytest.mark.parametrize(
    ("sent", "hidden", "pace"),
    [
        ({}, False, False),
        ({"ocultar_totales": "on"}, True, False),
        ({"ritmo_bonus": "on"}, False, True),
    ],
)
def test_creating_a_card_sets_what_the_table_sees(org_client, ana, ben, sent, hidden, pace):
    token = _order_token(org_client, ana, ben)
    data = {"p": [ana.pk, ben.pk], "token": token, "modo": "presencial", **sent}
    response = org_client.post(reverse("scorecard_create"), data)
    card = Scorecard.objects.get()
    assert response.url == reverse("scorecard", args=[card.pk])
    assert (card.hide_totals, card.show_bonus_pace) == (hidden, pace)


def test_a_bad_choice_makes_no_card_and_says_why(org_client, ana, ben):
    data = {"p": [ana.pk, ben.pk], "modo": "presencial", "ocultar_totales": "quizá"}
    response = org_client.post(reverse("scorecard_create"), data, follow=True)
    assert not Scorecard.objects.exists()
    assert "Lo que ve la mesa se elige marcando o desmarcando sus casillas." in response.text


def test_discarding_an_unstarted_twin_keeps_the_choices_made(org_client, ana, ben):
    org_client.post(
        reverse("scorecard_create"),
        {"p": [ana.pk, ben.pk], "token": _order_token(org_client, ana, ben)},
    )
    twin = Scorecard.objects.get()
    data = {"p": [ben.pk, ana.pk], "token": _order_token(org_client, ben, ana), "ritmo_bonus": "on"}
    question = org_client.post(reverse("scorecard_create"), data).text
    # The question's form carries them on.
    assert '<input type="hidden" name="ritmo_bonus" value="on">' in question
    assert 'name="ocultar_totales"' not in question
    org_client.post(reverse("scorecard_create"), data | {"descartar": twin.pk})
    card = Scorecard.objects.get()
    assert card != twin
    assert (card.hide_totals, card.show_bonus_pace) == (False, True)


def test_a_rematch_sees_what_its_game_saw(organizer, ana, ben):
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], hide_totals=True)
    finalize(card)
    rematch = services.scorecard_rematch(scorecard_id=card.pk, user=ana).scorecard
    assert (rematch.hide_totals, rematch.show_bonus_pace) == (True, False)


def test_the_export_says_what_the_table_saw(organizer, ana, ben):
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], show_bonus_pace=True)
    data = Scorecard.objects.with_seats().get(pk=card.pk).to_dict()
    assert (data["ocultar_totales"], data["ritmo_del_bonus"]) == (False, True)


# Changed by whoever organizes the card


def settings_url(card):
    return reverse("table_settings", args=[card.pk])


def test_the_organizer_reaches_the_choices_from_the_card(org_client, card):
    page = card_page(org_client, card)
    assert (
        f'<a class="button" href="{settings_url(card)}" data-needs-network>Lo que ve la mesa</a>'
        in page
    )
    form = org_client.get(settings_url(card)).text
    assert '<input type="checkbox" name="ocultar_totales">' in form
    assert "csrfmiddlewaretoken" in form
    assert f'href="{reverse("scorecard", args=[card.pk])}">Volver a la tarjeta</a>' in form


def test_the_organizer_changes_them_while_in_play(org_client, card):
    version = version_of(card)
    response = org_client.post(settings_url(card), {"ocultar_totales": "on", "ritmo_bonus": "on"})
    assert response.url == reverse("scorecard", args=[card.pk])
    card.refresh_from_db()
    assert (card.hide_totals, card.show_bonus_pace) == (True, True)
    # A new version, which every phone's page gets as the whole sheet.
    assert card.version == card.settings_version == version + 1
    page = org_client.get(response.url).text
    assert "Guardado lo que ve la mesa." in page
    assert (
        '<input type="checkbox" name="ocultar_totales" checked>'
        in org_client.get(settings_url(card)).text
    )
    # Both unticked: both off again.
    org_client.post(settings_url(card), {})
    card.refresh_from_db()
    assert (card.hide_totals, card.show_bonus_pace, card.version) == (False, False, version + 2)


def test_choosing_what_the_card_already_has_changes_nothing(org_client, card):
    org_client.post(settings_url(card), {})
    card.refresh_from_db()
    assert (card.version, card.settings_version) == (0, 0)


@pytest.mark.parametrize("method", ["get", "post"])
def test_only_the_organizer_may_change_them(client, card, ana, method):
    client.force_login(ana)
    response = getattr(client, method)(settings_url(card), {"ocultar_totales": "on"})
    assert response.status_code == 403
    assert "No puedes hacer esto" in response.text
    assert "Solo quien organiza una tarjeta" in response.text
    card.refresh_from_db()
    assert (card.hide_totals, card.version) == (False, 0)
    # Nor is it offered on a player's page.
    assert settings_url(card) not in card_page(client, card)


def test_a_stranger_does_not_find_the_card(client, card):
    client.force_login(UserFactory())
    assert client.post(settings_url(card), {"ocultar_totales": "on"}).status_code == 404
    assert not Scorecard.objects.get(pk=card.pk).hide_totals


def test_staff_manage_it_as_they_manage_the_card(client, card):
    client.force_login(UserFactory(is_staff=True))
    client.post(settings_url(card), {"ritmo_bonus": "on"})
    assert Scorecard.objects.get(pk=card.pk).show_bonus_pace


@pytest.mark.parametrize(
    "bad", [{"ocultar_totales": "sí"}, {"ritmo_bonus": "1"}, {"ritmo_bonus": ""}]
)
def test_bad_input_changes_nothing_and_says_why(org_client, card, bad):
    words = "Lo que ve la mesa se elige marcando o desmarcando sus casillas."
    if bad == {"ritmo_bonus": ""}:
        # An empty value is an unticked box, as a browser would never send it: nothing to
        # refuse, and nothing changes.
        assert org_client.post(settings_url(card), bad).status_code == 302
    else:
        page = org_client.post(settings_url(card), bad, follow=True).text
        assert words in page
        fragment = org_client.post(settings_url(card), bad, headers=HTMX)
        assert fragment.status_code == 400
        assert words in fragment.text
    card.refresh_from_db()
    assert (card.hide_totals, card.show_bonus_pace, card.version) == (False, False, 0)


def test_a_finished_game_keeps_what_it_had(org_client, card):
    finalize(card)
    response = org_client.post(settings_url(card), {"ocultar_totales": "on"}, follow=True)
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in response.text
    assert not Scorecard.objects.get(pk=card.pk).hide_totals
    assert settings_url(card) not in card_page(org_client, card)


# What each page shows of the same sheet


def _sheet_of(text):
    return re.search(r'<div id="sheet"[^>]*>.*</section>\n</div>', text, re.S)[0]


def _rows(text):
    return set(re.findall(r'<tr id="(row-[\w-]+)"', text))


@pytest.fixture
def hidden(organizer, ana, ben):
    """A card whose totals the players do not see until the end: Ana has 3 in Unos and 22
    in Libre, Ben 20 in Cuatros."""
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], hide_totals=True)
    enter(card, seat_of(card, ana), organizer, ones=3, chance=22)
    enter(card, seat_of(card, ben), organizer, fours=20)
    return card


def _page(user, card):
    phone = Client()
    phone.force_login(user)
    return card_page(phone, card)


def _text_outside_the_boxes(html: str) -> str:
    """A page's text, but for the boxes' cells and the changes' list (which name boxes and
    values, with times), and for the tags' attributes (a CSRF token or a nonce may hold
    any digits)."""
    html = re.sub(r'<td id="c\d+-\w+">.*?</td>', "", html, flags=re.S)
    html = re.sub(r'<ol id="recent-changes".*?</ol>', "", html, flags=re.S)
    html = re.sub(r"<(style|script)\b.*?</\1>", "", html, flags=re.S)
    return re.sub(r"<[^>]*>", " ", html)


def test_a_players_page_has_the_same_sheet_but_hides_its_totals(hidden, ana, ben):
    organizers, anas = _page(hidden.organizer, hidden), _page(ana, hidden)
    # One sheet for everyone, which says the card hides its totals.
    assert _sheet_of(organizers) == _sheet_of(anas)
    assert _sheet_of(anas).startswith('<div id="sheet" data-hide-totals>')
    # Ana's page follows that; the organizer's does not.
    rows = "#row-upper, #row-upper_bonus, #row-lower, #row-total, #row-place"
    rule = f"#sheet[data-hide-totals] :is({rows}) {{ display: none; }}"
    assert rule in anas
    assert rule not in organizers
    shown = seen(anas)
    assert not _rows(shown) & set(TOTAL_ROWS)
    assert {"row-ones", "row-chance", "row-yahtzee_bonuses"} <= _rows(shown)
    assert "Los totales y las posiciones se verán al final de la partida." in shown
    # Her total (25) and her place are nowhere she can see them; the organizer sees it.
    assert "recent-changes" in shown
    assert "25" not in _text_outside_the_boxes(shown)
    assert "25" in _text_outside_the_boxes(seen(organizers))
    assert "º" not in shown
    olga = seen(organizers)
    assert set(TOTAL_ROWS) <= _rows(olga)
    assert "Los jugadores no ven los totales ni las posiciones hasta el final." in olga


def test_after_the_end_everyone_sees_them(hidden, ana):
    finalize(hidden)
    page = _page(ana, hidden)
    assert "data-hide-totals" not in page
    shown = seen(page)
    assert set(TOTAL_ROWS) <= _rows(shown)
    assert "Gana" in shown or "Empate" in shown


def test_without_the_choice_a_player_sees_every_total(card, ana):
    enter(card, seat_of(card, ana), card.organizer, ones=3)
    page = _page(ana, card)
    # Her page would follow the card's choice, made mid-game: the sheet makes none.
    assert "#sheet[data-hide-totals]" in page
    assert _sheet_of(page).startswith('<div id="sheet">')
    assert set(TOTAL_ROWS) <= _rows(seen(page))


@pytest.mark.parametrize("mode", ["presencial", "digital"])
def test_a_change_mid_game_sends_every_page_the_whole_sheet(organizer, ana, ben, scripted, mode):
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], mode=mode)
    if mode == "digital":
        # A roll: a version without a change, which a patch would otherwise bring.
        scripted += [1, 2, 3, 4, 5]
        turns.turn_roll(scorecard_id=card.pk, author=ana, version="0", shown="", keep=[])
    else:
        enter(card, seat_of(card, ana), organizer, ones=3)
    shown = version_of(card)
    services.scorecard_settings(
        scorecard_id=card.pk, author=organizer, hide_totals=True, show_bonus_pace=False
    )
    phone = Client()
    phone.force_login(ben)
    answer = phone.get(reverse("scorecard_live", args=[card.pk]), {"version": shown}, headers=HTMX)
    assert answer.status_code == 200
    assert "HX-Reswap" not in answer  # the whole sheet, not a patch
    assert answer.text.lstrip().startswith('<div id="sheet" data-hide-totals>')
    # The stream says the same: no patch, the page asks its poll for the sheet.
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    assert sheets.stream_patch(fields, shown) is None


# «Ritmo del bonus»


def test_the_pace_is_beside_each_upper_sum(organizer, ana, ben, org_client):
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], show_bonus_pace=True)
    enter(card, seat_of(card, ana), organizer, fours=16, twos=0)  # +4, then -6
    enter(card, seat_of(card, ben), organizer, sixes=24)  # +6
    row = re.search(r'<tr id="row-upper".*?</tr>', card_page(org_client, card), re.S)[0]
    paces = re.findall(
        PACE.format("([^<]+)"),
        row,
    )
    assert paces == [f"{MINUS}2", "+6"]
    # A write's patch brings it along with the sums.
    seat = seat_of(card, ben)
    patch = org_client.post(
        reverse("box", args=[card.pk, seat.pk, "ones"]),
        {"value": "5", "was": "", "version": version_of(card)},
        headers=HTMX,
    )
    assert patch["HX-Reswap"] == "none"
    assert PACE.format("+8") in patch.text


def test_without_the_choice_there_is_no_pace(org_client, card, ana):
    enter(card, seat_of(card, ana), card.organizer, fours=16)
    assert 'class="pace"' not in card_page(org_client, card)


def test_the_pace_hides_with_the_totals(organizer, ana, ben):
    card = services.scorecard_create(
        organizer=organizer, players=[ana, ben], hide_totals=True, show_bonus_pace=True
    )
    enter(card, seat_of(card, ana), organizer, fours=16)
    page = _page(ana, card)
    assert 'class="pace"' in _sheet_of(page)
    assert 'class="pace"' not in seen(page)


# What it costs


@pytest.mark.parametrize("viewer", ["organizer", "player"])
def test_the_card_page_costs_what_it_did(organizer, ana, ben, django_assert_num_queries, viewer):
    card = services.scorecard_create(
        organizer=organizer, players=[ana, ben], hide_totals=True, show_bonus_pace=True
    )
    enter(card, seat_of(card, ana), organizer, ones=3)
    phone = Client()
    phone.force_login(organizer if viewer == "organizer" else ana)
    # As test_card_views counts them: session, user, the card with its organizer, its seats
    # with their players, its recent changes; then the sheet from the cache.
    with django_assert_num_queries(5):
        assert phone.get(reverse("scorecard", args=[card.pk])).status_code == 200
    with django_assert_num_queries(4):
        assert phone.get(reverse("scorecard", args=[card.pk])).status_code == 200


def test_a_card_made_before_the_choices_sees_everything(organizer, ana, ben):
    card = make_scorecard(organizer, [ana, ben])
    assert (card.hide_totals, card.show_bonus_pace, card.settings_version) == (False, False, 0)
