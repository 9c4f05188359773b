"""manage.py backup and restore: a club's copy, checked, restorable into either database.

Each test owns its databases (copies of one migrated per module: SQLite files, or in the
PostgreSQL pass databases of their own on the suite's server), and runs the commands as a
club's treasurer does, in processes of their own. The between-databases test runs in the
PostgreSQL pass, where it has both.
"""

import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.db import connection

from tests.factories import PASSWORD
from tests.liveserver import (
    BIN,
    ROOT,
    database_copy,
    django_script,
    migrated_database,
    server_env,
    template_database,
)

POSTGRES = connection.vendor == "postgresql"
DATA = Path(__file__).parent / "data"
# Made by this release's `manage.py backup` (tests/data/README.md says how): every later
# release must restore it.
OLD_BACKUP = DATA / "dados-2026-12-07-backup.json.gz"

# A small club with one of everything a backup holds: players, an admin, a guest, a
# physical game finished through its change log (with a correction) and shared, a digital game
# finished with its rolls, a card in play, an access log entry, a group and permissions,
# an entry in the admin's history.
CLUB = """
import json, sys
from django.contrib.auth.hashers import make_password
from django.utils import timezone
from axes.models import AccessLog
from django.contrib.admin.models import ADDITION, LogEntry
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from accounts.models import User
from scorecards import turns
from scorecards.models import Scorecard, Seat
from scorecards.services import box_write, scorecard_create, scorecard_finalize, scorecard_share
from tests.factories import full_card

hashed = make_password(sys.argv[1])
olga = User.objects.create(username="olga", display_name="Olga", password=hashed, is_staff=True)
ana = User.objects.create(username="ana", display_name="Ana", password=hashed)
ben = User.objects.create(username="ben", display_name="Ben", password=hashed)
guest = User.objects.create(
    username="carmen", display_name="Carmen", password=make_password(None), added_by=olga
)
AccessLog.objects.create(username="ana", ip_address="192.0.2.7", user_agent="test")
treasury = Group.objects.create(name="Tesorería")
treasury.permissions.add(Permission.objects.get(codename="view_scorecard"))
ana.groups.add(treasury)
olga.user_permissions.add(Permission.objects.get(codename="add_user"))
LogEntry.objects.create(
    user=olga, content_type=ContentType.objects.get_for_model(User), object_id=str(ben.pk),
    object_repr="Ben", action_flag=ADDITION, change_message="[]",
)

card = scorecard_create(organizer=olga, players=[ana, ben, guest])
for seat in card.seats.all():
    for box, value in full_card(chance=5 + seat.order).items():
        box_write(scorecard_id=card.pk, seat_id=seat.pk, box=box, value=value, was="",
                  author=olga)
first = card.seats.get(order=0)
box_write(scorecard_id=card.pk, seat_id=first.pk, box="chance", value=30, was=5, author=olga)
scorecard_finalize(scorecard_id=card.pk, author=olga)
scorecard_share(scorecard_id=card.pk, user=ana)

digital = scorecard_create(organizer=olga, players=[ana], mode=Scorecard.DIGITAL)
while True:
    digital.refresh_from_db()
    if digital.finalized_at:
        break
    turns.turn_roll(scorecard_id=digital.pk, author=olga, version=str(digital.version),
                    shown="", keep="")
    digital.refresh_from_db()
    seat = digital.seats.get()
    free = next(box for box, value in seat.scores.items() if value is None)
    turns.turn_score(scorecard_id=digital.pk, author=olga, version=str(digital.version),
                     box=free.value)

playing = scorecard_create(organizer=olga, players=[ana, ben])
seats = list(playing.seats.order_by("order"))
box_write(scorecard_id=playing.pk, seat_id=seats[0].pk, box="sixes", value=24, was="",
          author=olga)
print(json.dumps({"playing": playing.pk, "seats": [s.pk for s in seats]}))
"""

