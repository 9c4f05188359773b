"""A box of the card: its picker (GET), its write (POST) and «Yahtzee adicional»; who may
open or send them, what each write answers, and what they cost."""

import re

import pytest
from django.urls import reverse

from scorecards import services
from scorecards.labels import BONUS_BOX
from scorecards.models import Change, Seat
from tests.factories import UserFactory, fill, logged_items, make_scorecard, seat_of
from tests.screens import HTMX, SUM_ROWS, card_page, finalize, version_of, write

pytestmark = pytest.mark.django_db


# The box picker (GET)


def test_the_picker_offers_only_allowed_values(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, "fours"]))
    assert response.status_code == 200
    assert "<html" in response.text
    values = [v for v in (0, 4, 8, 12, 16, 20) if f'name="value" value="{v}"' in response.text]
    assert values == [0, 4, 8, 12, 16, 20]
    assert 'name="value" value="3"' not in response.text
    assert "Sin anotar" in response.text
    assert "Ahora: sin anotar" in response.text


def test_the_picker_fragment_has_no_page_around_it(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, "chance"]), headers=HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text
    assert response.text.lstrip().startswith('<div class="picker">')
    assert 'name="value" value="0"' not in response.text  # Chance cannot be scratched
    assert response.headers["Vary"].count("HX-Request") == 1


def test_the_picker_shows_what_the_box_holds(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "fours", "12")
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, "fours"]), headers=HTMX)
    assert "Ahora: 12" in response.text
    assert 'name="value" value="12" aria-pressed="true"' in response.text
    assert 'name="was" value="12"' in response.text


def test_the_bonus_picker_counts_bonuses_without_dice(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, BONUS_BOX]), headers=HTMX)
    values = re.findall(r'name="value" value="(\d+)"', response.text)
    assert values == [str(n) for n in range(13)]
    assert "Con dados" not in response.text
    assert "tachar" not in response.text


def test_the_picker_proposes_the_score_of_the_dice(org_client, card, ana):
    seat = seat_of(card, ana)
    url = reverse("box", args=[card.pk, seat.pk, "three_of_a_kind"])
    assert 'value="19" class="primary">Anotar 19' in org_client.get(url, {"dados": "55513"}).text
    assert 'value="0" class="primary">Anotar 0' in org_client.get(url, {"dados": "12345"}).text
    partial = org_client.get(url, {"dados": "555"}).text
    assert "Anotar" not in partial
    assert "(3 de 5)" in partial


@pytest.mark.parametrize("yahtzee", [50, 0])
@pytest.mark.parametrize("box", ["full_house", "large_straight", "three_of_a_kind", "fours"])
def test_five_of_a_kind_after_the_yahtzee_box_goes_to_the_extra_yahtzee(
    org_client, card, ana, yahtzee, box
):
    """The dice helper does not offer 0 in Full for 44444 once Yahtzee is used: it is an
    extra Yahtzee, scored by the joker order (and +100 after a 50)."""
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", str(yahtzee))
    response = org_client.get(reverse("box", args=[card.pk, seat.pk, box]), {"dados": "44444"})
    assert response.status_code == 200
    assert 'class="primary">Anotar' not in response.text
    joker = reverse("joker", args=[card.pk, seat.pk])
    assert f'href="{joker}?cara=4"' in response.text
    assert "Es un Yahtzee adicional" in response.text
    # That link's picker offers the boxes the joker order allows, with their scores.
    choices = org_client.get(joker, {"cara": "4"}).text
    assert 'value="fours">Cuatros <strong>20</strong>' in choices
    assert 'value="full_house"' not in choices  # the own upper box is free: it comes first


def test_five_of_a_kind_before_the_yahtzee_box_is_an_ordinary_roll(org_client, card, ana):
    seat = seat_of(card, ana)
    url = reverse("box", args=[card.pk, seat.pk, "three_of_a_kind"])
    response = org_client.get(url, {"dados": "44444"})
    assert 'value="20" class="primary">Anotar 20' in response.text
    assert "Yahtzee adicional" not in response.text
    # Correcting the Yahtzee box itself still proposes its score.
    write(org_client, card, seat, "yahtzee", "0")
    url = reverse("box", args=[card.pk, seat.pk, "yahtzee"])
    assert 'value="50" class="primary">Anotar 50' in org_client.get(url, {"dados": "44444"}).text


