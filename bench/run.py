"""`make bench`: a club night against Dados, on SQLite then PostgreSQL.

    python bench/run.py                          # the whole bench; exit 1 if the budget is missed
    python bench/run.py --db sqlite --tables 10 --runs 1 --duration 10   # a quick look
    python bench/run.py --write-results          # also rewrite the table in bench/RESULTS.md

For each database: 100 players and 10,000 finalized games (bench/seed.py; the SQLite file
is cached in bench/.cache/, PostgreSQL is a throwaway server from scripts/with_postgres.py),
a fresh copy for every run, the app with production settings on loopback, and
bench/load.py's club night for N tables of 6 phones (a `--digital` share of them, half by
default, play with the app's dice), for each `--transport` in turn: "split" (the pages under
gunicorn, the streams under uvicorn), "stream" (uvicorn for everything), "workers"
(gunicorn with uvicorn's workers for everything), "poll" (gunicorn, every phone polling,
as before the stream). A warm-up, then `--duration` s measured. A run
whose generator fell behind is retried, not counted. Per request type, the median over
`--runs` counted runs of p50, p95, p99 and req/s, and the delivery delays. The budget, for
the first transport and every N up to 100: every request type's p95 (a digital turn's
«roll» and «score» as a box write) at most 100 ms, no request failing, the stream phones'
delivery p95 at most 500 ms and every phone ending at its card's last version; N goes up
the list until one misses. Then bench/phone.py times what a player feels, on a throttled
Chromium, for each transport. See bench/RESULTS.md.
"""

import argparse
import hashlib
import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import closing, suppress
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
BENCH, CACHE = ROOT / "bench", ROOT / "bench" / ".cache"
HOST = "127.0.0.1"
SECRET_KEY = "dados-bench-only-secret-key-not-for-deployment-0123456789-abcdefghijklmnop"
BUDGET_MS, BUDGET_TABLES, DELIVERY_MS = 100, 100, 500
# The live card's two transports, and the server each is measured on: the stream is
# served by uvicorn (as make run and docs/operations.md serve it); the poll as before it.
TRANSPORTS = {
    "stream": "uvicorn",
    "poll": "gunicorn",
    "split": "gunicorn",
    "workers": "gunicorn-uvicorn",  # gunicorn's process manager, uvicorn's ASGI workers
}
# "split": the stream's phones, with the pages under gunicorn (STREAMS_APART) and only the
# streams under uvicorn (--stream-workers), as nginx would route /tarjetas/N/eventos/.
FLOORS = {"write": "floor: one-row write in atomic()", "read": "floor: @login_required GET"}
WRITES = ("box write", "roll", "score")  # their p50 is divided by the write floor's
SETUP = {"create card", "floor setup", "screen page"}  # warm-up only
# A generator this late or this busy measures itself, not the server: the run is retried.
MAX_LATE_MS, MAX_GENERATOR_CPU = 50, 0.9
QUIET, MAX_OTHERS = 0.25, 0.5  # others' share of the machine before a run; cores during it


def say(message: str = "") -> None:
    print(message, flush=True)


def server_env(database_url: str) -> dict[str, str]:
    """docs/operations.md's production settings, on plain HTTP on loopback, with the floor views."""
    env = {k: v for k, v in os.environ.items() if k != "CSRF_TRUSTED_ORIGINS"}
    env.update(
        DJANGO_SETTINGS_MODULE="bench.settings", PYTHONPATH=str(ROOT), DEBUG="false",
        SECRET_KEY=SECRET_KEY, SECURE="false", SECURE_SSL_REDIRECT="false",
        ALLOWED_HOSTS=HOST, DATABASE_URL=database_url, LOG_LEVEL="WARNING",
    )  # fmt: skip
    return env


def python(*args, env, capture=False) -> str:
    out = subprocess.PIPE if capture else None
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, check=True, text=True,
                          stdout=out).stdout  # fmt: skip


