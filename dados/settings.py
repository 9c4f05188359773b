"""Settings for Dados, read from environment variables.

Every setting an operator may change comes from the environment through the
small typed helpers below, which fail loudly on a value they cannot read.
"""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envbool(name: str, default: str) -> bool:
    """Read a boolean: 1/true/yes/on or 0/false/no/off."""
    value = os.environ.get(name, default).strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {value!r}")


def envint(name: str, default: str) -> int:
    value = os.environ.get(name, default).strip()
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None


def envlist(name: str, default: str) -> list[str]:
    """Read a comma-separated list, ignoring blanks around the commas."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def envorigin(name: str, default: str) -> str:
    """Read an origin: http:// or https://, a host and maybe a port, nothing after."""
    value = os.environ.get(name, default).strip().removesuffix("/")
    parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        parts = None
    if (
        not parts
        or parts.scheme not in {"http", "https"}
        or not parts.hostname
        or "@" in parts.netloc
        or parts.path
        or parts.query
        or parts.fragment
    ):
        raise ImproperlyConfigured(
            f"{name} must be an origin such as https://dados.example.org, got {value!r}"
        )
    return value


def database_from_url(url: str, base_dir: Path) -> dict:
    """Turn DATABASE_URL (sqlite:///path or postgres://user:pw@host:port/name) into DATABASES."""
    parts = urlsplit(url)
    options = dict(parse_qsl(parts.query))
    if parts.scheme == "sqlite":
        path = unquote(parts.path)
        # sqlite:///db.sqlite3 is relative to the project, sqlite:////abs/path is absolute.
        if path.startswith("//"):
            path = path[1:]
        elif path.startswith("/"):
            path = str(base_dir / path[1:])
        if not path or path == str(base_dir) + "/":
            raise ImproperlyConfigured(f"DATABASE_URL has no SQLite file name: {url!r}")
        return sqlite_database(Path(path))
    if parts.scheme in {"postgres", "postgresql", "pgsql"}:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured("DATABASE_URL names no PostgreSQL database")
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfigured("DATABASE_URL has an invalid port") from None
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": unquote(parts.hostname or ""),
            "PORT": str(port or ""),
            "CONN_MAX_AGE": 60,
            "OPTIONS": options,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL must start with sqlite:// or postgres://, got {parts.scheme or url!r}"
    )


def sqlite_database(path: Path) -> dict:
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        # A file, not memory: tests then run with WAL, locking and triggers as served.
        "TEST": {"NAME": path.with_name(f"test_{path.name}")},
        # Kept open between requests, so the PRAGMAs run once per connection.
        "CONN_MAX_AGE": 60,
        "OPTIONS": {
            # IMMEDIATE takes the write lock when a transaction starts, so two
            # read-then-write requests queue on the busy timeout instead of failing
            # with "database is locked" when the second one tries to write.
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            # WAL lets readers go on while one writer writes; FULL syncs the WAL at every
            # commit, so a write is on disk before its request is answered.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
        },
    }


DEBUG = envbool("DEBUG", "false")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY is not set (only DEBUG=true may run without one)")
    SECRET_KEY = "django-insecure-local-only-not-for-deployment"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

DATABASES = {
    "default": database_from_url(
        os.environ.get("DATABASE_URL", "sqlite:///db.sqlite3"),
        BASE_DIR,
    )
}
# A connection kept for CONN_MAX_AGE is checked before a request uses it, so one the
# database closed (a restart, a failover) is replaced at once instead of failing requests.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = envbool("CONN_HEALTH_CHECKS", "true")
# Served by ASGI (dados.asgi says so), each request's sync code runs on a thread of its
# own, and a connection kept for CONN_MAX_AGE would stay with a thread that is gone: as
# Django advises, none is kept, and PostgreSQL's come from psycopg's pool instead.
if os.environ.get("DADOS_SERVER") == "asgi":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["OPTIONS"].setdefault(
            "pool", {"min_size": 1, "max_size": envint("DATABASE_POOL_SIZE", "10")}
        )