# What a restore must give back exactly: every row of every table a backup holds, and the
# finished games' totals and positions, as JSON (the same text on either database).
FINGERPRINT = """
import hashlib, json
from django.contrib.sessions.models import Session
from safekeeping.archive import club_summary, copied_models
from scorecards.models import Seat

rows = {}
for model in copied_models():
    values = model._base_manager.order_by("pk").values_list()
    # A shared game's picture as hex: bytes from SQLite, a memoryview from psycopg.
    text = json.dumps(
        [list(v) for v in values], sort_keys=True,
        default=lambda v: bytes(v).hex() if isinstance(v, bytes | memoryview) else str(v),
    )
    rows[model._meta.label_lower] = [len(values), hashlib.sha256(text.encode()).hexdigest()]
finished = list(
    Seat.objects.filter(scorecard__finalized_at__isnull=False)
    .order_by("scorecard", "order").values_list("scorecard", "player", "total", "place")
)
print(json.dumps({"rows": rows, "finished": finished, "sessions": Session.objects.count(),
                  "summary": str(club_summary())}))
"""

# After a restore: the finished games refuse every change, the card in play takes writes.
STILL_GUARDED = """
import json, sys
from django.db import DatabaseError, transaction
from accounts.models import User
from scorecards.models import Change, Roll, Scorecard, Seat
from scorecards.services import box_write, scorecard_create

def refused(attempt):
    try:
        with transaction.atomic():
            attempt()
    except DatabaseError:
        return True
    return False

done = Scorecard.objects.finalized()
digital = done.filter(mode="digital").first()
olga = User.objects.get(username="olga")
attempts = {
    "seat_update": lambda: Seat.objects.filter(scorecard__in=done).update(chance=5),
    "seat_insert": lambda: Seat.objects.bulk_create(
        [Seat(scorecard=done.first(), player=User.objects.create(username="nuevo"), order=9)]
    ),
    "card_update": lambda: done.update(finalized_at=None),
    "card_delete": lambda: Scorecard.objects.filter(pk__in=done).delete(),
    "change_delete": lambda: Change.objects.filter(scorecard__in=done).delete(),
    "roll_delete": lambda: Roll.objects.filter(scorecard=digital).delete(),
}
result = {name: refused(attempt) for name, attempt in attempts.items()}
playing = Scorecard.objects.in_progress().get(pk=int(sys.argv[1]))
seat = playing.seats.order_by("order")[1]
written = box_write(scorecard_id=playing.pk, seat_id=seat.pk, box="ones", value=3, was="",
                    author=olga)
result["write"] = written.change is not None
newcomer = User.objects.create_user("despues", password="x-x-x-x-x-x-1")
result["new_card"] = scorecard_create(organizer=olga, players=[newcomer]).pk > playing.pk
print(json.dumps(result))
"""


def manage(db, *args, **env) -> subprocess.CompletedProcess:
    """manage.py on a test's database, as an operator runs it: its exit code and output."""
    return subprocess.run(
        [BIN / "python", "manage.py", *map(str, args)],
        cwd=ROOT,
        env=server_env(db) | env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def backup(db, folder: Path, *args) -> Path:
    done = manage(db, "backup", "--to", folder, *args)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip().splitlines()[-1].split("\t")[0])


def restore(db, path: Path, *args, backup_dir: Path) -> subprocess.CompletedProcess:
    return manage(db, "restore", path, *args, BACKUP_DIR=str(backup_dir))


def fingerprint(db) -> dict:
    return json.loads(django_script(db, FINGERPRINT).strip().splitlines()[-1])


def seed_club(db) -> dict:
    return json.loads(django_script(db, CLUB, PASSWORD).strip().splitlines()[-1])


