"""A club's backup: one file that restores into SQLite or PostgreSQL, checked before use.

The file is gzip'd JSON lines. The first line is the header: what made it, when, on which
database, and the migrations its schema had. Then one line per row, as Django's python
serializer gives it (foreign keys by primary key). The last line is the trailer: the rows
counted per model, the club in three numbers, and the SHA-256 of every line before it.
gzip's own CRC finds most damage, the trailer the rest, and a file cut short has none.

Content types and permissions are not copied (`migrate` makes them, with primary keys of
its own on each database): the header maps the source's keys to their natural keys, and a
restore turns them into the target's. Sessions are not copied: a restore logs everyone out.
The cache is not copied: it is made again on demand.
"""

import errno
import gzip
import hashlib
import json
import os
import re
import zlib
from collections import Counter
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime, time
from pathlib import Path

from django.apps import apps as current_apps
from django.core import serializers
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.core.serializers.base import DeserializedObject
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connections, transaction
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone

FORMAT = "dados-backup"
VERSION = 1
# dados-2026-12-07-051200.json.gz: sorted by name, oldest first; the local time of the club.
NAME_FORMAT = "dados-%Y-%m-%d-%H%M%S"
NAME = re.compile(r"dados-(\d{4}-\d{2}-\d{2}-\d{6})(?:-(\d+))?\.json\.gz")
SUFFIX = ".json.gz"
# Made by `migrate` (with keys of their own on each database), or not worth keeping.
NOT_COPIED = {"contenttypes.contenttype", "auth.permission", "sessions.session"}
ROWS_PER_QUERY = 2000
GZIP_MAGIC = b"\x1f\x8b"


class BackupError(Exception):
    """What went wrong, said to the club's treasurer, in Spanish."""


@dataclass(frozen=True)
class Summary:
    """The club in three numbers, as the commands and the admin say it."""

    players: int
    games: int
    in_play: int

    def __str__(self):
        return ", ".join(
            f"{n} {one if n == 1 else many}"
            for n, one, many in (
                (self.players, "jugador", "jugadores"),
                (self.games, "partida", "partidas"),
                (self.in_play, "tarjeta en juego", "tarjetas en juego"),
            )
        )


@dataclass(frozen=True)
class Contents:
    """A backup file that passed every check: its header and trailer."""

    path: Path
    header: dict
    counts: dict[str, int]
    summary: Summary

    @property
    def migrations(self) -> set[tuple[str, str]]:
        return {tuple(name.split(".", 1)) for name in self.header["migrations"]}

    @property
    def created_at(self) -> datetime:
        return datetime.fromisoformat(self.header["created_at"])


def copied_models(registry=current_apps, *, through=False):
    """The models whose rows a backup holds, in INSTALLED_APPS' order (foreign keys are
    checked at commit, on both databases, so the order of the rows does not matter to
    them); through, also the tables of many-to-many fields, whose rows travel with their
    owners'."""
    return [
        model
        for model in registry.get_models(include_auto_created=through)
        if model._meta.managed
        and not model._meta.proxy
        and model._meta.label_lower not in NOT_COPIED
    ]


def club_summary(using="default") -> Summary:
    from accounts.models import User
    from scorecards.models import Scorecard

    cards = Scorecard.objects.using(using)
    return Summary(
        players=User.objects.using(using).count(),
        games=cards.finalized().count(),
        in_play=cards.in_progress().count(),
    )


def holds_club(using="default") -> bool:
    """Whether the database has players or cards: a restore would lose them."""
    from accounts.models import User
    from scorecards.models import Scorecard

    return User.objects.using(using).exists() or Scorecard.objects.using(using).exists()


def applied_migrations(using="default") -> set[tuple[str, str]]:
    return set(MigrationLoader(connections[using]).applied_migrations)


# Writing.


@contextmanager
def snapshot(using="default"):
    """Read the whole database as it was at one moment, while the app goes on writing.

    PostgreSQL: a REPEATABLE READ transaction. SQLite: a plain read transaction, which in
    WAL mode sees one moment and lets writers go on (Django's atomic() would begin it
    IMMEDIATE, holding every write back until the backup ends). Inside a caller's
    transaction, that one.
    """
    connection = connections[using]
    if connection.in_atomic_block:
        yield
    elif connection.vendor == "postgresql":
        with transaction.atomic(using=using), connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield
    else:
        with connection.cursor() as cursor:
            cursor.execute("BEGIN DEFERRED")
            try:
                yield
            finally:
                cursor.execute("COMMIT")


