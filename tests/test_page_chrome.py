"""Every page's header and footer follow the page, the language and the user."""

import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from tests.factories import make_scorecard

pytestmark = pytest.mark.django_db


def nav(text):
    return text[text.index('<nav class="site-nav"') : text.index("</nav>")]


def test_the_header_marks_the_page_being_visited(ana_client):
    for name in ("history", "ranking", "scorecard_new", "history"):
        current = re.findall(
            r'<a href="([^"]+)" aria-current="page"', ana_client.get(reverse(name)).text
        )
        assert current == [reverse(name)]
    assert 'aria-current="page"' not in nav(ana_client.get(reverse("home")).text)


def test_the_header_and_footer_follow_the_language(ana_client):
    spanish = ana_client.get(reverse("history")).text
    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    english = ana_client.get(reverse("history")).text
    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    again = ana_client.get(reverse("history")).text
    for text, words in (
        (spanish, ["Saltar al contenido", "Clasificación", "Sin conexión:", "Idioma:"]),
        (english, ["Skip to content", "Ranking", "No connection:", "Language:"]),
        (again, ["Saltar al contenido", "Clasificación", "Sin conexión:", "Idioma:"]),
    ):
        for word in words:
            assert word in text
    assert 'value="es" lang="es" aria-describedby="language-label" aria-pressed="true"' in spanish
    assert 'value="en" lang="en" aria-describedby="language-label" aria-pressed="true"' in english


def test_each_user_sees_their_own_name_and_a_token_of_their_own(ana, ben):
    tokens, names = [], []
    for user in (ana, ben, ana):
        client = Client()
        client.force_login(user)
        text = client.get(reverse("history")).text
        names.append(re.search(r'class="user-name"[^>]*><bdi>([^<]*)</bdi>', text)[1])
        tokens.append(re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', text)[1])
    assert names == ["Ana", "Ben", "Ana"]
    assert len(set(tokens)) == 3


def test_a_logged_out_visitor_gets_no_navigation(client):
    text = client.get(reverse("login")).text
    assert "Saltar al contenido" in text
    assert '<nav class="site-nav"' not in text


def test_the_headers_links_follow_the_url_configuration(ana_client, ana, settings):
    from django.urls import clear_url_caches

    card = make_scorecard(organizer=ana, players=[ana])
    text = ana_client.get(reverse("history")).text
    assert '<a href="/historial/" aria-current="page">' in text
    assert f'<li><a href="/tarjetas/{card.pk}/">' in text
    settings.ROOT_URLCONF = "tests.urls_elsewhere"
    clear_url_caches()
    text = ana_client.get("/otro/historial/").text
    assert '<a href="/otro/historial/" aria-current="page">' in text
    assert '<a class="brand" href="/otro/"' in text
    assert f'<li><a href="/otro/tarjetas/{card.pk}/">' in text
