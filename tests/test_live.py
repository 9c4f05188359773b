"""The live card's poll (scorecards.views.card.scorecard_live): 204 while nothing changed, only
what changed for a page a few changes behind, the whole sheet otherwise, and the session
checked on every poll."""

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from unittest import mock
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from scorecards import live as stream_hub
from scorecards import services, sheets, turns
from scorecards.labels import BONUS_BOX
from scorecards.models import Scorecard
from tests.factories import UserFactory, fill, make_scorecard, seat_of
from tests.screens import Viewer, seen

pytestmark = pytest.mark.django_db


def run_apart(coroutine):
    """asyncio.run on a thread of its own: in a worker where a browser test ran first,
    Playwright's event loop is still running on the main thread, and asyncio.run refuses."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


HTMX = {"HX-Request": "true"}
SUM_ROWS = ("upper", "upper_bonus", "lower", "yahtzee_bonuses", "total", "place")


def version_of(card):
    return Scorecard.objects.get(pk=card.pk).version


def live(client, card, version, htmx=True, page=None):
    """The page's poll: every 3 s, with the version it shows (hx-include="#sheet-version")."""
    headers = dict(HTMX) if htmx else {}
    if page:
        headers["HX-Current-URL"] = f"http://testserver{page}"
    query = {} if version is None else {"version": version}
    return client.get(reverse("scorecard_live", args=[card.pk]), query, headers=headers)


def write(card, player, box, value, was="", author=None):
    return services.box_write(
        scorecard_id=card.pk,
        seat_id=seat_of(card, player).pk,
        box=box,
        value=value,
        was=was,
        author=author or card.organizer,
    ).scorecard


def oob_cells(html) -> set[str]:
    """The ids of the cells a patch swaps in."""
    return set(re.findall(r'<td id="(c\d+-\w+)" hx-swap-oob="true">', html))


def cell(card, player, box):
    return f"c{seat_of(card, player).pk}-{box}"


# Nothing changed


@pytest.mark.parametrize("who", ["player", "organizer", "staff"])
def test_a_poll_while_nothing_changed_gets_204_and_nothing_else(client, card, ana, organizer, who):
    client.force_login(
        {"player": ana, "organizer": organizer}.get(who) or UserFactory(is_staff=True)
    )
    write(card, ana, "ones", "3")
    response = live(client, card, 1)
    assert response.status_code == 204
    assert response.content == b""
    assert "Set-Cookie" not in response.headers  # nor the session saved again


def test_the_card_page_polls_while_in_progress(client, card, ana, settings):
    client.force_login(ana)
    page = client.get(reverse("scorecard", args=[card.pk])).text
    assert "sse-connect" not in page  # WSGI (the test client's): the page only polls
    # Under ASGI, or with the streams served apart by an ASGI server of their own.
    settings.STREAMS_APART = True
    page = client.get(reverse("scorecard", args=[card.pk])).text
    poll = re.search(r'<div class="poll" id="sheet-poll"[^>]*>', page).group(0)
    assert f'hx-get="{reverse("scorecard_live", args=[card.pk])}"' in poll
    assert 'hx-include="#sheet-version"' in poll
    assert (
        '<input type="hidden" id="sheet-version" name="version" form="undo-form" value="0">' in page
    )
    # When told the card moved: by the stream, or by live.js every 3 s while none is open.
    assert 'hx-trigger="card-moved" data-every="3000"' in poll
    assert 'hx-target="#sheet"' in poll
    assert "hx-swap-oob" not in poll
    # The stream, opened by htmx's SSE extension (served from django-htmx's static files)
    # from the version the page shows, around the sheet that the poll's answers replace.
    stream = reverse("scorecard_events", args=[card.pk])
    assert f'<div id="card-stream" hx-ext="sse" sse-connect="{stream}?version=0">' in page
    assert page.index('id="card-stream"') < page.index('id="sheet"') < page.index('id="sheet-poll"')
    assert "/static/django_htmx/ext/hx-sse-2.min" in page
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    finished = client.get(reverse("scorecard", args=[card.pk])).text
    assert "vivo/" not in finished
    assert "eventos/" not in finished
    assert "hx-sse" not in finished


@pytest.mark.parametrize("n", [2, 8])
def test_an_unchanged_poll_costs_three_queries(client, organizer, django_assert_num_queries, n):
    card = make_scorecard(organizer, n=n)
    client.force_login(card.seats.first().player)
    # the session, the user, the card's version (with who may see it)
    with django_assert_num_queries(3):
        assert live(client, card, card.version).status_code == 204


# A page a few changes behind: only what changed


