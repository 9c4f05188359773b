"""Writes that span several models: each one is a single transaction with its change log."""

import functools
import json
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connections, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from dados import prepared
from scorecards import rules
from scorecards.labels import BOX_LABELS
from scorecards.models import (
    BONUS,
    MAX_BONUSES,
    Change,
    FinalizedError,
    Scorecard,
    Seat,
    StatsVersion,
    box_label,
    with_seats_sql,
)
from scorecards.rules import Category

MAX_PLAYERS = 10
BOXES = frozenset(c.value for c in Category) | {BONUS}


class Refused(Exception):
    """A write the app will not make; the message is for the person at the table."""

    def __init__(self, message, status=400, problems=None, access=False):
        super().__init__(message)
        self.message = message
        self.status = status
        # Refused because of who asks (404/403): answered without showing the card.
        self.access = access
        # For a refused finalize: [(seat, [reason, ...]), ...]
        self.problems = problems or []


def allowed_values(box: str) -> list[int]:
    if box == BONUS:
        return list(range(MAX_BONUSES + 1))
    return sorted(rules.allowed_scores(box))


def parse_value(raw) -> int | None:
    """'' means «Sin anotar»; anything else must be a plain non-negative integer."""
    if raw is None or raw == "":
        return None
    text = str(raw).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 4:
        raise Refused(_("«%(value)s» no es una puntuación.") % {"value": str(raw)[:20]})
    return int(text)


def _locked(scorecard_id, editor=None) -> Scorecard:
    """Lock the card and its seats for this transaction, loaded with seat_list."""
    return _checked(Scorecard.objects.with_seats(scorecard_id, lock=True), editor)


def _checked(scorecard, editor=None) -> Scorecard:
    """Refuse a card that is missing or finalized or, with an editor, not theirs.

    A card they may not see does not exist (404), one they may only see is not theirs
    to change (403).
    """
    if scorecard is None or (
        editor is not None and not scorecard.is_seen_by(editor, scorecard.seat_list)
    ):
        raise Refused(_("Esa tarjeta no existe."), status=404, access=True)
    if scorecard.is_finalized:
        raise Refused(str(FinalizedError.message), status=409)
    if editor is not None and not scorecard.can_edit(editor):
        raise Refused(_("Solo quien organiza puede cambiar esta tarjeta."), status=403, access=True)
    return scorecard


def _written(scorecard_id, author, kind, items_of) -> Scorecard:
    """Check and write one change: the path of a box write and of an extra Yahtzee.

    items_of(scorecard) checks the write against a card loaded for this author and
    returns its [(seat, box, old, new), ...] (empty when there is nothing to write), or
    raises Refused. The card is read without a lock and written on the condition that
    it is still at the version read: every change bumps the version, so then what was
    checked still holds. Only if another write came in between is it read again,
    locked, and checked again. This keeps the write lock short: on PostgreSQL the
    conditional write is a single statement, its own transaction.
    """
    scorecard = _checked(Scorecard.objects.with_seats(scorecard_id), author)
    items = items_of(scorecard)
    if not items or _record_unless_changed(scorecard, author, kind, items):
        return scorecard
    with transaction.atomic():
        scorecard = _locked(scorecard_id, author)
        if items := items_of(scorecard):
            _record(scorecard, author, kind, items)
        return scorecard


def _seat(scorecard, seat_id) -> Seat:
    seat = scorecard.loaded_seat(seat_id)
    if seat is None:
        raise Refused(_("Ese jugador no está en esta tarjeta."), status=404)
    return seat


@dataclass(frozen=True)
class Recorded:
    """A change as written: the write's answer shows it without reading it back."""

    change_id: int
    kind: str
    created_at: datetime
    author: object
    items: list  # [(seat, box, old, new), ...]


def _record(scorecard, author, kind, items, undoes=None) -> None:
    """Write a change to a card locked by _locked, in the caller's transaction."""
    if not _record_unless_changed(scorecard, author, kind, items, undoes):
        raise RuntimeError(f"card {scorecard.pk} changed while locked")


