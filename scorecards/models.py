import datetime
import functools
import itertools
import json
import operator

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections, models
from django.db.models import Q, signals
from django.db.models.base import ModelState
from django.utils import timezone, translation
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from dados import prepared
from scorecards import rules
from scorecards.labels import BOX_LABELS, box_name, problem_text
from scorecards.rules import Category

# The bonus count line is edited like a box; it is not a rules.Category.
BONUS = "yahtzee_bonuses"
MAX_BONUSES = 12


def box_label(box: str) -> str:
    """A box's name (or the bonus count line's) in the active language."""
    return gettext("Bonus Yahtzee") if box == BONUS else box_name(Category(box))


class FinalizedError(Exception):
    """A finalized scorecard was about to change."""

    message = _("Esta tarjeta ya está finalizada y no puede cambiar.")


class ScorecardQuerySet(models.QuerySet):
    def mine(self, user):
        """Cards a user organizes or plays in."""
        # EXISTS rather than a join: no duplicate rows, so no DISTINCT to sort them away.
        plays = Seat.objects.filter(scorecard=models.OuterRef("pk"), player=user)
        return self.filter(Q(organizer=user) | models.Exists(plays))

    def visible_to(self, user):
        """Cards a user may see: their own as organizer or player; all of them for staff."""
        return self if user.is_staff else self.mine(user)

    def live_version(self, pk, user) -> int | None:
        """The version of a card this user may see, else None: one indexed query.

        Live polling asks this every few seconds from every phone at the table, so it
        is plain SQL rather than a queryset built anew on each poll.
        """
        if not 0 < pk < 2**63:  # beyond any id; the database would refuse the number
            return None
        sql = (
            "SELECT version FROM scorecards_scorecard s WHERE s.id = %s AND (%s"
            " OR s.organizer_id = %s OR EXISTS (SELECT 1 FROM scorecards_seat t"
            " WHERE t.scorecard_id = s.id AND t.player_id = %s))"
        )
        with connections[self.db].cursor() as cursor:
            prepared.execute(cursor, sql, [pk, user.is_staff, user.pk, user.pk])
            row = cursor.fetchone()
        return row[0] if row else None

    def version_of(self, pk) -> int | None:
        """A card's version, else None: whoever asks has already been shown the card
        (sheet.still_shown)."""
        if not 0 < pk < 2**63:  # beyond any id; the database would refuse the number
            return None
        with connections[self.db].cursor() as cursor:
            prepared.execute(cursor, "SELECT version FROM scorecards_scorecard WHERE id = %s", [pk])
            row = cursor.fetchone()
        return row[0] if row else None

    def with_seats(self, pk, *, lock=False):
        """The card with its organizer, its seats in turn order and their players, or None.

        The card page, every refresh of a live card and every write need all of it. It is
        one plain query because it is the app's hottest read: the same through the ORM
        (a card, then its seats with their players) cost 1.2 ms on SQLite, this 0.1 ms.
        With lock, the card and its seats stay locked until the transaction ends.
        """
        if not 0 < pk < 2**63:  # beyond any id; the database would refuse the number
            return None
        connection = connections[self.db]
        sql = with_seats_sql()[0]
        if lock and connection.features.has_select_for_update_of:
            sql += " FOR UPDATE OF c, s"
        with connection.cursor() as cursor:
            prepared.execute(cursor, sql, [pk])
            rows = cursor.fetchall()
        return self.from_rows(rows)

    def from_rows(self, rows):
        """The card built from the rows of with_seats_sql() (None if there are none)."""
        if not rows:
            return None
        connection = connections[self.db]
        _sql, card_fields, seat_fields, user_fields = with_seats_sql()
        User = get_user_model()
        # Column groups in the order of the SELECT: card, organizer, seat, player.
        ends = list(itertools.accumulate(map(len, (card_fields, user_fields, seat_fields))))
        first = rows[0]
        card_values = [as_aware(connection, v) for v in first[: ends[0]]]
        user = _builder(User, self.db, user_fields)
        scorecard = _builder(Scorecard, self.db, card_fields)(card_values)
        organizer = user(first[ends[0] : ends[1]])
        scorecard._state.fields_cache["organizer"] = organizer
        scorecard.names_version = first[-1] or 0
        scorecard.seat_list = []
        seat_of = _builder(Seat, self.db, seat_fields)
        for row in rows:
            seat = seat_of(row[ends[1] : ends[2]])
            seat._state.fields_cache["scorecard"] = scorecard
            player = user(row[ends[2] : -1])
            seat._state.fields_cache["player"] = player
            scorecard.seat_list.append(seat)
        return scorecard

    def in_progress(self):
        return self.filter(finalized_at__isnull=True)

    def in_progress_of(self, user, limit) -> tuple[tuple[int, datetime.datetime, tuple], ...]:
        """(id, created, players' names in turn order) of the newest cards in progress that
        user organizes or plays in; tuples all the way, so that the links built from them
        can be cached by them.

        Plain SQL: «Historial» asks on every visit, and building this query through the
        ORM cost more than running it. Each card's names come as one value, a list from
        PostgreSQL's array_agg, JSON text from SQLite's json_group_array: 20 rows rather
        than one per seat, which took twice as long on SQLite (bench/RESULTS.md).
        """
        connection = connections[self.db]
        cards, seats = Scorecard._meta.db_table, Seat._meta.db_table
        users = get_user_model()._meta.db_table
        name = "COALESCE(NULLIF(p.display_name, ''), p.username)"  # User.name
        if connection.vendor == "postgresql":
            names = f'array_agg({name} ORDER BY s."order")'
            players = f"SELECT {names} FROM {seats} s JOIN {users} p ON p.id = s.player_id"
            players += " WHERE s.scorecard_id = c.id"
        else:
            # SQLite 3.40 has no ORDER BY inside an aggregate: json_group_array takes the
            # rows in the order of the subquery, which is not flattened into it.
            players = (
                f"SELECT json_group_array(name) FROM (SELECT {name} AS name FROM {seats} s"
                f" JOIN {users} p ON p.id = s.player_id WHERE s.scorecard_id = c.id"
                ' ORDER BY s."order")'
            )
        sql = (
            f"SELECT c.id, c.created_at, ({players}) FROM {cards} c"
            " WHERE c.finalized_at IS NULL"
            f" AND (c.organizer_id = %s OR EXISTS (SELECT 1 FROM {seats} s"
            " WHERE s.scorecard_id = c.id AND s.player_id = %s))"
            " ORDER BY c.created_at DESC, c.id DESC LIMIT %s"
        )
        with connection.cursor() as cursor:
            prepared.execute(cursor, sql, [user.pk, user.pk, limit])
            rows = cursor.fetchall()
        return tuple(
            (
                pk,
                as_aware(connection, created),
                tuple(json.loads(names) if isinstance(names, str) else names or ()),
            )
            for pk, created, names in rows
        )

    def finalized(self):
        return self.filter(finalized_at__isnull=False)


