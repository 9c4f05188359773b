"""The card page knows the game: whose turn it is, what is missing, a finish that asks
first, the result in words, the bonus line's rules, and its changes as sentences."""

import re

import pytest
from django.urls import reverse
from django.utils import translation

from scorecards import services
from scorecards.labels import BONUS_BOX
from scorecards.models import BOXES, Scorecard
from scorecards.services import Refused
from tests.factories import UserFactory, enter, fill, full_card, make_scorecard, seat_of
from tests.screens import seen_page

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def page(client, card):
    """The card page as the client's viewer sees it."""
    return seen_page(client, card)


def text_of(html):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def turn_of(html):
    return text_of(re.search(r'<p id="turn"[^>]*>(.*?)</p>', html, re.S)[1])


def problems_of(html):
    return text_of(re.search(r'<div id="sheet-problems">(.*?)</div>', html, re.S)[1])


def total(card, player):
    return seat_of(card, player).totals.total


# Whose turn it is


def test_the_card_says_whose_turn_it_is(org_client, card, organizer, ana, ben):
    assert turn_of(page(org_client, card)) == "Ronda 1 de 13 · le toca a Ana"
    enter(card, seat_of(card, ana), organizer, ones=3)
    html = page(org_client, card)
    assert turn_of(html) == "Ronda 1 de 13 · le toca a Ben"
    assert re.search(r'<th scope="col" title="Ben" class="turn">', html)
    enter(card, seat_of(card, ben), organizer, sixes=24)
    assert turn_of(page(org_client, card)) == "Ronda 2 de 13 · le toca a Ana"


def test_a_player_is_told_it_is_their_turn(client, card, ana):
    client.force_login(ana)
    assert turn_of(page(client, card)) == "Ronda 1 de 13 · te toca a ti"


def test_the_turn_is_a_hint_and_never_blocks_a_write(card, organizer, ben):
    enter(card, seat_of(card, ben), organizer, ones=2, twos=4)  # Ana's turn, twice over
    assert seat_of(card, ben).filled == 2


def test_a_full_card_says_so_instead_of_a_turn(org_client, card):
    fill(card)
    html = page(org_client, card)
    assert turn_of(html) == "Todas las casillas están anotadas."
    assert 'class="turn"' not in html


def test_a_write_answers_with_the_new_turn_and_headings(org_client, card, ana, ben):
    version = Scorecard.objects.get(pk=card.pk).version
    response = org_client.post(
        reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"]),
        {"value": "3", "was": "", "version": version},
        headers=HTMX,
    )
    assert response["HX-Reswap"] == "none"
    html = response.text
    turn = re.search(r'<p id="turn" class="turn-hint"[^>]*>', html)[0]
    assert f'data-turn="{ben.pk}"' in turn
    assert 'hx-swap-oob="true"' in turn
    assert "le toca a <bdi>Ben</bdi>" in html
    assert '<tr id="row-players" hx-swap-oob="true">' in html
    assert '<div id="finalize-action" hx-swap-oob="true">' in html


# Finalizing


def test_finalize_waits_for_every_box_and_says_how_many_are_left(org_client, card):
    html = page(org_client, card)
    button = re.search(r'<div id="finalize-action">(.*?)</div>', html, re.S)[1]
    assert "disabled" in button
    assert "Faltan 26 casillas" in text_of(button)
    assert 'href="/tarjetas/' not in button


def test_finalize_is_offered_once_the_card_adds_up(org_client, card):
    fill(card)
    html = page(org_client, card)
    button = re.search(r'<div id="finalize-action">(.*?)</div>', html, re.S)[1]
    assert "disabled" not in button
    assert f'href="{reverse("finalize", args=[card.pk])}"' in button
    assert "Para finalizar falta" not in html


def test_what_is_missing_is_open_and_short(org_client, card, organizer, ana):
    scores = {box: value for box, value in full_card().items() if box not in ("chance", "ones")}
    enter(card, seat_of(card, ana), organizer, **scores)
    html = page(org_client, card)
    problems = problems_of(html)
    assert problems.startswith("Para finalizar falta: ")
    assert "Ana: Sin anotar: Unos, Libre (Chance)." in problems
    assert "Ben: 13 casillas sin anotar." in problems
    assert "<details" not in html[html.index('id="sheet-problems"') :][:300]