class _Encoder(DjangoJSONEncoder):
    """Django's, but with every microsecond: its own cuts times to milliseconds, which
    would change the log's times and reorder writes made within one."""

    def default(self, o):
        if isinstance(o, datetime | time):
            return o.isoformat()
        return super().default(o)


class _Lines:
    """JSON lines, each hashed as it is written."""

    def __init__(self, stream):
        self.stream = stream
        self.sha256 = hashlib.sha256()

    def write(self, value) -> None:
        line = json.dumps(value, cls=_Encoder, ensure_ascii=False, separators=(",", ":"))
        data = line.encode() + b"\n"
        self.sha256.update(data)
        self.stream.write(data)


def _natural_keys(using):
    """The source's content types and permissions by primary key, as their natural keys."""
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    types = {ct.pk: [ct.app_label, ct.model] for ct in ContentType.objects.using(using)}
    permissions = {
        p.pk: [p.codename, *types[p.content_type_id]]
        for p in Permission.objects.using(using).only("codename", "content_type")
    }
    return {"contenttypes.contenttype": types, "auth.permission": permissions}


def _write_club(lines: _Lines, using: str) -> tuple[Counter, Summary]:
    connection = connections[using]
    lines.write(
        {
            "format": FORMAT,
            "version": VERSION,
            "created_at": timezone.now().isoformat(),
            "database": connection.vendor,
            "migrations": sorted(f"{app}.{name}" for app, name in applied_migrations(using)),
            "natural_keys": _natural_keys(using),
        }
    )
    counts = Counter()
    for model in copied_models():
        rows = model._base_manager.using(using).order_by("pk")
        many = [field.name for field in model._meta.many_to_many]
        if many:
            rows = rows.prefetch_related(*many)
        chunk = []
        for row in rows.iterator(chunk_size=ROWS_PER_QUERY):
            chunk.append(row)
            if len(chunk) == ROWS_PER_QUERY:
                counts[model._meta.label_lower] += _write_rows(lines, chunk)
                chunk = []
        counts[model._meta.label_lower] += _write_rows(lines, chunk)
    summary = club_summary(using)
    return counts, summary


def _write_rows(lines: _Lines, rows) -> int:
    for row in serializers.serialize("python", rows):
        lines.write(row)
    return len(rows)


def _unique_path(folder: Path) -> Path:
    stem = timezone.localtime().strftime(NAME_FORMAT)
    path, n = folder / f"{stem}{SUFFIX}", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}{SUFFIX}"
    return path


def _disk_message(error: OSError, folder: Path) -> str:
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"No queda espacio en el disco de {folder}: la copia no se ha hecho."
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"No se puede escribir en {folder} (sin permiso): la copia no se ha hecho."
    return f"No se puede escribir en {folder} ({error.strerror or error}): la copia no se ha hecho."


