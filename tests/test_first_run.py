"""A newcomer's first run: `make run` on a fresh clone compiles the translations before it
serves as production does, its admin account is not a player, staff find the admin, the
README says how."""

import contextlib
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse

from tests.factories import UserFactory
from tests.po import po_entries, spanish_phrases

BASE = Path(settings.BASE_DIR)
MO = "locale/en/LC_MESSAGES/django.mo"


def spanish_left(html: str) -> list[str]:
    """The Spanish UI texts an English page still shows: whole phrases, and single words
    that no English translation uses («Entrar», «Contraseña»)."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    said = re.findall(r'\b(?:alt|title|aria-label|placeholder)="([^"]*)"', text)
    text = " ".join([re.sub(r"<[^>]*>", " ", text), *said])
    english = set()
    words = set()
    for _flags, msgid, strings in po_entries():
        if strings and strings[0] != msgid:
            english.update(re.findall(r"\w+", " ".join(strings)))
            if re.fullmatch(r"\w{4,}", msgid):
                words.add(msgid)
    found = [p for p in spanish_phrases() if p in text]
    found += [w for w in sorted(words - english) if re.search(rf"\b{w}\b", text)]
    return found


# The Makefile


def test_make_run_compiles_the_translations_before_it_migrates_and_serves():
    """`migrate` lists $(MO) among its prerequisites: make expands a prerequisite where the
    rule is read, so MO must be defined above it (it was not, and expanded empty)."""
    dry = subprocess.run(
        ["make", "--dry-run", "--always-make", "run"],
        cwd=BASE,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = dry.splitlines()
    compiled = next(i for i, line in enumerate(lines) if "compilemessages" in line)
    migrated = next(i for i, line in enumerate(lines) if "manage.py migrate" in line)
    served = next(i for i, line in enumerate(lines) if "uvicorn dados.asgi:application" in line)
    assert compiled < migrated < served


def a_path_holding(bin_dir: Path, *, new_enough=(), too_old=()) -> dict:
    """A shell whose PATH is only bin_dir, holding the real interpreter under each name of
    new_enough and, under each of too_old, a stub that fails the Makefile's version check as
    Python 3.11 does; none of the caller's make variables (`make PYTHON=… test`)."""
    bin_dir.mkdir()
    for name in new_enough:
        (bin_dir / name).symlink_to(Path(sys.executable).resolve())
    for name in too_old:
        (bin_dir / name).write_text("#!/bin/sh\nexit 1\n")
        (bin_dir / name).chmod(0o755)
    shell = {k: v for k, v in developers_shell().items() if not k.startswith(("MAKE", "MFLAGS"))}
    return {**shell, "PATH": str(bin_dir)}


def making_the_virtualenv(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [shutil.which("make"), "--dry-run", "--always-make", "venv", *args],
        cwd=BASE,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("new_enough", "too_old", "chosen"),
    [
        (["python3.13"], [], "python3.13"),  # Debian 13, Fedora, Homebrew
        (["python3", "python3.14"], [], "python3.14"),
        (["python3"], [], "python3"),
        (["python3.12", "python3.13"], [], "python3.12"),  # CI's pyenv: .python-version's
        (["python3.13"], ["python3.12"], "python3.13"),  # e.g. a pyenv shim with no 3.12
    ],
)
def test_make_makes_the_virtualenv_with_the_first_python_of_3_12_or_newer_on_the_path(
    tmp_path, new_enough, too_old, chosen
):
    env = a_path_holding(tmp_path / "bin", new_enough=new_enough, too_old=too_old)
    made = making_the_virtualenv(env)
    assert made.returncode == 0, made.stderr
    assert f"test -x .venv/bin/python || {chosen} -m venv .venv" in made.stdout.splitlines()


def test_make_makes_the_virtualenv_with_the_python_it_is_given(tmp_path):
    env = a_path_holding(tmp_path / "bin", new_enough=["python3.12"])
    made = making_the_virtualenv(env, "PYTHON=/opt/python/bin/python3")
    assert "test -x .venv/bin/python || /opt/python/bin/python3 -m venv .venv" in made.stdout
    env["PYTHON"] = "/usr/local/bin/python3.13"
    made = making_the_virtualenv(env)
    assert "test -x .venv/bin/python || /usr/local/bin/python3.13 -m venv .venv" in made.stdout


def test_make_says_so_when_no_python_on_the_path_is_3_12_or_newer(tmp_path):
    env = a_path_holding(tmp_path / "bin", too_old=["python3", "python3.12"])
    made = making_the_virtualenv(env)
    assert made.returncode != 0
    assert "-m venv" not in made.stdout
    assert "No Python 3.12 or newer on the PATH" in made.stderr
    assert "make PYTHON=/path/to/python3" in made.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def developers_shell() -> dict:
    """A developer's environment: none of the test run's settings."""
    return {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL", "SECURE_SSL_REDIRECT", "SECURE"}
        and not k.startswith(("DJANGO_", "PYTEST", "PYTHON"))
    }


