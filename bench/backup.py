"""Time `manage.py backup` and `manage.py restore` of the benchmark's club (bench/seed.py:
100 players, 10,000 finished games), on SQLite or on PostgreSQL, and print the figures.

    .venv/bin/python bench/backup.py                                      # SQLite
    .venv/bin/python scripts/with_postgres.py -- .venv/bin/python bench/backup.py

With DATABASE_URL set to a PostgreSQL server, it makes two databases of its own there (the
club and an empty one to restore into) and drops them afterwards; on SQLite, two files in
a temporary folder. Each command runs as an operator runs it, in a process of its own: the
figures include Python's and Django's start (about a second).
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def env_for(url: str) -> dict:
    return {
        **os.environ,
        "DATABASE_URL": url,
        "DJANGO_SETTINGS_MODULE": "dados.settings",
        "DEBUG": "false",
        "SECRET_KEY": "bench-backup-only-secret-key-0123456789-abcdefghijklmnopq",
        "CACHE": "memory",
    }


def timed(args: list, url: str) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (the child's) and the output of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    done = subprocess.run(
        args, cwd=ROOT, env=env_for(url), capture_output=True, text=True, check=False
    )
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def postgres_databases(server_url: str, names: list[str], *, drop: bool) -> list[str]:
    import psycopg

    parts = urlsplit(server_url)
    maintenance = urlunsplit(parts._replace(path="/postgres", query=""))
    with psycopg.connect(maintenance, autocommit=True) as conn:
        for name in names:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            if not drop:
                conn.execute(f"CREATE DATABASE {name}")
    return [urlunsplit(parts._replace(path=f"/{name}")) for name in names]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=100)
    args = parser.parse_args(argv)
    server = os.environ.get("DATABASE_URL", "")
    postgres = server.startswith(("postgres://", "postgresql://"))
    names = ["dados_bench_backup_source", "dados_bench_backup_target"]
    with tempfile.TemporaryDirectory(prefix="dados-backup-bench-") as folder:
        folder = Path(folder)
        if postgres:
            source, target = postgres_databases(server, names, drop=False)
        else:
            source, target = (f"sqlite:///{folder / name}.sqlite3" for name in ("club", "empty"))
        try:
            seed = [PYTHON, "-m", "bench.seed", "--players", str(args.players)]
            timed([*seed, "--games", str(args.games)], source)
            timed([PYTHON, "manage.py", "migrate", "--noinput", "-v0"], target)
            wall, cpu, out = timed([PYTHON, "manage.py", "backup", "--to", folder], source)
            path = Path(out.strip().splitlines()[-1].split("\t")[0])
            size = path.stat().st_size
            print(f"database: {'PostgreSQL' if postgres else 'SQLite'}")
            print(f"club: {out.strip().splitlines()[-1].split(chr(9))[1]}")
            print(f"backup: {wall:.1f} s ({cpu:.1f} s CPU), {size / 1_000_000:.2f} MB")
            wall, cpu, out = timed([PYTHON, "manage.py", "restore", path], target)
            print(f"restore: {wall:.1f} s ({cpu:.1f} s CPU)")
            print(f"load average after: {os.getloadavg()[0]:.1f}")
        finally:
            if postgres:
                postgres_databases(server, names, drop=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