def test_the_confirmation_shows_totals_and_positions_without_javascript(org_client, card, ana, ben):
    fill(card, chance=30)
    seat = seat_of(card, ana)
    seat.chance = 10
    seat.save()
    response = org_client.get(reverse("finalize", args=[card.pk]))
    assert response.status_code == 200
    rows = re.findall(
        r"<tr><td>(\d+)º</td><th scope=\"row\"><bdi>(\w+)</bdi></th><td>(\d+)</td>", response.text
    )
    assert rows == [("1", "Ben", str(total(card, ben))), ("2", "Ana", str(total(card, ana)))]
    assert f'<form method="post" action="{reverse("finalize", args=[card.pk])}"' in response.text
    assert not Scorecard.objects.get(pk=card.pk).is_finalized
    # From the card page with htmx: only the dialog's content.
    fragment = org_client.get(reverse("finalize", args=[card.pk]), headers=HTMX).text
    assert "<html" not in fragment
    assert 'id="picker-title"' in fragment


def test_the_confirmation_of_an_incomplete_card_lists_what_is_missing(org_client, card):
    response = org_client.get(reverse("finalize", args=[card.pk]))
    confirm = response.text.split('class="picker confirm"')[1].split("</main>")[0]
    assert "Aún no se puede finalizar." in confirm
    assert "<bdi>Ana</bdi></strong>: 13 casillas sin anotar." in confirm
    assert "<form" not in confirm


def test_only_the_organizer_is_asked_to_finalize(client, card, ana):
    client.force_login(ana)
    assert client.get(reverse("finalize", args=[card.pk])).status_code == 403
    client.force_login(UserFactory())
    assert client.get(reverse("finalize", args=[card.pk])).status_code == 404


def test_a_finished_card_is_not_offered_to_finalize_again(org_client, card):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    response = org_client.get(reverse("finalize", args=[card.pk]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("scorecard", args=[card.pk])
    assert "ya está finalizada" in response.text


# The result


def test_a_finished_card_starts_with_its_winner(org_client, card, ana):
    fill(card)
    seat = seat_of(card, ana)
    seat.chance = 30
    seat.save()
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    html = page(org_client, card)
    assert f'<p class="result">Gana <bdi>Ana</bdi> con {total(card, ana)}</p>' in html
    assert html.index('class="result"') < html.index("<table")


def test_a_tie_is_announced_as_a_tie(organizer, ana, ben, carla, client):
    card = make_scorecard(organizer, [ana, ben, carla])
    fill(card)
    seat = seat_of(card, carla)
    seat.chance = 1 + 5  # lower than the others' 22
    seat.save()
    services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    client.force_login(carla)
    html = page(client, card)
    tied = total(card, ana)
    assert f'<p class="result">Empate: <bdi>Ana</bdi> y <bdi>Ben</bdi> con {tied}</p>' in html
    client.cookies["django_language"] = "en"
    assert f"Tie: <bdi>Ana</bdi> and <bdi>Ben</bdi> with {tied}" in page(client, card)


# The Yahtzee bonus


def test_a_bonus_is_refused_at_entry_without_50_in_yahtzee(card, organizer, ana):
    seat = seat_of(card, ana)
    for yahtzee in (None, 0):
        if yahtzee is not None:
            enter(card, seat, organizer, yahtzee=yahtzee)
        with (
            translation.override("es"),
            pytest.raises(Refused, match="\u2068Ana\u2069 no tiene 50 en"),
        ):
            services.box_write(
                scorecard_id=card.pk,
                seat_id=seat.pk,
                box=BONUS_BOX,
                value="1",
                was="0",
                author=organizer,
            )
        seat.refresh_from_db()
        assert seat.yahtzee_bonuses == 0
        assert seat.totals.total == 0


def test_a_50_with_bonuses_is_not_corrected_away_until_they_go(card, organizer, ana):
    seat = seat_of(card, ana)
    enter(card, seat, organizer, yahtzee=50)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box=BONUS_BOX, value="2", was="0", author=organizer
    )
    # Without the 50 the bonuses would still count in the total and the positions.
    for value in ("0", ""):
        with translation.override("es"), pytest.raises(Refused, match="quítalos antes") as no:
            services.box_write(
                scorecard_id=card.pk,
                seat_id=seat.pk,
                box="yahtzee",
                value=value,
                was="50",
                author=organizer,
            )
        assert no.value.status == 409
        seat.refresh_from_db()
        assert (seat.yahtzee, seat.yahtzee_bonuses) == (50, 2)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box=BONUS_BOX, value="0", was="2", author=organizer
    )
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="yahtzee", value="0", was="50", author=organizer
    )
    seat.refresh_from_db()
    assert (seat.yahtzee, seat.yahtzee_bonuses, seat.totals.total) == (0, 0, 0)


