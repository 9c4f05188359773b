"""`make bench`: a club night against Dados, on SQLite then PostgreSQL.

    python bench/run.py                          # the whole bench; exit 1 if the budget is missed
    python bench/run.py --db sqlite --tables 10 --runs 1 --duration 10   # a quick look
    python bench/run.py --write-results          # also rewrite the table in bench/RESULTS.md

For each database: a database seeded with 100 players and 10,000 finalized games
(bench/seed.py; the SQLite file is cached under bench/.cache/, PostgreSQL is a throwaway
server from scripts/with_postgres.py), a fresh copy of it for every run, the app under
gunicorn with production settings on loopback, and the club night of bench/load.py for N
tables of 6 phones: a warm-up, then `--duration` seconds measured. `--runs` counted runs per
N; a run whose load generator fell behind (its event loop late, or its CPU saturated) is
retried, not counted. For each request type the median over the runs of its p50, p95, p99
and req/s is reported. The budget: for every N up to 50, every request type's p95 is at
most 100 ms and no request fails. N goes up the list until one misses the budget. Then a
phone-sized Chromium measures two timings as a player feels them (bench/phone.py).
"""

import argparse
import hashlib
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import closing, suppress
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
CACHE = BENCH / ".cache"
HOST = "127.0.0.1"
SECRET_KEY = "dados-bench-only-secret-key-not-for-deployment-0123456789-abcdefghijklmnop"
BUDGET_MS, BUDGET_TABLES = 100, 50
FLOORS = {"write": "floor: one-row write in atomic()", "read": "floor: @login_required GET"}
SETUP = {"create card", "floor setup"}  # warm-up only; never in the measured window
# A generator this late or this busy measures itself, not the server: the run is retried.
MAX_LOOP_LAG_MS, MAX_GENERATOR_CPU = 50, 0.9
QUIET = 0.25  # a run waits (up to --wait-quiet s) until others use less of the machine
MAX_OTHERS = 0.5  # cores others may use during a counted run


def say(message: str = "") -> None:
    print(message, flush=True)


def server_env(database_url: str) -> dict[str, str]:
    """The README's production settings, on plain HTTP on loopback, with the floor views."""
    env = {k: v for k, v in os.environ.items() if k not in ("CSRF_TRUSTED_ORIGINS",)}
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
    )
    return env


def python(*args, env, capture=False) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, check=True, text=True,
        stdout=subprocess.PIPE if capture else None,
    )  # fmt: skip
    return done.stdout


def collect_static(env) -> None:
    """DEBUG off serves hashed names from staticfiles/staticfiles.json: collect when stale."""
    manifest = ROOT / "staticfiles" / "staticfiles.json"
    newest = max(p.stat().st_mtime for p in (ROOT / "static").rglob("*") if p.is_file())
    if not manifest.exists() or manifest.stat().st_mtime < newest:
        python("manage.py", "collectstatic", "--noinput", "--verbosity", "0", env=env)


# Databases: a seeded one, and a fresh copy of it for every run.