def test_the_picker_of_a_box_or_seat_that_is_not_on_the_card_is_404(org_client, card, ana):
    seat = seat_of(card, ana)
    foreign = seat_of(make_scorecard(card.organizer, [ana]), ana)
    assert org_client.get(reverse("box", args=[card.pk, seat.pk, "sevens"])).status_code == 404
    assert org_client.get(reverse("box", args=[card.pk, foreign.pk, "ones"])).status_code == 404


def test_a_player_may_not_open_a_picker_and_a_stranger_finds_nothing(client, card, ana):
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    client.force_login(ana)
    assert client.get(url).status_code == 403
    assert client.get(url, headers=HTMX).status_code == 403
    client.force_login(UserFactory())
    assert client.get(url).status_code == 404


def test_the_picker_of_a_finalized_card_sends_back_to_it(org_client, card, ana):
    finalize(card)
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    response = org_client.get(url)
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in card_page(org_client, card)
    response = org_client.get(url, headers=HTMX)
    assert response.status_code == 409
    assert "Esta tarjeta ya está finalizada" in response.text


def test_a_box_takes_get_and_post_only(org_client, card, ana):
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    assert org_client.put(url).status_code == 405
    assert org_client.delete(url).status_code == 405


# The box write (POST)


def test_a_plain_post_redirects_back_to_the_card(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "ones", "0")
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert seat_of(card, ana).ones == 0


def test_a_write_from_the_current_page_answers_with_what_changed(org_client, card, ana, ben):
    seat, other = seat_of(card, ana), seat_of(card, ben)
    response = write(org_client, card, seat, "fives", "15", htmx=True, version=0)
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    # the version it patches: the page drops the patch if a refresh got past it meanwhile
    assert response["X-Dados-Base"] == "0"
    html = response.text
    assert "<html" not in html
    assert 'id="sheet"' not in html
    # the written box's cell, in a template so that a lone <td> parses, and not its row
    cell = f'<td id="c{seat.pk}-fives" hx-swap-oob="true">'
    assert html.index("<template>") < html.index(cell) < html.index("</template>")
    assert 'aria-label="Cincos — Ana: 15"' in html
    assert re.search(r'<tr id="row-total".*?<td>15</td><td>0</td></tr>', html)
    assert re.search(r'<tr id="row-place".*?<td>1º</td><td>2º</td></tr>', html)
    assert f'id="c{other.pk}-fives"' not in html
    assert 'id="row-fives"' not in html
    # every sum row, in a template of their own (a row after a cell would not parse)
    rows = html.index("<template>", html.index("</template>"))
    for row in SUM_ROWS:
        assert html.index(f'<tr id="row-{row}" class=') > rows
        assert re.search(rf'<tr id="row-{row}" class="\w+" hx-swap-oob="true">', html)
    # the new version for the poll and the next write (the poll itself stays in place),
    # undo enabled, the error cleared
    assert (
        '<input type="hidden" id="sheet-version" name="version" form="undo-form" value="1"'
        " hx-swap-oob" in html
    )
    assert 'id="sheet-poll"' not in html
    assert '<button type="submit" id="undo-button" hx-swap-oob="true"' in html
    assert '<div id="sheet-alert" hx-swap-oob="true"></div>' in html
    # what is missing, and «Últimos cambios» with the new entry on top
    assert '<div id="sheet-problems" hx-swap-oob="true">' in html
    assert '<ol id="recent-changes" hx-swap-oob="afterbegin">' in html
    assert "<bdi>Olga</bdi> anotó 15 en Cincos de <bdi>Ana</bdi>" in html
    assert seat_of(card, ana).fives == 15


@pytest.mark.parametrize(
    ("box", "value", "shows"),
    [
        ("chance", "20", '<td id="c{seat}-chance" hx-swap-oob="true">'),
        ("yahtzee", "50", '<td id="c{seat}-yahtzee" hx-swap-oob="true">'),
        (BONUS_BOX, "1", 'aria-label="Bonus Yahtzee — Ana: 1 '),
    ],
)
def test_a_write_answers_with_every_sum_row(org_client, card, ana, box, value, shows):
    seat = seat_of(card, ana)
    was = "0" if box == BONUS_BOX else ""
    if box == BONUS_BOX:
        write(org_client, card, seat, "yahtzee", "50")  # no bonus without it
    html = write(org_client, card, seat, box, value, was=was, htmx=True).text
    assert shows.format(seat=seat.pk) in html
    for row in SUM_ROWS:
        assert f'<tr id="row-{row}" class=' in html
    if box == BONUS_BOX:
        # The bonus line is a sum row, not a cell of its own.
        assert "hx-swap-oob" not in re.search(r"<td id=[^>]*yahtzee_bonuses[^>]*>", html).group()


