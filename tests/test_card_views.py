"""The card page, as a whole page and as the fragment htmx swaps, and «Descargar JSON»:
who may open them (403/404/405) and what they cost. The live poll is in test_live.py."""

import json
import re
from unittest import mock
from urllib.parse import quote

import pytest
from django.core.cache import caches
from django.test import Client
from django.urls import reverse
from django.utils import translation

from scorecards import services, sheets
from scorecards.models import Change, Scorecard, Seat
from tests.factories import UserFactory, fill, make_scorecard, seat_of
from tests.screens import HTMX, card_page, finalize, seen, seen_page, version_of, write

pytestmark = pytest.mark.django_db


# The card page


def test_the_card_page_shows_the_paper_card(org_client, card):
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    assert "<html" in response.text
    for text in ["Unos", "Seises", "Bonus superior", "faltan 63", "Bonus Yahtzee", "Total"]:
        assert text in response.text
    assert 'aria-label="Unos — Ana: sin anotar"' in response.text
    assert "Descartar tarjeta" in response.text
    assert "Finalizar y guardar resultados" in response.text
    assert "Todavía no hay cambios." in response.text
    assert response.headers["Vary"].count("HX-Request") == 1


def test_each_box_links_to_its_own_picker(org_client, card):
    # The sheet reverse()s one address per seat and puts each box in it (sheets.box_urls).
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    linked = re.findall(r'<td id="c(\d+)-(\w+)"[^>]*>\s*<a class="cell[^"]*" href="([^"]+)"', page)
    assert len(linked) == 2 * 14  # two players: 13 boxes and the bonus line each
    for seat_id, box, href in linked:
        assert href == reverse("box", args=[card.pk, int(seat_id), box])