def copy_sqlite(source: Path, target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


class SQLite:
    """The seeded file, cached while bench/seed.py and the migrations are unchanged."""

    name = "SQLite"

    def __init__(self):
        digest = hashlib.sha256()
        for path in [BENCH / "seed.py", *sorted(ROOT.glob("*/migrations/*.py"))]:
            digest.update(path.relative_to(ROOT).as_posix().encode() + path.read_bytes())
        CACHE.mkdir(exist_ok=True)
        self.seeded = CACHE / f"seed-{digest.hexdigest()[:16]}.sqlite3"
        if not self.seeded.exists():
            for old in CACHE.glob("seed*.sqlite3*"):
                old.unlink()
            say("Seeding SQLite…")
            building = CACHE / "seeding.sqlite3"
            python("-m", "bench.seed", env=server_env(f"sqlite:///{building}"))
            copy_sqlite(building, self.seeded)

    def fresh(self) -> str:
        copy_sqlite(self.seeded, CACHE / "run.sqlite3")
        return f"sqlite:///{CACHE / 'run.sqlite3'}"


class PostgreSQL:
    """The throwaway server's database, seeded once, is the template of every run's."""

    name = "PostgreSQL"

    def __init__(self):
        self.seeded_url = os.environ["DATABASE_URL"]
        base, self.seeded = self.seeded_url.rsplit("/", 1)
        self.admin, self.url = f"{base}/postgres", f"{base}/bench_run"
        say("Seeding PostgreSQL…")
        python("-m", "bench.seed", env=server_env(self.seeded_url))

    def fresh(self) -> str:
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as connection:
            connection.execute("DROP DATABASE IF EXISTS bench_run WITH (FORCE)")
            connection.execute(f"CREATE DATABASE bench_run TEMPLATE {self.seeded}")
        return self.url


class Server:
    """uvicorn or gunicorn on loopback, in a process group of its own."""

    def __init__(self, args, env, kind, workers=None):
        with closing(socket.socket()) as sock:
            sock.bind((HOST, 0))
            port = sock.getsockname()[1]
        self.env, self.base = env, f"http://{HOST}:{port}"
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        bin_dir = Path(sys.executable).parent
        if kind == "uvicorn":  # as make run and docs/operations.md serve it
            command = [
                str(bin_dir / "uvicorn"), "dados.asgi:application", "--host", HOST,
                "--port", str(port), "--workers", str(workers or args.workers), "--no-access-log",
                "--timeout-graceful-shutdown", "3", "--no-proxy-headers",
            ]  # fmt: skip
        elif kind.startswith("granian"):  # granian-wsgi (the pages) or granian-asgi
            interface = kind.split("-")[1]
            command = [
                str(bin_dir / "granian"), "--interface", interface, "--host", HOST,
                "--port", str(port), "--workers", str(workers or args.workers),
                "--blocking-threads", str(args.threads), "--no-ws",
                f"dados.{interface}:application",
            ]  # fmt: skip
        elif kind == "gunicorn-uvicorn":
            command = [
                str(bin_dir / "gunicorn"), "dados.asgi:application", "--bind", f"{HOST}:{port}",
                "--worker-class", "uvicorn.workers.UvicornWorker", "--workers", str(args.workers),
                "--graceful-timeout", "3", "--no-control-socket", "--forwarded-allow-ips", "",
            ]  # fmt: skip
        else:
            command = [
                str(bin_dir / "gunicorn"), "dados.wsgi", "--bind", f"{HOST}:{port}",
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
        sys.exit(f"bench: {kind} did not start:\n{self.stop()}")

    def stop(self) -> str:
        """Stop it; its log's tail."""
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.seek(0)
        with self.log:
            return self.log.read().decode(errors="replace")[-20000:]


def busy(seconds=2.0) -> float:
    """The share of all CPUs busy over a few seconds."""

    def sample():
        cpu = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(cpu), cpu[3] + cpu[4]

    total, idle = sample()
    time.sleep(seconds)
    total2, idle2 = sample()
    return 1 - (idle2 - idle) / max(total2 - total, 1)


def server_of(args, transport: str) -> str:
    return args.server or TRANSPORTS[transport]


def servers_of(args, transport: str) -> str:
    """What served the run: with split, the pages' server and the streams'."""
    if transport == "split":
        return "servers (" + " and ".join(args.split_servers.split(",")) + ")"
    return server_of(args, transport)


def one_run(args, database, tables: int, transport: str) -> dict:
    url = database.fresh()
    env = server_env(url)
    # The shared cache's table, which migrate makes (a SQLite copy's is a file beside it).
    python("manage.py", "migrate", "--noinput", "-v0", env=env)
    seeded = ("-m", "bench.seed", "--tables", str(tables), "--screens", str(args.screens))
    config = json.loads(python(*seeded, env=env, capture=True))
    waited = 0
    while busy() > QUIET and waited < args.wait_quiet:  # someone else's tests, say
        time.sleep(10)
        waited += 12
    streamer = None
    if transport == "split":
        pages, streams = args.split_servers.split(",")
        pages = "granian-wsgi" if pages == "granian" else pages
        streams = "granian-asgi" if streams == "granian" else streams
        server = Server(args, {**env, "STREAMS_APART": "true"}, pages)
        streamer = Server(args, env, streams, workers=args.stream_workers)
    else:
        server = Server(args, env, server_of(args, transport))
    try:
        pids = [server.process.pid] + ([streamer.process.pid] if streamer else [])
        config.update(
            base=server.base, server_pid=server.process.pid, database_port=urlsplit(url).port,
            warmup=args.warmup, duration=args.duration, spawn=min(10, args.warmup / 2),
            digital_tables=digital_tables(tables, args), timeout=10, server_pids=pids,
            transport="poll" if transport == "poll" else "stream",
            stream_base=streamer.base if streamer else server.base, stream_pid=pids[-1],
        )  # fmt: skip
        profilers = profile(
            args,
            {"pages": server.process.pid, "streams": pids[-1]}
            if streamer
            else {"server": server.process.pid},
            tables,
            transport,
        )
        with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
            json.dump(config, file)
            file.flush()
            # gevent's default resolver sends every new connection's address lookup through
            # a thread pool: under load that alone added ~100 ms to the median request.
            load_env = {**env, "GEVENT_RESOLVER": "block"}
            out = python(str(BENCH / "load.py"), file.name, env=load_env, capture=True)
    finally:
        for timer, running in profilers:
            timer.cancel()
            for process in running:
                process.wait(timeout=args.duration + 30)
        log = server.stop() + (streamer.stop() if streamer else "")
    if "Traceback" in log:
        say(log)
    return json.loads(out.strip().splitlines()[-1])


def profile(args, servers: dict[str, int], tables: int, transport: str) -> list:
    """--profile: py-spy samples each server's processes through the measured window, into
    collapsed stacks (bench/profile.py sums them by view and by layer): only the threads
    that hold the GIL (--gil), so a thread waiting on a socket is not counted, nor SQLite's
    own work. py-spy takes CPU of its own, so a profiled run's figures are not comparable
    with others'."""
    if not args.profile:
        return []
    folder = Path(args.profile)
    folder.mkdir(parents=True, exist_ok=True)
    found = []
    for name, pid in servers.items():
        running = []
        output = folder / f"{transport}-{tables}-{name}.txt"
        command = [
            str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pid),
            "--subprocesses", "--gil", "--nonblocking", "--rate", "100", "--format", "raw",
            "--duration", str(int(args.duration)), "--output", str(output),
        ]  # fmt: skip

        def start(command=command, running=running):
            running.append(subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL))  # fmt: skip

        timer = threading.Timer(args.warmup, start)
        timer.start()
        found.append((timer, running))
    return found