def test_a_page_one_change_behind_gets_the_written_cell_and_what_follows_it(client, card, ana, ben):
    client.force_login(ben)
    write(card, ana, "fives", "15")
    response = live(client, card, 0)
    assert response.status_code == 200
    assert response["HX-Reswap"] == "none"
    # the version it patches: the page drops it if another answer got past that meanwhile
    assert response["X-Dados-Base"] == "0"
    html = response.text
    assert "<html" not in html
    assert '<div id="sheet">' not in html
    assert oob_cells(html) == {cell(card, ana, "fives")}
    assert '<span class="visually-hidden">Cincos — <bdi>Ana</bdi>: 15</span>' in html
    for row in SUM_ROWS:
        assert re.search(rf'<tr id="row-{row}" class="\w+" hx-swap-oob="true">', html)
    # the version the next poll sends; the poll itself stays in place
    assert (
        '<input type="hidden" id="sheet-version" name="version" form="undo-form" value="1"'
        " hx-swap-oob" in html
    )
    assert 'id="sheet-poll"' not in html
    assert '<ol id="recent-changes" hx-swap-oob="afterbegin">' in html
    assert "<bdi>Olga</bdi> anotó 15 en Cincos de <bdi>Ana</bdi>" in html
    # the organizer's controls come too, for everyone: a player's page does not show the
    # cells' links, nor where «Deshacer» and the problems go (the sheet's .only-manager)
    assert "casilla/" in html
    assert 'id="undo-button"' in html
    shown = seen(html, Viewer(me=str(ben.pk), manager=False, part=True, every_turn=False))
    assert "casilla/" not in shown


def test_a_patch_brings_only_the_changes_made_since_the_page(client, card, ana, ben):
    client.force_login(ana)
    write(card, ben, "chance", "20")  # version 1: the page shows it already
    write(card, ana, "ones", "3")
    write(card, ben, "sixes", "24")
    html = live(client, card, 1).text
    changes = re.search(r'<ol id="recent-changes" hx-swap-oob="afterbegin">(.*?)</ol>', html, re.S)
    # Newest first, put before the ones the page shows.
    assert re.findall(r"anotó (\d+) en", changes[1]) == ["24", "3"]


def test_a_page_some_changes_behind_gets_only_the_cells_written_since(client, card, ana, ben):
    client.force_login(ana)
    write(card, ben, "chance", "20")  # version 1: the page shows it already
    write(card, ana, "ones", "3")
    write(card, ben, "sixes", "24")
    write(card, ana, "ones", "4", was="3")  # the same cell twice: swapped in once
    response = live(client, card, 1)
    assert response["X-Dados-Base"] == "1"
    html = response.text
    assert oob_cells(html) == {cell(card, ana, "ones"), cell(card, ben, "sixes")}
    assert html.count(f'id="{cell(card, ana, "ones")}"') == 1
    assert '<span class="visually-hidden">Unos — <bdi>Ana</bdi>: 4</span>' in html
    assert 'id="sheet-version" name="version" form="undo-form" value="4"' in html
    row = re.search(r'<tr id="row-total".*?</tr>', html, re.S).group(0)
    assert "<td>4</td><td>44</td>" in row


def test_a_bonus_a_joker_and_an_undo_since_the_page_are_patched_too(client, card, organizer, ana):
    client.force_login(ana)
    write(card, ana, "yahtzee", "50")
    services.joker_write(
        scorecard_id=card.pk,
        seat_id=seat_of(card, ana).pk,
        face="2",
        box="twos",
        author=organizer,
    )
    write(card, ana, BONUS_BOX, "2", was="1")
    services.change_undo(scorecard_id=card.pk, author=organizer, version=version_of(card))
    html = live(client, card, 1).text
    # the bonus line is a sum row, not a cell
    assert oob_cells(html) == {cell(card, ana, "twos")}
    bonuses = re.search(r'<tr id="row-yahtzee_bonuses".*?</tr>', html, re.S).group(0)
    # the joker's +100, back after the undo of the 2
    assert '<span class="not-manager">100</span>' in bonuses
    assert "deshizo un cambio" in html
    assert 'id="sheet-version" name="version" form="undo-form" value="4"' in html


def test_a_page_at_the_limit_gets_a_patch_and_one_further_behind_the_whole_sheet(
    client, card, ana, ben
):
    client.force_login(ben)
    was = ""
    for n in range(sheets.PATCH_LIMIT + 1):
        write(card, ana, "ones", str(1 + n % 2), was=was)
        was = str(1 + n % 2)
    assert version_of(card) == sheets.PATCH_LIMIT + 1
    response = live(client, card, 1)
    assert response["HX-Reswap"] == "none"
    assert oob_cells(response.text) == {cell(card, ana, "ones")}
    response = live(client, card, 0)
    assert "HX-Reswap" not in response
    assert response["X-Dados-Version"] == str(sheets.PATCH_LIMIT + 1)
    assert response.text.lstrip().startswith('<div id="sheet">')


# The whole sheet


def test_a_finalized_card_is_sent_whole_and_stops_the_poll(client, card, ana):
    client.force_login(ana)
    write(card, ana, "ones", "3")
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    for since in (0, 1):  # one version behind: the finalize is no change a patch can carry
        response = live(client, card, since)
        assert response.status_code == 200
        assert "HX-Reswap" not in response
        assert response["X-Dados-Version"] == "2"
        html = response.text
        assert "<html" not in html
        assert html.lstrip().startswith('<div id="sheet">')
        assert "vivo/" not in html
        assert "presencial" in html
        assert "1º" in html
        assert "Registro de cambios" in html
    assert live(client, card, 2).status_code == 204


