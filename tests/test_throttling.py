import os

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import RequestFactory, override_settings
from django.urls import reverse

from accounts.security import client_ip
from tests.factories import PASSWORD, UserFactory
from tests.liveserver import (
    HOST,
    AppServer,
    Browser,
    django_script,
    free_port,
    migrated_database,
    run,
)

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


# `make run`: uvicorn believes no X-Forwarded-For


def make_run_server(tmp_path, **env) -> AppServer:
    """uvicorn as `make run` runs it (its command line, as `make --dry-run` prints it), on a
    migrated database of its own with Ana, and env as the shell that ran make has it."""
    port = free_port()
    key = tmp_path / "secret_key"
    key.write_text("k" * 50)
    dry = run(
        ["make", "--dry-run", "--always-make", "run", f"PORT={port}", f"KEY={key}"],
        {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))},
    )
    # The recipe's line, continued lines and all, as make hands it to the shell.
    lines = dry.replace("\\\n", " ").splitlines()
    line = next(line for line in lines if "uvicorn dados.asgi:application" in line)
    db = migrated_database(tmp_path / "dados.sqlite3")
    django_script(db, "from tests.factories import UserFactory; UserFactory(username='ana')")

    class MakeRun(AppServer):
        def command(self):
            return ["sh", "-c", line]

    return MakeRun(db=db, log=tmp_path / "make-run.log", port=port, env=env)


def failed_log_ins(server, attempts, forwarded=None) -> list[int]:
    """Log-ins as Ana with a wrong password, each with that X-Forwarded-For: their
    statuses."""
    browser = Browser(HOST, server.port)
    browser.get("/entrar/")
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    fields = {"username": "ana", "csrfmiddlewaretoken": browser.cookies["csrftoken"]}
    return [
        browser.post("/entrar/", fields | {"password": password}, headers=headers).status
        for password in attempts
    ]


@pytest.mark.server
def test_make_run_gives_a_forged_forwarded_for_no_fresh_lockout(tmp_path):
    """uvicorn believes X-Forwarded-For from loopback unless told not to: a client on the
    club's laptop would pick the address the lockout counts, and try five passwords more
    with each address it names."""
    server = make_run_server(tmp_path)
    server.start()
    try:
        assert failed_log_ins(server, ["mal"] * 5) == [200, 200, 200, 200, 429]
        assert failed_log_ins(server, [PASSWORD], forwarded="198.51.100.9") == [429]
    finally:
        server.stop()


@pytest.mark.server
def test_make_run_behind_a_proxy_locks_out_the_forwarded_client(tmp_path):
    """With BEHIND_PROXY the proxy on this machine says who the client is: each client
    its own lockout."""
    server = make_run_server(tmp_path, BEHIND_PROXY="true", TRUSTED_PROXIES="127.0.0.1")
    server.start()
    try:
        locked = failed_log_ins(server, ["mal"] * 5, forwarded="203.0.113.7")
        assert locked == [200, 200, 200, 200, 429]
        assert failed_log_ins(server, [PASSWORD], forwarded="198.51.100.9") == [302]
        assert failed_log_ins(server, [PASSWORD], forwarded="203.0.113.7") == [429]
    finally:
        server.stop()
