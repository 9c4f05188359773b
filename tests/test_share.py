"""«Compartir»: a finished game's public, read-only link, made and withdrawn by its players
and organizer; the page it opens for anyone, and its Open Graph picture."""

import io
import re
from html.parser import HTMLParser
from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import dateformat
from django.utils.formats import date_format
from django.utils.timezone import localtime
from PIL import Image

from scorecards import picture, services
from scorecards.models import Scorecard, Share
from tests.factories import UserFactory, make_scorecard
from tests.screens import HTMX, card_page, finalize

pytestmark = pytest.mark.django_db

SHARE_FORM = 'action="/tarjetas/{pk}/compartir/"'


@pytest.fixture
def people(db):
    """Usernames that no page's words contain, to find one on a page that shows it."""
    return {
        name: UserFactory(username=f"usr-{name.lower()}-x7", display_name=name)
        for name in ("Olga", "Ana", "Ben", "Carla")
    }


@pytest.fixture
def game(people):
    """A finished game with a winner: Ben scores more in Libre than the others."""
    from tests.factories import fill

    card = make_scorecard(people["Olga"], [people["Ana"], people["Ben"], people["Carla"]])
    fill(card)
    ben = card.seats.get(player=people["Ben"])
    ben.chance = 30
    ben.save()
    services.scorecard_finalize(scorecard_id=card.pk, author=people["Olga"])
    return card


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def share(client, card, **headers):
    return client.post(reverse("scorecard_share", args=[card.pk]), headers=headers)


def unshare(client, card, **headers):
    return client.post(reverse("scorecard_unshare", args=[card.pk]), headers=headers)


def token_of(card) -> str | None:
    return Share.objects.filter(scorecard=card).values_list("token", flat=True).first()


def public(token) -> str:
    return reverse("shared", args=[token])


def picture_of(token) -> str:
    return reverse("shared_picture", args=[token])


# Who may share


@pytest.mark.parametrize("name", ["Olga", "Ana", "Carla"])
def test_the_organizer_and_every_player_make_a_link(game, people, name, settings):
    client = logged_in(people[name])
    response = share(client, game)
    assert response.status_code == 302
    assert response["Location"] == reverse("scorecard", args=[game.pk])
    token = token_of(game)
    assert token is not None
    assert len(token) >= 22  # secrets.token_urlsafe(16): 128 bits
    assert Share.objects.get(scorecard=game).shared_by == people[name]
    # The card page then shows the link to copy or send.
    page = card_page(client, game)
    assert f'value="{settings.SITE_URL}/compartida/{token}/"' in page
    assert "Dejar de compartir" in page


def test_the_link_is_made_with_htmx_in_place(game, people):
    response = share(logged_in(people["Ana"]), game, **HTMX)
    assert response.status_code == 200
    assert "<html" not in response.text
    assert 'id="share"' in response.text
    assert token_of(game) in response.text
    assert "Dejar de compartir" in response.text


def test_a_second_tap_keeps_the_same_link(game, people):
    share(logged_in(people["Ana"]), game)
    first = token_of(game)
    share(logged_in(people["Ben"]), game)
    assert token_of(game) == first
    assert Share.objects.count() == 1


def test_links_are_unguessable_and_differ_from_game_to_game(people):
    tokens = set()
    for _n in range(3):
        card = make_scorecard(people["Olga"], [people["Ana"]])
        finalize(card)
        share(logged_in(people["Ana"]), card)
        tokens.add(token_of(card))
    assert len(tokens) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{22}", token) for token in tokens)


def test_a_stranger_gets_404_and_nothing_is_made(game):
    client = logged_in(UserFactory())
    assert share(client, game).status_code == 404
    assert unshare(client, game).status_code == 404
    assert not Share.objects.exists()


def test_staff_who_took_no_part_are_refused_in_spanish(game):
    client = logged_in(UserFactory(is_staff=True))
    response = share(client, game, **HTMX)
    assert response.status_code == 403
    assert "Solo quien jugó u organizó la partida puede compartirla." in response.text
    assert not Share.objects.exists()
    # Without JavaScript: back to the card, with the message.
    response = share(client, game)
    assert response["Location"] == reverse("scorecard", args=[game.pk])
    page = client.get(response["Location"]).text
    assert "Solo quien jugó u organizó la partida puede compartirla." in page
    assert not Share.objects.exists()