@pytest.mark.parametrize("version", [None, "", "💥", "-1", "1e3", "٣", "9" * 40, "7"])
def test_a_malformed_or_unknown_version_gets_the_whole_sheet(client, card, ana, version):
    client.force_login(ana)
    write(card, ana, "ones", "3")
    response = live(client, card, version)
    assert response.status_code == 200
    assert "HX-Reswap" not in response
    assert response["X-Dados-Version"] == "1"
    assert response.text.lstrip().startswith('<div id="sheet">')
    assert 'id="sheet-version" name="version" form="undo-form" value="1">' in response.text
    assert 'id="sheet-poll"' in response.text


def test_the_whole_sheet_is_the_one_the_page_shows(client, card, ana):
    client.force_login(ana)
    write(card, ana, "ones", "3")
    sheet = live(client, card, "x").text
    page = client.get(reverse("scorecard", args=[card.pk])).text
    assert sheet.strip() in page


# Who may poll


def test_strangers_cannot_poll(client, card):
    client.force_login(UserFactory())
    for version in (0, 1, "x", "💥", ""):
        assert live(client, card, version).status_code == 404
    assert client.get("/tarjetas/99999999999999999999999/vivo/?version=0").status_code == 404


def test_a_discarded_card_is_gone_for_its_poll(client, card, ana):
    client.force_login(ana)
    services.scorecard_discard(scorecard_id=card.pk, author=card.organizer)
    assert live(client, card, 0).status_code == 404


def test_the_poll_takes_get_only(client, card, ana):
    client.force_login(ana)
    assert client.post(reverse("scorecard_live", args=[card.pk])).status_code == 405


# The session, checked on every poll


def _log_out_elsewhere(user):
    user.end_sessions()


def _deactivate(user):
    user.is_active = False
    user.save()


def _change_password(user):
    user.set_password("otra-clave-bien-larga-42")
    user.save()


@pytest.mark.parametrize("ended", [_log_out_elsewhere, _deactivate, _change_password])
def test_a_poll_after_the_session_ended_elsewhere_sends_the_page_to_log_in(
    client, card, ana, ended
):
    client.force_login(ana)
    page = reverse("scorecard", args=[card.pk])
    assert live(client, card, 0, page=page).status_code == 204
    ended(ana)
    # at the next poll, with nothing changed on the card
    response = live(client, card, 0, page=page)
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"{reverse('login')}?next={quote(page)}"
    assert response.content == b""
    response = live(client, card, 0, htmx=False)
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_a_poll_without_a_session_is_sent_to_log_in(card):
    response = live(Client(), card, 0, page=reverse("scorecard", args=[card.pk]))
    assert response["HX-Redirect"].startswith(reverse("login") + "?next=/tarjetas/")
    assert live(Client(), card, 0, htmx=False).status_code == 302


def test_a_poll_with_a_temporary_password_is_sent_to_change_it(client, card, ana):
    client.force_login(ana)
    ana.must_change_password = True
    ana.save()
    response = live(client, card, 0)
    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("password_change")
    assert response.content == b""


# The organizer's page


def test_the_organizers_write_answer_brings_the_poll_to_its_version(org_client, card, ana):
    response = org_client.post(
        reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"]),
        {"value": "3", "was": "", "version": 0},
        headers=HTMX,
    )
    assert response["HX-Reswap"] == "none"
    shown = re.search(
        r'id="sheet-version" name="version" form="undo-form" value="(\d+)"', response.text
    )
    assert shown.group(1) == "1"
    # the next poll sends it and finds nothing new: it cannot put back what the write replaced
    assert live(org_client, card, shown.group(1)).status_code == 204


def test_the_organizers_poll_after_another_device_wrote_keeps_the_controls(org_client, card, ana):
    write(card, ana, "ones", "3", author=UserFactory(is_staff=True))
    response = live(org_client, card, 0)
    assert response["HX-Reswap"] == "none"
    html = response.text
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    assert f'<a class="cell only-manager" href="{url}"' in html
    assert 'aria-label="Unos — Ana: 3"' in html
    assert '<button type="submit" id="undo-button" hx-swap-oob="true"' in html
    assert '<div id="sheet-problems" hx-swap-oob="true">' in html
    assert '<div id="sheet-alert" hx-swap-oob="true"></div>' in html


def test_who_may_see_the_card_is_asked_at_every_poll(client, card):
    """A staff member who is no longer staff stops seeing a card they do not play in."""
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    assert live(client, card, 0).status_code == 204
    staff.is_staff = False
    staff.save()
    assert live(client, card, 0).status_code == 404


