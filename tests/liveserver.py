"""A real app server for tests: its own database, gunicorn in its own process group, and a
small standard-library HTTP client that logs in and posts like htmx does.

Nothing here touches pytest-django's test database: the server, `manage.py` and the seed
scripts all run as subprocesses with DATABASE_URL pointing at a database the test owns,
a SQLite file or, in the PostgreSQL pass, a database of its own on the same server.
"""

import copy
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def server_env(db: Path | str) -> dict[str, str]:
    """The environment of a production-like server on plain HTTP.

    db is a SQLite file, or the postgres:// URL of a PostgreSQL database.
    """
    env = dict(os.environ)
    for name in ("BEHIND_PROXY", "TRUSTED_PROXIES", "CSRF_TRUSTED_ORIGINS"):
        env.pop(name, None)
    env.update(
        DEBUG="false",
        SECRET_KEY="dados-durability-test-only-secret-key-0123456789-abcdefghij",
        SECURE="false",
        SECURE_SSL_REDIRECT="false",
        SECURE_HSTS_SECONDS="0",
        ALLOWED_HOSTS=HOST,
        # An absolute path gives sqlite:////abs/path.
        DATABASE_URL=db if isinstance(db, str) else f"sqlite:///{db}",
        LOG_LEVEL="INFO",
        PYTHONUNBUFFERED="1",
    )
    return env


def fresh_setting(expression: str, *, without=(), **env) -> str:
    """An expression over dados.settings (as s), read in a fresh process with this one's
    variables less those named in `without`, and env over them: what it prints, or the
    error that stopped it."""
    clean = {k: v for k, v in os.environ.items() if k not in without}
    clean.update({"SECRET_KEY": "x" * 50, "DEBUG": "false", **env})
    result = subprocess.run(
        [sys.executable, "-c", f"import dados.settings as s; print({expression})"],
        env=clean,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return result.stdout.strip() or result.stderr


def run(args, env, timeout=120) -> str:
    """Run a command in the project directory; its output on success, a readable failure else."""
    result = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, args))[:200]} exited {result.returncode}\n"
            f"--- stdout\n{result.stdout[-3000:]}\n--- stderr\n{result.stderr[-3000:]}"
        )
    return result.stdout


def migrated_database(db: Path | str) -> Path | str:
    """A SQLite file, or an empty PostgreSQL database, with every migration applied."""
    run([BIN / "python", "manage.py", "migrate", "--noinput"], server_env(db))
    return db


@contextmanager
def template_database(name: str, folder: Path, postgres: bool):
    """A migrated database for a module's tests to copy (database_copy): a SQLite file, or
    the name of a PostgreSQL template, dropped afterwards."""
    if postgres:
        name = f"{name}_{uuid.uuid4().hex[:8]}"  # one per pytest-xdist worker
        url = migrated_database(postgres_database(name))
        try:
            yield name
        finally:
            drop_postgres_database(url)
    else:
        yield migrated_database(folder / "template.sqlite3")


@contextmanager
def database_copy(template, folder: Path, postgres: bool, prefix: str):
    """A test's own copy of template_database's database: its SQLite file or PostgreSQL
    URL, a PostgreSQL one dropped afterwards."""
    if postgres:
        url = postgres_database(f"{prefix}_{uuid.uuid4().hex[:8]}", template=template)
        try:
            yield url
        finally:
            drop_postgres_database(url)
    else:
        yield copy_database(template, folder / "dados.sqlite3")


@contextmanager
def seeded_template(template, folder: Path, postgres: bool, prefix: str, seed: str, password: str):
    """A copy of template_database's database with what the seed script made (it prints it
    as JSON on its last line, given the players' password), seeded once for a module's
    tests to copy in turn (database_copy): (its SQLite file or PostgreSQL template name,
    what the script printed)."""
    with database_copy(template, folder, postgres, prefix) as db:
        printed = json.loads(django_script(db, seed, password).strip().splitlines()[-1])
        yield (urlsplit(db).path[1:] if postgres else db), printed


