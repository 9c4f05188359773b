"""`make bench`: how fast Dados answers, against budgets relative to a floor.

    python bench/run.py                      # SQLite, then PostgreSQL; exit 1 if a budget is missed
    python bench/run.py --db sqlite          # one database only (or --db postgres)
    python bench/run.py --duration 5 --connections 16 --workers 5
    python bench/run.py --write-results      # also rewrite the table in bench/RESULTS.md

For each database it seeds 100 players, 10,000 finalized games and 50 cards in progress of
6 players (bench/seed.py; the seeded SQLite file is cached under bench/.cache/ and reused
while the seed parameters, bench/seed.py and the migrations are unchanged; PostgreSQL is a
throwaway server from scripts/with_postgres.py, seeded every run), creates the sessions the
load generator sends, serves the app with gunicorn and production settings (DEBUG off) on
loopback, and drives every scenario with wrk (bench/load.lua): a warm-up, then `--duration`
seconds with `--connections` connections, the whole sequence `--rounds` times.

In each round, each scenario's median latency is divided by its floor's: a minimal
authenticated view (bench/views.py) in the same middleware stack, served only under
bench.settings, measured right before and right after the scenario (the mean of the two
counts; a drift between them is reported). The median of the rounds' ratios is what the
budget limits: on a shared machine one round's ratio moves by ±20 % (bench/RESULTS.md). A
scenario fails when that median exceeds its budget, or when any response in any round has
another status than the scenario expects (a 302 to the log-in page, a 409 on a write, a 500)
or any socket error or timeout happens.
"""

import argparse
import hashlib
import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CACHE = BENCH / ".cache"
RESULTS_MD = BENCH / "RESULTS.md"
HOST = "127.0.0.1"
SECRET_KEY = "dados-bench-only-secret-key-not-for-deployment-0123456789-abcdefghijklmnop"
MARK_START = "<!-- bench:start -->"
MARK_END = "<!-- bench:end -->"
# Above this share of CPU time used by others while the server is idle, numbers are noisy.
BUSY = 0.15
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    expect: int
    floor: str | None = None  # the floor scenario its p50 is divided by
    budget: float | None = None  # the largest allowed ratio; None: reported only
    marker: str = ""  # text a correct answer holds (checked once before the load)


SCENARIOS = [
    Scenario("floor_get", "floor GET", 200, marker="ok"),
    Scenario("floor_post", "floor POST + CSRF", 200, marker="ok"),
    Scenario("card", "card page, 6 players", 200, "floor_get", 3.0, 'id="sheet"'),
    Scenario("poll_same", "live poll, unchanged (204)", 204, "floor_get", 1.3),
    Scenario("poll_changed", "live poll after a change", 200, "floor_get", None, 'id="sheet"'),
    Scenario("history", "«Historial»", 200, "floor_get", 3.0, 'class="history"'),
    Scenario("player", "player statistics", 200, "floor_get", 3.0, "<svg"),
    Scenario("ranking", "«Clasificación»", 200, "floor_get", 3.0, "Clasificación"),
    # What durability alone costs a write, measured next to it: one row rewritten, its
    # commit on disk before the answer. Reported only: the write's budget is to the floor.
    Scenario("floor_write", "floor POST + one durable write", 200, "floor_post", None, "ok"),
    # Last: its writes change the cards the other scenarios read.
    # The organizer's page sends the version it shows: the answer is just what changed.
    Scenario("write", "box write (htmx POST)", 200, "floor_post", 2.0, 'hx-swap-oob="true"'),
]
BY_KEY = {s.key: s for s in SCENARIOS}
TICKS_ROWS = 64  # rows of the durable write floor, rewritten in turn


def say(message: str = "") -> None:
    print(message, flush=True)


def fail(message: str, code: int = 2) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


# Tools


