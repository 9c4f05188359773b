"""«Seguir en el móvil»: a card in play shows its address as a QR code (asked for when
opened) and as text to copy; a player at the table scans it, logs in if they must, and
lands on the card."""

import xml.etree.ElementTree as ET

import pytest
import segno
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from scorecards.models import Scorecard
from tests.factories import PASSWORD, UserFactory
from tests.screens import HTMX, card_page, finalize

pytestmark = pytest.mark.django_db


def qr(client, card, **headers):
    return client.get(reverse("scorecard_qr", args=[card.pk]), headers=headers)


def address_of(card):
    return f"{settings.SITE_URL}/tarjetas/{card.pk}/"


# On the card page


@pytest.mark.parametrize("who", ["organizer", "ana"])
def test_a_card_in_play_offers_seguir_en_el_movil_folded(client, card, who, request):
    client.force_login(request.getfixturevalue(who))
    page = card_page(client, card)
    url = reverse("scorecard_qr", args=[card.pk])
    assert '<details class="follow-phone" id="follow-phone">' in page
    assert "<summary>Seguir en el móvil</summary>" in page
    # Asked for when opened; followed as a link without JavaScript.
    assert f'hx-get="{url}" hx-trigger="toggle once from:closest details"' in page
    assert f'<a href="{url}">Ver el código QR</a>' in page
    # The code itself is not in the page until then.
    assert "<svg" not in page


def test_a_finished_card_offers_no_qr(org_client, card):
    finalize(card)
    page = card_page(org_client, card)
    assert "Seguir en el móvil" not in page
    assert "/qr/" not in page


def test_the_sheet_that_live_pages_swap_leaves_it_alone(org_client, card):
    response = org_client.get(reverse("scorecard", args=[card.pk]), headers=HTMX)
    assert "follow-phone" not in response.text
    live = org_client.get(reverse("scorecard_live", args=[card.pk]), {"version": 99}, headers=HTMX)
    assert "follow-phone" not in live.text


# The QR code


def test_the_fragment_is_the_address_as_a_qr_code_and_as_text(org_client, card):
    response = qr(org_client, card, **HTMX)
    assert response.status_code == 200
    text = response.text
    assert "<html" not in text
    assert text.lstrip().startswith('<div class="follow">')
    assert f'<input type="url" id="card-address" value="{address_of(card)}" readonly>' in text
    assert '<button type="button" data-copy="card-address"' in text
    assert 'role="img" aria-label="Código QR con la dirección de esta tarjeta"' in text
    assert response.headers["Vary"].count("HX-Request") == 1


def test_the_qr_code_is_an_svg_of_the_cards_absolute_address(org_client, card):
    text = qr(org_client, card, **HTMX).text
    svg = text[text.index("<svg") : text.index("</svg>") + len("</svg>")]
    root = ET.fromstring(svg)
    assert root.tag == "svg"
    assert root.get("class") == "qr-code"
    _x, _y, width, height = root.get("viewBox").split()
    assert width == height  # square, sized by the page's CSS (no width or height of its own)
    assert root.get("width") is None
    assert [path.get("fill") or path.get("stroke") for path in root.iter("path")] == [
        "#fff",
        "#000",
    ]
    # segno cannot read a code back: the drawing is the one of the whole address (not the
    # path alone, which a phone's camera could not open).
    expected = segno.make(address_of(card), error="m")
    assert svg == expected.svg_inline(
        dark="#000", light="#fff", border=4, omitsize=True, svgclass="qr-code", lineclass=None
    )
    assert svg != segno.make(reverse("scorecard", args=[card.pk]), error="m").svg_inline(
        dark="#000", light="#fff", border=4, omitsize=True, svgclass="qr-code", lineclass=None
    )


def test_the_address_is_the_configured_one_not_the_host_the_page_was_asked_on(
    org_client, card, settings
):
    """tests/test_qr_origin.py has the forged Host header, and the address only this
    computer opens."""
    settings.ALLOWED_HOSTS = ["192.168.1.20", "dados.lan"]
    settings.SITE_URL = "http://dados.lan:8000"
    response = org_client.get(
        reverse("scorecard_qr", args=[card.pk]), headers=HTMX, HTTP_HOST="192.168.1.20:8000"
    )
    assert f'value="http://dados.lan:8000/tarjetas/{card.pk}/"' in response.text


def test_without_javascript_it_is_a_page_with_the_way_back(ana_client, card):
    response = qr(ana_client, card)
    assert response.status_code == 200
    assert "<html" in response.text
    assert "<h1>Seguir en el móvil</h1>" in response.text
    assert "<svg" in response.text
    assert f'href="{reverse("scorecard", args=[card.pk])}"' in response.text


def test_a_stranger_gets_404_for_the_qr_code(client, card):
    client.force_login(UserFactory())
    assert qr(client, card).status_code == 404
    assert qr(client, card, **HTMX).status_code == 404


def test_logged_out_the_qr_code_asks_to_log_in(client, card):
    response = qr(client, card)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_qr_code_costs_three_queries(org_client, card, django_assert_num_queries):
    # session, user, the card if this user sees it
    with django_assert_num_queries(3):
        assert qr(org_client, card, **HTMX).status_code == 200


# Scanning it


def test_a_player_who_scans_it_logs_in_and_lands_on_the_card(client, card, ana):
    card_url = reverse("scorecard", args=[card.pk])
    scanned = client.get(card_url)
    assert scanned.status_code == 302
    login_url = f"{reverse('login')}?next={card_url}"
    assert scanned["Location"] == login_url
    form = client.get(login_url)
    assert f'<input type="hidden" name="next" value="{card_url}">' in form.text
    logged_in = client.post(
        reverse("login"), {"username": "ana", "password": PASSWORD, "next": card_url}
    )
    assert logged_in.status_code == 302
    assert logged_in["Location"] == card_url
    page = client.get(card_url)
    assert page.status_code == 200
    assert "Se actualiza sola." in page.text  # Ana watches the card live


def test_someone_not_at_the_table_who_scans_it_gets_404(client, card):
    UserFactory(username="nadia")
    card_url = reverse("scorecard", args=[card.pk])
    logged_in = client.post(
        reverse("login"), {"username": "nadia", "password": PASSWORD, "next": card_url}
    )
    assert logged_in["Location"] == card_url
    assert client.get(card_url).status_code == 404
    assert Scorecard.objects.count() == 1


def test_in_english_it_is_follow_on_your_phone(org_client, card, settings):
    org_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    # The requests leave their language active: put back the tests' own afterwards.
    with translation.override(translation.get_language()):
        page = card_page(org_client, card)
        text = qr(org_client, card, **HTMX).text
    assert "<summary>Follow on your phone</summary>" in page
    for words in ("scans the code", "The card's address", ">Copy</button>", "Copied"):
        assert words in text
