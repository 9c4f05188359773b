"""Run a command against a throwaway PostgreSQL server.

    python scripts/with_postgres.py -- pytest -q

Uses Debian's PostgreSQL binaries (installing the `postgresql` package when run
as root and they are missing), initdb's a cluster into a temporary folder,
starts it on a free loopback port, runs the command with DATABASE_URL pointing
at it, and always stops the server and removes the folder afterwards.
"""

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATABASE = "dados"


def postgres_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found and os.geteuid() == 0:
        print("Installing Debian's postgresql package…", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "postgresql"], check=True, env=env)
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        sys.exit("PostgreSQL is missing: run 'sudo apt-get install postgresql' and try again.")
    return Path(found[-1]).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_as_server(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run a PostgreSQL server command, from a directory its user may enter."""
    return subprocess.run(as_server_user(command), cwd="/", **kwargs)


def as_server_user(command: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root; Debian's package provides 'postgres'.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


def main(argv: list[str]) -> int:
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        sys.exit(__doc__)
    bin_dir = postgres_bin()
    folder = Path(tempfile.mkdtemp(prefix="dados-pg-"))
    data = folder / "data"
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
    port = free_port()
    run = subprocess.run
    run_as_server(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", "dados", "-A", "trust", "-E", "UTF8"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=on"
    log = str(folder / "log")
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(data)]
    run_as_server(
        [*pg_ctl, "-o", options, "-l", log, "-w", "start"], check=True, stdout=subprocess.DEVNULL
    )
    try:
        url = f"postgres://dados@127.0.0.1:{port}/{DATABASE}"
        createdb = [str(bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "dados"]
        run([*createdb, DATABASE], check=True)
        print(f"PostgreSQL {bin_dir.parent.name} on 127.0.0.1:{port}", flush=True)
        return run(argv, env={**os.environ, "DATABASE_URL": url}).returncode
    finally:
        run_as_server([*pg_ctl, "-m", "fast", "stop"], stdout=subprocess.DEVNULL)
        with contextlib.suppress(OSError):
            time.sleep(0.2)
            shutil.rmtree(folder)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