def test_bonuses_saved_before_the_rule_can_still_be_lowered(card, organizer, ana):
    seat = seat_of(card, ana)
    seat.yahtzee, seat.yahtzee_bonuses = 0, 2  # an inconsistent card from before
    seat.save()
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box=BONUS_BOX, value="1", was="2", author=organizer
    )
    seat.refresh_from_db()
    assert seat.yahtzee_bonuses == 1


def test_the_bonus_picker_shows_points_and_leads_to_the_extra_yahtzee(
    org_client, card, organizer, ana
):
    seat = seat_of(card, ana)
    url = reverse("box", args=[card.pk, seat.pk, BONUS_BOX])
    html = org_client.get(url).text
    assert 'data-fill="refused"><bdi>Ana</bdi> no tiene 50 en Yahtzee' in html
    assert re.search(r'value="1" disabled data-shown="\+100">1 <small>\+100</small>', html)
    assert '<p class="joker-offer" hidden>' in html  # nothing in Yahtzee yet
    enter(card, seat, organizer, yahtzee=50)
    html = org_client.get(url).text
    assert 'data-fill="refused" hidden>' in html
    assert '<p class="joker-offer">' in html
    assert re.search(r'value="3" data-shown="\+300">3 <small>\+300</small>', html)
    assert f'href="{reverse("joker", args=[card.pk, seat.pk])}"' in html
    yahtzee_picker = org_client.get(reverse("box", args=[card.pk, seat.pk, "yahtzee"])).text
    assert f'href="{reverse("joker", args=[card.pk, seat.pk])}"' in yahtzee_picker
    # The sheet itself has no extra column of links: its Yahtzee and bonus cells say where
    # the picker the page opens (dados.js) offers the extra Yahtzee.
    html = page(org_client, card)
    assert f'href="{reverse("joker", args=[card.pk, seat.pk])}"' not in html
    assert html.count(f'data-joker="{reverse("joker", args=[card.pk, seat.pk])}"') == 2


# «Últimos cambios»


def test_the_changes_read_as_sentences_with_their_time(org_client, card, organizer, ana, ben):
    seat = seat_of(card, ben)
    enter(card, seat, organizer, sixes=30)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="sixes", value="24", was="30", author=organizer
    )
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="sixes", value="", was="24", author=organizer
    )
    version = Scorecard.objects.get(pk=card.pk).version
    services.change_undo(scorecard_id=card.pk, author=organizer, version=str(version))
    lines = [
        text_of(li)
        for li in re.findall(
            r"<li>(.*?)</li>", page(org_client, card).split('id="recent-changes"')[1], re.S
        )
    ]
    assert [line.split(" · ", 1)[1] for line in lines[:4]] == [
        "Olga deshizo un cambio: Seises de Ben, sin anotar → 24",
        "Olga borró Seises de Ben (era 24)",
        "Olga corrigió Seises de Ben: 30 → 24",
        "Olga anotó 30 en Seises de Ben",
    ]
    assert re.fullmatch(r"\d\d:\d\d", lines[0].split(" · ")[0])


def test_an_extra_yahtzee_reads_as_one(org_client, card, organizer, ana):
    seat = seat_of(card, ana)
    enter(card, seat, organizer, yahtzee=50)
    services.joker_write(
        scorecard_id=card.pk, seat_id=seat.pk, face="4", box="fours", author=organizer
    )
    html = page(org_client, card)
    first = text_of(re.search(r'id="recent-changes">\s*<li>(.*?)</li>', html, re.S)[1])
    assert first.endswith("Olga anotó un Yahtzee adicional de Ana: 20 en Cuatros (+100 de bonus)")