@pytest.mark.parametrize("n", [2, 8])
def test_a_poll_behind_costs_the_same_for_2_and_8_players(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    seat = card.seats.first()
    client.force_login(seat.player)
    services.box_write(
        scorecard_id=card.pk, seat_id=seat.pk, box="ones", value="1", was="", author=organizer
    )
    # the session, the user, the card's version; the card with its organizer; its seats
    # with their players; the items of the changes since the page's version; the recent
    # changes with their authors
    with django_assert_num_queries(7):
        assert live(client, card, 0)["HX-Reswap"] == "none"
    # the whole sheet reads no more than the patch: the changes since are not needed
    with django_assert_num_queries(6):
        assert live(client, card, "x").status_code == 200


# One render per change, the same for every phone


@pytest.mark.parametrize("n", [4, 8])
def test_every_phone_shares_one_render_of_a_patch(organizer, django_assert_num_queries, n):
    card = make_scorecard(organizer, n=n)
    seats = list(card.seats.all())
    write(card, seats[0].player, "ones", "3")  # the turn passes to the second seat
    # The organizer, staff, the turn's player and those who only watch.
    users = [organizer, UserFactory(is_staff=True), *(seat.player for seat in seats)]
    first, *others = [Client() for _ in users]
    first.force_login(users[0])
    rendered = live(first, card, 0)
    assert (rendered["HX-Reswap"], rendered["X-Dados-Shared"]) == ("none", "miss")
    for client, user in zip(others, users[1:], strict=True):
        client.force_login(user)
        # the session, the user, the card's version: the patch comes from the cache
        with django_assert_num_queries(3):
            shared = live(client, card, 0)
        assert shared.content == rendered.content
        assert (shared["HX-Reswap"], shared["X-Dados-Base"]) == ("none", "0")
        assert shared["X-Dados-Shared"] == "hit"  # what the bench counts for its hit rate


def _viewers(card, staff):
    """The organizer, staff, the turn's player and a player who only watches, each with
    a phone."""
    scorecard = Scorecard.objects.with_seats().get(pk=card.pk)
    turn = scorecard.turn.seat.player
    watcher = next(s.player for s in scorecard.seats.all() if s.player != turn)
    phones = []
    for user in (card.organizer, staff, turn, watcher):
        phone = Client()
        phone.force_login(user)
        phones.append(phone)
    return phones


@pytest.mark.parametrize("language", ["es", "en"])
@pytest.mark.parametrize("mode", ["presencial", "digital"])
def test_every_viewer_gets_the_same_bytes_from_the_write_the_poll_and_the_stream(
    card, ana, ben, scripted, language, mode
):
    organizer = card.organizer
    if mode == "digital":
        card = services.scorecard_create(organizer=organizer, players=[ana, ben], mode=mode)
    phones = _viewers(card, UserFactory(is_staff=True))
    for phone in phones:
        phone.cookies["django_language"] = language
    # The organizer's write, or Ana's roll: its answer is the patch everyone gets.
    if mode == "digital":
        scripted += [1, 2, 3, 4, 5]
        phones[2].force_login(ana)
        answer = phones[2].post(
            reverse("roll", args=[card.pk]), {"version": "0", "dados": ""}, headers=HTMX
        )
    else:
        url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
        answer = phones[0].post(url, {"value": "3", "was": "", "version": "0"}, headers=HTMX)
    assert (answer.status_code, answer["X-Dados-Base"]) == (200, "0")
    patches = {live(phone, card, 0).content for phone in phones}
    assert patches == {answer.content}
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    with translation.override(language):
        assert sheets.stream_patch(fields, 0) == (1, answer.content.decode())
    # The whole sheet: the same for everyone too, in the page and as the fragment.
    fragments = {p.get(reverse("scorecard", args=[card.pk]), headers=HTMX).content for p in phones}
    assert len(fragments) == 1
    pages = {_sheet_in(p.get(reverse("scorecard", args=[card.pk])).text) for p in phones}
    assert pages == {fragments.pop().decode().strip()}
    # Nothing in them belongs to one person.
    for html in (answer.text, *pages):
        assert "csrfmiddlewaretoken" not in html
        assert 'name="csrf' not in html
    # A stranger sees nothing of it.
    stranger = Client()
    stranger.force_login(UserFactory())
    assert live(stranger, card, 0).status_code == 404
    assert stranger.get(reverse("scorecard", args=[card.pk]), headers=HTMX).status_code == 404


def _sheet_in(page):
    return re.search(r'<div id="sheet">.*</section>\n</div>', page, re.S)[0].strip()


def test_each_page_shows_its_viewer_their_own_controls(card, ana, ben):
    write(card, ana, "ones", "3")  # Ben's turn
    olga, staff, bens, anas = (
        seen(phone.get(reverse("scorecard", args=[card.pk])).text)
        for phone in _viewers(card, UserFactory(is_staff=True))
    )
    for organizes in (olga, staff):
        assert "casilla/" in organizes
        assert 'id="undo-button"' in organizes
        assert "Se actualiza sola." not in organizes
    assert "te toca a ti" in bens
    assert "le toca a <bdi>Ben</bdi>" not in bens
    assert "le toca a <bdi>Ben</bdi>" in anas
    for watches in (anas, bens):
        assert "casilla/" not in watches
        assert 'id="undo-button"' not in watches
        assert "Se actualiza sola." in watches


def test_a_patch_is_rendered_once_for_six_streams_and_two_polls(card, ana, ben, monkeypatch):
    write(card, ana, "ones", "3")
    renders = []
    render = sheets.render_to_string
    monkeypatch.setattr(
        sheets, "render_to_string", lambda *a, **kw: renders.append(a[0]) or render(*a, **kw)
    )
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    with translation.override("es"):
        streamed = {sheets.stream_patch(fields, 0) for _ in range(6)}
    polled = {live(phone, card, 0).content.decode() for phone in _viewers(card, ana)[:2]}
    assert renders == ["scorecards/card.html#patch"]
    assert len(streamed) == 1
    assert polled == {streamed.pop()[1]}


@pytest.mark.parametrize("n", [2, 8])
def test_a_streams_patch_costs_four_queries_to_render_and_none_from_the_cache(
    organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    write(card, card.seats.first().player, "ones", "3")
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    with translation.override("es"):
        # The card with its organizer, its seats with their players, the cells written
        # since, those changes in words with their authors.
        with django_assert_num_queries(4):
            rendered = sheets.stream_patch(fields, 0)
        with django_assert_num_queries(0):
            assert sheets.stream_patch(fields, 0) == rendered


def test_the_writes_answer_is_the_render_the_others_get(org_client, card, ana, monkeypatch):
    url = reverse("box", args=[card.pk, seat_of(card, ana).pk, "ones"])
    answer = org_client.post(url, {"value": "3", "was": "", "version": "0"}, headers=HTMX)
    renders = []
    monkeypatch.setattr(sheets, "render_to_string", lambda *a, **kw: renders.append(a))
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    with translation.override("es"):
        assert sheets.stream_patch(fields, 0) == (1, answer.text)
    assert renders == []


def _written(kind, org_client, card, ana, scripted):
    """One write of each kind, made through its view as the page sends it: its answer."""
    ana_seat = seat_of(card, ana)
    if kind in ("roll", "score"):
        scripted += [6, 6, 6, 6, 6]
        version = version_of(card)
        answer = org_client.post(
            reverse("roll", args=[card.pk]), {"version": version, "dados": ""}, headers=HTMX
        )
        if kind == "roll":
            return answer
        url, data = reverse("score", args=[card.pk]), {"casilla": "yahtzee"}
    elif kind == "box":
        url = reverse("box", args=[card.pk, ana_seat.pk, "ones"])
        data = {"value": "3", "was": ""}
    elif kind == "joker":
        write(card, ana, "yahtzee", "50")
        url, data = reverse("joker", args=[card.pk, ana_seat.pk]), {"face": "4", "box": "fours"}
    else:
        write(card, ana, "twos", "6")
        url, data = reverse("undo", args=[card.pk]), {}
    return org_client.post(url, data | {"version": version_of(card)}, headers=HTMX)


@pytest.mark.parametrize("kind", ["box", "joker", "undo", "roll", "score"])
def test_a_writes_patch_shows_the_change_it_recorded_as_the_database_says_it(
    org_client, organizer, ana, ben, scripted, kind
):
    mode = "digital" if kind in ("roll", "score") else "presencial"
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], mode=mode)
    if mode == "presencial":
        write(card, ben, "chance", "20")
    answer = _written(kind, org_client, card, ana, scripted)
    since = int(answer["X-Dados-Base"])
    assert (answer.status_code, version_of(card)) == (200, since + 1)
    # Rendered again, from what the database holds: the same bytes.
    sheets.cache.clear()
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    with translation.override("es"):
        assert sheets.stream_patch(fields, since) == (since + 1, answer.text)
    assert ("Tiradas:" in answer.text) == (kind == "score")
    assert ("deshizo" in answer.text) == (kind == "undo")
    # The sums come with a box written, not with a roll.
    assert ('<tr id="row-total"' in answer.text) == (kind != "roll")