def fresh_clone(into: Path) -> Path:
    """The files a clone of this working tree would have (what git tracks or would track,
    no compiled .mo, no database), with this checkout's virtualenv."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=BASE,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = BASE / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    (into / ".venv").symlink_to(BASE / ".venv")
    return into


@pytest.mark.server
def test_make_run_on_a_fresh_clone_serves_the_english_log_in_page_translated(tmp_path):
    clone = fresh_clone(tmp_path / "dados")
    assert not (clone / MO).exists()
    port = free_port()
    env = developers_shell()
    log = (tmp_path / "make-run.log").open("w")
    # -o: the shared virtualenv counts as installed; the clone must not reinstall into it.
    server = subprocess.Popen(
        ["make", "-o", ".venv/.installed-stamp", "run", f"PORT={port}"],
        cwd=clone,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        page = None
        deadline = time.monotonic() + 120
        while page is None and time.monotonic() < deadline and server.poll() is None:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/entrar/",
                headers={"Cookie": f"{settings.LANGUAGE_COOKIE_NAME}=en"},
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    page = response.read().decode()
            except OSError:
                time.sleep(0.5)
        output = (tmp_path / "make-run.log").read_text()
        assert page is not None, output[-3000:]
        # A wrong address: the app's own page, in Spanish, not Django's debug page.
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/tarjetas/no-existe/", timeout=5)
        assert missing.value.code == 404
        not_found = missing.value.read().decode()
        # Served as in production: uvicorn, static files by WhiteNoise with hashed names.
        static = re.search(r'href="(/static/css/dados\.[0-9a-f]{12}\.css)"', page)[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{static}", timeout=5) as css:
            assert css.headers["Server"] == "uvicorn"
            assert "immutable" in css.headers["Cache-Control"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
    # It ran the clone (its own database, its own compiled catalog), not this checkout.
    assert (clone / "db.sqlite3").exists()
    assert (clone / MO).exists()
    assert "Cuenta de administración creada" in output
    assert '<html lang="en">' in page
    assert "Score your games with physical dice" in page
    assert spanish_left(page) == []
    assert "No encontramos esta página" in not_found
    assert "URLconf" not in not_found
    assert "DEBUG = True" not in not_found
    # The secret key was made once, beside the database, for its owner only.
    key = clone / ".secret_key"
    assert len(key.read_text().strip()) >= 50
    assert key.stat().st_mode & 0o077 == 0


@pytest.mark.django_db
def test_the_english_log_in_page_is_fully_translated(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = client.get(reverse("login")).text
    assert '<html lang="en">' in page
    assert spanish_left(page) == []
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    assert "Contraseña" in spanish_left(client.get(reverse("login")).text)  # it does look


# The admin account and the way to the admin


@pytest.mark.django_db
def test_the_first_admin_account_administers_without_playing(client, capsys):
    call_command("bootstrap_admin")
    out = capsys.readouterr().out
    admin = get_user_model().objects.get(username="admin")
    assert admin.check_password(out.split("contraseña:")[1].split()[0])
    assert (admin.is_superuser, admin.plays, admin.name) == (True, False, "Admin")
    client.force_login(admin)
    home = client.get(reverse("home")).text
    # Its name reads as a person's, not as the header's «Administración» link (in the
    # header, and in the account's menu where a phone shows it instead).
    assert '<a href="/admin/" class="admin-link wide-only">Administración</a>' in home
    assert '<a href="/admin/" class="admin-link narrow-only">Administración</a>' in home
    assert home.count("Administración") == 2
    assert reverse("player", args=[1]) not in home  # no «Mis estadísticas»: it has none


@pytest.mark.django_db
def test_only_staff_see_the_administration_link(client):
    player = UserFactory(display_name="Ana")
    client.force_login(player)
    assert "/admin/" not in client.get(reverse("home")).text
    player.is_staff = True
    player.save()
    assert ">Administración</a>" in client.get(reverse("home")).text


# The README


def test_the_readme_opens_with_the_two_commands_and_the_first_steps():
    readme = (BASE / "README.md").read_text()
    opening = readme.split("## ")[0]
    assert "make run" in opening
    assert "make test" in opening
    assert "PORT=" in opening
    first_steps = readme.split("## First steps")[1].split("\n## ")[0]
    for step in (
        "/admin/",
        "«Juega»",
        "«Añadir jugador»",
        "«Tarjeta de puntos»",
        "«Crear tarjeta»",
    ):
        assert step in first_steps
    for link in re.findall(r"\]\(([^)#]+)", readme):
        assert (BASE / link).exists(), link


# docs/operations.md


@pytest.mark.server
def test_import_players_as_the_operations_doc_gives_it_works_on_a_fresh_clone(tmp_path):
    doc = (BASE / "docs/operations.md").read_text()
    section = doc.split("## Managing players")[1].split("\n## ")[0]
    lines = re.search(r"```sh\n(.*?)```", section, re.S)[1].splitlines()
    assert any("import_players club.csv" in line for line in lines)
    clone = fresh_clone(tmp_path / "dados")
    (clone / "club.csv").write_text("usuario,nombre\nlucia,Lucía\nmarta,Marta\n")
    for line in lines:
        # -o: the shared virtualenv counts as installed; the clone must not reinstall into it.
        command = line.split("#")[0].replace("make ", "make -o .venv/.installed-stamp ", 1)
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=clone,
            env=developers_shell(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
    assert "lucia" in done.stdout
    assert "marta" in done.stdout
    with contextlib.closing(sqlite3.connect(clone / "db.sqlite3")) as db:
        registered = db.execute("SELECT username FROM accounts_user ORDER BY username")
        assert [name for (name,) in registered] == ["lucia", "marta"]