def test_a_write_from_a_page_that_missed_a_change_gets_the_whole_sheet(org_client, card, ana):
    seen = version_of(card)
    write(org_client, card, seat_of(card, ana), "ones", "2")  # another device
    response = write(org_client, card, seat_of(card, ana), "twos", "4", htmx=True, version=seen)
    assert response.status_code == 200
    assert "HX-Reswap" not in response
    assert response["X-Dados-Version"] == "2"
    assert response.text.lstrip().startswith('<div id="sheet">')
    assert 'aria-label="Unos — Ana: 2"' in response.text  # the change this page missed
    assert 'aria-label="Doses — Ana: 4"' in response.text


@pytest.mark.parametrize("version", ["", "abc", "-1", "1", "99999999999999999999"])
def test_a_write_without_the_version_just_before_gets_the_whole_sheet(
    org_client, card, ana, version
):
    response = write(org_client, card, seat_of(card, ana), "twos", "4", htmx=True, version=version)
    assert response.status_code == 200
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert Seat.objects.get(pk=seat_of(card, ana).pk).twos == 4


def test_a_retried_write_whose_answer_was_lost_is_confirmed_with_the_whole_sheet(
    org_client, card, ana
):
    seat = seat_of(card, ana)
    assert write(org_client, card, seat, "sixes", "18", htmx=True)["HX-Reswap"] == "none"
    # the answer was lost and the page retries: nothing to write, the whole sheet
    response = write(org_client, card, seat, "sixes", "18", was="", htmx=True, version=0)
    assert response.status_code == 200
    assert 'id="sheet"' in response.text
    assert 'role="alert"' not in response.text
    assert len(logged_items()) == 1


def test_a_stale_write_is_refused_rather_than_overwriting(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "sixes", "18")
    response = write(org_client, card, seat, "sixes", "24", was="", htmx=True)
    assert response.status_code == 409
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert "\u2068Ana\u2069, Seises cambió mientras tanto (ahora: 18)." in response.text
    assert 'aria-label="Seises — Ana: 18"' in response.text
    assert seat_of(card, ana).sixes == 18
    assert version_of(card) == 1


def test_sin_anotar_clears_a_box(org_client, card, ana):
    write(org_client, card, seat_of(card, ana), "ones", "3")
    write(org_client, card, seat_of(card, ana), "ones", "", was="3")
    assert seat_of(card, ana).ones is None
    assert logged_items()[-1][3] is None


@pytest.mark.parametrize(
    ("box", "value", "message"),
    [
        ("fives", "17", "Cincos: 17 no es una puntuación posible."),
        ("chance", "0", "Libre (Chance): 0 no es una puntuación posible."),
        ("full_house", "20", "Full: 20 no es una puntuación posible."),
        ("ones", "-1", "«-1» no es una puntuación."),
        ("ones", "1e3", "«1e3» no es una puntuación."),
        ("ones", "٣", "«٣» no es una puntuación."),
        ("ones", "99999999999999999999", "«99999999999999999999» no es una puntuación."),
        (BONUS_BOX, "13", "Bonus Yahtzee: 13 no es una puntuación posible."),
        ("ones", "x", "«x» no es una puntuación."),
    ],
)
def test_an_impossible_value_is_refused_in_spanish_and_nothing_changes(
    org_client, card, ana, box, value, message
):
    response = write(org_client, card, seat_of(card, ana), box, value, htmx=True)
    assert response.status_code == 400
    assert "HX-Reswap" not in response
    assert 'id="sheet"' in response.text
    assert f'<div class="alert alert-error" role="alert">{message}</div>' in response.text
    assert Change.objects.count() == 0
    assert getattr(seat_of(card, ana), box) in (None, 0)


def test_a_refusal_without_htmx_is_said_on_the_card(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "fives", "17")
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    assert "Cincos: 17 no es una puntuación posible." in card_page(org_client, card)


def test_a_box_that_does_not_exist_is_404(org_client, card, ana):
    response = write(org_client, card, seat_of(card, ana), "sevens", "7", htmx=True)
    assert response.status_code == 404
    assert "Esa casilla no existe." in response.text
    assert write(org_client, card, seat_of(card, ana), "sevens", "7").status_code == 302
    assert Change.objects.count() == 0


def test_a_seat_of_another_card_is_refused(org_client, card, organizer):
    foreign = make_scorecard(organizer).seats.first()
    response = write(org_client, card, foreign, "ones", "1", htmx=True)
    assert response.status_code == 404
    assert "Ese jugador no está en esta tarjeta." in response.text
    assert Seat.objects.get(pk=foreign.pk).ones is None