def rewritten(source: Path, target: Path, *, header=None, row=None, extra_rows=()) -> Path:
    """A copy of a backup with its header or rows changed by the given functions, and a
    checksum that matches again: what a release that wrote it differently would make."""
    lines = gzip.decompress(source.read_bytes()).splitlines(keepends=True)
    values = [json.loads(line) for line in lines[:-1]]
    trailer = json.loads(lines[-1])["end"]
    if header:
        header(values[0])
    rows = [row(value) if row else value for value in values[1:]] + list(extra_rows)
    rows = [value for value in rows if value is not None]
    counts = {}
    for value in rows:
        counts[value["model"]] = counts.get(value["model"], 0) + 1
    body = b"".join(
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        for value in [values[0], *rows]
    )
    end = {"counts": counts, "summary": trailer["summary"]}
    end["sha256"] = hashlib.sha256(body).hexdigest()
    target.write_bytes(gzip.compress(body + json.dumps({"end": end}).encode() + b"\n"))
    return target


@pytest.fixture(scope="module")
def template_db(tmp_path_factory):
    with template_database(
        "dados_backup_template", tmp_path_factory.mktemp("backup"), POSTGRES
    ) as template:
        yield template


@pytest.fixture
def make_db(template_db, tmp_path):
    """Fresh migrated databases, as many as a test asks for (dropped afterwards)."""
    with ExitStack() as stack:

        def make(name="dados"):
            folder = tmp_path / name
            folder.mkdir()
            copy = database_copy(template_db, folder, POSTGRES, f"dados_backup_{name}")
            return stack.enter_context(copy)

        yield make


@pytest.fixture
def club(make_db):
    db = make_db("club")
    return db, seed_club(db)


def test_backup_writes_one_named_file_and_says_where_with_the_counts(club, tmp_path):
    db, _seeded = club
    done = manage(db, "backup", "--to", tmp_path / "copias")
    assert done.returncode == 0, done.stderr
    path, counts = done.stdout.strip().splitlines()[-1].split("\t")
    assert counts == "4 jugadores, 2 partidas, 1 tarjeta en juego"
    path = Path(path)
    assert path.parent == tmp_path / "copias"
    assert re.fullmatch(r"dados-20\d\d-\d\d-\d\d-\d{6}\.json\.gz", path.name)
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    # Every player's password hash is in it: only its owner may read it.
    assert path.stat().st_mode & 0o777 == 0o600
    header = json.loads(gzip.decompress(path.read_bytes()).splitlines()[0])
    assert header["format"] == "dados-backup"
    assert "scorecards.0014_turn_held" in header["migrations"]


def test_backup_goes_to_backup_dir_by_default_and_keeps_the_newest(club, tmp_path):
    db, _seeded = club
    folder = tmp_path / "copias"
    made = []
    for _n in range(4):
        done = manage(db, "backup", "--keep", "2", BACKUP_DIR=str(folder))
        assert done.returncode == 0, done.stderr
        made.append(Path(done.stdout.strip().splitlines()[-1].split("\t")[0]))
    assert len(set(made)) == 4
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in made[-2:])


def test_a_backup_clears_what_a_killed_backup_left_and_nothing_being_written(club, tmp_path):
    db, _seeded = club
    folder = tmp_path / "copias"
    folder.mkdir()
    killed = folder / ".dados-2026-12-01-040000.json.gz.partial"
    writing = folder / ".dados-2026-12-07-040000.json.gz.partial"
    for partial in (killed, writing):
        partial.write_bytes(b"\x1f\x8b half a file")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(killed, (two_days_ago, two_days_ago))
    path = backup(db, folder)
    assert sorted(p.name for p in folder.iterdir()) == sorted([path.name, writing.name])


def test_restore_gives_back_every_row_and_the_triggers_still_guard_finished_games(
    club, make_db, tmp_path
):
    db, seeded = club
    path = backup(db, tmp_path / "copias")
    target = make_db("target")
    done = restore(target, path, backup_dir=tmp_path / "seguridad")
    assert done.returncode == 0, done.stderr
    assert "4 jugadores, 2 partidas, 1 tarjeta en juego" in done.stdout
    assert fingerprint(target) == fingerprint(db)
    guarded = json.loads(django_script(target, STILL_GUARDED, str(seeded["playing"])))
    assert guarded == {
        "seat_update": True,
        "seat_insert": True,
        "card_update": True,
        "card_delete": True,
        "change_delete": True,
        "roll_delete": True,
        "write": True,
        "new_card": True,
    }
    assert not (tmp_path / "seguridad").exists()