class Scorecard(models.Model):
    """One game at a table, entered by its organizer."""

    PRESENCIAL = "presencial"

    organizer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="organized_scorecards",
        verbose_name=_("organizador"),
    )
    created_at = models.DateTimeField(_("creada"), auto_now_add=True)
    finalized_at = models.DateTimeField(_("finalizada"), null=True, blank=True)
    mode = models.CharField(_("modalidad"), max_length=20, default=PRESENCIAL, editable=False)
    # Bumped by every write, so a stale view and a live poll can both tell.
    version = models.PositiveIntegerField(_("versión"), default=0, editable=False)
    # The order page's one-time token: a second tap on «Crear tarjeta» (or a browser
    # sending the form again) finds this card instead of making another.
    creation_token = models.UUIDField(null=True, blank=True, editable=False)

    objects = ScorecardQuerySet.as_manager()

    class Meta:
        verbose_name = _("tarjeta de puntos")
        verbose_name_plural = _("tarjetas de puntos")
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(mode="presencial"), name="scorecard_mode_presencial"
            ),
            models.UniqueConstraint(
                fields=["organizer", "creation_token"],
                condition=Q(creation_token__isnull=False),
                name="scorecard_created_once",
            ),
        ]
        indexes = [
            # The few cards in progress, newest first («Historial», «En juego»), without
            # scanning the many finished ones.
            models.Index(
                fields=["-created_at"],
                condition=Q(finalized_at__isnull=True),
                name="scorecard_in_progress",
            ),
        ]

    def __str__(self):
        return f"Tarjeta {self.pk} · {timezone.localtime(self.created_at):%d/%m/%Y}"

    @property
    def is_finalized(self) -> bool:
        return self.finalized_at is not None

    def is_seen_by(self, user, seats) -> bool:
        """Whether user may see this card, given its seats: player, organizer or staff."""
        return (
            user.is_staff
            or user.pk == self.organizer_id
            or any(seat.player_id == user.pk for seat in seats)
        )

    def loaded_seat(self, seat_id):
        """The seat with this id among those with_seats loaded, or None."""
        return next((seat for seat in self.seat_list if str(seat.pk) == str(seat_id)), None)

    def can_edit(self, user) -> bool:
        return not self.is_finalized and (user.pk == self.organizer_id or user.is_staff)

    def delete(self, *args, **kwargs):
        if self.is_finalized:
            raise FinalizedError
        return super().delete(*args, **kwargs)