def not_counted(result, retried: int, runs: int) -> str:
    """Why this run is not counted: its generator fell behind; or others used the machine
    meanwhile (as long as fewer runs were retried than are counted)."""
    g, others = result["generator"], result["machine"]["others"]
    if g["late_p99_ms"] > MAX_LATE_MS:
        return f"the generator's ticks started {g['late_p99_ms']:.0f} ms late (p99)"
    if g["cpu"] > MAX_GENERATOR_CPU or g["cpu_warnings"]:
        return f"the generator used {g['cpu']:.0%} of a core"
    if others > MAX_OTHERS and retried < runs:
        return f"other processes used {others:.2f} cores meanwhile"
    return ""


def combine(runs: list[dict]) -> dict:
    """Per request type, the median over the runs; errors are summed."""
    rows = {}
    for name in sorted({name for run in runs for name in run["stats"]} - SETUP):
        of = [run["stats"].get(name, {"count": 0, "errors": 0}) for run in runs]
        rows[name] = {k: statistics.median(s.get(k, 0) for s in of) for k in ("p50", "p95", "p99")}
        rows[name]["count"] = statistics.median(s["count"] for s in of)
        rows[name]["errors"] = sum(s["errors"] for s in of)
        rows[name]["rps"] = statistics.median(
            s["count"] / r["seconds"] for s, r in zip(of, runs, strict=True)
        )

    def median(part, key):
        return statistics.median(run[part][key] for run in runs)

    streams = {}
    for key, value in runs[0].get("streams", {}).items():
        if isinstance(value, dict):  # a delivery's percentiles: the median of each
            streams[key] = {k: statistics.median(r["streams"][key][k] for r in runs) for k in value}
        elif key == "behind" or key == "undelivered":
            streams[key] = sum(r["streams"][key] for r in runs)
        elif isinstance(value, int | float):
            streams[key] = statistics.median(r["streams"][key] for r in runs)
        elif key == "behind_examples":
            streams[key] = [e for r in runs for e in r["streams"][key]][:5]
        else:
            streams[key] = value
    return {
        "rows": rows,
        "runs": len(runs),
        "streams": streams,
        "generator": {k: median("generator", k) for k in ("cpu", "late_p99_ms", "schedule")},
        # The screens open, their polls and the new boards those brought.
        "screens": {
            k: statistics.median(r.get("screens", {}).get(k, 0) for r in runs)
            for k in runs[0].get("screens", {})
        },
        "machine": {
            **{k: median("machine", k) for k in ("busy", "server", "database", "others", "disk")},
            "streamer": median("machine", "streamer") if "streamer" in runs[0]["machine"] else 0,
            "server_kernel": statistics.median(r["machine"].get("server_kernel", 0) for r in runs),
            "loadavg": max(float(r["machine"]["loadavg"][0]) for r in runs),
            "cores": runs[0]["machine"]["cores"],
        },
        "errors": [e for r in runs for e in r["errors"]][:5],
    }


