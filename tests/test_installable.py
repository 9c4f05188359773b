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