def test_a_phone_that_misses_waits_for_the_render_in_progress(card):
    fields = sheets.fields(card)
    sheets.cache.add(sheets.key(fields, "sheet:x") + ":claim", 1)  # another's render
    timer = threading.Timer(0.1, sheets.cache.set, [sheets.key(fields, "sheet:x"), "theirs"])
    timer.start()
    try:
        assert sheets.shared(fields, "sheet:x", lambda: pytest.fail("rendered twice")) == (
            "theirs",
            True,
        )
    finally:
        timer.cancel()


def test_a_claim_whose_render_never_comes_is_waited_for_a_moment_only(card, monkeypatch):
    monkeypatch.setattr(sheets, "WAIT_FOR", 0.05)
    fields = sheets.fields(card)
    sheets.cache.add(sheets.key(fields, "sheet:y") + ":claim", 1)
    assert sheets.shared(fields, "sheet:y", lambda: "mine") == ("mine", False)
    assert sheets.cached(fields, "sheet:y") == "mine"


def _claimed_elsewhere(card, since=0):
    """The card's patch from `since` as another process claimed it and never renders it
    (it died, or takes its time): its stream's phones here miss it in the cache."""
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    with translation.override("es"):
        name = sheets.key(fields, f"patch:{since}")
    assert sheets.cache.add(name + ":claim", 1, 60)
    return fields, name


def test_a_stream_renders_a_patch_another_process_claimed_rather_than_sleep(card, ana, monkeypatch):
    """A stream's patch is rendered on the one thread that serves every stream of its
    process (live.Versions.run): it never sleeps there waiting for another's render."""
    write(card, ana, "ones", "3")
    fields, name = _claimed_elsewhere(card)
    monkeypatch.setattr(sheets.time, "sleep", lambda seconds: pytest.fail("a stream slept"))
    with translation.override("es"):
        version, html = sheets.stream_patch(fields, 0)
    assert version == 1
    assert cell(card, ana, "ones") in oob_cells(html)
    assert sheets.cache.get(name) == html  # kept for the polls and the other processes