def test_restore_refuses_a_database_with_a_club_unless_replace_and_then_backs_it_up(
    club, make_db, tmp_path
):
    db, _seeded = club
    path = backup(db, tmp_path / "copias")
    target = make_db("target")
    django_script(target, "from accounts.models import User; User.objects.create(username='x')")
    django_script(
        target,
        "from django.contrib.sessions.backends.db import SessionStore; SessionStore().create()",
    )
    before = fingerprint(target)
    refused = restore(target, path, backup_dir=tmp_path / "seguridad")
    assert refused.returncode == 1
    assert "ya tiene un club (1 jugador, 0 partidas, 0 tarjetas en juego)" in refused.stderr
    assert "--replace" in refused.stderr
    assert fingerprint(target) == before

    done = restore(target, path, "--replace", backup_dir=tmp_path / "seguridad")
    assert done.returncode == 0, done.stderr
    safety = next((tmp_path / "seguridad").iterdir())
    assert f"Copia de lo que había (1 jugador, 0 partidas, 0 tarjetas en juego): {safety}" in (
        done.stdout
    )
    after = fingerprint(target)
    assert after["sessions"] == 0
    assert after["rows"] == fingerprint(db)["rows"]
    # What was replaced comes back from its own backup.
    again = restore(target, safety, "--replace", backup_dir=tmp_path / "seguridad2")
    assert again.returncode == 0, again.stderr
    assert fingerprint(target)["rows"] == before["rows"]


def _truncated(path: Path, target: Path) -> Path:
    data = path.read_bytes()
    target.write_bytes(data[: len(data) * 2 // 3])
    return target


def _flipped(path: Path, target: Path) -> Path:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    return target


def _foreign(path: Path, target: Path) -> Path:
    # Another program's gzip'd JSON: no header of ours.
    target.write_bytes(gzip.compress(json.dumps([{"model": "x", "pk": 1}]).encode()))
    return target


def _sqlite_file(path: Path, target: Path) -> Path:
    # The database itself, given by mistake for its backup.
    import sqlite3

    sqlite3.connect(target).execute("CREATE TABLE t (x)").connection.close()
    return target


def _empty(path: Path, target: Path) -> Path:
    target.write_bytes(b"")
    return target


def _cut_at_a_line(path: Path, target: Path) -> Path:
    # A whole gzip stream, but of the rows without their trailer.
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    target.write_bytes(gzip.compress(b"".join(lines[:-1])))
    return target


def _unreadable_value(path: Path, target: Path) -> Path:
    # Sound as a file (its checksum matches), but a seat's turn is not a number.
    def spoiled(row):
        if row["model"] == "scorecards.seat":
            row["fields"]["order"] = "tercero"
        return row

    return rewritten(path, target, row=spoiled)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (_unreadable_value, "tiene una fila que no se puede leer (scorecards.seat"),
        (_truncated, "está incompleto o dañado"),
        (_flipped, "dañado"),
        (_foreign, "no es una copia de Dados"),
        (_sqlite_file, "no es una copia de Dados (no es un archivo gzip)"),
        (_empty, "está vacío"),
        (_cut_at_a_line, "le falta el final"),
    ],
)
def test_a_bad_file_is_refused_and_changes_nothing(club, tmp_path, damage, said):
    db, _seeded = club
    path = backup(db, tmp_path / "copias")
    before = fingerprint(db)
    bad = damage(path, tmp_path / "mala.json.gz")
    done = restore(db, bad, "--replace", backup_dir=tmp_path / "seguridad")
    assert done.returncode == 1
    assert done.stderr.startswith("CommandError: No se ha restaurado nada.")
    assert said in done.stderr
    assert "Traceback" not in done.stderr
    assert fingerprint(db) == before
    # Checked before anything: not even the backup --replace makes first.
    assert not (tmp_path / "seguridad").exists()


