import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse

from dados.settings import database_from_url, envbool, envint, envlist

BASE = Path("/srv/dados")


def test_envbool_reads_true_and_false(monkeypatch):
    monkeypatch.setenv("X_FLAG", "Yes")
    assert envbool("X_FLAG", "false") is True
    monkeypatch.setenv("X_FLAG", "off")
    assert envbool("X_FLAG", "true") is False


def test_envbool_uses_default_when_unset(monkeypatch):
    monkeypatch.delenv("X_FLAG", raising=False)
    assert envbool("X_FLAG", "true") is True


@pytest.mark.parametrize("value", ["maybe", "2", "sí"])
def test_envbool_rejects_anything_else(monkeypatch, value):
    monkeypatch.setenv("X_FLAG", value)
    with pytest.raises(ImproperlyConfigured, match="X_FLAG"):
        envbool("X_FLAG", "false")


def test_envint_rejects_non_integers(monkeypatch):
    monkeypatch.setenv("X_NUM", "12a")
    with pytest.raises(ImproperlyConfigured, match="X_NUM"):
        envint("X_NUM", "0")
    monkeypatch.setenv("X_NUM", " 42 ")
    assert envint("X_NUM", "0") == 42


def test_envlist_splits_on_commas(monkeypatch):
    monkeypatch.setenv("X_LIST", " dados.example , ,localhost ")
    assert envlist("X_LIST", "") == ["dados.example", "localhost"]


def test_sqlite_url_is_relative_to_the_project():
    db = database_from_url("sqlite:///db.sqlite3", BASE)
    assert db["ENGINE"] == "dados.sqlite"
    assert db["NAME"] == BASE / "db.sqlite3"
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]
    assert db["OPTIONS"]["timeout"] >= 5


def test_sqlite_url_may_be_absolute():
    assert database_from_url("sqlite:////var/lib/dados.db", BASE)["NAME"] == Path(
        "/var/lib/dados.db"
    )


def test_postgres_url_is_parsed():
    db = database_from_url("postgres://dados:s%40cret@db.local:5433/dados?sslmode=require", BASE)
    assert db["ENGINE"] == "dados.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "dados",
        "dados",
        "s@cret",
        "db.local",
        "5433",
    )
    assert db["OPTIONS"] == {"sslmode": "require"}


@pytest.mark.parametrize(
    "url",
    ["mysql://x@y/z", "db.sqlite3", "postgres://u@h/", "postgres://u@h:port/x", "sqlite://"],
)
def test_bad_database_urls_fail_loudly(url):
    with pytest.raises(ImproperlyConfigured):
        database_from_url(url, BASE)


def test_a_sqlite_connection_runs_in_wal_mode_with_immediate_transactions(
    tmp_path, django_db_blocker
):
    from dados.sqlite.base import DatabaseWrapper

    config = database_from_url(f"sqlite:///{tmp_path}/x.sqlite3", BASE)
    config.update(
        {"ATOMIC_REQUESTS": False, "AUTOCOMMIT": True, "CONN_MAX_AGE": 0, "TIME_ZONE": None}
    )
    config.update({"CONN_HEALTH_CHECKS": False, "USER": "", "PASSWORD": "", "HOST": "", "PORT": ""})
    wrapper = DatabaseWrapper(config)
    with django_db_blocker.unblock():
        _check_wal(wrapper)


def _check_wal(wrapper):
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
            cursor.execute("PRAGMA busy_timeout")
            assert cursor.fetchone()[0] == 20_000
        assert wrapper.transaction_mode == "IMMEDIATE"
    finally:
        wrapper.close()


def test_it_speaks_spanish_in_madrid():
    assert settings.LANGUAGE_CODE == "es"
    assert settings.TIME_ZONE == "Europe/Madrid"
    assert settings.USE_TZ is True


def _import_settings(**env):
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    clean.update(env)
    return subprocess.run(
        [sys.executable, "-c", "import dados.settings"],
        env=clean,
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
    )


def test_production_without_secret_key_refuses_to_start():
    result = _import_settings()
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr


def test_a_bad_debug_value_refuses_to_start():
    result = _import_settings(DEBUG="perhaps", SECRET_KEY="x" * 50)
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


def test_debug_may_run_without_a_secret_key():
    assert _import_settings(DEBUG="true").returncode == 0


def test_nothing_that_may_write_runs_outside_the_sync_before_the_answer():
    """Every commit of a request is on disk before its answer leaves, so nothing that
    writes may come before SyncedBeforeAnswerMiddleware: only middleware that never
    touches the database (headers, static files, the HTTPS redirect), so the error page
    of a failed sync gets the headers too."""
    sync = settings.MIDDLEWARE.index("dados.middleware.SyncedBeforeAnswerMiddleware")
    assert settings.MIDDLEWARE[:sync] == [
        "django.middleware.security.SecurityMiddleware",
        "whitenoise.middleware.WhiteNoiseMiddleware",
        "django.middleware.clickjacking.XFrameOptionsMiddleware",
        "django.middleware.csp.ContentSecurityPolicyMiddleware",
    ]


@pytest.mark.parametrize(
    ("headers", "htmx"),
    [({"HX-Request": "true"}, True), ({"HX-Request": "false"}, False), ({}, False)],
)
def test_request_htmx_tells_an_htmx_request_without_building_request_headers(rf, headers, htmx):
    from dados.middleware import HtmxMiddleware

    seen = {}

    def view(request):
        seen["htmx"] = bool(request.htmx)
        seen["headers built"] = "headers" in request.__dict__  # a cached_property
        seen["target"] = request.htmx.target
        return HttpResponse("ok")

    request = rf.post("/", headers={**headers, "HX-Target": "sheet"})
    HtmxMiddleware(view)(request)
    assert seen == {"htmx": htmx, "headers built": False, "target": "sheet"}