def _record_unless_changed(scorecard, author, kind, items, undoes=None) -> bool:
    """Write the changed boxes, their change log entry and the card's new version, unless
    the card is no longer at scorecard.version (or finalized): then write nothing.

    Plain SQL: this is every write's path, and the same statements through the ORM cost
    four times as long (bench/RESULTS.md). One transaction (the caller's, if any); on
    PostgreSQL one statement. Leaves the change in scorecard.recorded.
    """
    connection = connections[Scorecard.objects.db]
    seats = {}
    for seat, box, _old, new in items:
        if box not in BOXES:  # column names go into the SQL: only the card's own
            raise ValueError(box)
        seats.setdefault(seat.pk, {})[box] = new
    now = timezone.now()
    change = {
        "card": scorecard.pk,
        "version": scorecard.version,
        "author": author.pk,
        "created_at": connection.ops.adapt_datetimefield_value(now),
        "kind": Change.Kind(kind).value,  # a plain str: psycopg writes an Enum by its name
        "undoes": undoes.pk if undoes else None,
        "items": [(seat.pk, box, old, new) for seat, box, old, new in items],
    }
    if connection.vendor == "postgresql":
        change_id = _write_in_one_statement(connection, seats, change)
    else:
        with transaction.atomic(using=connection.alias):
            change_id = _write_in_statements(connection, seats, change)
    if change_id is None:
        return False
    scorecard.version += 1
    scorecard.recorded = Recorded(change_id, change["kind"], now, author, list(items))
    return True


def _seat_updates(connection, seats) -> list[tuple[str, list]]:
    quote = connection.ops.quote_name
    return [
        (", ".join(f"{quote(box)} = %s" for box in boxes), [*boxes.values(), seat_pk])
        for seat_pk, boxes in seats.items()
    ]


def _write_in_statements(connection, seats, change) -> int | None:
    cards, changes = Scorecard._meta.db_table, Change._meta.db_table
    with connection.cursor() as cursor:
        prepared.execute(
            cursor,
            f"UPDATE {cards} SET version = %s"
            " WHERE id = %s AND version = %s AND finalized_at IS NULL",
            [change["version"] + 1, change["card"], change["version"]],
        )
        if cursor.rowcount != 1:
            return None
        for assignments, params in _seat_updates(connection, seats):
            prepared.execute(
                cursor, f"UPDATE {Seat._meta.db_table} SET {assignments} WHERE id = %s", params
            )
        prepared.execute(
            cursor,
            f"INSERT INTO {changes} (scorecard_id, author_id, created_at, kind, undoes_id, items)"
            " VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
            [
                *(change[key] for key in ("card", "author", "created_at", "kind", "undoes")),
                _items_json(change["items"]),
            ],
        )
        return cursor.fetchone()[0]


def _items_json(items) -> str:
    """Change.items as the database stores it."""
    return json.dumps(items, separators=(",", ":"))


def _write_in_one_statement(connection, seats, change) -> int | None:
    """The same writes as _write_in_statements, as one data-modifying WITH: one round trip.

    The card's UPDATE is the condition: when another transaction changed the card first,
    PostgreSQL waits for it, finds the version changed, and every other part of the
    statement writes nothing, because each one needs a row from the card's part.
    """
    cards = Scorecard._meta.db_table
    condition = (
        f"card AS (UPDATE {cards} SET version = %s"
        " WHERE id = %s AND version = %s AND finalized_at IS NULL RETURNING id)"
    )
    writes, params = _change_writes(connection, seats, change)
    params = [change["version"] + 1, change["card"], change["version"], *params]
    with connection.cursor() as cursor:
        prepared.execute(cursor, f"WITH {condition}, {writes} SELECT id FROM change", params)
        row = cursor.fetchone()
    return row[0] if row else None


def _change_writes(connection, seats, change) -> tuple[str, list]:
    """The WITH parts that write a change's seats and the change (its items in its row),
    after a part named `card` that returns the card's id only if the change is to be
    written; their parameters."""
    updates = _seat_updates(connection, seats)
    params = [v for _assignments, seat_params in updates for v in seat_params]
    params += [change[key] for key in ("author", "created_at", "kind", "undoes")]
    params.append(_items_json(change["items"]))
    sql = _change_writes_sql(tuple(a for a, _params in updates))
    return sql, params