# Run in a database whose permission «add_user» was made again, under another key: as
# `migrate` may number content types and permissions on another database.
RENUMBER = """
from django.contrib.auth.models import Permission
old = Permission.objects.get(codename="add_user")
name, content_type = old.name, old.content_type
old.delete()
Permission.objects.create(codename="add_user", name=name, content_type=content_type)
"""

GRANTS = """
import json
from django.contrib.admin.models import LogEntry
from accounts.models import User
olga, ana = User.objects.get(username="olga"), User.objects.get(username="ana")
entry = LogEntry.objects.get()
print(json.dumps({
    "olga": sorted(olga.get_user_permissions()),
    "ana": sorted(ana.get_group_permissions()),
    "groups": [group.name for group in ana.groups.all()],
    "log": [entry.content_type.app_label, entry.content_type.model, entry.object_repr],
}))
"""


def test_permissions_and_content_types_are_restored_by_name(club, make_db, tmp_path):
    db, _seeded = club
    path = backup(db, tmp_path / "copias")
    target = make_db("target")
    django_script(target, RENUMBER)
    done = restore(target, path, backup_dir=tmp_path / "seguridad")
    assert done.returncode == 0, done.stderr
    assert json.loads(django_script(target, GRANTS)) == {
        "olga": ["accounts.add_user"],
        "ana": ["scorecards.view_scorecard"],
        "groups": ["Tesorería"],
        "log": ["accounts", "user", "Ben"],
    }


def test_a_missing_file_is_refused(club, tmp_path):
    db, _seeded = club
    done = restore(db, tmp_path / "no-existe.json.gz", backup_dir=tmp_path)
    assert done.returncode == 1
    assert "No se puede leer" in done.stderr


def test_a_restore_that_fails_half_way_leaves_the_club_as_it_was(club, make_db, tmp_path):
    """The last row breaks a CHECK constraint (a checksum that matches: the file is sound,
    the row is not): every row before it was inserted, and all of them go with it."""
    db, _seeded = club
    path = backup(db, tmp_path / "copias")
    target = make_db("target")
    django_script(target, CLUB.replace('"olga"', '"otra"'), PASSWORD)
    before = fingerprint(target)
    bad_seat = {
        "model": "scorecards.seat",
        "pk": 999,
        "fields": {"scorecard": 1, "player": 1, "order": 7, "ones": 7, "yahtzee_bonuses": 0},
    }
    broken = rewritten(path, tmp_path / "rota.json.gz", extra_rows=[bad_seat])
    done = restore(target, broken, "--replace", backup_dir=tmp_path / "seguridad")
    assert done.returncode == 1
    assert "No se ha restaurado nada: la base de datos rechazó una fila" in done.stderr
    assert "Traceback" not in done.stderr
    assert fingerprint(target) == before


def test_a_backup_from_a_newer_release_says_so(club, tmp_path):
    db, _seeded = club
    path = backup(db, tmp_path / "copias")
    newer = rewritten(
        path,
        tmp_path / "nueva.json.gz",
        header=lambda h: h["migrations"].append("scorecards.0099_from_the_future"),
    )
    before = fingerprint(db)
    done = restore(db, newer, "--replace", backup_dir=tmp_path / "seguridad")
    assert done.returncode == 1
    assert "es de una versión más reciente de Dados" in done.stderr
    assert "scorecards.0099_from_the_future" in done.stderr
    assert fingerprint(db) == before


def _before_turn_held(value):
    """A row as a release before scorecards.0014_turn_held wrote it."""
    if value["model"] == "scorecards.scorecard":
        del value["fields"]["turn_held"]
    return value


def test_an_older_release_backup_is_restored_and_migrated_forward(club, make_db, tmp_path):
    db, seeded = club
    path = backup(db, tmp_path / "copias")
    older = rewritten(
        path,
        tmp_path / "vieja.json.gz",
        header=lambda h: h["migrations"].remove("scorecards.0014_turn_held"),
        row=_before_turn_held,
    )
    target = make_db("target")
    done = restore(target, older, backup_dir=tmp_path / "seguridad")
    assert done.returncode == 0, done.stderr
    assert "4 jugadores, 2 partidas, 1 tarjeta en juego" in done.stdout
    assert manage(target, "migrate", "--check").returncode == 0
    assert fingerprint(target) == fingerprint(db)
    guarded = json.loads(django_script(target, STILL_GUARDED, str(seeded["playing"])))
    assert all(guarded.values()), guarded