def _box_constraints():
    """One CHECK per box: the database itself refuses a score no roll can produce."""
    checks = [
        models.CheckConstraint(
            condition=Q(**{f"{c}__isnull": True})
            | Q(**{f"{c}__in": sorted(rules.allowed_scores(c))}),
            name=f"seat_{c}_allowed",
        )
        for c in Category
    ]
    checks.append(
        models.CheckConstraint(
            condition=Q(yahtzee_bonuses__gte=0, yahtzee_bonuses__lte=MAX_BONUSES),
            name="seat_yahtzee_bonuses_range",
        )
    )
    return checks


def _box_field(category):
    return models.PositiveSmallIntegerField(BOX_LABELS[category], null=True, blank=True)


class Seat(models.Model):
    """A player's column on a card, in turn order."""

    scorecard = models.ForeignKey(Scorecard, on_delete=models.CASCADE, related_name="seats")
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="seats",
        verbose_name=_("jugador"),
    )
    order = models.PositiveSmallIntegerField(_("turno"))

    ones = _box_field(Category.ONES)
    twos = _box_field(Category.TWOS)
    threes = _box_field(Category.THREES)
    fours = _box_field(Category.FOURS)
    fives = _box_field(Category.FIVES)
    sixes = _box_field(Category.SIXES)
    three_of_a_kind = _box_field(Category.THREE_OF_A_KIND)
    four_of_a_kind = _box_field(Category.FOUR_OF_A_KIND)
    full_house = _box_field(Category.FULL_HOUSE)
    small_straight = _box_field(Category.SMALL_STRAIGHT)
    large_straight = _box_field(Category.LARGE_STRAIGHT)
    yahtzee = _box_field(Category.YAHTZEE)
    chance = _box_field(Category.CHANCE)
    yahtzee_bonuses = models.PositiveSmallIntegerField(_("Bonus Yahtzee"), default=0)

    # Stored when the card is finalized, so history never recomputes them.
    total = models.PositiveIntegerField(_("total"), null=True, blank=True)
    place = models.PositiveSmallIntegerField(_("posición"), null=True, blank=True)

    class Meta:
        verbose_name = _("jugador de la tarjeta")
        verbose_name_plural = _("jugadores de la tarjeta")
        ordering = ["scorecard", "order"]
        constraints = [
            models.UniqueConstraint(fields=["scorecard", "player"], name="seat_player_once"),
            models.UniqueConstraint(fields=["scorecard", "order"], name="seat_order_once"),
            *_box_constraints(),
        ]

    def __str__(self):
        return str(self.player)

    def save(self, *args, **kwargs):
        # A card that is finalized in the database refuses every write, whatever
        # this in-memory copy believes.
        if self.pk and Scorecard.objects.filter(pk=self.scorecard_id).finalized().exists():
            raise FinalizedError
        return super().save(*args, **kwargs)

    @property
    def scores(self) -> dict[Category, int | None]:
        return {c: getattr(self, c) for c in Category}

    @property
    def totals(self) -> rules.Totals:
        return _totals(_box_values(self), self.yahtzee_bonuses)

    @property
    def problems(self) -> list[str]:
        """What stops this column from being finalized: blank boxes and inconsistencies."""
        return list(self.problems_in(get_language()))

    def problems_in(self, language) -> tuple[str, ...]:
        """The problems in one language: the sheet asks for every column at once."""
        return _problems(_box_values(self), self.yahtzee_bonuses, language)

    def value(self, box: str) -> int | None:
        return getattr(self, box)