@pytest.mark.django_db(transaction=True)
def test_a_claim_held_by_another_process_stalls_no_stream_of_this_one(organizer, ana, ben):
    """Two cards streamed by one process: the first's patch was claimed by another process
    whose render never comes, and the second card's patch still reaches its streams, on
    the process's one thread for them, long before that claim would be waited out."""
    held, free = (make_scorecard(organizer, [ana, ben]) for _ in range(2))
    for card in (held, free):
        write(card, ana, "ones", "3")
    fields = {card.pk: _claimed_elsewhere(card)[0] for card in (held, free)}
    sheets.cache.delete(sheets.key(fields[free.pk], "patch:0") + ":claim")

    def stream_patch(pk):
        with translation.override("es"):
            return sheets.stream_patch(fields[pk], 0)

    async def streams():
        hub = stream_hub.Versions()
        asked = [hub.patch((card.pk, 0, 1, "es"), stream_patch, card.pk) for card in (held, free)]
        # Seconds for what takes milliseconds; waiting the claim out would take WAIT_FOR
        # (made 30 s here), on the thread every stream of the process waits for.
        return await asyncio.wait_for(asyncio.gather(*asked), 5.0)

    with mock.patch.object(sheets, "WAIT_FOR", 30.0):
        (held_version, held_html), (free_version, free_html) = run_apart(streams())
    assert (held_version, free_version) == (1, 1)
    assert cell(held, ana, "ones") in oob_cells(held_html)
    assert cell(free, ana, "ones") in oob_cells(free_html)


def test_a_stream_brings_a_digital_turns_forms_too(organizer, ana, ben, scripted):
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], mode="digital")
    scripted += [1, 2, 3, 4, 5]
    turns.turn_roll(scorecard_id=card.pk, author=ana, version="0", shown="", keep=[])
    fields = Scorecard.objects.filter(pk=card.pk).values(*sheets.CARD_FIELDS)[0]
    with translation.override("es"):
        version, html = sheets.stream_patch(fields, 0)
    assert version == 1
    # The turn's forms, for Ana and for the organizer, who may play any seat; Ben's dice.
    viewers = {
        ana: Viewer(me=str(ana.pk), manager=False, part=True, every_turn=False),
        organizer: Viewer(me=str(organizer.pk), manager=True, part=True, every_turn=True),
        ben: Viewer(me=str(ben.pk), manager=False, part=True, every_turn=False),
    }
    screens = {user: seen(html, viewer) for user, viewer in viewers.items()}
    assert re.search(r'id="roll-button"><span class="only-mine">Tirar</span>', screens[ana])
    assert "Tirar por <bdi>Ana</bdi>" not in screens[ana]
    assert "Tirar por <bdi>Ana</bdi>" in screens[organizer]
    assert 'class="roll-form"' not in screens[ben]
    assert screens[ben].count('class="die"') == 5
    # No CSRF token in it: htmx sends the page's.
    assert "csrfmiddlewaretoken" not in html
    # A card gone (discarded): nothing to share; the poll says it is gone.
    services.scorecard_discard(scorecard_id=card.pk, author=organizer)
    with translation.override("es"):
        assert sheets.stream_patch(fields | {"version": 2}, 1) is None


def test_a_digital_turns_forms_come_without_a_token_and_htmx_sends_the_pages(
    organizer, ana, ben, scripted
):
    card = services.scorecard_create(organizer=organizer, players=[ana, ben], mode="digital")
    scripted += [1, 2, 3, 4, 5]
    turns.turn_roll(scorecard_id=card.pk, author=ana, version="0", shown="", keep=[])
    phones = {}
    for name, who in (("ana", ana), ("ana again", ana), ("olga", organizer), ("ben", ben)):
        phones[name] = Client(enforce_csrf_checks=True)
        phones[name].force_login(who)
        answer = live(phones[name], card, 0)
        assert 'name="csrfmiddlewaretoken"' not in answer.text
        phones[name].shared = answer["X-Dados-Shared"]
        phones[name].patch = answer.text
    assert [phone.shared for phone in phones.values()] == ["miss", "hit", "hit", "hit"]
    assert len({phone.patch for phone in phones.values()}) == 1
    # Ana rolls again from the patched form: refused without the page's token, which
    # changes nothing; taken with it, in the header htmx sends (base.html's hx-headers).
    page = phones["ana"].get(reverse("scorecard", args=[card.pk])).text
    token = re.search(r'"X-CSRFToken": "([^"]+)"', page)[1]
    url = reverse("roll", args=[card.pk])
    form = {"version": "1", "dados": "12345", "guardar": ["1"]}
    scripted += [6, 6, 6, 6]
    assert phones["ana"].post(url, form, headers=HTMX).status_code == 403
    assert version_of(card) == 1
    rolled = phones["ana"].post(url, form, headers=HTMX | {"X-CSRFToken": token})
    assert rolled.status_code == 200
    assert version_of(card) == 2
    # Without JavaScript, the page gives each of the sheet's forms its viewer's token.
    for form_id in ("undo-form", "roll-form", "score-form", "rematch-form"):
        assert re.search(rf'name="csrfmiddlewaretoken" value="[^"]+" form="{form_id}"', page)


# The stream's per-change work (scorecards.live): one query a tick for every card a
# process streams, however many; then each phone's fetch is a poll (budgets above).