def test_a_game_in_play_is_not_shared(people):
    card = make_scorecard(people["Olga"], [people["Ana"], people["Ben"]])
    response = share(logged_in(people["Ana"]), card, **HTMX)
    assert response.status_code == 409
    assert "La partida aún no ha terminado" in response.text
    assert not Share.objects.exists()


def test_logged_out_goes_to_log_in_and_a_get_is_not_a_tap(client, game, people):
    response = share(client, game)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert (
        logged_in(people["Ana"]).get(reverse("scorecard_share", args=[game.pk])).status_code == 405
    )
    assert not Share.objects.exists()


def test_sharing_needs_the_csrf_token(game, people):
    client = Client(enforce_csrf_checks=True)
    client.force_login(people["Ana"])
    assert share(client, game).status_code == 403
    assert not Share.objects.exists()


def test_a_malformed_card_id_is_404_not_500(people):
    client = logged_in(people["Ana"])
    assert client.post("/tarjetas/99999999999999999999/compartir/").status_code == 404
    assert client.post("/tarjetas/123/compartir/").status_code == 404


# «Compartir» on the card page


@pytest.mark.parametrize("name", ["Olga", "Ana"])
def test_the_finished_game_page_offers_compartir_to_its_participants(game, people, name):
    page = card_page(logged_in(people[name]), game)
    assert SHARE_FORM.format(pk=game.pk) in page
    assert "js/share." in page  # its own module, on this page only


def test_staff_who_took_no_part_see_no_compartir(game):
    page = card_page(logged_in(UserFactory(is_staff=True)), game)
    assert "Gana" in page  # the finished card itself
    assert "compartir/" not in page
    assert "js/share." not in page


def test_a_game_in_play_offers_no_compartir(people):
    card = make_scorecard(people["Olga"], [people["Ana"], people["Ben"]])
    for name in ("Olga", "Ana"):
        page = card_page(logged_in(people[name]), card)
        assert "compartir/" not in page
        assert "js/share." not in page


def test_nothing_is_shared_until_someone_asks(game, people):
    card_page(logged_in(people["Ana"]), game)
    assert not Share.objects.exists()
    assert Client().get(public("AAAAAAAAAAAAAAAAAAAAAA")).status_code == 404


# Withdrawn


def test_a_withdrawn_link_answers_404_page_and_picture(game, people):
    ana = logged_in(people["Ana"])
    share(ana, game)
    token = token_of(game)
    assert Client().get(public(token)).status_code == 200
    assert Client().get(picture_of(token)).status_code == 200
    response = unshare(logged_in(people["Carla"]), game)
    assert response.status_code == 302
    assert Client().get(public(token)).status_code == 404
    assert Client().get(picture_of(token)).status_code == 404
    page = card_page(ana, game)
    assert SHARE_FORM.format(pk=game.pk) in page
    assert token not in page


def test_sharing_again_makes_a_new_link_and_the_old_one_stays_dead(game, people):
    ana = logged_in(people["Ana"])
    share(ana, game)
    old = token_of(game)
    unshare(ana, game, **HTMX)
    response = share(ana, game, **HTMX)
    new = token_of(game)
    assert new != old
    assert new in response.text
    assert Client().get(public(old)).status_code == 404
    assert Client().get(public(new)).status_code == 200


def test_withdrawing_with_htmx_gives_back_the_compartir_button(game, people):
    ana = logged_in(people["Ana"])
    share(ana, game)
    response = unshare(ana, game, **HTMX)
    assert response.status_code == 200
    assert SHARE_FORM.format(pk=game.pk) in response.text
    assert "Dejar de compartir" not in response.text


def test_a_stranger_cannot_withdraw(game, people):
    share(logged_in(people["Ana"]), game)
    assert unshare(logged_in(UserFactory()), game).status_code == 404
    assert unshare(logged_in(UserFactory(is_staff=True)), game, **HTMX).status_code == 403
    assert token_of(game) is not None