def misses(summary) -> list[str]:
    found = [
        f"{name}: p95 {row['p95']:.0f} ms, {row['errors']} errors"
        for name, row in summary["rows"].items()
        if name not in FLOORS.values() and (row["p95"] > BUDGET_MS or row["errors"])
    ]
    streams = summary.get("streams", {})
    if streams.get("delivery_stream", {}).get("p95", 0) > DELIVERY_MS:
        found.append(f"delivery to stream phones: p95 {streams['delivery_stream']['p95']:.0f} ms")
    if streams.get("behind"):
        found.append(f"{streams['behind']} phones did not end at their card's last version")
    return found


def run_database(args, database) -> list[dict]:
    """Each N, with the transports side by side: their runs alternate."""
    results = {t: {"name": f"{database.name}, {t}", "server": workers(args, t), "tables": {}}
               for t in args.transport}  # fmt: skip
    say(f"\n== {database.name}: " + "; ".join(f"{t} on {r['server']}" for t, r in results.items()))
    for tables in args.tables:
        runs = {t: [] for t in args.transport}
        retried = dict.fromkeys(args.transport, 0)
        for _ in range(args.runs):
            for transport in args.transport:
                while len(runs[transport]) < args.runs and retried[transport] < 2 * args.runs + 2:
                    result = one_run(args, database, tables, transport)
                    if why := not_counted(result, retried[transport], args.runs):
                        say(f"  {tables} tables, {transport}: not counted ({why}; it saw "
                            f"{headline(result, tables)}): run again")  # fmt: skip
                        retried[transport] += 1
                        continue
                    runs[transport].append(result)
                    say(f"  {tables} tables, {transport}, run {len(runs[transport])}: "
                        f"{headline(result, tables)}")  # fmt: skip
                    break
        for transport, counted in runs.items():
            if counted:
                summary = {**combine(counted), "retried": retried[transport]}
                results[transport]["tables"][tables] = summary
                say(table(results[transport]["name"], tables, summary, args, transport))
        judged = results[args.transport[0]]["tables"].get(tables)
        if judged is None or (misses(judged) and not args.keep_going):
            break
    for transport in args.transport if args.phone_taps else ():
        results[transport]["phone"] = phone(args, database, transport)
        say(f"{transport}: {phone_line(results[transport]['phone'])}")
    return list(results.values())