def test_the_card_fragment_has_no_page_around_it(org_client, card):
    response = org_client.get(reverse("scorecard", args=[card.pk]), headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text
    assert response.text.lstrip().startswith('<div id="sheet">')
    assert 'aria-label="Unos — Ana: sin anotar"' in response.text
    assert response["X-Dados-Version"] == "0"
    assert response.headers["Vary"].count("HX-Request") == 1


def test_a_player_sees_the_card_without_edit_controls(client, card, ana):
    client.force_login(ana)
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    shown = seen(response.text)
    assert "casilla/" not in shown
    assert "yahtzee-extra/" not in shown
    assert "Finalizar" not in shown
    assert "Descartar" not in shown
    assert "Se actualiza sola." in shown
    assert '<span class="visually-hidden">Unos — <bdi>Ana</bdi>: sin anotar</span>' in shown
    # The organizer's picker is not in her page at all.
    assert "data-picker=" not in response.text


def test_staff_see_any_card_with_edit_controls(client, card):
    client.force_login(UserFactory(is_staff=True))
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 200
    assert "casilla/" in response.text


def test_a_stranger_gets_404(client, card):
    client.force_login(UserFactory())
    assert client.get(reverse("scorecard", args=[card.pk])).status_code == 404
    assert client.get(reverse("scorecard", args=[card.pk]), headers=HTMX).status_code == 404


def test_anonymous_visitors_are_sent_to_log_in(client, card):
    response = client.get(reverse("scorecard", args=[card.pk]))
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={quote(reverse('scorecard', args=[card.pk]))}"


def test_the_card_page_rejects_post(org_client, card):
    assert org_client.post(reverse("scorecard", args=[card.pk])).status_code == 405


def test_the_card_page_follows_writes_names_and_roles(org_client, client, card, ana):
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert 'aria-label="Unos — Ana: sin anotar"' in page
    write(org_client, card, seat_of(card, ana), "ones", "2")
    assert 'aria-label="Unos — Ana: 2"' in org_client.get(reverse("scorecard", args=[card.pk])).text
    ana.display_name = "Anabel"
    ana.save()
    assert "Unos — Anabel: 2" in org_client.get(reverse("scorecard", args=[card.pk])).text
    client.force_login(ana)
    assert "casilla/" not in seen_page(client, card)


def test_recent_changes_are_listed_on_the_card(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "twos", "6")
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert "Últimos cambios" in response.text
    assert "<bdi>Olga</bdi> anotó 6 en Doses de <bdi>Ana</bdi>" in response.text


def test_a_finalized_card_shows_its_whole_log_and_stops_polling(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    write(org_client, card, seat_of(card, ana), "ones", "", was="3")
    finalize(card)
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert "Registro de cambios" in page
    assert "2 cambios: 1 anotación, 1 corrección, 0 Yahtzees adicionales y 0 deshechos." in page
    assert reverse("scorecard_json", args=[card.pk]) in page
    assert "vivo/" not in page
    assert "casilla/" not in page
    assert "Descartar" not in page
    assert "Finalizada el" in page


def test_a_finalized_card_says_no_bonus_rather_than_what_was_missing(org_client, card, ana):
    fill(card, ones=0, twos=2)  # an upper sum under 63
    org_client.post(reverse("finalize", args=[card.pk]), {"version": version_of(card)})
    row = re.search(
        r'<tr id="row-upper_bonus".*?</tr>',
        org_client.get(reverse("scorecard", args=[card.pk])).text,
        re.S,
    ).group(0)
    assert "faltan" not in row
    assert row.count("<td>0</td>") == 2


@pytest.mark.parametrize(
    "path",
    [
        "/tarjetas/99999999999999999999999/",
        "/tarjetas/{card}/casilla/99999999999999999999999/ones/",
        "/tarjetas/{card}/yahtzee-extra/99999999999999999999999/",
        "/tarjetas/99999999999999999999999/exportar.json",
        "/tarjetas/99999999999999999999999/descartar/",
    ],
)
def test_huge_ids_are_404_not_500(org_client, card, path):
    url = path.format(card=card.pk)
    assert org_client.get(url).status_code == 404
    response = org_client.post(url, {"value": "1", "face": "1", "box": "ones"}, headers=HTMX)
    assert response.status_code in (404, 405)
    assert Change.objects.count() == 0


# «Descargar JSON»


def test_the_json_export_has_every_box_total_and_position(client, card, ana, ben):
    fill(card)
    Seat.objects.filter(pk=seat_of(card, ben).pk).update(chance=23, yahtzee_bonuses=1)
    client.force_login(ana)  # any player of the card, not only its organizer
    response = client.get(reverse("scorecard_json", args=[card.pk]))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    disposition = f'attachment; filename="dados-partida-{card.pk}.json"'
    assert response["Content-Disposition"] == disposition
    assert "Olga" in response.content.decode()  # not escaped as \u...
    data = json.loads(response.content)
    assert (data["partida"], data["modalidad"], data["organizador"]) == (
        card.pk,
        "presencial",
        "Olga",
    )
    assert data["finalizada"] is None
    first, second = data["jugadores"]
    assert (first["jugador"], first["turno"]) == ("Ana", 1)
    assert "usuario" not in first  # players never see each other's usernames
    assert first["casillas"]["chance"] == 22
    assert len(first["casillas"]) == 13
    assert (second["bonus_yahtzee"], second["totales"]["yahtzee_bonus"]) == (1, 100)
    assert second["totales"] == {
        "upper": 63,
        "upper_bonus": 35,
        "lower": 148,
        "yahtzee_bonus": 100,
        "total": 346,
    }
    assert (first["posicion"], second["posicion"]) == (2, 1)


def test_the_json_export_of_a_finalized_game_has_its_date(org_client, card):
    finalize(card)
    data = json.loads(org_client.get(reverse("scorecard_json", args=[card.pk])).content)
    assert data["finalizada"] is not None
    assert [p["posicion"] for p in data["jugadores"]] == [1, 1]


def test_the_json_export_is_404_to_strangers(client, card):
    client.force_login(UserFactory())
    assert client.get(reverse("scorecard_json", args=[card.pk])).status_code == 404
    assert client.post(reverse("scorecard_json", args=[card.pk])).status_code == 405


# Query budgets: the same for 2 and 8 players


@pytest.mark.parametrize("n", [2, 8])
def test_the_card_page_and_its_fragment_cost_five_queries(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    services.box_write(
        scorecard_id=card.pk,
        seat_id=card.seats.first().pk,
        box="ones",
        value="1",
        was="",
        author=organizer,
    )
    client.force_login(organizer)
    # session, user, the card with its organizer (and the EXISTS that says whether this
    # user plays in it), its seats with their players, its recent changes with authors
    with django_assert_num_queries(5):
        assert client.get(reverse("scorecard", args=[card.pk])).status_code == 200
    # Then the sheet comes from the cache, to the page and to its fragment alike.
    with django_assert_num_queries(4):
        assert client.get(reverse("scorecard", args=[card.pk])).status_code == 200
    with django_assert_num_queries(4):
        assert client.get(reverse("scorecard", args=[card.pk]), headers=HTMX).status_code == 200


@pytest.mark.parametrize("n", [4, 8])
def test_every_phone_shares_one_render_of_the_sheet(organizer, django_assert_num_queries, n):
    card = make_scorecard(organizer, n=n)
    seats = list(card.seats.select_related("player"))
    services.box_write(
        scorecard_id=card.pk, seat_id=seats[0].pk, box="ones", value="3", was="",
        author=organizer,
    )  # fmt: skip
    # The organizer first, then the turn's player, staff and those who only watch.
    pages = []
    for user in [organizer, seats[1].player, UserFactory(is_staff=True), seats[0].player]:
        phone = Client()
        phone.force_login(user)
        if pages:
            # the session, the user, the card with its organizer, its seats: the sheet
            # from the cache
            with django_assert_num_queries(4):
                pages.append(phone.get(reverse("scorecard", args=[card.pk])))
        else:
            pages.append(phone.get(reverse("scorecard", args=[card.pk])))
    assert all(page.status_code == 200 for page in pages)
    sheets = {_sheet_of(page.text) for page in pages}
    assert len(sheets) == 1
    assert "csrfmiddlewaretoken" not in sheets.pop()


def test_a_sheet_renders_again_only_the_rows_that_changed(organizer):
    card = make_scorecard(organizer, n=3)
    seat = card.seats.select_related("player").first()
    rows = caches["fragments"]  # card.html's rows, keyed by sheets.row_key

    def sheet():
        with mock.patch.object(rows, "set", wraps=rows.set) as rendered:
            html = sheets.render_sheet(Scorecard.objects.seen(card.pk, organizer))
        return html, rendered.call_count

    assert sheet()[1] == 13  # every box's row, the first time
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="threes", value="9", was="", author=organizer
    )
    html, rendered = sheet()
    assert rendered == 1  # Treses alone
    assert re.search(rf'<td id="c{seat.pk}-threes">.*?data-value="9"', html, re.S)
    assert sheet()[1] == 0
    # A renamed player's every row says the new name; so does the language.
    seat.player.display_name = "Anabel"
    seat.player.save()
    html, rendered = sheet()
    assert rendered == 13
    assert "Treses — Anabel: 9" in html
    with translation.override("en"):
        html, rendered = sheet()
    assert rendered == 13
    assert "Threes — Anabel: 9" in html


def _sheet_of(text):
    return re.search(r'<div id="sheet">.*</section>\n</div>', text, re.S)[0]


@pytest.mark.parametrize("language", ["es", "en"])
def test_a_shared_sheet_is_what_each_viewers_own_render_would_be(card, ana, ben, language):
    services.box_write(
        scorecard_id=card.pk, seat_id=seat_of(card, ana).pk, box="ones", value="3", was="",
        author=card.organizer,
    )  # fmt: skip
    # Ben's turn: Ana watches, Ben is told, Olga organizes.
    for user in (ana, ben, card.organizer):
        phone = Client()
        phone.cookies["django_language"] = language
        phone.force_login(user)
        first = phone.get(reverse("scorecard", args=[card.pk])).text
        again = phone.get(reverse("scorecard", args=[card.pk])).text
        # Served from the shared cache, or rendered again: the same page but for the
        # tokens every answer makes anew.
        assert _tokenless(again) == _tokenless(first)
        own = phone.get(reverse("scorecard", args=[card.pk]), headers=HTMX).text
        assert _tokenless(own).strip() in _tokenless(first)
    olga = Client()
    olga.force_login(card.organizer)
    assert 'id="undo-button"' in seen_page(olga, card)
    bens = Client()
    bens.force_login(ben)
    assert "te toca a ti" in _shown(seen_page(bens, card))
    anas = Client()
    anas.force_login(ana)
    assert "te toca a ti" not in _shown(seen_page(anas, card))
    assert 'id="undo-button"' not in seen_page(anas, card)


def _shown(text):
    """A page without what the turn gives screen readers to say (turn.js picks whose)."""
    return re.sub(r' data-announce(-mine)?="[^"]*"', "", text)


def _tokenless(text):
    text = re.sub(r'(csrfmiddlewaretoken" value=|X-CSRFToken": )"[^"]*"', r"\1", text)
    return re.sub(r'nonce="[^"]*"', "", text)


def _place_row(text):
    row = re.search(r'<tr id="row-place".*?</tr>', text, re.S)[0]
    return re.findall(r"<td>(.*?)</td>", row, re.S)


def test_the_card_shows_no_positions_until_a_box_is_written(org_client, card, ana):
    assert _place_row(card_page(org_client, card)) == ["", ""]
    write(org_client, card, seat_of(card, ana), "chance", "20")
    assert _place_row(card_page(org_client, card)) == ["1º", "2º"]
