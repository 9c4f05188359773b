"""The QR under «Seguir en el móvil» gives the configured address (SITE_URL), never the
one a request's Host header claims (issue 48, finding 7); and says so when that address
is one only this computer can open (issue 51, item 3)."""

import html
import ipaddress
import os
import subprocess

import pytest
import segno
from django.conf import settings
from django.urls import reverse

from tests.factories import UserFactory
from tests.liveserver import fresh_setting
from tests.screens import HTMX

pytestmark = pytest.mark.django_db

CLUB = "http://192.168.1.20:8000"


def qr_svg(address):
    return segno.make(address, error="m").svg_inline(
        dark="#000", light="#fff", border=4, omitsize=True, svgclass="qr-code", lineclass=None
    )


@pytest.mark.parametrize("htmx", [True, False], ids=["fragment", "page"])
def test_a_forged_host_header_gets_the_configured_address(org_client, card, settings, htmx):
    settings.ALLOWED_HOSTS = ["*"]  # as under `make run`
    settings.SITE_URL = CLUB
    response = org_client.get(
        reverse("scorecard_qr", args=[card.pk]),
        headers=HTMX if htmx else {},
        HTTP_HOST="evil.example",
    )
    assert response.status_code == 200
    text = response.text
    address = f"{CLUB}/tarjetas/{card.pk}/"
    assert f'value="{address}"' in text
    assert "evil.example" not in html.unescape(text)
    svg = text[text.index("<svg") : text.index("</svg>") + len("</svg>")]
    assert svg == qr_svg(address)
    assert svg != qr_svg(f"http://evil.example/tarjetas/{card.pk}/")


def test_an_https_origin_behind_a_proxy_is_given_as_configured(org_client, card, settings):
    settings.ALLOWED_HOSTS = ["*"]
    settings.SITE_URL = "https://dados.example.org"
    response = org_client.get(
        reverse("scorecard_qr", args=[card.pk]),
        headers=HTMX,
        HTTP_HOST="evil.example",
        HTTP_X_FORWARDED_HOST="evil.example",
    )
    assert f'value="https://dados.example.org/tarjetas/{card.pk}/"' in response.text
    assert "otros móviles no pueden abrir" not in response.text


@pytest.mark.parametrize(
    "origin",
    ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000", "http://0.0.0.0:8000"],
)
def test_an_address_only_this_computer_opens_says_so_and_how_to_fix_it(
    org_client, card, settings, origin
):
    settings.SITE_URL = origin
    text = html.unescape(org_client.get(reverse("scorecard_qr", args=[card.pk])).text)
    assert "Los otros móviles no pueden abrir esta dirección" in text
    assert "arranca Dados con <code>make run HOST=0.0.0.0</code>" in text
    assert "Detrás de un proxy, indica la dirección pública con <code>SITE_URL</code>" in text


@pytest.mark.parametrize("who", ["player", "staff"])
def test_how_to_serve_the_phones_is_said_to_the_organizer_and_staff_only(
    client, card, ana, settings, who
):
    settings.SITE_URL = "http://127.0.0.1:8000"
    viewer = ana if who == "player" else UserFactory(username="admin", is_staff=True)
    client.force_login(viewer)
    text = html.unescape(client.get(reverse("scorecard_qr", args=[card.pk]), headers=HTMX).text)
    if who == "player":
        assert "make run" not in text
        assert "SITE_URL" not in text
        assert "Los otros móviles no pueden abrir esta dirección: avisa a quien organiza" in text
    else:
        assert "arranca Dados con <code>make run HOST=0.0.0.0</code>" in text


def test_the_players_notice_speaks_english(ana_client, card, settings):
    settings.SITE_URL = "http://127.0.0.1:8000"
    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = html.unescape(ana_client.get(reverse("scorecard_qr", args=[card.pk])).text)
    assert "Other phones cannot open this address: tell whoever organizes the game." in text


