import pytest
from django.contrib.auth import SESSION_KEY
from django.test import RequestFactory, override_settings
from django.urls import reverse

from accounts.security import client_ip
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def attempt(client, password, address="203.0.113.7", **headers):
    return client.post(
        reverse("login"),
        {"username": "ana", "password": password},
        REMOTE_ADDR=address,
        headers=headers,
    )


def test_five_failures_lock_the_username_from_that_address(client, ana):
    for _ in range(4):
        assert attempt(client, "mal").status_code == 200
    locked = attempt(client, "mal")
    assert locked.status_code == 429
    assert "Acceso bloqueado durante 15 minutos" in locked.text
    right_password = attempt(client, PASSWORD)
    assert right_password.status_code == 429
    assert SESSION_KEY not in client.session


def test_the_lockout_is_per_username_and_address(client, ana):
    for _ in range(5):
        attempt(client, "mal")
    assert attempt(client, PASSWORD, address="198.51.100.9").status_code == 302
    UserFactory(username="ben")
    response = client.post(
        reverse("login"), {"username": "ben", "password": PASSWORD}, REMOTE_ADDR="203.0.113.7"
    )
    assert response.status_code == 302


def test_the_lockout_lasts_fifteen_minutes(client, ana, settings):
    from datetime import timedelta

    from axes.models import AccessAttempt
    from django.utils import timezone

    assert timedelta(minutes=15) == settings.AXES_COOLOFF_TIME
    for _ in range(5):
        attempt(client, "mal")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert attempt(client, PASSWORD).status_code == 302


def test_four_failures_and_a_success_start_the_count_again(client, ana):
    for _ in range(4):
        attempt(client, "mal")
    assert attempt(client, PASSWORD).status_code == 302
    client.post(reverse("logout"))
    for _ in range(4):
        assert attempt(client, "mal").status_code == 200


def test_forwarded_for_is_ignored_without_a_trusted_proxy(client, ana):
    for n in range(5):
        attempt(client, "mal", X_FORWARDED_FOR=f"10.0.0.{n}")
    assert attempt(client, PASSWORD, X_FORWARDED_FOR="10.9.9.9").status_code == 429


@override_settings(TRUSTED_PROXIES=["127.0.0.1"])
def test_behind_a_trusted_proxy_the_forwarded_client_is_locked_out(client, ana):
    for _ in range(5):
        attempt(client, "mal", address="127.0.0.1", X_FORWARDED_FOR="203.0.113.7")
    assert (
        attempt(client, PASSWORD, address="127.0.0.1", X_FORWARDED_FOR="203.0.113.7").status_code
        == 429
    )
    other = attempt(client, PASSWORD, address="127.0.0.1", X_FORWARDED_FOR="198.51.100.9")
    assert other.status_code == 302


@pytest.mark.parametrize(
    ("remote", "forwarded", "trusted", "expected"),
    [
        ("203.0.113.7", "", [], "203.0.113.7"),
        ("203.0.113.7", "1.2.3.4", [], "203.0.113.7"),
        ("127.0.0.1", "1.2.3.4", ["127.0.0.1"], "1.2.3.4"),
        ("127.0.0.1", "6.6.6.6, 1.2.3.4", ["127.0.0.1"], "1.2.3.4"),
        ("127.0.0.1", "1.2.3.4, 10.0.0.2", ["127.0.0.1", "10.0.0.2"], "1.2.3.4"),
        ("127.0.0.1", "", ["127.0.0.1"], "127.0.0.1"),
        ("127.0.0.1", " , ", ["127.0.0.1"], "127.0.0.1"),
    ],
)
def test_client_ip_trusts_only_named_proxies(settings, remote, forwarded, trusted, expected):
    settings.TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_ip(request) == expected