def test_the_bonus_line_is_correctable(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    write(org_client, card, seat, BONUS_BOX, "2", was="0")
    write(org_client, card, seat, BONUS_BOX, "1", was="2")
    seat.refresh_from_db()
    assert seat.yahtzee_bonuses == 1
    # A card from before bonuses needed a 50: the card says the bonus does not hold.
    Seat.objects.filter(pk=seat.pk).update(yahtzee=0)
    response = org_client.get(reverse("scorecard", args=[card.pk]))
    assert "la casilla Yahtzee no tiene 50" in response.text


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_writes_a_box(client, card, ana, who, status):
    client.force_login(ana if who == "player" else UserFactory())
    seat = seat_of(card, ana)
    assert write(client, card, seat, "ones", "3").status_code == status
    assert write(client, card, seat, "ones", "3", htmx=True).status_code == status
    # whatever the data: a stranger learns nothing from how it is wrong
    assert write(client, card, seat, "sevens", "x", htmx=True).status_code == status
    assert seat_of(card, ana).ones is None
    assert not Change.objects.exists()


def test_staff_may_edit_any_card(client, card, ana):
    client.force_login(UserFactory(is_staff=True))
    assert write(client, card, seat_of(card, ana), "ones", "3").status_code == 302
    assert seat_of(card, ana).ones == 3


def test_a_write_on_a_finalized_card_is_refused(org_client, card, ana):
    finalize(card)
    response = write(org_client, card, seat_of(card, ana), "ones", "", was="3", htmx=True)
    assert response.status_code == 409
    assert "Esta tarjeta ya está finalizada y no puede cambiar." in response.text
    assert seat_of(card, ana).ones == 3


# «Yahtzee adicional»


def test_the_joker_picker_asks_the_face_then_offers_the_allowed_boxes(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    url = reverse("joker", args=[card.pk, seat.pk])
    page = org_client.get(url)
    assert page.status_code == 200
    assert "<html" in page.text
    assert "¿Qué número salió en los cinco dados?" in page.text
    assert "Suma +100" in page.text
    assert 'name="box"' not in page.text
    fragment = org_client.get(url, {"cara": "4"}, headers=HTMX)
    assert "<html" not in fragment.text
    assert fragment.text.lstrip().startswith('<div class="picker">')
    assert 'value="fours">Cuatros <strong>20</strong>' in fragment.text
    assert 'value="chance"' not in fragment.text
    assert fragment.headers["Vary"].count("HX-Request") == 1


def test_the_joker_picker_needs_the_yahtzee_box_used(org_client, card, ana):
    seat = seat_of(card, ana)
    response = org_client.get(reverse("joker", args=[card.pk, seat.pk]), {"cara": "4"})
    assert "Anota primero la casilla Yahtzee" in response.text
    assert 'name="box"' not in response.text


def test_the_joker_picker_with_a_scratched_yahtzee_promises_no_bonus(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "0")
    response = org_client.get(reverse("joker", args=[card.pk, seat.pk]), {"cara": "4"})
    assert "Yahtzee está tachado: no hay bonus" in response.text


def test_the_joker_picker_says_when_no_box_is_left(org_client, card, ana):
    fill(card)
    response = org_client.get(
        reverse("joker", args=[card.pk, seat_of(card, ana).pk]), {"cara": "4"}
    )
    assert "No queda ninguna casilla libre." in response.text
    assert 'name="box"' not in response.text


def test_joker_with_50_writes_the_upper_box_and_the_bonus_together(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]), {"face": "4", "box": "fours"}
    )
    assert response.status_code == 302
    assert response.url == reverse("scorecard", args=[card.pk])
    seat.refresh_from_db()
    assert (seat.fours, seat.yahtzee_bonuses) == (20, 1)
    assert Change.objects.latest("pk").kind == "joker"


def test_a_joker_from_the_current_page_answers_with_its_cell_and_the_sums(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]),
        {"face": "3", "box": "threes", "version": 1},
        headers=HTMX,
    )
    assert response["HX-Reswap"] == "none"
    assert response["X-Dados-Base"] == "1"
    assert f'<td id="c{seat.pk}-threes" hx-swap-oob="true">' in response.text
    assert f'<td id="c{seat.pk}-{BONUS_BOX}" hx-swap-oob' not in response.text
    assert '<tr id="row-yahtzee_bonuses" class="sum" hx-swap-oob="true">' in response.text
    assert (
        "<bdi>Olga</bdi> anotó un Yahtzee adicional de <bdi>Ana</bdi>: 15 en Treses"
        " (+100 de bonus)" in response.text
    )