def test_the_committed_backup_of_an_earlier_release_restores(make_db, tmp_path):
    """tests/data's backup was made by the release that introduced backups; each later
    release restores it, migrating it forward if its schema has moved on."""
    target = make_db("target")
    done = restore(target, OLD_BACKUP, backup_dir=tmp_path / "seguridad")
    assert done.returncode == 0, done.stderr
    assert "4 jugadores, 2 partidas, 1 tarjeta en juego" in done.stdout
    assert manage(target, "migrate", "--check").returncode == 0
    club = fingerprint(target)
    assert club["rows"]["scorecards.change"][0] > 40
    assert club["rows"]["scorecards.roll"][0] >= 13
    playing = django_script(
        target,
        "from scorecards.models import Scorecard; print(Scorecard.objects.in_progress().get().pk)",
    )
    guarded = json.loads(django_script(target, STILL_GUARDED, playing.strip()))
    assert all(guarded.values()), guarded


def test_an_unwritable_folder_is_said_and_leaves_nothing(club, tmp_path):
    db, _seeded = club
    blocker = tmp_path / "un-archivo"
    blocker.write_text("no es una carpeta")
    done = manage(db, "backup", "--to", blocker / "copias")
    assert done.returncode == 1
    assert f"No se puede escribir en {blocker / 'copias'}" in done.stderr
    assert "la copia no se ha hecho" in done.stderr
    assert "Traceback" not in done.stderr


# Writes from another process while backups are taken: the card in play gets a box
# written about every few milliseconds, for as long as the file says.
WRITER = """
import sys, time
from accounts.models import User
from scorecards.models import Seat
from scorecards.services import box_write
olga = User.objects.get(username="olga")
card, seat_id, stop = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
from pathlib import Path
values = [5, 6, 7, 8, 9, 10, 11, 12]
n = 0
while not Path(stop).exists():
    was = Seat.objects.get(pk=seat_id).chance
    box_write(scorecard_id=card, seat_id=seat_id, box="chance", value=values[n % 8], was=was,
              author=olga)
    n += 1
print(n)
"""

# The card in play as its change log tells it, against what its boxes hold.
LOG_MATCHES = """
import json, sys
from scorecards.models import Change, Scorecard, Seat
card = Scorecard.objects.get(pk=int(sys.argv[1]))
boxes, chained = {}, True
for change in Change.objects.filter(scorecard=card).order_by("pk"):
    for seat, box, old, new in change.items:
        chained = chained and boxes.get((seat, box)) == old
        boxes[(seat, box)] = new
held = all(getattr(Seat.objects.get(pk=seat), box) == new for (seat, box), new in boxes.items())
last = Change.objects.filter(scorecard=card).order_by("-pk").first()
print(json.dumps({"chained": chained, "held": held, "version": card.version == last.version,
                  "changes": Change.objects.filter(scorecard=card).count()}))
"""