@pytest.mark.parametrize("n", [2, 20])
def test_a_stream_process_reads_its_cards_versions_and_their_viewers_in_three_queries(
    organizer, django_assert_num_queries, monkeypatch, n
):
    cards = [make_scorecard(organizer, n=2) for _ in range(n)]
    fill(cards[0])
    services.scorecard_finalize(scorecard_id=cards[0].pk, author=organizer)
    viewers = []
    for card in cards:
        player, phone = card.seats.first().player, Client()
        phone.force_login(player)
        viewers.append(stream_hub.Viewer(_session_key(phone), player.pk))
    # Outside the tests' transaction it closes a connection past CONN_MAX_AGE.
    monkeypatch.setattr(stream_hub, "close_old_connections", lambda: None)
    gone = max(card.pk for card in cards) + 1
    known = dict.fromkeys([card.pk for card in cards] + [gone])
    of = {card.pk: [viewer] for card, viewer in zip(cards, viewers, strict=True)} | {gone: []}
    # the versions, the sessions still there, the viewers' accounts
    with django_assert_num_queries(3):
        states, looks = stream_hub._read(known, of, False, set())
    assert set(looks) == set(viewers)
    assert all(alive for alive, _account in looks.values())
    assert states[cards[0].pk].over is True
    assert states[cards[1].pk] == stream_hub.State(version=0, over=False)
    assert gone not in states  # a discarded card: its streams end (scorecards.live.GONE)
    assert len(states) == n
    # Then, between the reads of everyone's looks, only the viewers of a card that moved.
    known = states | {gone: stream_hub.GONE}
    with django_assert_num_queries(1):
        assert stream_hub._read(known, of, False, set(viewers)) == (states, {})
    write(cards[1], cards[1].seats.first().player, "ones", "3")
    with django_assert_num_queries(3):
        states, looks = stream_hub._read(known, of, False, set(viewers))
    assert set(looks) == {viewers[1]}
    with django_assert_num_queries(3):
        assert set(stream_hub._read(known, of, True, set(viewers))[1]) == set(viewers)


# The stream's viewer, asked before each event and heartbeat (live.may_follow)


def _session_key(client) -> str:
    return client.cookies["sessionid"].value


@pytest.mark.parametrize("ended", [_log_out_elsewhere, _deactivate, _change_password])
def test_a_stream_may_follow_only_while_its_session_logs_its_player_in(client, card, ana, ended):
    client.force_login(ana)
    key = _session_key(client)
    assert stream_hub.may_follow(stream_hub.Viewer(key, ana.pk), card.pk)
    ended(ana)
    assert not stream_hub.may_follow(stream_hub.Viewer(key, ana.pk), card.pk)


def test_a_stream_may_not_follow_after_a_log_out_on_its_own_phone(client, card, ana):
    client.force_login(ana)
    key = _session_key(client)
    client.post(reverse("logout"))
    assert not stream_hub.may_follow(stream_hub.Viewer(key, ana.pk), card.pk)


def test_a_stream_may_not_follow_a_card_its_viewer_no_longer_sees(client, card):
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    key = _session_key(client)
    assert stream_hub.may_follow(stream_hub.Viewer(key, staff.pk), card.pk)
    staff.is_staff = False
    staff.save()
    assert not stream_hub.may_follow(stream_hub.Viewer(key, staff.pk), card.pk)


def test_a_stream_may_not_follow_with_another_players_session(client, card, ana, ben):
    client.force_login(ben)
    assert not stream_hub.may_follow(stream_hub.Viewer(_session_key(client), ana.pk), card.pk)
    assert not stream_hub.may_follow(stream_hub.Viewer("no-such-session", ana.pk), card.pk)


def test_asking_whether_a_stream_may_follow_costs_three_queries(
    client, card, ana, django_assert_num_queries
):
    client.force_login(ana)
    key = _session_key(client)
    # the session, its user, and whether that user sees the card
    with django_assert_num_queries(3):
        assert stream_hub.may_follow(stream_hub.Viewer(key, ana.pk), card.pk)


class _Moving:
    """A stand-in for live.Versions whose card moves every few milliseconds, and which
    counts how often the stream asked whether its viewer may still follow it."""

    def __init__(self, allowed_times):
        self.version = 0
        self.asked = 0
        self.allowed_times = allowed_times

    def watch(self, pk, state, viewer, looks=None, present=False):
        pass

    def unwatch(self, pk, viewer, present=False):
        pass

    async def moved(self, pk, shown, timeout, here=None):
        await asyncio.sleep(0.005)
        self.version += 1
        return stream_hub.State(self.version, over=False)

    async def run(self, fn, *args):
        return fn(*args)

    async def patch(self, key, fn, *args):
        return fn(*args)

    async def allows(self, viewer, pk):
        self.asked += 1
        return self.asked <= self.allowed_times


async def _events(hub, limit=10_000):
    names = []
    viewer = stream_hub.Viewer("key", 1)
    events = stream_hub.stream(
        1, viewer, 0, stream_hub.State(0, over=False), lambda since, v: (v, "<p>"), "/e/"
    )
    async for text in events:
        names.append(text.split("event: ")[1].split("\n")[0] if "event: " in text else text)
        if len(names) > limit:
            break
    return names