def ensure_wrk() -> str:
    """wrk from Debian: installed when missing and running as root, else a clear stop."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() != 0:
        fail("wrk is missing: run 'sudo apt-get install wrk' and try again.")
    say("Installing Debian's wrk package…")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, env=env)
    return shutil.which("wrk") or fail("wrk is still missing after apt-get install wrk.")


def venv_bin(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else (shutil.which(name) or name)


def server_env(database_url: str) -> dict[str, str]:
    """Production settings on plain HTTP on loopback, with the floor views (bench.settings)."""
    env = dict(os.environ)
    for name in ("BEHIND_PROXY", "TRUSTED_PROXIES", "CSRF_TRUSTED_ORIGINS", "SECURE_HSTS_SECONDS"):
        env.pop(name, None)
    env.update(
        DJANGO_SETTINGS_MODULE="bench.settings",
        PYTHONPATH=str(ROOT),
        DEBUG="false",
        SECRET_KEY=SECRET_KEY,
        SECURE="false",
        SECURE_SSL_REDIRECT="false",
        ALLOWED_HOSTS=HOST,
        DATABASE_URL=database_url,
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env


def ensure_static(env: dict[str, str]) -> None:
    """DEBUG off serves hashed names from staticfiles/staticfiles.json: collect when stale."""
    manifest = ROOT / "staticfiles" / "staticfiles.json"
    sources = [p for p in (ROOT / "static").rglob("*") if p.is_file()]
    newest = max((p.stat().st_mtime for p in sources), default=0)
    if manifest.exists() and manifest.stat().st_mtime >= newest:
        return
    say("Collecting static files…")
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )


def cpu_busy(seconds: float = 2.0) -> float | None:
    """The share of all CPUs busy over a few seconds (before the server starts: others' load)."""

    def sample():
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait

    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return 1 - (idle1 - idle0) / max(total1 - total0, 1)


def disk_sync(samples: int = 200) -> dict | None:
    """How long the disk takes to make a write durable, just before the box writes: the
    median and p90 fdatasync of 40 KB (about one box write's WAL) in bench/.cache.

    Every box write waits for one (SQLite's WAL, PostgreSQL's commit), the floor for
    none; on a shared host this latency moves between runs more than anything else.
    """
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / "disk-probe"
    block = os.urandom(40 * 1024)
    times = []
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            for n in range(samples):
                os.pwrite(fd, block, (n % 8) * len(block))
                start = time.perf_counter()
                os.fdatasync(fd)
                times.append((time.perf_counter() - start) * 1000)
        finally:
            os.close(fd)
            path.unlink()
    except OSError:
        return None
    times.sort()
    return {"p50": times[len(times) // 2], "p90": times[len(times) * 9 // 10]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


# Database


def seed_params(args) -> dict:
    return {
        "players": args.players,
        "games": args.games,
        "live_cards": args.live_cards,
        "live_seats": args.live_seats,
    }


def seed_command(params: dict) -> list[str]:
    command = [sys.executable, "-m", "bench.seed"]
    for name, value in params.items():
        command += [f"--{name.replace('_', '-')}", str(value)]
    return command


def seed_key(params: dict) -> str:
    """Changes with the seed parameters, the seed script and any migration."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    sources = [BENCH / "seed.py", *sorted(ROOT.glob("*/migrations/*.py"))]
    for path in sources:
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy whatever the source's WAL holds (SQLite's backup API)."""
    for suffix in ("", "-wal", "-shm"):
        with suppress(FileNotFoundError):
            Path(f"{target}{suffix}").unlink()
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def sqlite_database(params: dict) -> str:
    """A working copy of the cached seeded file (seeding it first if needed); its URL."""
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = CACHE / f"seed-{seed_key(params)}.sqlite3"
    if cached.exists():
        say(f"Seeded SQLite database from the cache: {cached.relative_to(ROOT)}")
    else:
        for old in CACHE.glob("seed-*.sqlite3*"):
            old.unlink()
        building = CACHE / "seeding.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            with suppress(FileNotFoundError):
                Path(f"{building}{suffix}").unlink()
        say(f"Seeding SQLite ({params})…")
        subprocess.run(
            seed_command(params), cwd=ROOT, env=server_env(f"sqlite:///{building}"), check=True
        )
        copy_sqlite(building, cached)
        for suffix in ("", "-wal", "-shm"):
            with suppress(FileNotFoundError):
                Path(f"{building}{suffix}").unlink()
    work = CACHE / "run.sqlite3"
    copy_sqlite(cached, work)
    return f"sqlite:///{work}"


# Sessions and the data each scenario sends (this process runs Django on the same database)


class App:
    """Reads and prepares the seeded database through the app's models."""

    def __init__(self, env: dict[str, str]):
        os.environ.update(env)
        import django

        django.setup()
        from django.db import connection

        self.connection = connection

    def close(self) -> None:
        self.connection.close()

    def database_version(self) -> str:
        with self.connection.cursor() as cursor:
            if self.connection.vendor == "postgresql":
                cursor.execute("SHOW server_version")
                return "PostgreSQL " + cursor.fetchone()[0].split()[0]
            cursor.execute("SELECT sqlite_version()")
            return "SQLite " + cursor.fetchone()[0]

    def sessions(self) -> dict:
        """A logged-in session for the host, each live card's organizer, and the first
        player of each live card who does not organize it (who follows it live)."""
        from django.contrib.auth import (
            BACKEND_SESSION_KEY,
            HASH_SESSION_KEY,
            SESSION_KEY,
            get_user_model,
        )
        from django.contrib.sessions.backends.db import SessionStore
        from django.utils.crypto import get_random_string

        from bench.seed import HOST_USERNAME
        from scorecards.models import Scorecard, Seat

        User = get_user_model()
        host = User.objects.get(username=HOST_USERNAME)
        live = list(Scorecard.objects.in_progress().select_related("organizer").order_by("pk"))
        organizers = {card.pk: card.organizer for card in live}
        watchers = {}
        seats = Seat.objects.filter(scorecard__in=live).select_related("player").order_by("order")
        for seat in seats:
            if seat.player_id != organizers[seat.scorecard_id].pk:
                watchers.setdefault(seat.scorecard_id, seat.player)
        cookies = {}
        for user in [host, *organizers.values(), *watchers.values()]:
            if user.pk in cookies:
                continue
            session = SessionStore()
            session[SESSION_KEY] = str(user.pk)
            session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
            session[HASH_SESSION_KEY] = user.get_session_auth_hash()
            session.create()
            cookies[user.pk] = session.session_key
        self.close()
        return {
            "host": host.pk,
            "csrf": get_random_string(32),
            "cookies": cookies,
            "live": [card.pk for card in live],
            "organizers": {card_pk: user.pk for card_pk, user in organizers.items()},
            "watchers": {card_pk: user.pk for card_pk, user in watchers.items()},
            "games": Seat.objects.filter(
                player=host, scorecard__finalized_at__isnull=False
            ).count(),
        }

    def changes(self) -> int:
        from scorecards.models import Change

        count = Change.objects.count()
        self.close()
        return count

    def ticks(self) -> None:
        """The rows the durable write floor rewrites."""
        from bench.views import create_ticks

        create_ticks(TICKS_ROWS)
        self.close()

    def versions(self, cards) -> dict[int, int]:
        from scorecards.models import Scorecard

        found = dict(Scorecard.objects.filter(pk__in=cards).values_list("pk", "version"))
        self.close()
        return found

    def cells(self, cards) -> list[tuple[str, str, str]]:
        """Every box of every live card: (write URL, current value, another allowed value)."""
        from scorecards.models import Seat
        from scorecards.rules import Category

        typical = {c: sorted(v for v in _allowed(c) if v) for c in Category}
        seats = list(Seat.objects.filter(scorecard__in=cards).order_by("scorecard", "order"))
        self.close()
        cells = []
        # Box by box, seat by seat, card by card: consecutive writes go to different cards.
        for c in Category:
            choices = typical[c]
            # A middling score, another one, or «Sin anotar»: the first that differs.
            options = [choices[len(choices) // 2], choices[len(choices) // 2 - 1], None]
            for order in range(max((s.order for s in seats), default=-1) + 1):
                for seat in seats:
                    if seat.order != order:
                        continue
                    current = getattr(seat, c)
                    other = next(v for v in options if v != current)
                    cells.append(
                        (
                            f"/tarjetas/{seat.scorecard_id}/casilla/{seat.pk}/{c.value}/",
                            "" if current is None else str(current),
                            "" if other is None else str(other),
                        )
                    )
        return cells


def _allowed(category):
    from scorecards import rules

    return rules.allowed_scores(category)


# The server


class Server:
    """gunicorn serving the app on loopback, in a process group of its own."""

    def __init__(self, env: dict[str, str], workers: int, log: Path):
        self.env, self.workers, self.log = env, workers, log
        self.port = free_port()
        self.process = None

    def start(self, timeout: float = 40.0) -> None:
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [
                    venv_bin("gunicorn"),
                    "dados.wsgi",
                    "--chdir",
                    str(ROOT),
                    "--bind",
                    f"{HOST}:{self.port}",
                    # README's production command: sync workers (see RESULTS.md for the count).
                    "--worker-class",
                    "sync",
                    "--workers",
                    str(self.workers),
                    "--timeout",
                    "60",
                    "--graceful-timeout",
                    "10",
                    "--no-control-socket",
                ],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                fail(f"gunicorn exited {self.process.returncode} on start:\n{self.log_tail()}")
            with suppress(OSError, http.client.HTTPException):
                if request(self.port, "GET", "/entrar/")[0] == 200:
                    # Let every worker boot before the first measurement.
                    time.sleep(1.0)
                    return
            time.sleep(0.2)
        self.stop()
        fail(f"gunicorn did not answer in {timeout:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is None:
            return
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None

    def log_tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def tracebacks(self) -> int:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return text.count("Traceback (most recent call last)")


def request(port, method, path, headers=None, body=None) -> tuple[int, str]:
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", errors="replace")
    finally:
        conn.close()


# Scenarios


class Load:
    """Builds each scenario's wrk data and runs wrk."""

    def __init__(self, args, app: App, port: int, prepared: dict, workdir: Path):
        self.args, self.app, self.port, self.p, self.workdir = args, app, port, prepared, workdir
        self.wrk = ensure_wrk()

    def cookie(self, user_pk) -> str:
        return f"sessionid={self.p['cookies'][user_pk]}; csrftoken={self.p['csrf']}"

    def get(self, path, user_pk=None) -> list:
        return ["GET", path, {"Cookie": self.cookie(user_pk or self.p["host"])}, None]

    def post_headers(self, user_pk=None) -> dict:
        return {
            "Cookie": self.cookie(user_pk or self.p["host"]),
            "X-CSRFToken": self.p["csrf"],
            "HX-Request": "true",
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": f"http://{HOST}:{self.port}",
        }

    def data(self, key: str) -> dict:
        """What wrk sends for a scenario, from the database's current state."""
        live, host = self.p["live"], self.p["host"]
        if key == "floor_get":
            return {"mode": "rotate", "requests": [self.get("/_bench/suelo/")]}
        if key == "floor_post":
            return {
                "mode": "rotate",
                "requests": [["POST", "/_bench/suelo/post/", self.post_headers(), ""]],
            }
        organizers = self.p["organizers"]
        if key == "card":
            # The organizer's page: the sheet with its buttons and what is missing.
            return {
                "mode": "rotate",
                "requests": [self.get(f"/tarjetas/{pk}/", organizers[pk]) for pk in live],
            }
        if key == "floor_write":
            return {
                "mode": "rotate",
                "requests": [
                    ["POST", f"/_bench/suelo/escritura/{n}/", self.post_headers(), ""]
                    for n in range(1, TICKS_ROWS + 1)
                ],
            }
        if key in ("poll_same", "poll_changed"):
            # What a player's page polls: the version it shows, with that page's token.
            from scorecards.sheet import poll_path

            versions = self.app.versions(live)
            lag = 0 if key == "poll_same" else 1
            shown = {pk: versions[pk] - lag for pk in live}
            return {
                "mode": "rotate",
                "requests": [
                    self.get(
                        f"/tarjetas/{pk}/{poll_path(pk, shown[pk])}",
                        self.p["watchers"][pk],
                    )
                    for pk in live
                ],
            }
        if key == "history":
            return {"mode": "rotate", "requests": [self.get("/historial/")]}
        if key == "player":
            return {"mode": "rotate", "requests": [self.get(f"/jugadores/{host}/")]}
        if key == "ranking":
            return {"mode": "rotate", "requests": [self.get("/clasificacion/")]}
        if key == "write":
            # Each card's writes come from its own organizer, as at a club's tables.
            return {
                "mode": "toggle",
                "headers": {pk: self.post_headers(organizers[pk]) for pk in live},
                "cells": self.app.cells(live),
                "versions": self.app.versions(live),
            }
        raise KeyError(key)

    def preflight(self, scenario: Scenario) -> None:
        """One request by hand: the status and page a correct answer has."""
        data = self.data(scenario.key)
        if data["mode"] == "toggle":
            path, current, other = data["cells"][0]
            card = int(path.split("/")[2])
            body = f"value={other}&was={current}&version={data['versions'][card]}&answer=cells"
            method, headers = "POST", data["headers"][card]
        else:
            method, path, headers, body = data["requests"][0]
        status, text = request(self.port, method, path, headers, body)
        if status != scenario.expect or (scenario.marker and scenario.marker not in text):
            fail(
                f"{scenario.label}: {method} {path} answered {status} "
                f"(expected {scenario.expect}, containing {scenario.marker!r}):\n{text[:1500]}"
            )

    def lua_data(self, data: dict, path: Path) -> None:
        def lua(value) -> str:
            if value is None:
                return "nil"
            if isinstance(value, str):
                if not value.isascii():
                    raise ValueError(f"not ASCII: {value!r}")
                return json.dumps(value)
            if isinstance(value, int):
                return str(value)
            if isinstance(value, dict):
                return "{" + ", ".join(f"[{lua(k)}] = {lua(v)}" for k, v in value.items()) + "}"
            return "{" + ", ".join(lua(v) for v in value) + "}"

        lines = [f"mode = {lua(data['mode'])}", f"expect = {lua(self.expect)}"]
        if data["mode"] == "toggle":
            lines.append(f"headers = {lua(data['headers'])}")
            lines.append(f"versions = {lua(data['versions'])}")
            lines.append("all_cells = {")
            lines += [f"  {lua(list(cell))}," for cell in data["cells"]]
        else:
            lines.append("requests = {")
            lines += [f"  {lua(r)}," for r in data["requests"]]
        lines.append("}")
        path.write_text("\n".join(lines) + "\n")

    def wrk_run(self, scenario: Scenario, seconds: float) -> dict:
        self.expect = scenario.expect
        data_file = self.workdir / f"{scenario.key}.lua"
        self.lua_data(self.data(scenario.key), data_file)
        threads = min(self.args.threads, self.args.connections)
        command = [
            self.wrk,
            "-t",
            str(threads),
            "-c",
            str(self.args.connections),
            "-d",
            f"{seconds:g}s",
            "--timeout",
            "10s",
            "-s",
            str(BENCH / "load.lua"),
            f"http://{HOST}:{self.port}/",
            "--",
            str(data_file),
            str(threads),
        ]
        result = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
        line = next((x for x in result.stdout.splitlines() if x.startswith("BENCH_JSON ")), None)
        if result.returncode != 0 or line is None:
            fail(f"wrk failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        # wrk stops without waiting for answers in flight: let the server finish them
        # before the next run reads the database.
        time.sleep(0.5)
        return json.loads(line.removeprefix("BENCH_JSON "))

    def quiet(self) -> float | None:
        """Others' CPU use while the server is idle; waits up to --wait-quiet s for calm."""
        deadline = time.monotonic() + self.args.wait_quiet
        while True:
            busy = cpu_busy(1.0)
            if busy is None or busy <= BUSY or time.monotonic() >= deadline:
                return busy
            say(f"    (waiting: other processes keep {busy:.0%} of the CPUs busy)")

    def measure(self, scenario: Scenario, warmup: float) -> dict:
        busy = self.quiet()
        self.preflight(scenario)
        if warmup > 0:
            self.wrk_run(scenario, warmup)
        before = self.app.changes() if scenario.key == "write" else 0
        raw = self.wrk_run(scenario, self.args.duration)
        if scenario.key == "write":
            # Every acknowledged write changed a box: one change log entry each (and wrk
            # leaves up to one unanswered request per connection when it stops).
            written = self.app.changes() - before
            answered = raw["statuses"].get("200", 0)
            if not answered <= written <= answered + self.args.connections:
                fail(f"{answered} writes answered 200 but {written} changes were logged")
        errors = raw["connect"] + raw["read"] + raw["write"] + raw["timeout"] + raw["unexpected"]
        return {
            "key": scenario.key,
            "label": scenario.label,
            "requests": raw["requests"],
            "errors": errors,
            "rps": raw["requests"] / (raw["duration_us"] / 1e6),
            "p50": raw["p50"] / 1000,
            "p95": raw["p95"] / 1000,
            "p99": raw["p99"] / 1000,
            "max": raw["max"] / 1000,
            "statuses": raw["statuses"],
            "socket_errors": {k: raw[k] for k in ("connect", "read", "write", "timeout")},
            "sample": raw["sample"],
            "cpu_busy_before": busy,
        }


def plan(only=None) -> list[Scenario]:
    """One round's runs: each scenario (or each of `only`) between two runs of its floor.

    A floor run between two scenarios with the same floor serves both, as the one after
    the first and the one before the second.
    """
    runs = []
    for scenario in SCENARIOS:
        if scenario.floor is None or (only and scenario.key not in only):
            continue
        floor = BY_KEY[scenario.floor]
        if not runs or runs[-1] is not floor:
            runs.append(floor)
        runs += [scenario, floor]
    return runs


def bracketing_floors(rows: list[dict], index: int) -> tuple[dict, dict]:
    """The runs of a scenario's floor nearest before and after the scenario's own run."""
    key = BY_KEY[rows[index]["key"]].floor
    before = next(row for row in reversed(rows[:index]) if row["key"] == key)
    after = next(row for row in rows[index + 1 :] if row["key"] == key)
    return before, after


def judge(rows: list[dict]) -> None:
    """Ratios to the floor measured around each scenario, budget verdicts.

    The floor is the mean of its medians right before and right after the scenario: what
    the machine gave the floor while the scenario ran, as well as two runs can tell. (The
    lower of the two would divide every scenario measured in a noisy minute by the floor
    of the quieter side, and so make ratios larger the noisier the machine.)
    """
    for index, row in enumerate(rows):
        scenario = BY_KEY[row["key"]]
        row["floor"] = scenario.floor
        row["budget"] = scenario.budget
        row["ratio"] = None
        if scenario.floor is not None:
            before, after = bracketing_floors(rows, index)
            row["floor_p50"] = (before["p50"], after["p50"])
            row["ratio"] = row["p50"] / statistics.mean(row["floor_p50"])
        within = scenario.budget is None or (
            row["ratio"] is not None and row["ratio"] <= scenario.budget
        )
        row["pass"] = within and row["errors"] == 0


def combine(rounds: list[list[dict]]) -> list[dict]:
    """One row per scenario from its rounds, each judged against its own round's floor.

    The median of the rounds' ratios is what the budget limits: a round that a burst of
    other load slowed down (the scenario, or its floors) moves it least. Latencies and
    throughput are the medians of all the scenario's runs (a floor runs several times a
    round); requests and errors add up, and any error in any round fails the scenario.
    """
    combined = []
    keys = list(dict.fromkeys(row["key"] for rows in rounds for row in rows))
    for key in keys:
        same = [row for rows in rounds for row in rows if row["key"] == key]
        first = same[0]
        ratios = [row["ratio"] for row in same if row["ratio"] is not None]
        statuses, sockets = {}, {}
        for row in same:
            for status, count in row["statuses"].items():
                statuses[status] = statuses.get(status, 0) + count
            for kind, count in row["socket_errors"].items():
                sockets[kind] = sockets.get(kind, 0) + count
        row = {
            **first,
            "requests": sum(row["requests"] for row in same),
            "errors": sum(row["errors"] for row in same),
            "statuses": statuses,
            "socket_errors": sockets,
            "sample": next((row["sample"] for row in same if row["errors"]), first["sample"]),
            "cpu_busy_before": max((row["cpu_busy_before"] or 0) for row in same),
            "ratio": statistics.median(ratios) if ratios else None,
            "ratios": ratios,
            "runs": len(same),
        }
        for stat in ("rps", "p50", "p95", "p99"):
            row[stat] = statistics.median(r[stat] for r in same)
        row["max"] = max(r["max"] for r in same)
        within = row["budget"] is None or (
            row["ratio"] is not None and row["ratio"] <= row["budget"]
        )
        row["pass"] = within and row["errors"] == 0
        combined.append(row)
    return combined


def drifts(rows: list[dict]) -> list[str]:
    """Scenarios whose floor moved by over 25 % between the runs around them."""
    found = []
    for row in rows:
        if row.get("floor_p50"):
            before, after = row["floor_p50"]
            if abs(after - before) > 0.25 * min(before, after):
                found.append(
                    f"{BY_KEY[row['floor']].label} went from {before:.1f} to {after:.1f} ms "
                    f"around {row['label']}"
                )
    return found


def run_one(args) -> dict:
    """The whole benchmark on one database: DATABASE_URL's (PostgreSQL) or the SQLite cache."""
    params = seed_params(args)
    say(f"== {args.db}")
    if args.db == "postgres":
        url = os.environ.get("DATABASE_URL", "")
        if not url.startswith("postgres"):
            fail("--inner --db postgres needs DATABASE_URL from scripts/with_postgres.py")
        say(f"Seeding PostgreSQL ({params})…")
        subprocess.run(seed_command(params), cwd=ROOT, env=server_env(url), check=True)
    else:
        url = sqlite_database(params)
    env = server_env(url)
    ensure_static(env)
    ensure_wrk()
    app = App(env)
    prepared = app.sessions()
    app.ticks()
    db_version = app.database_version()
    app.close()
    say(
        f"{db_version}: the host has {prepared['games']} finalized games; "
        f"{len(prepared['live'])} cards in progress"
    )
    warnings = []
    disk = None
    workdir = Path(tempfile.mkdtemp(prefix="dados-bench-"))
    server = Server(env, args.workers, workdir / "gunicorn.log")
    server.start()
    rounds = []
    try:
        load = Load(args, app, server.port, prepared, workdir)
        for number in range(1, args.rounds + 1):
            say(f"  round {number} of {args.rounds}")
            rows = []
            for scenario in plan(args.only):
                if scenario.key == "write" and disk is None:
                    disk = disk_sync()
                    if disk:
                        say(
                            f"  (disk: fdatasync of 40 KB p50 {disk['p50']:.2f} ms, "
                            f"p90 {disk['p90']:.2f} ms)"
                        )
                # The server is warm after the round's first run; a floor between two
                # scenarios warms up shortly, as wrk's connections are new.
                warm = args.warmup if scenario.floor or not rows else min(args.warmup, 1.0)
                row = load.measure(scenario, warm)
                rows.append(row)
                busy = row["cpu_busy_before"]
                say(
                    f"  {row['label']:<28} {row['requests']:>7} req  {row['rps']:>7.1f}/s  "
                    f"p50 {row['p50']:6.1f} ms  errors {row['errors']}"
                    + (f"  (CPUs {busy:.0%} busy before)" if busy else "")
                )
            judge(rows)
            rounds.append(rows)
    finally:
        server.stop()
        tracebacks = server.tracebacks()
        if args.keep_logs:
            say(f"gunicorn log: {server.log}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    for number, rows in enumerate(rounds, start=1):
        noisy = [
            f"{row['label']} ({row['cpu_busy_before']:.0%})"
            for row in rows
            if row["cpu_busy_before"] and row["cpu_busy_before"] > BUSY
        ]
        if noisy:
            warnings.append(
                f"round {number}: other processes were using the CPUs just before: "
                + ", ".join(noisy)
            )
        warnings += [f"round {number}: {drift}: the numbers are noisy" for drift in drifts(rows)]
    return {
        "db": args.db,
        "db_version": db_version,
        "workers": args.workers,
        "connections": args.connections,
        "threads": min(args.threads, args.connections),
        "duration": args.duration,
        "warmup": args.warmup,
        "rounds": args.rounds,
        "host_games": prepared["games"],
        "server_tracebacks": tracebacks,
        "disk_sync_ms": disk,
        "warnings": warnings,
        "by_round": rounds,
        "rows": combine(rounds),
    }


# Reporting


def machine() -> dict:
    info = {"nproc": os.cpu_count(), "cpu": "?", "ram_gib": None}
    with suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    with suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["ram_gib"] = round(int(line.split()[1]) / 1024**2, 1)
    info["kernel"] = os.uname().release
    info["python"] = sys.version.split()[0]
    with suppress(Exception):
        wrk = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout
        info["wrk"] = wrk.split()[1] if wrk else "?"
    with suppress(Exception):
        import django

        info["django"] = django.get_version()
    info["code"] = "not a git checkout"
    with suppress(Exception):

        def git(*args) -> subprocess.CompletedProcess:
            return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)

        head = git("rev-parse", "--short", "HEAD")
        if head.returncode == 0:
            changed = git("status", "--porcelain", "--", ".", ":!bench").stdout.strip()
            info["code"] = f"commit {head.stdout.strip()}" + (
                " with uncommitted changes" if changed else ""
            )
    return info


def fmt_ratio(row) -> str:
    """The median of the rounds' ratios, as the budget sees it."""
    return "—" if row["ratio"] is None else f"{row['ratio']:.2f}x"


def verdict(row) -> str:
    if row["budget"] is None:
        return "floor" if row["floor"] is None else ("info" if row["errors"] == 0 else "FAIL")
    return "PASS" if row["pass"] else "FAIL"


def table(results: list[dict], markdown: bool = False) -> str:
    head = [
        "db",
        "scenario",
        "requests",
        "errors",
        "req/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "p50 / floor",
        "per round",
        "budget",
        "verdict",
    ]
    body = []
    for result in results:
        for row in result["rows"]:
            body.append(
                [
                    result["db"],
                    row["label"],
                    str(row["requests"]),
                    str(row["errors"]),
                    f"{row['rps']:.1f}",
                    f"{row['p50']:.1f}",
                    f"{row['p95']:.1f}",
                    f"{row['p99']:.1f}",
                    fmt_ratio(row),
                    " / ".join(f"{ratio:.2f}" for ratio in row.get("ratios", [])) or "—",
                    "—" if row["budget"] is None else f"≤ {row['budget']:g}x {row['floor']}",
                    verdict(row),
                ]
            )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
    numeric = {2, 3, 4, 5, 6, 7, 8}

    def line(cells):
        return "  ".join(
            c.rjust(w) if i in numeric else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, body)])


def failures(results: list[dict]) -> list[str]:
    found = []
    for result in results:
        if result["server_tracebacks"]:
            found.append(f"{result['db']}: {result['server_tracebacks']} tracebacks in the log")
        for row in result["rows"]:
            if not row["pass"]:
                why = []
                if row["errors"]:
                    why.append(
                        f"{row['errors']} errors (statuses {row['statuses']}, "
                        f"sockets {row['socket_errors']}; first: {row['sample'][:200]!r})"
                    )
                if row["budget"] is not None and (row["ratio"] or 0) > row["budget"]:
                    why.append(f"p50 {fmt_ratio(row)} of {row['floor']} > {row['budget']:g}x")
                found.append(f"{result['db']}: {row['label']}: {'; '.join(why)}")
    return found


def write_results(results: list[dict], info: dict) -> None:
    first = results[0]
    stamp = datetime.now(UTC).astimezone().strftime("%Y-%m-%d %H:%M %Z")
    lines = [
        MARK_START,
        f"Run of {stamp} (`python bench/run.py --write-results`) on {info['code']}.",
        "",
        f"- Machine: {info['nproc']} cores (`nproc`), {info['cpu']}, "
        f"{info['ram_gib']} GiB RAM, Linux {info['kernel']}",
        f"- Python {info['python']}, Django {info.get('django', '?')}, wrk {info.get('wrk', '?')}; "
        + ", ".join(r["db_version"] for r in results),
        f"- gunicorn: {first['workers']} sync workers; wrk: {first['threads']} threads, "
        f"{first['connections']} connections; each scenario between two runs of its floor, "
        f"each run {first['warmup']:g} s of warm-up (at most 1 s for a floor after the "
        f"round's first run) then {first['duration']:g} s; {first['rounds']} rounds. p50 / "
        "floor is the median of the rounds' ratios, each to the mean of the floor's p50 "
        "right before and right after; latencies and req/s are the medians of all runs",
        f"- Data: the host's history, statistics and the ranking cover "
        f"{first['host_games']} finalized games",
        *(
            f"- Disk before the {r['db']} box writes: fdatasync of 40 KB p50 "
            f"{r['disk_sync_ms']['p50']:.2f} ms, p90 {r['disk_sync_ms']['p90']:.2f} ms"
            for r in results
            if r.get("disk_sync_ms")
        ),
        "",
        table(results, markdown=True),
        "",
    ]
    missed = failures(results)
    lines.append(
        "Every budget passes on both databases."
        if not missed
        else "Missed:\n\n" + "\n".join(f"- {m}" for m in missed)
    )
    lines += [f"\nWarning ({r['db']}): {w}" for r in results for w in r["warnings"]]
    lines.append(MARK_END)
    block = "\n".join(lines)
    text = RESULTS_MD.read_text() if RESULTS_MD.exists() else "# Benchmark results\n\n"
    if MARK_START in text and MARK_END in text:
        before, rest = text.split(MARK_START, 1)
        after = rest.split(MARK_END, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS_MD.write_text(text)
    say(f"Wrote {RESULTS_MD.relative_to(ROOT)}")


def inner_command(args, db: str, results: Path) -> list[str]:
    command = [sys.executable, str(BENCH / "run.py"), "--inner", "--db", db]
    command += ["--results", str(results)]
    for name in ("rounds", "duration", "warmup", "connections", "threads", "workers", "wait_quiet"):
        command += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    for name, value in seed_params(args).items():
        command += [f"--{name.replace('_', '-')}", str(value)]
    if args.keep_logs:
        command.append("--keep-logs")
    for key in args.only or []:
        command += ["--only", key]
    if db == "postgres":
        command = [sys.executable, str(ROOT / "scripts" / "with_postgres.py"), "--", *command]
    return command


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument(
        "--rounds", type=int, default=3, help="times every scenario is measured (3)"
    )
    parser.add_argument(
        "--duration", type=float, default=5, help="seconds per scenario and round (5)"
    )
    parser.add_argument("--warmup", type=float, default=2, help="warm-up seconds (2)")
    parser.add_argument("--connections", type=int, default=8, help="wrk connections (8)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="wrk threads")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 2, help="gunicorn workers (nproc)"
    )
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=0,
        help="before each scenario, wait up to this many seconds for other processes to "
        "leave the CPUs idle (0: only warn)",
    )
    parser.add_argument("--players", type=int, default=100)
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--live-cards", type=int, default=50)
    parser.add_argument("--live-seats", type=int, default=6)
    parser.add_argument(
        "--only", action="append", choices=[s.key for s in SCENARIOS if s.floor],
        help="run only this scenario (and the floors); repeatable",
    )  # fmt: skip
    parser.add_argument("--write-results", action="store_true", help="rewrite bench/RESULTS.md")
    parser.add_argument("--keep-logs", action="store_true", help="keep gunicorn's log")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--results", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.live_seats < 1 or args.live_cards < 1 or args.games < 1 or args.rounds < 1:
        fail("--games, --live-cards, --live-seats and --rounds must be positive")

    if args.inner:
        result = run_one(args)
        args.results.write_text(json.dumps(result))
        return 0

    ensure_wrk()
    databases = ["sqlite", "postgres"] if args.db == "both" else [args.db]
    results = []
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dados-bench-") as tmp:
        for db in databases:
            out = Path(tmp) / f"{db}.json"
            env = dict(os.environ)
            env.pop("DATABASE_URL", None)
            code = subprocess.run(inner_command(args, db, out), cwd=ROOT, env=env).returncode
            if code != 0 or not out.exists():
                fail(f"the {db} run failed (exit {code})")
            results.append(json.loads(out.read_text()))
    say()
    say(table(results))
    say()
    for result in results:
        for row in result["rows"]:
            if row["budget"] is not None:
                rounds = " / ".join(f"{ratio:.2f}" for ratio in row["ratios"])
                say(
                    f"{verdict(row)}  {result['db']:<8} {row['label']}: p50 {fmt_ratio(row)} "
                    f"of {row['floor']} (rounds {rounds}; budget ≤ {row['budget']:g}x), "
                    f"{row['errors']} errors"
                )
    missed = failures(results)
    for message in missed:
        say(f"MISSED  {message}")
    for result in results:
        for warning in result["warnings"]:
            say(f"WARNING {result['db']}: {warning}")
    say(f"\nbench took {time.monotonic() - began:.0f} s")
    info = machine()
    if args.json:
        args.json.write_text(json.dumps({"machine": info, "results": results}, indent=2))
    if args.write_results:
        write_results(results, info)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