@functools.lru_cache(maxsize=256)
def _change_writes_sql(seat_assignments) -> str:
    seats, changes = Seat._meta.db_table, Change._meta.db_table
    parts = [
        f"seat{n} AS (UPDATE {seats} SET {assignments}"
        " WHERE id = %s AND EXISTS (SELECT 1 FROM card) RETURNING id)"
        for n, assignments in enumerate(seat_assignments)
    ]
    parts.append(
        f"change AS (INSERT INTO {changes}"
        " (scorecard_id, author_id, created_at, kind, undoes_id, items)"
        " SELECT id, %s::bigint, %s::timestamptz, %s::varchar, %s::bigint, %s::jsonb"
        " FROM card RETURNING id)"
    )
    return ", ".join(parts)


def _set(seat, box, new):
    old = getattr(seat, box)
    setattr(seat, box, new)
    return (seat, box, old, new)


def scorecard_create(*, organizer, players, token=None) -> Scorecard:
    """Create a card with the players in turn order.

    With the order page's one-time token, only once: sent again (a double tap, a
    browser resending the form, two requests at once), it answers with the card the
    token already made, if that card is still in progress with the same players in the
    same order. Otherwise (the page came back from the browser's history after that game
    ended) it is a new card, without the token.
    """
    players = list(players)
    if not 1 <= len(players) <= MAX_PLAYERS:
        raise Refused(_("Elige entre 1 y %(max)s jugadores.") % {"max": MAX_PLAYERS})
    if len({p.pk for p in players}) != len(players):
        raise Refused(_("Un jugador solo puede aparecer una vez."))
    if any(not p.is_active for p in players):
        raise Refused(_("Solo se pueden elegir jugadores activos."))
    if token is not None and (made := _created_with(organizer, token)):
        if _same_game(made, players):
            return made
        token = None
    try:
        with transaction.atomic():
            scorecard = Scorecard.objects.create(organizer=organizer, creation_token=token)
            Seat.objects.bulk_create(
                Seat(scorecard=scorecard, player=p, order=i) for i, p in enumerate(players)
            )
    except IntegrityError:
        # The same token's other request created it meanwhile (scorecard_created_once).
        if token is None or not (made := _created_with(organizer, token)):
            raise
        if _same_game(made, players):
            return made
        return scorecard_create(organizer=organizer, players=players)
    return scorecard


def _created_with(organizer, token) -> Scorecard | None:
    return Scorecard.objects.filter(organizer=organizer, creation_token=token).first()


def _same_game(scorecard, players) -> bool:
    """Whether scorecard is still in progress with these players in this order."""
    seated = scorecard.seats.order_by("order").values_list("player_id", flat=True)
    return not scorecard.is_finalized and list(seated) == [p.pk for p in players]


def box_write(*, scorecard_id, seat_id, box, value, was, author) -> Scorecard:
    """Write one box (or the bonus count) if it still holds what the writer saw."""

    def items_of(scorecard):
        # Who may write comes first (_written): a stranger learns nothing from how the
        # data is wrong.
        new, seen = _box_values(box, value, was)
        seat = _seat(scorecard, seat_id)
        current = getattr(seat, box)
        if current == new:
            # Already there (a retried request whose answer was lost): nothing to do.
            return []
        if current != seen:
            raise Refused(
                _(
                    "%(player)s, %(box)s cambió mientras tanto (ahora: %(now)s). "
                    "Revisa la tarjeta y vuelve a intentarlo."
                )
                % {
                    "player": seat.player.name,
                    "box": box_label(box),
                    "now": _("sin anotar") if current is None else current,
                },
                status=409,
            )
        return [_set(seat, box, new)]

    written = _box_written_in_one_statement(scorecard_id, seat_id, box, value, was, author)
    if written is not None:
        return written
    return _written(scorecard_id, author, Change.Kind.BOX, items_of)


