import gzip
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.urls import reverse

from dados.settings import database_from_url, envbool, envint, envlist
from tests.liveserver import fresh_setting

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
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == BASE / "db.sqlite3"
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert db["OPTIONS"]["init_command"] == "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
    assert db["OPTIONS"]["timeout"] >= 5


def test_sqlite_url_may_be_absolute():
    assert database_from_url("sqlite:////var/lib/dados.db", BASE)["NAME"] == Path(
        "/var/lib/dados.db"
    )


def test_postgres_url_is_parsed():
    db = database_from_url("postgres://dados:s%40cret@db.local:5433/dados?sslmode=require", BASE)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "dados",
        "dados",
        "s@cret",
        "db.local",
        "5433",
    )
    assert db["OPTIONS"] == {"sslmode": "require"}  # psycopg as shipped: no pool


@pytest.mark.parametrize(
    "url",
    ["mysql://x@y/z", "db.sqlite3", "postgres://u@h/", "postgres://u@h:port/x", "sqlite://"],
)
def test_bad_database_urls_fail_loudly(url):
    with pytest.raises(ImproperlyConfigured):
        database_from_url(url, BASE)


def test_the_database_is_djangos_own_engine():
    assert settings.DATABASES["default"]["ENGINE"] in {
        "django.db.backends.sqlite3",
        "django.db.backends.postgresql",
    }


sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's PRAGMAs")


@sqlite_only
def test_a_sqlite_connection_runs_in_wal_mode_and_syncs_every_commit(db):
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone()[0] == 2  # FULL
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] == 20_000


@sqlite_only
def test_a_sqlite_transaction_takes_the_write_lock_when_it_begins(transactional_db):
    """BEGIN IMMEDIATE: a transaction holds the write lock from its start, so one that
    reads and then writes never fails halfway; a second writer waits its turn."""
    other = sqlite3.connect(connection.settings_dict["NAME"], timeout=0)
    try:
        with transaction.atomic():
            get_user_model().objects.exists()
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("BEGIN IMMEDIATE")
        other.execute("BEGIN IMMEDIATE")  # free again once the first one commits
        other.rollback()
    finally:
        other.close()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's setting")