# Pages served by WSGI (gunicorn) poll, unless the card's streams are served apart, by an
# ASGI server to which the proxy routes /tarjetas/N/eventos/ (docs/operations.md).
STREAMS_APART = envbool("STREAMS_APART", "false")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "accounts",
    "accesses",
    "scorecards",
    "safekeeping",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # After WhiteNoise, which serves its own compressed files; before anything that
    # changes the body. Its random padding guards against BREACH.
    "django.middleware.gzip.GZipMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "dados.middleware.LanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "dados.middleware.PrivateCacheMiddleware",
    "dados.middleware.FreshConnectionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "dados.middleware.HtmxRedirectMiddleware",
    "accounts.middleware.PasswordChangeRequiredMiddleware",
    # Last, as django-axes asks: it turns a locked-out log-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "dados.urls"
WSGI_APPLICATION = "dados.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = [
    # First, so a locked-out username and address never reach the password check.
    "axes.backends.AxesStandaloneBackend",
    # Django's, with the username in any case.
    "accounts.security.UsernameAnyCaseBackend",
]

# Log-in throttling: 5 failures for one username from one address lock both out
# for 15 minutes. The address comes from accounts.security.client_ip, which only
# believes X-Forwarded-For when the request arrives from a TRUSTED_PROXIES address.
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_LOCKOUT_TEMPLATE = "registration/lockout.html"
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "accounts.security.client_ip"
AXES_USERNAME_CALLABLE = "accounts.security.lockout_username"
# Its records are in the admin as proxies of its models, which name them in Spanish, in a
# section of their own (the accesses app), rather than as axes registers them.
AXES_ENABLE_ADMIN = False
TRUSTED_PROXIES = envlist("TRUSTED_PROXIES", "")
# The dice of digital games: a dotted path to a class whose instances have randint(), as
# random.Random's. The server rolls with the operating system's randomness; only tests
# put a seeded or scripted source here (not an environment variable: no deployment
# should ever roll predictable dice).
DICE_SOURCE = "secrets.SystemRandom"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "es"
LANGUAGES = [("es", "Español"), ("en", "English")]
LANGUAGE_COOKIE_AGE = 60 * 60 * 24 * 365
LOCALE_PATHS = [BASE_DIR / "locale"]
# Short dates each language's readers cannot misread (dados/formats).
FORMAT_MODULE_PATH = ["dados.formats"]
TIME_ZONE = "Europe/Madrid"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Files browsers ask for at the site root (favicon.ico), served by WhiteNoise.
WHITENOISE_ROOT = BASE_DIR / "public"
# WhiteNoise's own table lacks the web app manifest's type (browsers warn on another).
WHITENOISE_MIMETYPES = {".webmanifest": "application/manifest+json"}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "dados.storage.MinifiedStaticFilesStorage"
        )
    },
}

# What many phones receive is rendered once and kept here (a card's patch from one version
# to the next): keys name the card and its versions, so a value never goes stale and no
# process has to be told of a change. By default Django's database cache, which every
# process of this machine (and every app server on one PostgreSQL) shares: a set is a row,
# and expired rows go first when it culls. (The file cache lists its whole folder at each
# set: 8.8 ms with 5,000 entries, measured on 2026-12-03, and never removes an expired
# entry but at random.) On SQLite its table lives in a file of its own beside the
# database (dados.routers.CacheRouter), so its writes never queue behind a game's; the
# table is made by `migrate` (scorecards.apps). REDIS_URL: Django's Redis cache (it needs
# the `redis` package); CACHE=memory: each process's own (the tests: pyproject.toml).
if REDIS_URL := os.environ.get("REDIS_URL"):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
        }
    }