def copy_database(source: Path, target: Path) -> Path:
    """Copy a SQLite database safely (the backup API, whatever its WAL holds)."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)
    return target


def postgres_database(name: str, template: str | None = None) -> str:
    """A new PostgreSQL database on DATABASE_URL's server, empty or a copy of template;
    its URL."""
    copy = f" TEMPLATE {template}" if template else ""
    with _postgres_server() as server:
        server.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        server.execute(f"CREATE DATABASE {name}{copy}")
    return urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{name}"))


def drop_postgres_database(url: str) -> None:
    with _postgres_server() as server:
        server.execute(f"DROP DATABASE IF EXISTS {urlsplit(url).path[1:]} WITH (FORCE)")


def _postgres_server() -> psycopg.Connection:
    maintenance = urlsplit(os.environ["DATABASE_URL"])._replace(path="/postgres", query="")
    return psycopg.connect(urlunsplit(maintenance), autocommit=True)


def query(db: Path | str, sql: str, *params) -> list[tuple]:
    """Rows of one query (%s placeholders) on a test's database, outside Django."""
    if isinstance(db, str):
        with psycopg.connect(db) as conn:
            return conn.execute(sql, params).fetchall()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return conn.execute(sql.replace("%s", "?"), params).fetchall()
    finally:
        conn.close()


def django_script(db: Path | str, code: str, *args: str) -> str:
    """Run Python code with Django set up on the given database; returns its stdout."""
    prelude = "import django; django.setup()\n"
    return run([BIN / "python", "-c", prelude + code, *args], server_env(db))


