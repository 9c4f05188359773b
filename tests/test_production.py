"""Production settings: Django's deploy checks pass and every response carries the headers."""

import os
import re
import subprocess
import sys

from django.conf import settings
from django.templatetags.static import static
from django.urls import reverse

PRODUCTION = {
    "SECRET_KEY": "k7#Qx2!vB9$mZ4@pL8^nR3&tW6*yH1(cJ5)dF0-gS2_aE7+uI4=oP9",
    "DEBUG": "false",
    "ALLOWED_HOSTS": "dados.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://dados.example.org",
}


def manage(*args, **env):
    # Only what production sets: not the test run's overrides, nor the browser tests'
    # DJANGO_ALLOW_ASYNC_UNSAFE.
    dropped = {"SECURE", "SECURE_SSL_REDIRECT", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in dropped}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        env={**clean, **PRODUCTION, **env},
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
    )


def test_check_deploy_passes_with_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_fails_when_https_is_turned_off():
    result = manage("check", "--deploy", "--fail-level", "WARNING", SECURE="false")
    assert result.returncode != 0
    assert "security.W012" in result.stderr + result.stdout


def test_production_defaults_are_strict():
    result = manage(
        "shell",
        "-c",
        "from django.conf import settings as s; print(s.SECURE_HSTS_SECONDS, "
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, "
        "s.SECURE_CONTENT_TYPE_NOSNIFF, s.SECURE_REFERRER_POLICY)",
    )
    assert result.returncode == 0, result.stderr
    hsts, *flags, referrer = result.stdout.strip().splitlines()[-1].split()
    assert int(hsts) >= 365 * 24 * 3600
    assert flags == ["True", "True", "True", "True"]
    assert referrer == "same-origin"


def test_every_response_carries_the_security_headers(client):
    response = client.get(reverse("login"))
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["X-Frame-Options"] == "DENY"
    directives = {
        part.split()[0]: part.split()[1:]
        for part in response.headers["Content-Security-Policy"].split(";")
        if part.strip()
    }
    assert directives["default-src"] == ["'self'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["script-src"][0] == "'self'"
    assert directives["script-src"][1].startswith("'nonce-")
    assert len(directives["script-src"]) == 2
    assert "'unsafe-inline'" not in response.headers["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response.headers["Content-Security-Policy"]


def test_the_session_and_csrf_cookies_are_secure_and_http_only(client, db):
    from tests.factories import PASSWORD, UserFactory

    UserFactory(username="ana")
    response = client.post(reverse("login"), {"username": "ana", "password": PASSWORD})
    session = response.cookies[settings.SESSION_COOKIE_NAME]
    assert session["secure"]
    assert session["httponly"]
    assert session["samesite"] == "Lax"
    client.cookies.clear()
    csrf = client.get(reverse("login")).cookies[settings.CSRF_COOKIE_NAME]
    assert csrf["secure"]


def test_static_files_are_hashed_compressed_and_cached_for_ever(client):
    """WhiteNoise's CompressedManifestStaticFilesStorage, as shipped."""
    url = static("css/dados.css")
    assert re.fullmatch(r"/static/css/dados\.[0-9a-f]{12}\.css", url)
    response = client.get(url, headers={"Accept-Encoding": "gzip"})
    assert response.status_code == 200
    assert response["Content-Encoding"] == "gzip"
    assert "immutable" in response["Cache-Control"]
