"""The service worker and the offline page, as the server gives them."""

import re
from pathlib import Path

import pytest
from django.templatetags.static import static
from django.urls import reverse

from scorecards.views import offline


def test_the_service_worker_is_served_from_the_root_and_always_asked_for_again(client):
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "no-cache" in response["Cache-Control"]
    text = response.content.decode()
    # Every file it keeps, by the name the pages load it by.
    for name in offline.PRECACHED:
        assert f'"{static(name)}"' in text
    assert re.search(r'var STATIC = "dados-static-[0-9a-f]{16}";', text)


def test_every_module_the_page_imports_is_kept_for_a_reload_without_a_network():
    """A module missing from the list loads from the network only: offline, the page kept
    runs no script at all (scroll.js once was, and a reload showed none of the writes kept)."""
    folder = Path(__file__).resolve().parent.parent / "static" / "js"
    imported, todo = set(), ["dados"]
    while todo:
        text = (folder / f"{todo.pop()}.js").read_text()
        for name in re.findall(r'(?:from|import) "\./([\w-]+)\.js"', text):
            if name not in imported:
                imported.add(name)
                todo.append(name)
    assert "outbox" in imported
    # and the pages' own modules, which their templates load (not needed without a network)
    templates = folder.parent.parent / "templates" / "scorecards"
    assert "js/seating.js" in (templates / "order.html").read_text()
    assert "js/screen.js" in (templates / "screen.html").read_text()
    assert "js/share.js" in (templates / "card.html").read_text()
    own = {"dados", "seating", "screen", "share"}
    assert imported == {path.stem for path in folder.glob("*.js")} - own
    assert set(offline.PRECACHED) >= {"js/dados.js", *(f"js/{name}.js" for name in imported)}


def test_a_deploy_that_renames_a_file_names_a_new_cache():
    before = offline._version(["/static/css/dados.1.css"])
    assert offline._version(["/static/css/dados.2.css"]) != before


def test_the_card_pattern_is_the_card_pages_and_nothing_else(client):
    text = client.get("/sw.js").content.decode()
    pattern = re.search(r'var CARD = new RegExp\("(.*)"\);', text).group(1)
    # As JavaScript reads the string: \\u005C is a backslash.
    pattern = pattern.encode().decode("unicode_escape")
    card = re.compile(pattern)
    assert card.match(reverse("scorecard", args=[7]))
    assert not card.match(reverse("scorecard_live", args=[7]))
    assert not card.match(reverse("history"))


@pytest.mark.django_db
def test_the_offline_page_needs_no_account_and_names_nobody(client, ana):
    client.force_login(ana)
    response = client.get(reverse("offline"))
    assert response.status_code == 200
    text = response.content.decode()
    assert "Sin conexión" in text
    assert "Volver a intentarlo" in text
    assert ana.name not in text
    assert "csrfmiddlewaretoken" not in text
    client.logout()
    assert client.get(reverse("offline")).status_code == 200