def write_backup(folder: Path, *, keep: int | None, using: str = "default") -> tuple[Path, Summary]:
    """Write the whole club to a new file in folder; keep the newest `keep` backups there.

    The file is written under a hidden name and renamed once complete and on disk, so a
    failure (a full disk, an interruption) never leaves a file that looks like a backup.
    """
    folder = Path(folder)
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        _forget_abandoned(folder)
        path = _unique_path(folder)
        partial = folder / f".{path.name}.partial"
        # Only its owner may read it: it holds every player's password hash.
        with os.fdopen(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as raw:
            try:
                with gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as stream:
                    lines = _Lines(stream)
                    with snapshot(using):
                        counts, summary = _write_club(lines, using)
                    lines.write(
                        {
                            "end": {
                                "counts": dict(sorted(counts.items())),
                                "summary": summary.__dict__,
                                "sha256": lines.sha256.hexdigest(),
                            }
                        }
                    )
                raw.flush()
                os.fsync(raw.fileno())
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
        os.replace(partial, path)
        _sync_folder(folder)
    except OSError as error:
        raise BackupError(_disk_message(error, folder)) from error
    prune(folder, keep)
    return path, summary


# A backup still being written is younger than this; an older partial file is one that a
# killed backup (SIGKILL, a power cut) left behind.
ABANDONED_AFTER = 24 * 3600


def _forget_abandoned(folder: Path) -> None:
    """Delete the partial files of backups killed while writing, so they never pile up."""
    for partial in folder.glob(".dados-*.json.gz.partial"):
        with suppress(OSError):
            if datetime.now().timestamp() - partial.stat().st_mtime > ABANDONED_AFTER:
                partial.unlink()


def _sync_folder(folder: Path) -> None:
    """The rename is on disk too: a crash right after cannot lose the new name."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def backups_in(folder: Path) -> list[Path]:
    """The backups in folder, oldest first (by the time in their names, then the number a
    second one in the same second takes)."""
    try:
        found = [(NAME.fullmatch(path.name), path) for path in Path(folder).iterdir()]
    except OSError:
        return []
    order = sorted((match[1], int(match[2] or 1), path) for match, path in found if match)
    return [path for _time, _n, path in order]


def prune(folder: Path, keep: int | None) -> list[Path]:
    """Delete all but the newest `keep` backups in folder (None: none); return the ones
    deleted."""
    old = backups_in(folder)[:-keep] if keep else []
    for path in old:
        path.unlink(missing_ok=True)
    return old


# Reading.


def _lines(path: Path):
    """The file's lines, decompressed; every way it can fail, as a BackupError."""
    try:
        with open(path, "rb") as raw:
            start = raw.read(2)
            if not start:
                raise BackupError(f"{path} está vacío: no es una copia de Dados.")
            if start != GZIP_MAGIC:
                raise BackupError(f"{path} no es una copia de Dados (no es un archivo gzip).")
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as stream:
                yield from stream
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:
        raise BackupError(
            f"{path} está incompleto o dañado ({error}): no es una copia que se pueda usar."
        ) from None
    except OSError as error:
        raise BackupError(f"No se puede leer {path}: {error.strerror or error}.") from None


def _parse(line: bytes, path: Path):
    try:
        return json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise BackupError(f"{path} está dañado: una línea no se puede leer.") from None


def _rows(path: Path):
    """(header, each row, trailer) checked against the file's checksum as they come;
    the last value yielded is the trailer."""
    sha256 = hashlib.sha256()
    header = None
    previous = None
    for line in _lines(path):
        if previous is not None:
            sha256.update(previous)
            value = _parse(previous, path)
            if header is None:
                header = _check_header(value, path)
                yield header
            else:
                if not isinstance(value, dict) or "model" not in value:
                    raise BackupError(f"{path} está dañado: una fila no es una fila.")
                yield value
        previous = line
    if header is None or previous is None:
        raise BackupError(f"{path} no es una copia de Dados, o está incompleto.")
    trailer = _parse(previous, path)
    end = trailer.get("end") if isinstance(trailer, dict) else None
    if not isinstance(end, dict):
        raise BackupError(f"{path} está incompleto: le falta el final.")
    if end.get("sha256") != sha256.hexdigest():
        raise BackupError(f"{path} está dañado: su suma de comprobación (SHA-256) no coincide.")
    yield end


def _check_header(value, path: Path) -> dict:
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise BackupError(f"{path} no es una copia de Dados.")
    if not isinstance(value.get("version"), int) or value["version"] > VERSION:
        raise BackupError(
            f"{path} es una copia de una versión más reciente de Dados (formato "
            f"{value.get('version')}): actualiza Dados para restaurarla."
        )
    return value


def read_backup(path: Path) -> Contents:
    """Check a whole backup file, changing nothing: a BackupError says what is wrong."""
    path = Path(path)
    counts = Counter()
    header = end = None
    for value in _rows(path):
        if header is None:
            header = value
        elif "model" in value:
            counts[value["model"]] += 1
        else:
            end = value
    if dict(counts) != {k: v for k, v in end.get("counts", {}).items() if v}:
        raise BackupError(f"{path} está dañado: sus filas no son las que dice su final.")
    try:
        summary = Summary(**end["summary"])
    except (KeyError, TypeError):
        raise BackupError(f"{path} está dañado: le falta el resumen.") from None
    return Contents(path=path, header=header, counts=dict(counts), summary=summary)


def rows_of(contents: Contents):
    """The rows of a file read_backup passed, checked again as they are read (the file
    may have changed since): a BackupError at the end if it did."""
    for value in _rows(contents.path):
        if "model" in value:
            yield value


# Restoring rows.


class Loader:
    """Builds a backup's rows into the models of a registry (today's, or the schema's as
    the backup's migrations left it) and inserts them as they are, with their keys."""

    def __init__(self, registry, natural_keys: dict, using: str):
        self.registry = registry
        self.using = using
        self.models = {model._meta.label_lower: model for model in copied_models(registry)}
        self.keys = {
            "contenttypes.contenttype": self._target_keys(
                "contenttypes.contenttype", natural_keys.get("contenttypes.contenttype", {})
            ),
            "auth.permission": self._target_keys(
                "auth.permission", natural_keys.get("auth.permission", {})
            ),
        }

    def _target_keys(self, label, source: dict) -> dict[str, object]:
        """Source primary key → the target's, for content types and permissions (None:
        the target has none such)."""
        try:
            model = self.registry.get_model(label)
        except LookupError:
            return {}
        if label == "auth.permission":
            natural = ("codename", "content_type__app_label", "content_type__model")
        else:
            natural = ("app_label", "model")
        rows = model._base_manager.using(self.using).values_list(*natural, "pk")
        target = {tuple(key): pk for *key, pk in rows}
        return {str(pk): target.get(tuple(natural)) for pk, natural in source.items()}

    def check(self, row: dict, path: Path) -> None:
        """Refuse a row that names a model or field the schema does not have, or holds a
        value its field cannot read."""
        model = self.models.get(row.get("model"))
        fields = row.get("fields")
        if model is None or not isinstance(fields, dict) or "pk" not in row:
            raise BackupError(
                f"{path} tiene filas que esta base de datos no sabe guardar ({row.get('model')!r})."
            )
        for name in fields:
            try:
                model._meta.get_field(name)
            except FieldDoesNotExist:
                raise BackupError(
                    f"{path} tiene un campo que esta base de datos no conoce: "
                    f"{row['model']}.{name}."
                ) from None
        try:
            self.build(row)
        except (ValidationError, ValueError, TypeError, AttributeError) as error:
            raise BackupError(
                f"{path} tiene una fila que no se puede leer ({row['model']} {row['pk']}: {error})."
            ) from None

    def _key(self, related_model, value):
        keys = self.keys.get(related_model._meta.label_lower)
        if keys is None or value is None:
            return value
        return keys.get(str(value))

    def build(self, row: dict) -> DeserializedObject:
        model = self.models[row["model"]]
        values = {model._meta.pk.attname: model._meta.pk.to_python(row["pk"])}
        many = {}
        for name, value in row["fields"].items():
            field = model._meta.get_field(name)
            if field.many_to_many:
                targets = (self._key(field.related_model, v) for v in value)
                many[name] = [v for v in targets if v is not None]
            elif field.is_relation:
                values[field.attname] = self._key(field.related_model, value)
            else:
                values[field.attname] = field.to_python(value)
        return DeserializedObject(model(**values), many)


# Restoring a club.


@dataclass(frozen=True)
class Plan:
    """How a checked backup goes into this database: as it is, or into the schema its
    migrations describe, migrated forward afterwards (an older release's backup)."""

    older: bool
    # Per app whose schema has moved on, where `migrate` takes it back to (older only).
    targets: tuple[tuple[str, str], ...] = ()
    # The backup's schema: the last migration of each of its apps (older only).
    leaves: tuple[tuple[str, str], ...] = ()

    def registry(self, using: str = "default"):
        """The models the backup's rows go into: today's, or its schema's."""
        if not self.older:
            return current_apps
        return MigrationLoader(connections[using]).project_state(list(self.leaves)).apps


def plan_restore(contents: Contents, using: str = "default") -> Plan:
    """Refuse a backup this code cannot restore into this database, changing nothing."""
    loader = MigrationLoader(connections[using])
    known = set(loader.disk_migrations)
    theirs = contents.migrations
    unknown = sorted(f"{app}.{name}" for app, name in theirs - known)
    if unknown:
        raise BackupError(
            f"{contents.path} es de una versión más reciente de Dados: su base de datos tiene "
            f"migraciones que este código no conoce ({', '.join(unknown[:5])}). Actualiza "
            "Dados y vuelve a intentarlo."
        )
    ours = set(loader.applied_migrations)
    if not known <= ours:
        raise BackupError("Esta base de datos no está al día: ejecuta antes «manage.py migrate».")
    if theirs == ours:
        return Plan(older=False)
    if not theirs <= ours:
        raise BackupError(f"{contents.path} no corresponde a ninguna versión de Dados.")
    targets, leaves = [], []
    for app in sorted({app for app, _name in known}):
        names = [node for node in theirs if node[0] == app]
        if not names:
            targets.append((app, "zero"))
            continue
        leaf = max(names, key=lambda node: len(loader.graph.forwards_plan(node)))
        leaves.append(leaf)
        if leaf not in loader.graph.leaf_nodes(app):
            targets.append(leaf)
    return Plan(older=True, targets=tuple(targets), leaves=tuple(leaves))


def check_rows(contents: Contents, registry, using: str = "default") -> None:
    """Refuse, before anything changes, a backup with rows the schema cannot hold or
    values its fields cannot read."""
    loader = Loader(registry, contents.header.get("natural_keys", {}), using)
    for row in rows_of(contents):
        loader.check(row, contents.path)


def _execute(using, statements) -> None:
    with connections[using].cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


def clear_club(using: str = "default") -> None:
    """Delete every copied row and every session, in the caller's transaction.

    A finished game's rows refuse to go: the triggers that keep it read-only are dropped
    for the deletes and made again before the transaction ends.
    """
    from scorecards import triggers

    connection = connections[using]
    quote = connection.ops.quote_name
    _execute(using, triggers.CURRENT.drop_sql[connection.vendor])
    tables = [model._meta.db_table for model in copied_models(through=True)]
    _execute(using, [f"DELETE FROM {quote(table)}" for table in [*reversed(tables)]])
    _execute(using, triggers.CURRENT.create_sql[connection.vendor])


def _finalize(registry, finalized: dict, using: str) -> None:
    """Put back the finished games' end times, once their rows are in: the triggers refuse
    a finished game's new rows, so its card comes in as though still in play."""
    cards = registry.get_model("scorecards", "Scorecard")._base_manager.using(using)
    for pk, moment in finalized.items():
        cards.filter(pk=pk).update(finalized_at=moment)


def _one_by_one(model) -> bool:
    """Whether a model's rows must go in one at a time, by a raw save: bulk_create would
    put the time of the restore in an auto_now(_add) field (a change's time, a card's),
    and sets no many-to-many field."""
    return bool(model._meta.many_to_many) or any(
        getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
        for field in model._meta.concrete_fields
    )


def load_club(contents: Contents, registry, using: str = "default") -> Counter:
    """Insert every row of the backup (in the caller's transaction); their counts."""
    from django.core.management.color import no_style

    loader = Loader(registry, contents.header.get("natural_keys", {}), using)
    finalized = {}
    counts = Counter()
    batch, batch_model = [], None

    def flush():
        if batch:
            batch_model._base_manager.using(using).bulk_create(batch, batch_size=500)
            batch.clear()

    for row in rows_of(contents):
        loader.check(row, contents.path)
        built = loader.build(row)
        model = type(built.object)
        if row["model"] == "scorecards.scorecard" and built.object.finalized_at is not None:
            finalized[built.object.pk] = built.object.finalized_at
            built.object.finalized_at = None
        if model is not batch_model or len(batch) >= ROWS_PER_QUERY:
            flush()
            batch_model = model
        if _one_by_one(model):
            built.save(using=using, force_insert=True)
        else:
            batch.append(built.object)
        counts[row["model"]] += 1
    flush()
    _finalize(registry, finalized, using)
    connection = connections[using]
    models = copied_models(registry, through=True)
    _execute(using, connection.ops.sequence_reset_sql(no_style(), models))
    return counts


def count_rows(registry, labels, using: str = "default") -> dict[str, int]:
    return {label: registry.get_model(label)._base_manager.using(using).count() for label in labels}