# Every page and write of a card works out each column's sums and what it lacks, and
# most columns are the same as on the last request: computed once per distinct column.
_BOXES = tuple(Category)
_box_values = operator.attrgetter(*(c.value for c in Category))


@functools.lru_cache(maxsize=8192)
def _totals(values, yahtzee_bonuses) -> rules.Totals:
    return rules.totals(dict(zip(_BOXES, values, strict=True)), yahtzee_bonuses)


@functools.lru_cache(maxsize=8192)
def _problems(values, yahtzee_bonuses, language) -> tuple[str, ...]:
    scores = dict(zip(_BOXES, values, strict=True))
    with translation.override(language):
        blank = [box_name(c) for c, value in scores.items() if value is None]
        problems = []
        if blank:
            problems.append(str(_("Sin anotar: %(boxes)s.") % {"boxes": ", ".join(blank)}))
        inconsistent = rules.inconsistencies(scores, yahtzee_bonuses)
        return tuple(problems + [str(problem_text(problem)) for problem in inconsistent])


class Change(models.Model):
    """One acknowledged write to a card: append-only, the card's memory.

    items holds what it wrote, in order: [[seat id, box, old, new], ...], where box is a
    rules.Category value or BONUS and old/new are scores (None: not written). They are
    part of the change's row, not rows of a table of their own: every box write adds
    this one row, and each further row and index a write touches costs it the pages
    that the other workers' commits made stale (bench/RESULTS.md). For the same reason
    no index serves `author` (only deleting a user looks for their changes) and the
    one that keeps an undo to one per change leaves out the changes that undo nothing.
    """

    class Kind(models.TextChoices):
        BOX = "box", _("Casilla")
        JOKER = "joker", _("Yahtzee adicional")
        UNDO = "undo", _("Deshacer")

    scorecard = models.ForeignKey(
        Scorecard, on_delete=models.CASCADE, related_name="changes", verbose_name=_("tarjeta")
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        verbose_name=_("autor"),
    )
    created_at = models.DateTimeField(_("fecha"), auto_now_add=True)
    kind = models.CharField(_("tipo"), max_length=10, choices=Kind.choices)
    # RESTRICT, not PROTECT: an undo keeps the change it undid, but both go when their
    # card in progress is discarded (PROTECT refused that discard).
    undoes = models.ForeignKey(
        "self",
        on_delete=models.RESTRICT,
        null=True,
        blank=True,
        related_name="undone_by",
        db_index=False,
        verbose_name=_("deshace"),
    )
    items = models.JSONField(_("casillas"), default=list)

    class Meta:
        verbose_name = _("cambio")
        verbose_name_plural = _("cambios")
        ordering = ["-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["undoes"],
                condition=Q(undoes__isnull=False),
                name="change_undone_once",
            ),
        ]

    def __str__(self):
        # In the admin, next to times Django shows in the local zone.
        return f"{self.get_kind_display()} · {timezone.localtime(self.created_at):%H:%M:%S}"

    def summary(self, seats) -> str:
        """Its items in words («Ana: Chance sin anotar → 23»); seats maps seat id to seat."""
        blank = _("sin anotar")
        return "; ".join(
            f"{seats.get(seat_id, seat_id)}: {box_label(box)} "
            f"{blank if old is None else old} → {blank if new is None else new}"
            for seat_id, box, old, new in self.items
        )