def test_a_finished_games_log_has_dates(org_client, card, organizer, ana):
    enter(card, seat_of(card, ana), organizer, ones=3)
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=organizer)
    html = page(org_client, card)
    log = html.split("Ver todos los cambios")[1]
    assert re.search(
        r"<time [^>]*>\d{1,2}/\d{1,2}/\d{4} \d\d:\d\d</time> · "
        r"<bdi>Olga</bdi> anotó 3 en Unos de <bdi>Ana</bdi>",
        log,
    )


def test_a_finish_confirmed_on_older_totals_is_refused(org_client, card, organizer, ana):
    fill(card)
    confirm = org_client.get(reverse("finalize", args=[card.pk])).text
    shown = re.search(r'name="version" value="(\d+)"', confirm)[1]
    # Meanwhile a correction changes the totals the organizer is looking at.
    services.box_write(
        scorecard_id=card.pk,
        seat_id=seat_of(card, ana).pk,
        box="chance",
        value="30",
        was=str(seat_of(card, ana).chance),
        author=organizer,
    )
    url = reverse("finalize", args=[card.pk])
    response = org_client.post(url, {"version": shown}, headers=HTMX)
    assert response.status_code == 409
    assert "La tarjeta ha cambiado desde que viste los resultados" in response.text
    assert not Scorecard.objects.get(pk=card.pk).is_finalized
    response = org_client.post(url, {"version": "x9"}, headers=HTMX)
    assert response.status_code == 400
    assert not Scorecard.objects.get(pk=card.pk).is_finalized
    current = Scorecard.objects.get(pk=card.pk).version
    org_client.post(url, {"version": str(current)})
    assert Scorecard.objects.get(pk=card.pk).is_finalized


def test_a_refused_picker_or_confirmation_replaces_the_sheet_not_the_dialog(org_client, card):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    seat = card.seats.first()
    for url in (
        reverse("finalize", args=[card.pk]),
        reverse("box", args=[card.pk, seat.pk, "ones"]),
    ):
        response = org_client.get(url, headers={**HTMX, "HX-Target": "picker"})
        assert response.status_code == 409
        assert response["HX-Retarget"] == "#sheet"
        assert response["HX-Reswap"] == "outerHTML"
        assert '<div id="sheet">' in response.text


def test_the_organizers_pickers_are_the_same_for_every_card_and_rendered_once(client):
    """Every box's picker rides on the organizer's page (static/js/picker.js opens it from
    a tap): nothing in it names a card, so it is rendered once per language, not on every
    page load (it cost 17 ms of a 22 ms page)."""
    olga = UserFactory()
    first = make_scorecard(organizer=olga)
    second = make_scorecard(organizer=olga)
    copies = re.compile(r'<template data-picker="[^"]+">.*?</template>', re.S)
    client.force_login(olga)
    found = [copies.findall(page(client, card)) for card in (first, second)]
    assert len(found[0]) == len(BOXES)
    assert found[0] == found[1]
    assert f"/tarjetas/{first.pk}/" not in "".join(found[0])
    with translation.override("en"):
        client.cookies["django_language"] = "en"
        english = copies.findall(page(client, first))
    assert english != found[0]
    assert "Cancel" in english[0]


def test_the_phones_words_of_issue_58_speak_english(client, card, organizer, ana, ben, settings):
    """«Deshacer»'s latest change, the own column's «tú» and what followers hear, in English."""
    enter(card, seat_of(card, ana), organizer, ones=3)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    client.force_login(organizer)
    html = page(client, card)
    said = re.search(r'<p id="undo-last">(.*?)</p>', html, re.S)[1]
    assert text_of(said) == "Last change: Ones of Ana, not scored → 3"
    client.force_login(ben)
    html = page(client, card)
    assert 'content: "you" / ""' in html
    assert 'data-announce-mine="Olga scored 3 in Ones for Ana. Round 1 of 13 · your turn"' in html