def test_a_backup_taken_while_a_card_is_written_restores_whole(club, make_db, tmp_path):
    db, seeded = club
    finished_before = fingerprint(db)["finished"]
    stop = tmp_path / "stop"
    env = server_env(db)
    prelude = "import django; django.setup()\n"
    writer = subprocess.Popen(
        [BIN / "python", "-c", prelude + WRITER, str(seeded["playing"]), str(seeded["seats"][1]),
         str(stop)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    paths = []
    try:
        time.sleep(1.0)
        for _n in range(2):
            paths.append(backup(db, tmp_path / "copias"))
    finally:
        stop.touch()
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert int(out.strip()) > 20, "the writer hardly wrote while the backups ran"
    changes = set()
    for n, path in enumerate(paths):
        target = make_db(f"target{n}")
        done = restore(target, path, backup_dir=tmp_path / "seguridad")
        assert done.returncode == 0, done.stderr
        log = json.loads(django_script(target, LOG_MATCHES, str(seeded["playing"])))
        assert log | {"changes": 0} == {
            "chained": True,
            "held": True,
            "version": True,
            "changes": 0,
        }
        changes.add(log["changes"])
        restored = fingerprint(target)
        assert restored["finished"] == finished_before
        guarded = json.loads(django_script(target, STILL_GUARDED, str(seeded["playing"])))
        assert all(guarded.values()), guarded
    # The writes went on between the backups: each caught the card at another moment.
    assert len(changes) > 1


def test_a_full_disk_leaves_no_file_that_looks_like_a_backup(db, tmp_path, monkeypatch):
    import errno

    from safekeeping import archive
    from tests.factories import UserFactory

    for n in range(5):
        UserFactory(username=f"jugador{n}")
    writes = []
    write = gzip.GzipFile.write

    def fill_up(self, data):
        # The disk fills up a few lines into the file.
        writes.append(data)
        if len(writes) > 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(self, data)

    monkeypatch.setattr(gzip.GzipFile, "write", fill_up)
    with pytest.raises(archive.BackupError) as refused:
        archive.write_backup(tmp_path, keep=14)
    assert str(refused.value) == (
        f"No queda espacio en el disco de {tmp_path}: la copia no se ha hecho."
    )
    assert list(tmp_path.iterdir()) == []


# What the club's players read, each as text: «Clasificación», every player's statistics
# (with «Cara a cara»), the host's «Historial» CSV and games' JSON exports, through
# the app's own views; and the numbers behind them, from scorecards.stats.
EXPORTS = """
import hashlib, json, re, sys
from pathlib import Path
from django.test import Client
from accounts.models import User
from scorecards import stats
from scorecards.models import Scorecard

def dumped(value):
    return json.dumps(value, default=str, sort_keys=True)

def page(client, path):
    answer = client.get(path, headers={"host": "127.0.0.1"})
    assert answer.status_code == 200, (path, answer.status_code)
    # What differs on every request: the CSP nonce and the masked CSRF token.
    text = re.sub(r'nonce="[^"]*"', "", answer.content.decode())
    return re.sub(r"[A-Za-z0-9]{64}", "", text)

out = {}
ranked, unranked = stats.ranking()
out["ranking"] = dumped([ranked, unranked])
host = User.objects.get(username="anfitriona")
client = Client()
client.force_login(host)
out["ranking.html"] = page(client, "/clasificacion/")
out["history.csv"] = page(client, "/historial/exportar.csv")
for player in User.objects.order_by("username"):
    chosen = [stats.player_summary(player), stats.head_to_head(player),
              stats.totals_over_time(player), stats.histogram(player)]
    out[f"stats/{player.username}"] = dumped(chosen)
    if player.plays or player.seats.exists():
        out[f"player/{player.username}.html"] = page(client, f"/jugadores/{player.pk}/")
staff = User.objects.get(username="olga")
client.force_login(staff)
# Every tenth game, and the small club's (its log and rolls).
games = Scorecard.objects.order_by("pk").values_list("pk", flat=True)
for pk in [pk for pk in games if pk % 10 == 0] + list(games)[-3:]:
    out[f"game/{pk}.json"] = page(client, f"/tarjetas/{pk}/exportar.json")
folder = Path(sys.argv[1])
for name, text in out.items():
    (folder / name.replace("/", "_")).write_text(text)
print(json.dumps({name: hashlib.sha256(text.encode()).hexdigest() for name, text in out.items()}))
"""


def exports(db, folder: Path) -> dict:
    """EXPORTS's digests; the texts themselves are left in folder, for a failure to show."""
    folder.mkdir()
    return json.loads(django_script(db, EXPORTS, str(folder)).strip().splitlines()[-1])


def first_difference(name: str, one: Path, other: Path) -> str:
    file = name.replace("/", "_")
    lines = [(folder / file).read_text().splitlines() for folder in (one, other)]
    pairs = zip(*lines, strict=False)
    return next((f"{name}: {a!r} != {b!r}" for a, b in pairs if a != b), name)


def same_exports(one: dict, other: dict, folders: tuple[Path, Path]) -> list[str]:
    assert one.keys() == other.keys()
    return [first_difference(name, *folders) for name in one if one[name] != other[name]]


@pytest.mark.skipif(not POSTGRES, reason="runs in the PostgreSQL pass of make test")
def test_a_club_moves_from_sqlite_to_postgresql_and_back_unchanged(make_db, tmp_path):
    """SQLite → PostgreSQL → SQLite with 1,000 finished games (bench.seed's, in bulk), the
    small club's log and rolls, and a card in play: every page and export the same."""
    sqlite = tmp_path / "origen.sqlite3"  # bench.seed migrates it
    env = server_env(sqlite) | {"DJANGO_SETTINGS_MODULE": "dados.settings"}
    seeding = [BIN / "python", "-m", "bench.seed", "--players", "30", "--games", "1000"]
    subprocess.run(seeding, cwd=ROOT, env=env, check=True, capture_output=True, timeout=300)
    seed_club(sqlite)
    club = fingerprint(sqlite)
    # Backed up before the pages are read: reading them logs the readers in.
    to_postgres = backup(sqlite, tmp_path / "copias")
    before = exports(sqlite, tmp_path / "antes")
    assert len(before) > 100

    postgres = make_db("postgres")
    done = restore(postgres, to_postgres, backup_dir=tmp_path / "seguridad")
    assert done.returncode == 0, done.stderr
    assert "34 jugadores, 1002 partidas, 1 tarjeta en juego" in done.stdout
    assert fingerprint(postgres) == club
    back = backup(postgres, tmp_path / "copias")
    on_postgres = exports(postgres, tmp_path / "en-postgres")
    assert same_exports(before, on_postgres, (tmp_path / "antes", tmp_path / "en-postgres")) == []

    sqlite_again = migrated_database(tmp_path / "vuelta.sqlite3")
    done = restore(sqlite_again, back, backup_dir=tmp_path / "seguridad")
    assert done.returncode == 0, done.stderr
    assert fingerprint(sqlite_again) == club
    again = exports(sqlite_again, tmp_path / "vuelta")
    assert same_exports(before, again, (tmp_path / "antes", tmp_path / "vuelta")) == []


def test_a_restore_interrupted_half_way_leaves_the_club_as_it_was(db, settings, tmp_path):
    """Ctrl-C while the rows go in (here, at the third row saved one by one): the
    transaction goes, with the rows before it and the replaced club's deletion."""
    from django.contrib.auth import get_user_model
    from django.core.management import CommandError, call_command
    from django.core.serializers.base import DeserializedObject

    from safekeeping.archive import write_backup
    from tests.factories import UserFactory

    User = get_user_model()

    settings.BACKUP_DIR = tmp_path / "seguridad"
    for name in ("ana", "ben", "carla"):
        UserFactory(username=name)
    path, _summary = write_backup(tmp_path / "copias", keep=None)
    UserFactory(username="dani")  # after the backup: a restore would lose her
    saves = []
    save = DeserializedObject.save

    def interrupted(self, *args, **kwargs):
        saves.append(self.object)
        if len(saves) == 3:
            raise KeyboardInterrupt
        return save(self, *args, **kwargs)

    before = sorted(User.objects.values_list("username", flat=True))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DeserializedObject, "save", interrupted)
        with pytest.raises(CommandError) as refused:
            call_command("restore", str(path), "--replace", stdout=io.StringIO())
    assert str(refused.value) == (
        "Restauración interrumpida: no se ha restaurado nada, la base de datos está como estaba."
    )
    assert len(saves) == 3
    assert sorted(User.objects.values_list("username", flat=True)) == before
    assert len(list((tmp_path / "seguridad").iterdir())) == 1