def test_the_card_page_offers_the_qr_before_its_sheet(org_client, card):
    page = org_client.get(reverse("scorecard", args=[card.pk])).text
    assert page.index('id="follow-phone"') < page.index('id="sheet"')


def test_an_address_on_the_network_says_nothing_more(org_client, card, settings):
    settings.SITE_URL = CLUB
    text = org_client.get(reverse("scorecard_qr", args=[card.pk]), headers=HTMX).text
    assert "no pueden abrir" not in text


def test_the_notice_speaks_english(org_client, card, settings):
    settings.SITE_URL = "http://127.0.0.1:8000"
    org_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = html.unescape(org_client.get(reverse("scorecard_qr", args=[card.pk])).text)
    assert "Other phones cannot open this address" in text


# The setting


def site_setting(expression="s.SITE_URL", **env):
    return fresh_setting(
        expression, without={"SITE_URL", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS", "SECURE"}, **env
    )


def test_site_url_is_read_as_given():
    assert site_setting(SITE_URL="https://dados.example.org/") == "https://dados.example.org"
    assert site_setting(SITE_URL=CLUB) == CLUB


def test_site_url_defaults_to_the_one_origin_or_host_configured():
    origin = "https://dados.example.org"
    assert site_setting(CSRF_TRUSTED_ORIGINS=origin, ALLOWED_HOSTS="a.example,b.example") == (
        origin
    )
    assert site_setting(ALLOWED_HOSTS="dados.example.org") == "https://dados.example.org"
    assert site_setting(ALLOWED_HOSTS="dados.lan", SECURE="false") == "http://dados.lan"
    # Nothing says which: where `make run` and `make dev` serve.
    assert site_setting() == "http://127.0.0.1:8000"
    assert site_setting(ALLOWED_HOSTS="*") == "http://127.0.0.1:8000"
    assert site_setting(ALLOWED_HOSTS=".example.org") == "http://127.0.0.1:8000"


@pytest.mark.parametrize(
    "value",
    [
        "dados.example.org",
        "ftp://dados.example.org",
        "https://dados.example.org/club",
        "https://dados.example.org?x=1",
        "https://someone@dados.example.org",
        "http://dados.example.org:port",
        "http://",
    ],
)
def test_a_site_url_that_is_no_origin_refuses_to_start(value):
    assert "SITE_URL must be an origin" in site_setting(SITE_URL=value)


def test_the_https_redirect_goes_to_the_configured_host():
    https = "https://dados.example.org:8443"
    assert site_setting("s.SECURE_SSL_HOST", SITE_URL=https) == "dados.example.org:8443"
    assert site_setting("s.SECURE_SSL_HOST", SITE_URL=CLUB, SECURE="false") == "None"


def make_run(*args) -> list[str]:
    """What `make run` would run with args, SITE_URL unset, line by line."""
    env = {k: v for k, v in os.environ.items() if k != "SITE_URL"}
    dry = subprocess.run(
        ["make", "--dry-run", "--always-make", "run", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return dry.stdout.splitlines()


def test_make_run_sets_site_url_from_host_and_port():
    lines = make_run("HOST=192.168.1.20", "PORT=8080")
    served = next(line for line in lines if "uvicorn dados.asgi:application" in line)
    assert 'SITE_URL="${SITE_URL:-http://192.168.1.20:8080}"' in served


def test_make_run_on_every_interface_gives_the_qr_this_machines_local_address():
    from scripts.lan_address import lan_address

    lines = make_run("HOST=0.0.0.0")
    address = lan_address()
    assert ipaddress.ip_address(address).version == 4
    served = next(line for line in lines if "uvicorn dados.asgi:application" in line)
    assert f'SITE_URL="${{SITE_URL:-http://{address}:8000}}"' in served
    assert "--host 0.0.0.0" in served
    # make run says it before it serves, for the organizer to read.
    said = next(line for line in lines if 'echo "Dados:' in line)
    assert "Dados: $SITE_URL (la dirección que dan los códigos QR de las tarjetas)" in said