def _group_alive(pgid: int) -> bool:
    """True while any non-zombie process of the group is left."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        fields = text[text.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


@dataclass
class AppServer:
    """gunicorn serving dados.wsgi on a loopback port, in a process group of its own; or,
    with asgi, uvicorn serving dados.asgi as `make run` and production do."""

    db: Path | str
    log: Path
    workers: int = 4
    threads: int = 4
    port: int = 0
    process: subprocess.Popen | None = None
    starts: int = 0
    asgi: bool = False
    env: dict = field(default_factory=dict)  # more of its settings, as environment
    # Headers of the request that finds it up: behind a proxy, X-Forwarded-Proto.
    probe: dict = field(default_factory=dict)

    def command(self) -> list:
        if self.asgi:
            return [
                BIN / "uvicorn",
                "dados.asgi:application",
                "--host",
                HOST,
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
                "--no-access-log",
                "--timeout-graceful-shutdown",
                "3",
            ]
        gunicorn = BIN / "gunicorn"
        if not gunicorn.exists():
            gunicorn = Path(shutil.which("gunicorn") or gunicorn)
        return [
            gunicorn,
            "dados.wsgi",
            "--bind",
            f"{HOST}:{self.port}",
            "--workers",
            str(self.workers),
            "--worker-class",
            "gthread",
            "--threads",
            str(self.threads),
            "--timeout",
            "60",
            "--graceful-timeout",
            "10",
            "--no-control-socket",
        ]

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self, timeout: float = 30.0) -> None:
        assert self.process is None, "already running"
        if not (ROOT / "staticfiles" / "staticfiles.json").exists():
            raise AssertionError(
                "staticfiles/staticfiles.json is missing: DEBUG=false serves hashed static "
                "names, run `manage.py collectstatic` first (make test does)"
            )
        self.port = self.port or free_port()  # a restart keeps its address
        self.starts += 1
        with self.log.open("a") as log:
            log.write(f"\n==== start {self.starts} on port {self.port}\n")
            log.flush()
            self.process = subprocess.Popen(
                self.command(),
                cwd=ROOT,
                env=server_env(self.db) | self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise AssertionError(f"the server exited {code} on start:\n{self.log_tail()}")
            try:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=5)
                conn.request("GET", "/entrar/", headers=self.probe)
                status = conn.getresponse().status
                conn.close()
                if status == 200:
                    return
                raise AssertionError(f"/entrar/ answered {status}:\n{self.log_tail()}")
            except (ConnectionError, TimeoutError, http.client.HTTPException, OSError):
                pass
            if time.monotonic() > deadline:
                self.kill()
                raise AssertionError(f"no answer in {timeout} s:\n{self.log_tail()}")
            time.sleep(0.1)

    def _signal_group(self, signum: int) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)

    def _wait_group_gone(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while _group_alive(self.process.pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def kill(self) -> None:
        """SIGKILL to the master and every worker at once, and wait until none is left."""
        if self.process is None:
            return
        self._signal_group(signal.SIGKILL)
        self.process.wait(timeout=10)
        if not self._wait_group_gone(10):
            raise AssertionError("gunicorn processes survived SIGKILL")
        self.process = None

    def stop(self) -> None:
        """Graceful stop (SIGTERM), SIGKILL if it takes more than a few seconds."""
        if self.process is None:
            return
        self._signal_group(signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=15)
        if not self._wait_group_gone(5):
            self._signal_group(signal.SIGKILL)
            self._wait_group_gone(10)
        if self.process.poll() is None:
            self.process.wait(timeout=5)
        self.process = None

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_text()[-chars:]


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class Browser:
    """One user's session: its own cookies, one short HTTP connection per request."""

    host: str
    port: int
    cookies: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def connect(self) -> http.client.HTTPConnection:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        conn.connect()
        return conn

    def send(self, conn, method, path, fields=None, *, htmx=False, headers=None) -> None:
        """Send a request on an open connection (split from reading, for races), with
        headers of its own besides a browser's."""
        headers = {"Connection": "close", **(headers or {})}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if method == "POST":
            body = urlencode(fields or {}).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Origin"] = self.origin
            headers["Referer"] = self.origin + path
            if "csrftoken" in self.cookies:
                headers["X-CSRFToken"] = self.cookies["csrftoken"]
        if htmx:
            headers["HX-Request"] = "true"
        conn.request(method, path, body=body, headers=headers)

    def receive(self, conn) -> Response:
        try:
            response = conn.getresponse()
            body = response.read().decode("utf-8", errors="replace")
            for header in response.headers.get_all("Set-Cookie") or []:
                cookie = SimpleCookie()
                cookie.load(header)
                for name, morsel in cookie.items():
                    if morsel.value and morsel["max-age"] != "0":
                        self.cookies[name] = morsel.value
                    else:
                        self.cookies.pop(name, None)
            return Response(response.status, dict(response.headers.items()), body)
        finally:
            conn.close()

    def request(self, method, path, fields=None, *, htmx=False, headers=None) -> Response:
        conn = self.connect()
        try:
            self.send(conn, method, path, fields, htmx=htmx, headers=headers)
        except BaseException:
            conn.close()
            raise
        return self.receive(conn)

    def get(self, path, **kwargs) -> Response:
        return self.request("GET", path, **kwargs)

    def post(self, path, fields=None, **kwargs) -> Response:
        return self.request("POST", path, fields, **kwargs)

    def stream(self, path, *, last_event_id=None, timeout=10.0) -> "Stream":
        """Open a card's event stream as EventSource does; read it with Stream.next()."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        conn.request("GET", path, headers=headers)
        return Stream(conn, conn.getresponse())

    def log_in(self, username: str, password: str) -> None:
        page = self.get("/entrar/")
        assert page.status == 200, page.status
        assert "csrftoken" in self.cookies, "the log-in page set no CSRF cookie"
        done = self.post(
            "/entrar/",
            {
                "username": username,
                "password": password,
                "csrfmiddlewaretoken": self.cookies["csrftoken"],
            },
        )
        assert done.status == 302, f"log-in of {username} answered {done.status}"
        assert "sessionid" in self.cookies, f"log-in of {username} set no session"


@dataclass
class Event:
    name: str  # "message" for a comment-free event without a name; "" for a comment
    data: str
    id: str | None
    at: float  # time.monotonic() when its last line arrived


class Stream:
    """A Server-Sent Events answer, read event by event (comments included, as "")."""

    def __init__(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse):
        self.conn = conn
        self.response = response
        self.status = response.status
        self.headers = response.headers  # names in any case (uvicorn sends them lowercased)

    def next(self) -> Event | None:
        """The next event or comment; None once the server has ended the stream. A socket
        timeout (the stream's) raises TimeoutError."""
        fields: dict[str, str] = {}
        comment = False
        while True:
            line = self.response.readline()
            if not line:
                return None
            line = line.decode().rstrip("\r\n")
            if line == "":
                if fields or comment:
                    return Event(
                        fields.get("event", "" if comment and not fields else "message"),
                        fields.get("data", ""),
                        fields.get("id"),
                        time.monotonic(),
                    )
                continue
            if line.startswith(":"):
                comment = True
                continue
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")

    def next_named(self, *names: str) -> Event | None:
        """The next event with one of these names, skipping comments and "retry" lines."""
        while (event := self.next()) is not None:
            if event.name in names:
                return event
        return None

    def close(self) -> None:
        self.conn.close()


@contextmanager
def served_copy(template_db: Path, seeded: dict, folder: Path):
    """uvicorn on a fresh copy of seeded_template's SQLite file: (server, what the seed
    made, a copy of its own for each test)."""
    db = copy_database(template_db, folder / "dados.sqlite3")
    server = AppServer(db=db, log=folder / "uvicorn.log", workers=1, asgi=True)
    server.start()
    try:
        yield server, copy.deepcopy(seeded)
    finally:
        server.stop()