class StatsVersion(models.Model):
    """One number that changes whenever finished-game pages could change.

    Finalized games never change (the database refuses it), so history, statistics
    and the ranking only change when a game is finalized or a player is renamed or
    (de)activated; each of those bumps this number, and cached pages are keyed on it.
    """

    value = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = _("versión de las estadísticas")

    def __str__(self):
        return str(self.value)

    @classmethod
    def current(cls) -> int:
        # Every cached page asks for it: plain SQL, a fifth of the ORM's cost.
        with connections[cls.objects.db].cursor() as cursor:
            prepared.execute(cursor, f"SELECT value FROM {cls._meta.db_table} WHERE id = 1", [])
            row = cursor.fetchone()
        return row[0] if row else 0

    @classmethod
    def bump(cls) -> None:
        if not cls.objects.filter(pk=1).update(value=models.F("value") + 1):
            cls.objects.get_or_create(pk=1, defaults={"value": 1})


@functools.cache
def with_seats_sql():
    """The query of ScorecardQuerySet.with_seats and its column groups.

    Each group follows its model's field order, as Model.from_db expects.
    """
    User = get_user_model()
    # All but the creation token, which only creating a card reads (deferred here).
    card_fields = tuple(
        f.attname for f in Scorecard._meta.concrete_fields if f.attname != "creation_token"
    )
    seat_fields = tuple(f.attname for f in Seat._meta.concrete_fields)
    names = {"id", "username", "display_name"}
    user_fields = tuple(f.attname for f in User._meta.concrete_fields if f.attname in names)

    def columns(alias, fields):
        return ", ".join(f'{alias}."{f}"' for f in fields)

    users = User._meta.db_table
    sql = (
        f"SELECT {columns('c', card_fields)}, {columns('o', user_fields)},"
        f" {columns('s', seat_fields)}, {columns('p', user_fields)},"
        f" (SELECT value FROM {StatsVersion._meta.db_table} WHERE id = 1)"
        f" FROM {Scorecard._meta.db_table} c"
        f" JOIN {users} o ON o.id = c.organizer_id"
        f" JOIN {Seat._meta.db_table} s ON s.scorecard_id = c.id"
        f" JOIN {users} p ON p.id = s.player_id"
        ' WHERE c.id = %s ORDER BY s."order"'
    )
    return sql, card_fields, seat_fields, user_fields


def _builder(model, db, fields):
    """A function from a row's values to model.from_db(db, fields, values), three times as
    fast: with_seats builds up to 21 instances per request, and from_db goes through
    __init__'s handling of arguments and its pre_init and post_init signals. Through
    from_db if anything listens to those."""
    if signals.pre_init.has_listeners(model) or signals.post_init.has_listeners(model):
        return functools.partial(model.from_db, db, fields)

    def build(values):
        instance = model.__new__(model)
        instance.__dict__.update(zip(fields, values, strict=True))
        state = instance._state = ModelState()
        state.adding, state.db = False, db
        return instance

    return build


def as_aware(connection, value):
    """Datetimes as the ORM gives them: SQLite hands plain SQL naive UTC ones."""
    if isinstance(value, datetime.datetime) and timezone.is_naive(value):
        return timezone.make_aware(value, connection.timezone)
    return value
