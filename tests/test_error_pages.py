"""Error pages: in the app's language and layout, never Django's English defaults."""

import pytest
from django.conf import settings
from django.test import Client, RequestFactory
from django.utils import translation
from django.views.defaults import server_error

from tests.factories import UserFactory, make_scorecard

pytestmark = pytest.mark.django_db

PHONE = '<meta name="viewport" content="width=device-width, initial-scale=1">'


def test_a_missing_page_says_so_in_spanish_on_the_apps_page(ana_client, ana):
    response = ana_client.get("/tarjetas/999999/")
    assert response.status_code == 404
    page = response.text
    assert '<html lang="es">' in page
    assert PHONE in page
    assert "No encontramos esta página" in page
    assert "Not Found" not in page
    assert ana.name in page  # the site's own header, with who is logged in
    assert 'href="/"' in page


def test_a_card_one_cannot_see_is_missing_not_forbidden(ana_client):
    stranger_card = make_scorecard()
    response = ana_client.get(f"/tarjetas/{stranger_card.pk}/")
    assert response.status_code == 404
    assert "No encontramos esta página" in response.text


def test_a_missing_page_for_a_visitor(client):
    response = client.get("/no-existe/")
    assert response.status_code == 404
    assert "No encontramos esta página" in response.text


def test_a_missing_page_in_english(ana_client):
    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = ana_client.get("/tarjetas/999999/").text
    assert '<html lang="en">' in page
    assert "We could not find this page" in page
    assert "No encontramos" not in page


def test_a_player_who_may_only_watch_is_told_who_may_write(client, ana):
    card = make_scorecard(players=[ana, UserFactory()])
    seat = card.seats.get(player=ana)
    client.force_login(ana)
    response = client.get(f"/tarjetas/{card.pk}/casilla/{seat.pk}/ones/")
    assert response.status_code == 403
    assert "No puedes hacer esto" in response.text
    assert "Solo quien organiza una tarjeta puede anotar en ella" in response.text
    assert PHONE in response.text


def test_an_expired_form_says_nothing_was_saved(ana):
    client = Client(enforce_csrf_checks=True)
    client.get("/entrar/")  # the page sets the CSRF cookie; the form's token is left out
    response = client.post("/entrar/", {"username": ana.username, "password": "x"})
    assert response.status_code == 403
    page = response.text
    assert '<html lang="es">' in page
    assert PHONE in page
    assert "La página caducó" in page
    assert "No se ha guardado nada" in page
    assert "acepta las cookies de este sitio" in page  # what to check if it happens again
    assert "CSRF" not in page


def test_a_form_posted_without_the_cookie_gets_the_same_page():
    response = Client(enforce_csrf_checks=True).post("/entrar/", {"username": "ana"})
    assert response.status_code == 403
    assert "La página caducó" in response.text


def test_a_bad_request_page_is_spanish(client):
    response = client.get("/", headers={"host": "not-this-site.example"})
    assert response.status_code == 400
    assert "No entendimos esta petición" in response.text
    assert PHONE in response.text
    assert "Bad Request" not in response.text


def test_the_server_error_page_needs_no_request_and_no_stylesheet():
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    page = response.content.decode()
    assert "Algo falló en el servidor" in page
    assert "Lo anotado antes sigue guardado" in page
    assert PHONE in page
    assert "<link" not in page  # nothing that could fail itself
    with translation.override("en"):
        english = server_error(RequestFactory().get("/")).content.decode()
    assert "Something went wrong on the server" in english