def phone(args, database, transport: str) -> dict:
    """bench/phone.py against an idle server: a phone's page under uvicorn holds the card's
    stream, as under make run (the split layout's pages would need nginx to reach it)."""
    env = server_env(database.fresh())
    python("manage.py", "migrate", "--noinput", "-v0", env=env)  # the cache's table
    server = Server(args, env, server_of(args, "stream" if transport == "split" else transport))
    try:
        out = python(str(BENCH / "phone.py"), server.base, str(args.phone_taps),
                     env=server.env, capture=True)  # fmt: skip
    finally:
        server.stop()
    return json.loads(out.strip().splitlines()[-1])


def headline(result, tables: int) -> str:
    """A run in a line: its worst request beside the floors' (what the machine could do
    that minute), and the CPU per table of the servers and of the generator."""
    stats, floors = result["stats"], set(FLOORS.values())
    worst = max((r["p95"], n) for n, r in stats.items() if n not in SETUP | floors)
    floor = " / ".join(f"{stats.get(FLOORS[k], {}).get('p95', 0):.0f}" for k in ("read", "write"))
    cores, generator = result["machine"]["server"], result["generator"]["cpu"]
    line = (f"worst p95 {worst[0]:.0f} ms ({worst[1]}), the floors' {floor} ms (GET / write); "
            f"servers {cores:.2f} cores ({cores / tables:.4f} a table), the generator "
            f"{generator:.2f} ({generator / tables:.4f})")  # fmt: skip
    if delivery := result.get("streams", {}).get("delivery_stream", {}).get("count"):
        line += (f"; delivery p95 {result['streams']['delivery_stream']['p95']:.0f} ms "
                 f"({delivery}), {result['streams']['behind']} phones behind")  # fmt: skip
    return line


# Report


def digital_tables(tables: int, args) -> int:
    return round(tables * args.digital)


def workers(args, transport="poll") -> str:
    if transport == "split":
        pages, streams = args.split_servers.split(",")
        pages = "gunicorn sync" if pages == "gunicorn" else pages
        return (f"{pages}, {args.workers} workers, for the pages; {streams}, "
                f"{args.stream_workers} workers, for the streams")  # fmt: skip
    if server_of(args, transport) == "uvicorn":
        return f"uvicorn, {args.workers} workers"
    if server_of(args, transport) == "gunicorn-uvicorn":
        return f"gunicorn with uvicorn's workers, {args.workers} workers"
    threads = f" x {args.threads} threads" if args.worker_class == "gthread" else ""
    return f"gunicorn {args.worker_class}, {args.workers} workers{threads}"


def streams_share(machine) -> str:
    """The streams' own server's share of the server's cores, when served apart."""
    if not machine.get("streamer"):
        return ""
    return f" (the pages {machine['server'] - machine['streamer']:.2f}, the streams' server " \
           f"{machine['streamer']:.2f})"  # fmt: skip


def table(name, tables, summary, args, transport="poll") -> str:
    rows, g, m = summary["rows"], summary["generator"], summary["machine"]
    floor = {k: rows.get(v, {}).get("p50") for k, v in FLOORS.items()}
    lines = ["| request | count | errors | req/s | p50 ms | p95 ms | p99 ms | p50 ÷ floor |",
             "|---|--:|--:|--:|--:|--:|--:|--:|"]  # fmt: skip
    for key, r in rows.items():
        base = floor["write"] if key.startswith(WRITES) else floor["read"]
        ratio = f"{r['p50'] / base:.1f}x" if base and key not in FLOORS.values() else ""
        lines.append(f"| {key} | {r['count']:.0f} | {r['errors']} | {r['rps']:.1f} | "
                     f"{r['p50']:.0f} | {r['p95']:.0f} | {r['p99']:.0f} | {ratio} |")  # fmt: skip
    verdict = "; ".join(misses(summary)) or f"every p95 ≤ {BUDGET_MS} ms, 0 errors"
    if summary.get("streams", {}).get("delivery_stream", {}).get("count"):
        verdict += "" if misses(summary) else f", delivery p95 ≤ {DELIVERY_MS} ms, 0 lost"
    return "\n".join([
        "",
        f"**{name}, {tables} tables ({tables * 6} phones, {digital_tables(tables, args)} of them "
        f"digital), median of {summary['runs']} runs of "
        f"{args.duration:.0f} s: {'MISSES' if misses(summary) else 'holds'}: {verdict}**",
        "",
        *lines,
        "",
        f"- generator: {g['cpu']:.0%} of a core ({g['cpu'] / tables:.4f} a table), ticks late by "
        f"{g['late_p99_ms']:.1f} ms (p99), "
        f"{g['schedule']:.1%} of its slots kept; {summary['retried']} runs not counted",
        f"- machine ({m['cores']} cores): {m['busy']:.0%} busy; {servers_of(args, transport)} "
        f"{m['server']:.2f} cores ({m['server'] / tables:.4f} a table){streams_share(m)}, "
        f"{m['server_kernel']:.2f} of them in the "
        f"kernel, PostgreSQL {m['database']:.2f}, other "
        f"processes {m['others']:.2f}; disk busy {m['disk']:.0%}; load average up to "
        f"{m['loadavg']:.1f}",
        *stream_lines(summary.get("streams", {})),
        *(f"- error: {e}" for e in summary["errors"]),
    ])  # fmt: skip