def _box_values(box, value, was) -> tuple[int | None, int | None]:
    """The value to write and the one the writer saw, or Refused: the box or the value
    is not one of the card's."""
    if box not in BOXES:
        raise Refused(_("Esa casilla no existe."), status=404)
    new = (parse_value(value) or 0) if box == BONUS else parse_value(value)
    seen = parse_value(was)
    if new is not None and new not in allowed_values(box):
        raise Refused(
            _("%(box)s: %(value)s no es una puntuación posible.")
            % {"box": box_label(box), "value": new}
        )
    return new, seen


_CATEGORY_BOXES = BOXES - {BONUS}


def _box_written_in_one_statement(scorecard_id, seat_id, box, value, was, author):
    """On PostgreSQL, the usual box write (a score into an empty box, or a correction)
    read, checked and written by one statement; None when it does not apply.

    The statement writes only if what items_of would check holds in the card as it
    reads it: the author organizes the card (or is staff), the card is in progress, the
    seat is in it, the box holds what the writer saw and not already the new value; the
    value itself is checked here first. Its write is conditional on the version read, as
    in _written, and it answers with the card as read, which the write changed only in
    that box. Anything else (a refusal and its message, nothing to change, another write
    came first, SQLite) is _written's: None here means nothing was written.
    """
    connection = connections[Scorecard.objects.db]
    if connection.vendor != "postgresql" or box not in _CATEGORY_BOXES:
        return None
    if not all(isinstance(i, int) and 0 < i < 2**63 for i in (scorecard_id, seat_id)):
        return None
    try:
        new, seen = _box_values(box, value, was)
    except Refused:
        return None
    now = timezone.now()
    change = {
        "author": author.pk,
        "created_at": connection.ops.adapt_datetimefield_value(now),
        "kind": Change.Kind.BOX.value,
        "undoes": None,
        "items": [(seat_id, box, seen, new)],
    }
    writes, params = _change_writes(connection, {seat_id: {box: new}}, change)
    params = [scorecard_id, seat_id, author.pk, author.is_staff, seen, new, *params, scorecard_id]
    condition = _box_write_condition(connection.ops.quote_name(box))
    # Inside a request, the statement opens its transaction and its COMMIT is answered
    # while the answer is built (dados.postgresql).
    later = hasattr(connection, "commit_later") and connection.commits_later()
    with connection.cursor() as cursor:
        sql = f"WITH {condition}, {writes} {_read_back()}"
        prepared.execute(cursor, sql, params, begin=later)
        try:
            rows = cursor.fetchall()
        except BaseException:
            if later:
                connection.rollback_own()
            raise
    if later:
        connection.commit_later()
    if not rows or rows[0][0] is None:
        return None
    scorecard = Scorecard.objects.from_rows([row[1:] for row in rows])
    seat = scorecard.loaded_seat(seat_id)
    items = [_set(seat, box, new)]
    scorecard.version += 1
    scorecard.recorded = Recorded(rows[0][0], change["kind"], now, author, items)
    return scorecard


@functools.cache
def _box_write_condition(column) -> str:
    """The WITH parts that read the card and name it `card` if the box write holds."""
    cards, seats = Scorecard._meta.db_table, Seat._meta.db_table
    return (
        f"target AS (SELECT c.id, c.version FROM {cards} c"
        f" JOIN {seats} s ON s.scorecard_id = c.id"
        " WHERE c.id = %s AND s.id = %s AND c.finalized_at IS NULL"
        " AND (c.organizer_id = %s OR %s)"
        f" AND s.{column} IS NOT DISTINCT FROM %s::integer"
        f" AND s.{column} IS DISTINCT FROM %s::integer),"
        # The condition on the version, as _write_in_one_statement's; the seat's own
        # write has none: every change to a card bumps its version.
        f" card AS (UPDATE {cards} c SET version = target.version + 1 FROM target"
        " WHERE c.id = target.id AND c.version = target.version AND c.finalized_at IS NULL"
        " RETURNING c.id)"
    )