def test_the_streams_of_a_process_take_one_answer_for_one_change():
    hub = stream_hub.Versions()
    asked = []

    async def run(fn, *args):
        await asyncio.sleep(0.01)  # on the hub's thread, while the others ask too
        return fn(*args)

    def patch(since, version):
        asked.append((since, version))
        return version, "<p>"

    hub.run = run

    async def streams(key, n):
        return await asyncio.gather(*(hub.patch(key, patch, 0, 1) for _ in range(n)))

    assert run_apart(streams((1, 0, 1, "es"), 6)) == [(1, "<p>")] * 6
    assert asked == [(0, 1)]
    # In another language, it is asked for once more; once the card moves, again.
    run_apart(streams((1, 0, 1, "en"), 2))
    assert len(asked) == 2
    hub._forget_patches(1)
    run_apart(streams((1, 0, 1, "es"), 2))
    assert len(asked) == 3


def test_a_stream_opened_by_its_view_needs_no_full_check_while_its_viewer_looks_the_same(
    client, card, ana
):
    client.force_login(ana)
    viewer = stream_hub.Viewer(_session_key(client), ana.pk)
    asked = []

    def first_event(looks):
        hub = stream_hub.Versions()
        answer = stream_hub._looks_and_may_follow(viewer, card.pk)
        now = stream_hub.viewers_looks([viewer])  # as the tick reads them

        async def run(fn, *args):
            # The tick's read, and the full check, answered here as on the hub's thread.
            if fn is stream_hub._read:
                return {}, now
            asked.append(args)
            return answer

        async def first():
            hub.run = run
            hub.watch(card.pk, stream_hub.State(0, over=False), viewer, looks)
            hub.looks = now
            return await hub.allows(viewer, card.pk)

        return run_apart(first())

    # The view found a session that logs Ana in, and a card she sees: as she still looks.
    assert first_event(stream_hub.looks_of(ana)) is True
    assert (viewer, card.pk) not in asked
    # Her password changed since the view looked: the full check, which says no.
    looks = stream_hub.looks_of(ana)
    _change_password(ana)
    assert first_event(looks) is False
    assert (viewer, card.pk) in asked


def test_the_full_check_runs_again_only_when_the_viewer_looks_otherwise(client, card, ana):
    client.force_login(ana)
    viewer = stream_hub.Viewer(_session_key(client), ana.pk)
    hub = stream_hub.Versions()
    asked = []

    async def run(fn, *args):
        # The full check, answered here as it answers on the hub's thread (tests above).
        asked.append(args)
        return answer

    hub.run = run

    def allows(tick=True):
        if tick:
            hub.looks = stream_hub.viewers_looks([viewer])  # as each tick reads them
        return run_apart(hub.allows(viewer, card.pk))

    answer = stream_hub._looks_and_may_follow(viewer, card.pk)
    # In full before the first tick has read how the viewer looks, and never again while
    # they look the same.
    assert [allows(tick=False), allows(), allows(), allows()] == [True, True, True, True]
    assert len(asked) == 1
    _change_password(ana)
    answer = stream_hub._looks_and_may_follow(viewer, card.pk)
    assert answer[1] is False
    assert allows() is False
    assert len(asked) == 2


def test_a_stream_ends_idle_after_its_limit_however_often_the_card_moves(monkeypatch):
    hub = _Moving(allowed_times=10_000)
    monkeypatch.setattr(stream_hub, "versions", lambda: hub)
    monkeypatch.setattr(stream_hub, "IDLE_LIMIT", 0.3)
    names = run_apart(_events(hub))
    assert names[-1] == "idle"
    assert names.count("patch") > 5  # the card kept moving, and each move was sent


def test_a_stream_whose_viewer_is_gone_says_log_in_and_sends_nothing_more(monkeypatch):
    hub = _Moving(allowed_times=3)
    monkeypatch.setattr(stream_hub, "versions", lambda: hub)
    names = run_apart(_events(hub))
    assert names[1:] == ["patch", "patch", "patch", "login"]
    assert hub.asked == 4  # once before each event


def test_a_stream_asks_at_each_heartbeat_too(monkeypatch):
    class Still(_Moving):
        async def moved(self, pk, shown, timeout, here=None):
            await asyncio.sleep(0.005)
            return None

    hub = Still(allowed_times=2)
    monkeypatch.setattr(stream_hub, "versions", lambda: hub)
    names = run_apart(_events(hub))
    assert names[1:] == [": ping\n\n", ": ping\n\n", "login"]


def test_simultaneous_opens_are_counted_as_they_are_accepted():
    admitted = [stream_hub.admit(4242) for _ in range(stream_hub.MAX_PER_USER + 3)]
    assert admitted == [True] * stream_hub.MAX_PER_USER + [False] * 3
    streams = [stream_hub.Admitted(4242, iter(())) for _ in range(stream_hub.MAX_PER_USER)]
    streams[0].close()
    streams[0].close()  # gives its place back once only
    assert stream_hub.admit(4242)
    assert not stream_hub.admit(4242)
    streams[0] = stream_hub.Admitted(4242, iter(()))
    for stream in streams:
        stream.close()
    assert 4242 not in stream_hub._streams


def test_a_stream_may_follow_a_discarded_card_to_its_end(client, card, ana):
    client.force_login(ana)
    key = _session_key(client)
    services.scorecard_discard(scorecard_id=card.pk, author=card.organizer)
    assert stream_hub.may_follow(stream_hub.Viewer(key, ana.pk), card.pk)