def stream_lines(streams) -> list[str]:
    """The live card's delivery: from a write's answer to each other phone showing it."""
    if not streams:
        return []

    def delay(kind):
        d = streams.get(f"delivery_{kind}", {})
        return (f"p50 {d['p50']:.0f} / p95 {d['p95']:.0f} / p99 {d['p99']:.0f} ms "
                f"({d['count']:.0f})") if d.get("count") else "none"  # fmt: skip

    lines = [
        f"- delivery, write answered → shown on another phone: stream phones {delay('stream')}; "
        f"polling phones {delay('poll')}; the stream's event alone {delay('event')}",
        f"- phones: {streams['phones']:.0f}, {streams['streaming_phones']:.0f} on streams; open "
        f"streams {streams['open_mean']:.0f} on average, {streams['open_max']:.0f} at most; "
        f"{streams['behind']} phones not at their card's last version at the end; "
        f"{streams['undelivered']:.0f} deliveries not seen (the phone had moved to a next card)",
    ]
    taken = {k: streams.get(f"shared_{k}", 0) for k in ("event", "hit", "miss", "sheet")}
    if answers := sum(taken.values()):
        lines.append(
            f"- changes taken: {taken['event'] / answers:.0%} in the stream's events; polled "
            f"or fetched, {taken['hit'] / answers:.0%} from the shared cache, "
            f"{taken['miss'] / answers:.0%} rendered and shared, "
            f"{taken['sheet'] / answers:.0%} a whole sheet"
        )
    if "memory_per_stream_kb" in streams:
        mb = ", ".join(f"{m:.0f}" for m in streams["memory_mb"])
        opened = " and ".join(str(n) for n in streams["memory_streams"])
        lines.append(f"- server memory (PSS) with no stream, {opened} more streams open: {mb} MB: "
                     f"{streams['memory_per_stream_kb']:.0f} KiB per open stream")  # fmt: skip
    lines += [f"- behind: {e}" for e in streams.get("behind_examples", [])]
    return lines


def phone_line(phone) -> str:
    return (
        f"phone ({phone['device']}, idle server): tap → picker open {phone['picker_ms']:.0f} ms, "
        f"tap → write shown {phone['write_ms']:.0f} ms (on the server "
        f"{phone['saved_ms']:.0f} ms; {phone.get('saved_outside_ms', 0):.0f} ms timed from "
        f"outside the page), tap → shown on a second phone "
        f"{phone['second_phone_ms']:.0f} ms ({phone['second_phone_after_saved_ms']:.0f} ms after "
        f"the first had the server's answer) (medians of {phone['taps']}); offline, tap → "
        f"write shown {phone['offline_write_ms']:.0f} ms, and back online its "
        f"{phone['offline_taps']} writes on the server in "
        f"{phone['back_online_all_saved_ms']:.0f} ms"
    )