elif os.environ.get("CACHE") == "memory":
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "dados_cache",
            "OPTIONS": {"MAX_ENTRIES": 5000},
        }
    }
    if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
        main = Path(DATABASES["default"]["NAME"])
        DATABASES["cache"] = sqlite_database(main.with_name(f"{main.stem}.cache.sqlite3"))
        # What it holds is made again on demand: no sync at each commit.
        DATABASES["cache"]["OPTIONS"]["init_command"] = (
            "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
        )
        DATABASES["cache"]["CONN_MAX_AGE"] = DATABASES["default"]["CONN_MAX_AGE"]
        DATABASE_ROUTERS = ["dados.routers.CacheRouter"]
# Renders keyed by what they show (card.html's sheet rows, sheets.row_key), which never go
# stale: each process keeps its own, in memory, and drops the least used. A six-player row
# is about 2 KB of HTML: some 7 MB a process at most, the rows of 230 cards.
CACHES["fragments"] = {
    "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
    "LOCATION": "fragments",
    "OPTIONS": {"MAX_ENTRIES": 3000},
}

# Where `manage.py backup` writes the club's copies, and where the admin's index looks for
# the newest: `backups/` beside a SQLite database, else beside the code.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    _backups = Path(DATABASES["default"]["NAME"]).parent / "backups"
else:
    _backups = BASE_DIR / "backups"
BACKUP_DIR = Path(os.environ.get("BACKUP_DIR") or _backups)

# Sessions live in the database, so any number of app servers can share them, and are
# read through the cache when every process shares it (the database's, Redis): one cache
# read, not the session's query and its decoding, a third of what a request costs before
# its view (measured, bench/RESULTS.md). Not through a cache of each process's own
# (CACHE=memory), where a session ended in one process would live on in the others. What
# ends sessions goes through the engine's SessionStore (User.end_sessions), which forgets
# the cached copy too.
SESSION_ENGINE = "django.contrib.sessions.backends." + (
    "db" if CACHES["default"]["BACKEND"].endswith("LocMemCache") else "cached_db"
)
SESSION_COOKIE_AGE = 60 * 60 * 24 * 30
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
# Messages live in the session too, never in a cookie: the admin's temporary passwords are
# shown once as a message, and a cookie is only signed, not encrypted.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
CSRF_COOKIE_SAMESITE = "Lax"
# «La página caducó», marked so that the card's script can say so (dados.errors).
CSRF_FAILURE_VIEW = "dados.errors.csrf_failure"

# Behind HTTPS in production; set SECURE=false only for plain-HTTP local serving.
SECURE = envbool("SECURE", "false" if DEBUG else "true")
SESSION_COOKIE_SECURE = SECURE
CSRF_COOKIE_SECURE = SECURE
LANGUAGE_COOKIE_SECURE = SECURE
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", "true" if SECURE else "false")
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", "31536000" if SECURE else "0")
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE
SECURE_HSTS_PRELOAD = SECURE
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if envbool("BEHIND_PROXY", "false"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Where the phones open the app: every absolute address it gives (the QR under «Seguir en
# el móvil») starts with this, never with a request's Host header, which anyone may forge
# where ALLOWED_HOSTS lets any host through (as under `make run`). By default the one
# trusted origin or host configured, else where `make run` and `make dev` serve.
if len(CSRF_TRUSTED_ORIGINS) == 1 and "*" not in CSRF_TRUSTED_ORIGINS[0]:
    _origin = CSRF_TRUSTED_ORIGINS[0]
elif len(ALLOWED_HOSTS) == 1 and ALLOWED_HOSTS[0] != "*" and ALLOWED_HOSTS[0][0] != ".":
    _origin = ("https://" if SECURE else "http://") + ALLOWED_HOSTS[0]
else:
    _origin = "http://127.0.0.1:8000"
SITE_URL = envorigin("SITE_URL", _origin)
# Django's redirect to HTTPS goes there too, not to the host the request named.
SECURE_SSL_HOST = urlsplit(SITE_URL).netloc if SITE_URL.startswith("https://") else None

SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    # django-axes reports every log-in at INFO; its warnings (lockouts) are what matter.
    "loggers": {"axes": {"level": "WARNING"}},
}