def test_an_unknown_or_malformed_token_is_404(client, db):
    assert client.get("/compartida/no-existe/").status_code == 404
    assert client.get("/compartida/no-existe/imagen.png").status_code == 404
    assert client.get("/compartida/%00%27;--/").status_code == 404
    assert client.get("/compartida/" + "a" * 200 + "/").status_code == 404


# The public page


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("href", "src", "action", "hx-get", "hx-post", "formaction"):
                self.links.append(value)


@pytest.fixture
def shared_page(game, people):
    share(logged_in(people["Ana"]), game)
    token = token_of(game)
    response = Client().get(public(token))
    return token, response


def test_anyone_logged_out_sees_the_final_card_positions_and_date(game, shared_page):
    _token, response = shared_page
    assert response.status_code == 200
    text = response.text
    assert "Gana <bdi>Ben</bdi> con" in text
    # the positions, winner first, and the final sheet's rows
    places = re.findall(r'<span class="name"><bdi>(\w+)</bdi></span>', text)
    assert places[0] == "Ben"
    assert sorted(places) == ["Ana", "Ben", "Carla"]
    assert 'id="row-total"' in text
    assert 'id="row-place"' in text
    assert 'id="row-chance"' in text
    finalized_at = localtime(Scorecard.objects.get(pk=game.pk).finalized_at)
    assert f'datetime="{dateformat.format(finalized_at, "c")}"' in text
    assert f"Partida de Dados del {date_format(finalized_at, 'DATE_FORMAT')}</h1>" in text
    assert f"Terminó a las {finalized_at:%H:%M}." in text


def test_the_shared_page_carries_no_username_csrf_token_or_link_into_the_app(shared_page, people):
    _token, response = shared_page
    text = response.text
    for person in people.values():
        assert person.username not in text
    assert "csrfmiddlewaretoken" not in text
    assert "csrf" not in text.lower()
    parser = _Links()
    parser.feed(text)
    assert "form" not in parser.tags
    assert "nav" not in parser.tags
    assert "script" not in parser.tags
    assert "a" not in parser.tags  # no link at all: not to log in, nor to a player
    for link in parser.links:
        assert link.startswith("/static/"), link
    assert "/jugadores/" not in text
    assert "/entrar/" not in text
    assert "/tarjetas/" not in text


def test_a_player_without_a_display_name_is_never_named_by_username(people):
    nameless = UserFactory(username="usr-secreto-x7", display_name="")
    card = make_scorecard(people["Olga"], [people["Ana"], nameless])
    finalize(card)
    share(logged_in(people["Ana"]), card)
    token = token_of(card)
    text = Client().get(public(token)).text
    assert "usr-secreto-x7" not in text
    assert "Jugador 2" in text


def test_the_shared_page_tells_a_chat_what_to_preview(game, shared_page, settings):
    token, response = shared_page
    text = response.text
    metas = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', text))
    assert metas["og:title"].startswith("Partida de Dados del ")
    assert "Gana \u2068Ben\u2069 con" in metas["og:description"]
    assert metas["og:url"] == f"{settings.SITE_URL}/compartida/{token}/"
    assert metas["og:image"] == f"{settings.SITE_URL}/compartida/{token}/imagen.png"
    assert metas["og:image:width"] == "1200"
    assert metas["og:image:height"] == "630"
    assert metas["twitter:card"] == "summary_large_image"
    assert metas["robots"] == "noindex, nofollow"


def test_the_shared_page_is_asked_for_again_each_time(shared_page):
    _token, response = shared_page
    assert response["Cache-Control"] == "no-cache"
    assert "Set-Cookie" not in response  # no session, no CSRF cookie


def test_the_shared_page_and_its_picture_cost_few_queries(shared_page, django_assert_num_queries):
    token, _response = shared_page
    client = Client()
    # the share with its card and organizer, its seats with their players
    with django_assert_num_queries(2):
        assert client.get(public(token)).status_code == 200
    # the picture alone
    with django_assert_num_queries(1):
        assert client.get(picture_of(token)).status_code == 200