def write_results(results, args) -> None:
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()  # fmt: skip
    parts = [f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on commit `{commit}`; "
             f"warm-up {args.warmup:.0f} s."]  # fmt: skip
    for db in results:
        transport = db["name"].rsplit(", ", 1)[1]
        parts += ["", f"{db['name']}: {db['server']}"]
        parts += [table(db["name"], n, summary, args, transport)
                  for n, summary in db["tables"].items()]  # fmt: skip
        if "phone" in db:
            parts += ["", f"- {db['name']}: {phone_line(db['phone'])}"]
    path, start, end = BENCH / "RESULTS.md", "<!-- bench:start -->", "<!-- bench:end -->"
    head, rest = path.read_text().split(start)
    path.write_text(f"{head}{start}\n" + "\n".join(parts) + f"\n{end}{rest.split(end)[1]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="sqlite,postgres", help="sqlite, postgres or both")
    parser.add_argument("--tables", default="50,100,200", help="the N to try, in order")
    parser.add_argument("--keep-going", action="store_true", help="past an N that misses")
    parser.add_argument("--runs", type=int, default=3, help="counted runs per N")
    parser.add_argument("--digital", type=float, default=0.5,
                        help="the share of tables playing with the app's dice, 0 to 1")  # fmt: skip
    parser.add_argument("--duration", type=float, default=60, help="seconds measured")
    parser.add_argument("--warmup", type=float, default=20, help="seconds before measuring")
    parser.add_argument(
        "--transport",
        default="split,poll",
        help="the live card's: stream, poll, split (the pages by gunicorn, the streams by "
        "uvicorn), workers (gunicorn with uvicorn's workers), or several (the first is judged)",
    )
    parser.add_argument(
        "--server",
        choices=["gunicorn", "uvicorn"],
        help="for every transport (default: uvicorn streams, gunicorn polls)",
    )
    parser.add_argument("--worker-class", default="sync", choices=["sync", "gthread"])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument(
        "--screens", type=int, default=2, help="«Pantalla del club» open in the room (issue 59)"
    )
    parser.add_argument("--stream-workers", type=int, default=2, help="split: uvicorn's")
    parser.add_argument(
        "--split-servers",
        default="gunicorn,uvicorn",
        help="split: the pages' server and the streams', e.g. granian,granian",
    )
    parser.add_argument("--threads", type=int, default=1, help="per gthread worker")
    parser.add_argument("--wait-quiet", type=float, default=300, help="at most, before a run")
    parser.add_argument("--phone-taps", type=int, default=20, help="0: no phone check")
    parser.add_argument("--write-results", action="store_true", help="update RESULTS.md")
    parser.add_argument(
        "--profile",
        metavar="FOLDER",
        help="py-spy each server while measured; then python bench/profile.py FOLDER",
    )
    parser.add_argument("--inner", help=argparse.SUPPRESS)  # PostgreSQL: the results file
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out
    args.tables = [int(n) for n in args.tables.split(",")]
    args.transport = args.transport.split(",")
    if not set(args.transport) <= set(TRANSPORTS):
        parser.error("--transport: stream, poll, split, workers, or several of them")
    if not 0 <= args.digital <= 1:
        parser.error("--digital: a share of the tables, from 0 to 1")
    manifest = ROOT / "staticfiles" / "staticfiles.json"
    newest = max(p.stat().st_mtime for p in (ROOT / "static").rglob("*") if p.is_file())
    if not manifest.exists() or manifest.stat().st_mtime < newest:  # DEBUG off needs them
        python("manage.py", "collectstatic", "--noinput", "-v0", env=server_env("sqlite:///x"))
    if args.inner:
        Path(args.inner).write_text(json.dumps(run_database(args, PostgreSQL())))
        return 0
    results = []
    for db in args.db.split(","):
        if db == "sqlite":
            results += run_database(args, SQLite())
            continue
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            inner = [sys.executable, str(BENCH / "run.py"), *(argv or sys.argv[1:])]
            subprocess.run([sys.executable, str(ROOT / "scripts" / "with_postgres.py"), "--",
                            *inner, "--inner", out.name], cwd=ROOT, check=True)  # fmt: skip
            inner_results = json.loads(Path(out.name).read_text())
        for found in inner_results:
            found["tables"] = {int(n): summary for n, summary in found["tables"].items()}
            results.append(found)
    if args.write_results:
        write_results(results, args)
    held = {db["name"]: max((n for n, s in db["tables"].items() if not misses(s)), default=0)
            for db in results}  # fmt: skip
    say("\nLargest N that holds: " + ", ".join(f"{name} {n}" for name, n in held.items()))
    judged = [db for db in results if db["name"].endswith(f", {args.transport[0]}")]
    missed = [f"{db['name']}, {n} tables: {miss}" for db in judged
              for n, summary in db["tables"].items() if n <= BUDGET_TABLES
              for miss in misses(summary)]  # fmt: skip
    missed += [f"{db['name']}: no run counted" for db in judged if not db["tables"]]
    if missed:
        say("bench: the budget is missed:\n  " + "\n  ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