@functools.cache
def _read_back() -> str:
    """The card as the statement read it, before its own write, and the change's id."""
    return with_seats_sql()[0].replace("SELECT ", "SELECT (SELECT id FROM change), ", 1)


def joker_write(*, scorecard_id, seat_id, face, box, author) -> Scorecard:
    """An extra five of a kind: the joker box and, with 50 in Yahtzee, the +100 bonus."""
    # One plain digit from 1 to 6: int() would also take "٣" or " 3".
    text = "" if face is None else str(face)
    try:
        category = Category(box)
    except (TypeError, ValueError):
        raise Refused(_("Elige la cara de los dados y una casilla.")) from None
    if not (len(text) == 1 and text in "123456"):
        raise Refused(_("Elige la cara de los dados y una casilla."))
    face = int(text)

    def items_of(scorecard):
        seat = _seat(scorecard, seat_id)
        if seat.yahtzee is None:
            raise Refused(
                _("Anota primero la casilla Yahtzee: el comodín solo vale con ella utilizada."),
                status=409,
            )
        if category not in rules.joker_boxes(face, seat.scores):
            raise Refused(
                _("El orden del comodín no permite anotar en %(box)s.")
                % {"box": BOX_LABELS[category]},
                status=409,
            )
        if seat.yahtzee == 50 and seat.yahtzee_bonuses >= MAX_BONUSES:
            raise Refused(_("No puede haber más de 12 bonus de Yahtzee."), status=409)
        items = [_set(seat, category.value, rules.joker_score(face, category))]
        if seat.yahtzee == 50:
            items.append(_set(seat, BONUS, seat.yahtzee_bonuses + 1))
        return items

    return _written(scorecard_id, author, Change.Kind.JOKER, items_of)


def change_undo(*, scorecard_id, author, version=None) -> Scorecard:
    """Undo the latest change not yet undone, restoring every value it wrote.

    version is the card version the person saw: if the card changed since (another
    device wrote, or this is a replayed request), nothing is undone.
    """
    seen = parse_value(version)
    with transaction.atomic():
        scorecard = _locked(scorecard_id, author)
        if seen is not None and seen != scorecard.version:
            raise Refused(
                _("La tarjeta ha cambiado desde que la viste: revisa antes de deshacer."),
                status=409,
            )
        target = (
            scorecard.changes.exclude(kind=Change.Kind.UNDO)
            .filter(undone_by__isnull=True)
            .order_by("-pk")
            .first()
        )
        if target is None:
            raise Refused(_("No hay nada que deshacer."), status=409)
        seats = {seat.pk: seat for seat in scorecard.seat_list}
        items = []
        for seat_id, box, old, new in target.items:
            seat = seats[seat_id]
            if getattr(seat, box) != new:
                raise Refused(_("La tarjeta cambió después: no se puede deshacer."), status=409)
            items.append(_set(seat, box, old))
        _record(scorecard, author, Change.Kind.UNDO, items, undoes=target)
        return scorecard


def scorecard_finalize(*, scorecard_id) -> Scorecard:
    """Store totals and positions and close the card for ever, or refuse with its problems."""
    with transaction.atomic():
        scorecard = _locked(scorecard_id)
        seats = scorecard.seat_list
        problems = [(seat, problems) for seat in seats if (problems := seat.problems)]
        if problems:
            raise Refused(_("Aún no se puede finalizar."), status=409, problems=problems)
        totals = [seat.totals.total for seat in seats]
        for seat, total, place in zip(seats, totals, rules.positions(totals), strict=True):
            seat.total, seat.place = total, place
        Seat.objects.bulk_update(seats, ["total", "place"])
        scorecard.finalized_at = timezone.now()
        scorecard.version += 1
        scorecard.save(update_fields=["finalized_at", "version"])
        StatsVersion.bump()
    return scorecard


def scorecard_discard(*, scorecard_id) -> None:
    with transaction.atomic():
        scorecard = _locked(scorecard_id)
        try:
            scorecard.delete()
        except IntegrityError:
            raise Refused(str(FinalizedError.message), status=409) from None