def test_a_postgresql_connection_commits_as_the_server_is_configured(db):
    """No per-session synchronous_commit: a COMMIT returns once the server's WAL is on disk
    (on, PostgreSQL's default) unless whoever runs the server chose otherwise."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT setting, source FROM pg_settings WHERE name = 'synchronous_commit'")
        setting, source = cursor.fetchone()
    assert source != "session"
    assert setting == "on"  # as scripts/with_postgres.py starts the test server


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


def test_html_is_compressed_for_a_client_that_accepts_gzip(client, db):
    plain = client.get(reverse("login"))
    assert "Content-Encoding" not in plain
    response = client.get(reverse("login"), headers={"Accept-Encoding": "gzip"})
    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    page = gzip.decompress(response.content).decode()
    assert '<html lang="es">' in page
    assert len(response.content) < len(plain.content) / 2


def _database_setting(key, **env):
    """DATABASES["default"][key] as dados.settings reads it from env, in a fresh process."""
    expression = f"s.DATABASES['default'][{key!r}]"
    return fresh_setting(expression, without={"CONN_HEALTH_CHECKS"}, **env)


@pytest.mark.parametrize("url", ["sqlite:///db.sqlite3", "postgres://dados@db/dados"])
def test_kept_connections_are_checked_before_use_unless_turned_off(url):
    """A connection the database dropped (a restart, a failover) is replaced before a
    request uses it, on either database."""
    assert _database_setting("CONN_HEALTH_CHECKS", DATABASE_URL=url) == "True"
    off = _database_setting("CONN_HEALTH_CHECKS", DATABASE_URL=url, CONN_HEALTH_CHECKS="false")
    assert off == "False"
    bad = _database_setting("CONN_HEALTH_CHECKS", DATABASE_URL=url, CONN_HEALTH_CHECKS="maybe")
    assert "CONN_HEALTH_CHECKS must be a boolean" in bad
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True


def _setting(expression, **env):
    return fresh_setting(expression, without={"CACHE", "REDIS_URL"}, **env)


def test_the_cache_is_shared_by_the_machines_processes_unless_told_otherwise():
    backend = "s.CACHES['default']['BACKEND'].rsplit('.', 1)[1]"
    assert _setting(backend, DATABASE_URL="sqlite:///db.sqlite3") == "DatabaseCache"
    # On SQLite, in a file of its own beside the database, where only its table goes.
    cache_db = "s.DATABASES['cache']['NAME']"
    assert _setting(cache_db, DATABASE_URL="sqlite:////srv/dados/club.sqlite3") == (
        "/srv/dados/club.cache.sqlite3"
    )
    routers = _setting("s.DATABASE_ROUTERS", DATABASE_URL="sqlite:///db.sqlite3")
    assert routers == "['dados.routers.CacheRouter']"
    # On PostgreSQL, a table beside the app's, which every app server shares.
    postgres = "postgres://dados@db/dados"
    assert _setting("'cache' in s.DATABASES", DATABASE_URL=postgres) == "False"
    assert _setting(backend, DATABASE_URL=postgres) == "DatabaseCache"
    assert _setting(backend, CACHE="memory") == "LocMemCache"
    assert _setting("'cache' in s.DATABASES", CACHE="memory") == "False"
    assert _setting(backend, REDIS_URL="redis://cache:6379/0") == "RedisCache"


def test_sessions_are_read_through_the_cache_only_when_every_process_shares_it():
    engine = "s.SESSION_ENGINE.rsplit('.', 1)[1]"
    assert _setting(engine, DATABASE_URL="sqlite:///db.sqlite3") == "cached_db"
    assert _setting(engine, DATABASE_URL="postgres://dados@db/dados") == "cached_db"
    assert _setting(engine, REDIS_URL="redis://cache:6379/0") == "cached_db"
    assert _setting(engine, CACHE="memory") == "db"


def test_under_asgi_no_connection_is_kept_and_postgresql_pools_them():
    sqlite, postgres = "sqlite:///db.sqlite3", "postgres://dados@db/dados"
    age = "s.DATABASES['default']['CONN_MAX_AGE']"
    pool = "s.DATABASES['default']['OPTIONS'].get('pool')"
    assert _setting(age, DATABASE_URL=postgres) == "60"
    assert _setting(age, DATABASE_URL=postgres, DADOS_SERVER="asgi") == "0"
    assert _setting(age, DATABASE_URL=sqlite, DADOS_SERVER="asgi") == "0"
    assert _setting(pool, DATABASE_URL=postgres) == "None"
    assert _setting(pool, DATABASE_URL=postgres, DADOS_SERVER="asgi") == (
        "{'min_size': 1, 'max_size': 10}"
    )
    assert _setting(pool, DATABASE_URL=sqlite, DADOS_SERVER="asgi") == "None"


def test_under_asgi_static_files_served_whole_are_not_warned_about_each_time():
    """WhiteNoise's FileResponse is a synchronous iterator, which Django's ASGI handler
    warns about on every static file (dados/asgi.py); other warnings still show."""
    django_warns = (
        "import dados.asgi, warnings; warnings.warn('StreamingHttpResponse must consume "
        "synchronous iterators in order to serve them asynchronously.')"
    )
    env = {**os.environ, "SECRET_KEY": "x" * 50, "DEBUG": "false"}
    for code, fails in (
        (django_warns, False),
        ("import dados.asgi, warnings; warnings.warn('x')", True),
    ):
        result = subprocess.run(
            [sys.executable, "-W", "error", "-c", code], env=env, capture_output=True,
            cwd=settings.BASE_DIR,
        )  # fmt: skip
        assert (result.returncode != 0) == fails, result.stderr