def test_a_logged_in_stranger_sees_the_shared_page_too(shared_page):
    token, _response = shared_page
    assert logged_in(UserFactory()).get(public(token)).status_code == 200


# The picture


def test_the_picture_is_a_1200_by_630_png_kept_for_long(shared_page):
    token, _response = shared_page
    response = Client().get(picture_of(token))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert "max-age=31536000" in response["Cache-Control"]
    assert "public" in response["Cache-Control"]
    image = Image.open(io.BytesIO(response.content))
    assert image.format == "PNG"
    assert image.size == (1200, 630)


def test_the_picture_is_drawn_once_per_game(game, people):
    ana = logged_in(people["Ana"])
    with mock.patch.object(picture, "draw", wraps=picture.draw) as draw:
        share(ana, game)
        token = token_of(game)
        first = Client().get(picture_of(token)).content
        second = Client().get(picture_of(token)).content
        # withdrawn and shared again: the same picture, not drawn again
        unshare(ana, game)
        share(logged_in(people["Olga"]), game)
        third = Client().get(picture_of(token_of(game))).content
    assert draw.call_count == 1
    assert first == second == third
    assert bytes(Share.objects.get(scorecard=game).picture) == first


def test_the_picture_draws_the_winner_and_the_bundled_font(game):
    from pathlib import Path

    # Not the system's fonts: the ones the app ships, with their licence.
    assert Path(picture.FONTS / "DejaVuSans.ttf").exists()
    assert Path(picture.FONTS / "LICENSE").exists()
    png = picture.draw(Scorecard.objects.with_seats().get(pk=game.pk))
    image = Image.open(io.BytesIO(png)).convert("RGB")
    # The band at the top in the site's red, and the winner's row highlighted.
    assert image.getpixel((5, 5)) == (0xA4, 0x23, 0x1B)
    colours = {image.getpixel((600, y)) for y in range(130, 630, 4)}
    assert (0xF8, 0xEC, 0xE4) in colours


def test_a_tie_is_said_as_one(people):
    """Equal totals share first place: the page, its description and the picture say so."""
    card = make_scorecard(people["Olga"], [people["Ana"], people["Ben"]])
    finalize(card)
    share(logged_in(people["Ana"]), card)
    token = token_of(card)
    text = Client().get(public(token)).text
    assert "Empate: <bdi>Ana</bdi> y <bdi>Ben</bdi> con 245" in text
    description = re.search(r'<meta property="og:description" content="([^"]*)"', text)[1]
    assert description == "Empate: \u2068Ana\u2069 y \u2068Ben\u2069 con 245."
    assert text.count('class="winner"') == 2


def test_the_picture_goes_with_a_backup(game, people):
    """Kept in the database, the picture is one of the rows a backup writes (safekeeping
    serializes every model) and comes back the same from a restore."""
    import json

    from django.core import serializers
    from django.core.serializers.json import DjangoJSONEncoder

    from safekeeping.archive import copied_models

    share(logged_in(people["Ana"]), game)
    assert Share in copied_models()
    row = serializers.serialize("python", Share.objects.all())[0]
    written = json.loads(json.dumps(row, cls=DjangoJSONEncoder))  # as a backup's line
    restored = Share._meta.get_field("picture").to_python(written["fields"]["picture"])
    assert bytes(restored) == bytes(Share.objects.get().picture)
    assert bytes(restored).startswith(b"\x89PNG")


def test_an_english_visitor_reads_the_shared_page_in_english(shared_page, settings):
    token, _response = shared_page
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = client.get(public(token)).text
    assert '<html lang="en">' in text
    assert "<bdi>Ben</bdi> wins with" in text
    assert "Positions" in text
    assert "Final card" in text
    assert "Dados game of " in text


def test_a_chat_may_ask_for_the_headers_alone(shared_page):
    """Some link previews ask with HEAD first."""
    token, _response = shared_page
    client = Client()
    assert client.head(public(token)).status_code == 200
    response = client.head(picture_of(token))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert client.post(picture_of(token)).status_code == 405