def copy_sqlite(source: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        with suppress(FileNotFoundError):
            Path(f"{target}{suffix}").unlink()
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


class SQLite:
    name = "SQLite"

    def __init__(self):
        digest = hashlib.sha256()
        for path in [BENCH / "seed.py", *sorted(ROOT.glob("*/migrations/*.py"))]:
            digest.update(path.relative_to(ROOT).as_posix().encode() + path.read_bytes())
        CACHE.mkdir(exist_ok=True)
        self.seeded = CACHE / f"seed-{digest.hexdigest()[:16]}.sqlite3"
        self.work = CACHE / "run.sqlite3"
        if not self.seeded.exists():
            for old in CACHE.glob("seed-*"):
                old.unlink()
            building = CACHE / "seeding.sqlite3"
            for path in CACHE.glob("seeding.sqlite3*"):
                path.unlink()
            say("Seeding SQLite…")
            python("-m", "bench.seed", env=server_env(f"sqlite:///{building}"))
            copy_sqlite(building, self.seeded)

    def fresh(self) -> str:
        copy_sqlite(self.seeded, self.work)
        return f"sqlite:///{self.work}"


class PostgreSQL:
    """The throwaway server's database, seeded once, is the template of every run's."""

    name = "PostgreSQL"

    def __init__(self):
        import psycopg

        self.psycopg = psycopg
        self.seeded_url = os.environ["DATABASE_URL"]
        base, self.seeded = self.seeded_url.rsplit("/", 1)
        self.admin, self.url = f"{base}/postgres", f"{base}/bench_run"
        say("Seeding PostgreSQL…")
        python("-m", "bench.seed", env=server_env(self.seeded_url))

    def fresh(self) -> str:
        with self.psycopg.connect(self.admin, autocommit=True) as connection:
            connection.execute("DROP DATABASE IF EXISTS bench_run WITH (FORCE)")
            connection.execute(f"CREATE DATABASE bench_run TEMPLATE {self.seeded}")
        return self.url


# The server


class Server:
    """gunicorn serving the app on loopback, in a process group of its own."""

    def __init__(self, args, env):
        self.env = env
        with closing(__import__("socket").socket()) as sock:
            sock.bind((HOST, 0))
            self.port = sock.getsockname()[1]
        self.base = f"http://{HOST}:{self.port}"
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        command = [
            str(Path(sys.executable).parent / "gunicorn"), "dados.wsgi",
            "--bind", f"{HOST}:{self.port}",
            "--worker-class", args.worker_class, "--workers", str(args.workers),
            "--threads", str(args.threads), "--no-control-socket",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            with suppress(OSError), urllib.request.urlopen(f"{self.base}/entrar/", timeout=5):
                time.sleep(1)  # every worker booted
                return
            time.sleep(0.2)
        self.stop()
        sys.exit(f"bench: gunicorn did not start:\n{self.tail()}")

    def tail(self) -> str:
        if not self.log.closed:
            self.log.seek(0)
            self.output = self.log.read().decode(errors="replace")[-3000:]
        return self.output

    def stop(self) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.tail()
        self.log.close()


# Runs


def busy_now(seconds=2.0) -> float:
    """The share of all CPUs busy over a few seconds: what others run on the machine."""

    def sample():
        cpu = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(cpu), cpu[3] + cpu[4]

    total, idle = sample()
    time.sleep(seconds)
    total2, idle2 = sample()
    return 1 - (idle2 - idle) / max(total2 - total, 1)


def one_run(args, database, tables: int) -> dict:
    url = database.fresh()
    env = server_env(url)
    config = json.loads(python("-m", "bench.seed", "--tables", str(tables), env=env, capture=True))
    others, waited = busy_now(), 0
    while others > QUIET and waited < args.wait_quiet:  # someone else's tests, say
        time.sleep(10)
        others, waited = busy_now(), waited + 12
    server = Server(args, env)
    try:
        config.update(
            base=server.base, server_pgid=server.process.pid, database_port=urlsplit(url).port,
            warmup=args.warmup, duration=args.duration, spawn=min(10, args.warmup / 2),
        )  # fmt: skip
        with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
            json.dump(config, file)
            file.flush()
            out = python(str(BENCH / "load.py"), file.name, env=env, capture=True)
        result = json.loads(out.strip().splitlines()[-1])
    finally:
        server.stop()
    if "Traceback" in server.tail():
        say(server.tail())
    return result


def generator_behind(result) -> str:
    g = result["generator"]
    if g["loop_lag_p99_ms"] > MAX_LOOP_LAG_MS:
        return f"its event loop was {g['loop_lag_p99_ms']:.0f} ms late (p99)"
    if g["cpu"] > MAX_GENERATOR_CPU or g["cpu_warnings"]:
        return f"its CPU was {g['cpu']:.0%} of a core"
    return ""


def machine_shared(result) -> str:
    if (others := result["machine"]["others"]) > MAX_OTHERS:
        return f"other processes used {others:.2f} cores meanwhile"
    return ""


def combine(runs: list[dict]) -> dict:
    """Per request type, the median over the runs; errors are summed."""
    names = sorted({name for run in runs for name in run["stats"]} - SETUP)
    rows = {}
    for name in names:
        of = [run["stats"].get(name, {"count": 0, "errors": 0}) for run in runs]
        rows[name] = {
            key: statistics.median(s.get(key, 0) for s in of)
            for key in ("count", "p50", "p95", "p99")
        }
        rows[name]["errors"] = sum(s["errors"] for s in of)
        rows[name]["rps"] = statistics.median(
            s["count"] / r["seconds"] for s, r in zip(of, runs, strict=True)
        )
    pick = lambda part, key: statistics.median(r[part][key] for r in runs)  # noqa: E731
    return {
        "rows": rows,
        "runs": len(runs),
        "generator": {k: pick("generator", k) for k in ("cpu", "loop_lag_p99_ms", "schedule")},
        "machine": {
            **{k: pick("machine", k) for k in ("busy", "server", "database", "others")},
            "loadavg": max(float(r["machine"]["loadavg"][0]) for r in runs),
            "cores": runs[0]["machine"]["cores"],
        },
        "errors": [e for r in runs for e in r["errors"]][:5],
    }


def misses(summary) -> list[str]:
    return [
        f"{name}: p95 {row['p95']:.0f} ms, {row['errors']} errors"
        for name, row in summary["rows"].items()
        if name not in FLOORS.values() and (row["p95"] > BUDGET_MS or row["errors"])
    ]


def run_database(args, database) -> dict:
    say(f"\n== {database.name}: gunicorn {args.worker_class}, {args.workers} workers"
        f"{f' x {args.threads} threads' if args.worker_class == 'gthread' else ''}")  # fmt: skip
    results = {"name": database.name, "tables": {}}
    for tables in args.tables:
        runs, retried = [], []
        while len(runs) < args.runs and len(retried) < 2 * args.runs + 2:
            result = one_run(args, database, tables)
            # A shared machine's run is counted once as many were retried as are counted.
            why = generator_behind(result) or (len(retried) < args.runs and machine_shared(result))
            if why:
                say(f"  {tables} tables: not counted ({why}): run again")
                retried.append(why)
                continue
            runs.append(result)
            say(f"  {tables} tables, run {len(runs)}: " + brief(result))
        if not runs:
            say(f"  {tables} tables: the generator could not keep up: stop")
            break
        summary = combine(runs)
        summary["retried"] = retried
        results["tables"][tables] = summary
        say(table(database.name, tables, summary, args))
        if misses(summary):
            break
    if args.phone_taps:
        server = Server(args, server_env(database.fresh()))
        try:
            results["phone"] = json.loads(
                python(str(BENCH / "phone.py"), server.base, str(args.phone_taps),
                       env=server.env, capture=True).strip().splitlines()[-1]
            )  # fmt: skip
        finally:
            server.stop()
        say(phone_line(results["phone"]))
    return results


def brief(result) -> str:
    worst = max((row["p95"], name) for name, row in result["stats"].items() if name not in SETUP)
    errors = sum(row["errors"] for row in result["stats"].values())
    return f"worst p95 {worst[0]:.0f} ms ({worst[1]}), {errors} errors"


# Report


def table(name, tables, summary, args, markdown=False) -> str:
    rows = summary["rows"]
    floor = {k: rows.get(v, {}).get("p50") for k, v in FLOORS.items()}
    lines = [
        ("request", "count", "errors", "req/s", "p50 ms", "p95 ms", "p99 ms", "p50 ÷ floor"),
    ]
    for key, row in rows.items():
        base = floor["write"] if key == "box write" else floor["read"]
        ratio = "" if key in FLOORS.values() or not base else f"{row['p50'] / base:.1f}x"
        lines.append(
            (key, f"{row['count']:.0f}", str(row["errors"]), f"{row['rps']:.1f}",
             f"{row['p50']:.0f}", f"{row['p95']:.0f}", f"{row['p99']:.0f}", ratio)
        )  # fmt: skip
    g, m = summary["generator"], summary["machine"]
    verdict = "; ".join(misses(summary)) or f"every p95 ≤ {BUDGET_MS} ms, 0 errors"
    notes = [
        f"{name}, {tables} tables ({tables * 6} phones), median of {summary['runs']} runs of "
        f"{args.duration:.0f} s: {'MISSES: ' if misses(summary) else 'holds: '}{verdict}",
        f"generator: {g['cpu']:.0%} of a core, event loop late by {g['loop_lag_p99_ms']:.1f} ms "
        f"(p99), {g['schedule']:.1%} of its schedule kept, {len(summary['retried'])} runs "
        "retried",
        f"machine ({m['cores']} cores): {m['busy']:.0%} busy; gunicorn {m['server']:.2f} cores, "
        f"PostgreSQL {m['database']:.2f}, others {m['others']:.2f}; load average ≤ "
        f"{m['loadavg']:.1f}",
        *(f"error: {e}" for e in summary["errors"]),
    ]
    if markdown:
        out = [f"| {' | '.join(lines[0])} |", "|---" * len(lines[0]) + "|"]
        out += [f"| {' | '.join(line)} |" for line in lines[1:]]
        return "\n".join([f"**{notes[0]}**", "", *out, "", *(f"- {n}" for n in notes[1:])])
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    text = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    ]
    return "\n".join(["", notes[0], *text, *notes[1:]])


def phone_line(phone) -> str:
    return (
        f"phone ({phone['device']}): tap → picker open {phone['picker_ms']:.0f} ms, "
        f"tap → write shown {phone['write_ms']:.0f} ms (medians of {phone['taps']})"
    )


def write_results(results, args) -> None:
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    parts = [
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on commit `{commit}`, "
        f"gunicorn `{args.worker_class}`, {args.workers} workers"
        f"{f' x {args.threads} threads' if args.worker_class == 'gthread' else ''}, "
        f"warm-up {args.warmup:.0f} s.",
    ]
    for db in results:
        for tables, summary in db["tables"].items():
            parts += ["", table(db["name"], tables, summary, args, markdown=True)]
        if "phone" in db:
            parts += ["", f"- {db['name']}: {phone_line(db['phone'])}"]
    path = BENCH / "RESULTS.md"
    text = path.read_text()
    start, end = "<!-- bench:start -->", "<!-- bench:end -->"
    head, rest = text.split(start)
    path.write_text(f"{head}{start}\n" + "\n".join(parts) + f"\n{end}{rest.split(end)[1]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="sqlite,postgres", help="sqlite, postgres or both")
    parser.add_argument("--tables", default="50,100,200", help="the N to try, in order")
    parser.add_argument("--runs", type=int, default=3, help="counted runs per N")
    parser.add_argument("--duration", type=float, default=60, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=20, help="seconds before measuring")
    parser.add_argument("--worker-class", default="gthread", choices=["sync", "gthread"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4, help="per gthread worker")
    parser.add_argument("--wait-quiet", type=float, default=300, help="see QUIET")
    parser.add_argument("--phone-taps", type=int, default=20, help="0: no phone check")
    parser.add_argument("--write-results", action="store_true", help="update RESULTS.md")
    parser.add_argument("--inner", help=argparse.SUPPRESS)  # PostgreSQL: results file
    args = parser.parse_args(argv)
    args.tables = [int(n) for n in args.tables.split(",")]
    collect_static(server_env("sqlite:///unused.sqlite3"))
    if args.inner:
        Path(args.inner).write_text(json.dumps(run_database(args, PostgreSQL())))
        return 0
    results = []
    for db in args.db.split(","):
        if db == "sqlite":
            results.append(run_database(args, SQLite()))
            continue
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            inner = [sys.executable, str(BENCH / "run.py"), *(argv or sys.argv[1:])]
            subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "with_postgres.py"), "--",
                 *inner, "--inner", out.name], cwd=ROOT, check=True,
            )  # fmt: skip
            found = json.loads(Path(out.name).read_text())
            found["tables"] = {int(k): v for k, v in found["tables"].items()}
            results.append(found)
    if args.write_results:
        write_results(results, args)
    missed = [
        f"{db['name']}, {tables} tables: {miss}"
        for db in results
        for tables, summary in db["tables"].items()
        if tables <= BUDGET_TABLES
        for miss in misses(summary)
    ]
    held = {db["name"]: max((t for t, s in db["tables"].items() if not misses(s)), default=0)
            for db in results}  # fmt: skip
    say("\nLargest N that holds: " + ", ".join(f"{k} {v}" for k, v in held.items()))
    if missed or any(not db["tables"] for db in results):
        say("bench: the budget is missed:\n  " + "\n  ".join(missed or ["no run counted"]))
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
