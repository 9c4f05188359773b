"""Dados can be added to a phone's home screen."""

import json
import struct
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.urls import reverse

STATIC = Path(settings.BASE_DIR) / "static"


def test_the_manifest_describes_a_standalone_spanish_app():
    manifest = json.loads((STATIC / "manifest.webmanifest").read_text())
    assert manifest["short_name"] == "Dados"
    assert manifest["lang"] == "es"
    assert manifest["display"] == "standalone"
    assert manifest["start_url"] == "/"
    assert manifest["theme_color"].startswith("#")
    sizes = {icon["sizes"] for icon in manifest["icons"]}
    assert {"192x192", "512x512"} <= sizes
    assert any(icon.get("purpose") == "maskable" for icon in manifest["icons"])


def test_every_icon_exists_with_its_declared_size():
    manifest = json.loads((STATIC / "manifest.webmanifest").read_text())
    for icon in manifest["icons"]:
        path = STATIC / icon["src"]
        assert path.exists(), icon["src"]
        if icon["type"] == "image/png":
            width, height = struct.unpack(">II", path.read_bytes()[16:24])
            assert f"{width}x{height}" == icon["sizes"]


def test_every_page_links_the_manifest_and_the_icons(client, db):
    page = client.get(reverse("login")).text
    assert '<link rel="manifest" href="/static/manifest.' in page
    assert '<link rel="apple-touch-icon"' in page
    assert '<meta name="theme-color"' in page
    assert finders.find("manifest.webmanifest")


def test_the_favicon_is_served_at_the_root(client, db):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert b"".join(response.streaming_content)[:4] == b"\x00\x00\x01\x00"


def test_the_manifest_is_served_as_a_web_app_manifest(client, db):
    """Browsers expect application/manifest+json; WhiteNoise's own table has no type for it
    (application/octet-stream)."""
    page = client.get(reverse("login")).text
    url = page.split('<link rel="manifest" href="')[1].split('"')[0]
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(b"".join(response.streaming_content))
    assert manifest["short_name"] == "Dados"


def test_the_manifest_and_the_log_in_page_say_both_ways_of_playing(client, db):
    manifest = json.loads((STATIC / "manifest.webmanifest").read_text())
    for words in (manifest["name"], manifest["description"]):
        assert "dados físicos" in words
        assert "virtuales" in words
    lead = client.get(reverse("login")).text
    assert "con dados físicos, o juégalas con los dados virtuales de la app" in lead