def test_joker_refuses_a_box_out_of_the_forced_order(org_client, card, ana):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(
        reverse("joker", args=[card.pk, seat.pk]), {"face": "4", "box": "chance"}, headers=HTMX
    )
    assert response.status_code == 409
    assert "El orden del comodín no permite anotar en Libre (Chance)." in response.text
    seat.refresh_from_db()
    assert (seat.chance, seat.yahtzee_bonuses) == (None, 0)


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"face": "9", "box": "ones"},
        {"face": "x"},
        {"box": "?"},
        {"face": "٣", "box": "threes"},  # an Arabic-Indic three: int() would take it
        {"face": " 3", "box": "threes"},
        {"face": "03", "box": "threes"},
    ],
)
def test_joker_rejects_malformed_requests(org_client, card, ana, data):
    seat = seat_of(card, ana)
    write(org_client, card, seat, "yahtzee", "50")
    response = org_client.post(reverse("joker", args=[card.pk, seat.pk]), data, headers=HTMX)
    assert response.status_code == 400
    assert "Elige la cara de los dados y una casilla." in response.text
    assert Change.objects.count() == 1


def test_the_joker_of_a_seat_not_on_the_card_is_404(org_client, card, ana):
    foreign = seat_of(make_scorecard(card.organizer, [ana]), ana)
    assert org_client.get(reverse("joker", args=[card.pk, foreign.pk])).status_code == 404


@pytest.mark.parametrize(("who", "status"), [("player", 403), ("stranger", 404)])
def test_only_the_organizer_opens_or_sends_a_joker(client, card, ana, who, status):
    seat = seat_of(card, ana)
    services.box_write(
        scorecard_id=card.pk,
        seat_id=seat.pk,
        box="yahtzee",
        value="50",
        was="",
        author=card.organizer,
    )
    client.force_login(ana if who == "player" else UserFactory())
    url = reverse("joker", args=[card.pk, seat.pk])
    assert client.get(url, {"cara": "4"}).status_code == status
    assert client.post(url, {"face": "4", "box": "fours"}).status_code == status
    assert client.post(url, {"face": "4", "box": "fours"}, headers=HTMX).status_code == status
    assert Change.objects.count() == 1


def test_a_joker_takes_get_and_post_only(org_client, card, ana):
    assert (
        org_client.put(reverse("joker", args=[card.pk, seat_of(card, ana).pk])).status_code == 405
    )


# Query budgets: the same for 2 and 8 players


@pytest.mark.parametrize("n", [2, 8])
def test_a_write_costs_the_same_for_2_and_8_players(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    seat = card.seats.first()
    client.force_login(organizer)
    # session, user; SAVEPOINT; the card locked, with its organizer; its seats with their
    # players; the version UPDATE (on the condition that it is still the one read); the
    # seat's UPDATE; the change's INSERT; RELEASE SAVEPOINT. The answer's patch shows the
    # change just recorded, and asks for nothing more.
    with django_assert_num_queries(9):
        response = write(client, card, seat, "ones", "1", htmx=True, version=0)
    assert response["HX-Reswap"] == "none"
    # the whole sheet (a page that missed a change) reads the recent changes with their
    # authors
    with django_assert_num_queries(10):
        response = write(client, card, seat, "twos", "2", htmx=True, version=0)
    assert "HX-Reswap" not in response
    # a joker writes two boxes of one seat: one UPDATE still
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="yahtzee", value="50", was="", author=organizer
    )
    with django_assert_num_queries(9):
        response = client.post(
            reverse("joker", args=[card.pk, seat.pk]),
            {"face": "3", "box": "threes", "version": 3},
            headers=HTMX,
        )
    assert response["HX-Reswap"] == "none"
    # an undo also reads the change it undoes, after the seats
    with django_assert_num_queries(10):
        response = client.post(reverse("undo", args=[card.pk]), {"version": 4}, headers=HTMX)
    assert response["HX-Reswap"] == "none"


@pytest.mark.parametrize("n", [2, 8])
def test_the_picker_and_the_json_export_cost_four_queries(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    seat = card.seats.first()
    client.force_login(organizer)
    # session, user, the card with its organizer, its seats with their players
    with django_assert_num_queries(4):
        client.get(reverse("box", args=[card.pk, seat.pk, "ones"]), headers=HTMX)
    with django_assert_num_queries(4):
        client.get(reverse("scorecard_json", args=[card.pk]))
