import dataclasses
import secrets
from typing import NamedTuple

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef, Prefetch, Q
from django.http import Http404
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from scorecards import rules
from scorecards.labels import BONUS_BOX, BOX_LABELS, box_label, box_name, problem_text, said
from scorecards.rules import Category

# Every box a seat has, and the bonus count line, which is edited like one.
BOXES = frozenset(c.value for c in Category) | {BONUS_BOX}


class FinalizedError(Exception):
    """A finalized scorecard was about to change."""

    message = _("Esta tarjeta ya está finalizada y no puede cambiar.")


class ScorecardQuerySet(models.QuerySet):
    def for_user(self, user):
        """The cards user may see: its players and organizer see a card, staff every card.
        What they may do on one is Scorecard.access; Scorecard.seen_by says this of one
        card read with its seats."""
        if not user.is_authenticated:
            return self.none()
        return self if user.is_staff else self.involving(user)

    def involving(self, user):
        """The cards user organizes or plays in."""
        plays = Seat.objects.filter(scorecard=OuterRef("pk"), player=user)
        return self.filter(Q(organizer=user) | Exists(plays))

    def seen(self, pk, user) -> "Scorecard":
        """Card pk with its organizer and seats, if user sees it (Scorecard.seen_by, the
        seats read anyway): 404 otherwise."""
        scorecard = self.with_seats().filter(pk=pk).first()
        if scorecard is None or not scorecard.seen_by(user):
            raise Http404
        return scorecard

    def with_seats(self):
        """With the organizer, and the seats in turn order with their players."""
        return self.select_related("organizer").prefetch_related(seats_in_order())

    def in_progress(self):
        return self.filter(finalized_at__isnull=True)

    def finalized(self):
        return self.filter(finalized_at__isnull=False)


def seats_in_order() -> Prefetch:
    """A card's seats in turn order with their players: for with_seats, or for
    prefetch_related_objects on a card read without them."""
    return Prefetch("seats", Seat.objects.select_related("player").order_by("order"))


class Turn(NamedTuple):
    """Whose turn it is on a card in progress: the round (1 to 13) and the seat to play."""

    round: int
    seat: "Seat"


@dataclasses.dataclass(frozen=True, slots=True)
class Access:
    """What one user may do on a card they see (ScorecardQuerySet.for_user).

    Views, services and templates ask this; none of them re-derives it.
    """

    # May change the card (finalize, discard, what the table sees): its organizer, or
    # staff, while in progress.
    organizes: bool
    # May write boxes by hand: organizes a physical game's card (a digital one's dice decide).
    writes_by_hand: bool
    # May roll and score a digital game's turn in progress: its player, or the organizer.
    plays_turn: bool
    # Organizes or is seated (staff see every card without either).
    takes_part: bool
    # May start a rematch («Revancha») of a finished game: its organizer or a player.
    starts_rematch: bool
    # May make and withdraw a finished game's public link («Compartir»): its organizer or
    # a player (staff who took no part may see the game, not publish it).
    shares: bool
    # What the card page's viewer is, whatever the card's state (the sheet, the same for
    # everyone, carries every control; the page shows each viewer theirs, card.html):
    # organizes it while in play (the organizer, or staff)...
    manages: bool
    # ... and plays every seat's digital turn (the card's own organizer).
    plays_every_turn: bool

    @property
    def watches(self) -> bool:
        """Only follows the card: nothing on it is theirs to write now."""
        return not (self.writes_by_hand or self.plays_turn)

    @staticmethod
    def manager(user, organizer_id) -> bool:
        """Whether user manages a card organized by organizer_id, whatever its state and
        seats: its organizer, or staff (what `manages` says, without reading the card)."""
        return user.is_staff or user.pk == organizer_id

    @classmethod
    def of(cls, user, *, organizer_id, digital, in_play, turn_player_id, seated) -> "Access":
        """From what the card says: its organizer, mode and state, whose turn it is (a
        player's id, or None) and whether user is seated."""
        manages = cls.manager(user, organizer_id)
        plays_every_turn = user.pk == organizer_id
        organizes = in_play and manages
        takes_part = user.pk == organizer_id or seated
        return cls(
            organizes=organizes,
            writes_by_hand=organizes and not digital,
            plays_turn=digital
            and in_play
            and turn_player_id is not None
            and (plays_every_turn or user.pk == turn_player_id),
            takes_part=takes_part,
            starts_rematch=not in_play and takes_part,
            shares=not in_play and takes_part,
            manages=manages,
            plays_every_turn=plays_every_turn,
        )


class Scorecard(models.Model):
    """One game at a table, entered by its organizer."""

    class Mode(models.TextChoices):
        # With the players' own dice, entered by the organizer; or with the app's dice,
        # rolled by the server, each player on their own phone.
        PRESENCIAL = "presencial", _("presencial")
        DIGITAL = "digital", _("digital")

    PRESENCIAL = Mode.PRESENCIAL
    DIGITAL = Mode.DIGITAL

    organizer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="organized_scorecards",
        verbose_name=_("organizador"),
    )
    created_at = models.DateTimeField(_("creada"), auto_now_add=True)
    finalized_at = models.DateTimeField(_("finalizada"), null=True, blank=True)
    mode = models.CharField(
        _("modalidad"), max_length=20, choices=Mode.choices, default=PRESENCIAL, editable=False
    )
    # Bumped by every write, so a stale view and a live poll can both tell.
    version = models.PositiveIntegerField(_("versión"), default=0, editable=False)
    # The order page's one-time token: a second tap on «Crear tarjeta» (or a browser
    # sending the form again) finds this card instead of making another.
    creation_token = models.UUIDField(null=True, blank=True, editable=False)
    # A digital game's turn in progress: its rolls so far, each [dice, kept positions, time,
    # who rolled] («31456», «14», ISO time, a player's id; the fourth is missing in rolls
    # made before it was kept). They become Roll rows with the box the turn ends in.
    turn_rolls = models.JSONField(_("tiradas del turno"), default=list, editable=False)
    # The dice held now, between two of its rolls («14»): for every phone to see, as the
    # player taps them; a roll keeps what its own request says, and holds it again.
    turn_held = models.CharField(
        _("dados guardados"), max_length=5, blank=True, default="", editable=False
    )
    # The finished game this card is the rematch («Revancha») of: one card per game,
    # however many players tap at once (scorecard_rematch_once).
    rematch_of = models.ForeignKey(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="rematches",
        db_index=False,  # scorecard_rematch_once is its index
        editable=False,
        verbose_name=_("revancha de"),
    )

    # What the table sees, chosen when the card is made and changed by its organizer while
    # in play: the players' phones show the boxes but not the sums and positions until the
    # game is finished (whoever manages the card sees them: card.html); and beside each
    # upper sum, how far it is from three of each face (rules.bonus_pace).
    hide_totals = models.BooleanField(_("ocultar totales hasta el final"), default=False)
    show_bonus_pace = models.BooleanField(_("ritmo del bonus"), default=False)
    # The version at which those last changed: a page that shows an older one gets the whole
    # sheet, which says them (sheets.cells_since), not a patch.
    settings_version = models.PositiveIntegerField(default=0, editable=False)

    objects = ScorecardQuerySet.as_manager()

    class Meta:
        verbose_name = _("tarjeta de puntos")
        verbose_name_plural = _("tarjetas de puntos")
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(mode__in=["presencial", "digital"]), name="scorecard_mode_known"
            ),
            models.UniqueConstraint(
                fields=["organizer", "creation_token"],
                condition=Q(creation_token__isnull=False),
                name="scorecard_created_once",
            ),
            # A unique index of its own (not unique=True on the field), which SQLite adds
            # without rebuilding the table and its finalized-card triggers.
            models.UniqueConstraint(
                fields=["rematch_of"],
                condition=Q(rematch_of__isnull=False),
                name="scorecard_rematch_once",
            ),
        ]
        indexes = [
            # The few cards in progress, newest first, without scanning the finished ones.
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

    @property
    def is_digital(self) -> bool:
        return self.mode == Scorecard.DIGITAL

    @property
    def hides_totals_now(self) -> bool:
        """Whether its players' pages hide the sums and positions: chosen, until the end."""
        return self.hide_totals and not self.is_finalized

    @property
    def places(self) -> list[int | None]:
        """Each seat's position: stored once finalized, live while in progress; None for
        all until a box is written (six players at 0 are not all first)."""
        seats = self.seats.all()
        if self.is_finalized:
            return [seat.place for seat in seats]
        if not any(seat.filled for seat in seats):
            return [None] * len(seats)
        return rules.positions([seat.totals.total for seat in seats])

    @property
    def turn(self) -> Turn | None:
        """Whose turn it is, from the boxes each seat has filled; None once every box is
        filled or the card is finalized."""
        if self.is_finalized:
            return None
        seats = list(self.seats.all())
        turn = rules.turn(seat.filled for seat in seats)
        return None if turn is None else Turn(turn[0], seats[turn[1]])

    def seen_by(self, user) -> bool:
        """Whether user sees this card, read with its seats: for_user's rule (its players
        and organizer, and staff), without a query of its own."""
        return user.is_authenticated and (user.is_staff or self.access(user).takes_part)

    def access(self, user) -> Access:
        """What user, who sees this card, may do on it now."""
        turn = self.turn
        return Access.of(
            user,
            organizer_id=self.organizer_id,
            digital=self.is_digital,
            in_play=not self.is_finalized,
            turn_player_id=turn.seat.player_id if turn else None,
            seated=any(seat.player_id == user.pk for seat in self.seats.all()),
        )

    def seat(self, seat_id) -> "Seat | None":
        """One of its seats (as with_seats loaded them), or None."""
        return next((seat for seat in self.seats.all() if str(seat.pk) == str(seat_id)), None)

    def delete(self, *args, **kwargs):
        if self.is_finalized:
            raise FinalizedError
        return super().delete(*args, **kwargs)

    def to_dict(self) -> dict:
        """The game as its JSON export gives it: every box, bonuses, totals, positions,
        players, dates and mode; a digital game's also every roll of its finished turns."""
        seats = list(self.seats.all())
        data = {
            "partida": self.pk,
            "modalidad": self.mode,
            "creada": self.created_at.isoformat(),
            "finalizada": self.finalized_at.isoformat() if self.finalized_at else None,
            "organizador": self.organizer.name,
            "ocultar_totales": self.hide_totals,
            "ritmo_del_bonus": self.show_bonus_pace,
            "jugadores": [
                {
                    "jugador": seat.player.name,
                    "turno": seat.order + 1,
                    "casillas": {c.value: getattr(seat, c) for c in Category},
                    "bonus_yahtzee": seat.yahtzee_bonuses,
                    "totales": dataclasses.asdict(seat.totals),
                    "posicion": place,
                }
                for seat, place in zip(seats, self.places, strict=True)
            ],
        }
        if self.is_digital:
            names = {seat.pk: seat.player.name for seat in seats}
            data["tiradas"] = [
                {
                    "jugador": names.get(roll.seat_id, ""),
                    "ronda": roll.round,
                    "tirada": roll.number,
                    "dados": roll.dice,
                    "guardados": roll.kept,
                    "hora": roll.rolled_at.isoformat(),
                    # The box the turn ended in (a joker's bonus line comes after it).
                    "casilla": roll.change.items[0][1],
                }
                for roll in self.rolls.select_related("change").order_by("pk")
            ]
        return data


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
            condition=Q(yahtzee_bonuses__gte=0, yahtzee_bonuses__lte=rules.MAX_YAHTZEE_BONUSES),
            name="seat_yahtzee_bonuses_range",
        )
    )
    return checks


def _box_field(category):
    return models.PositiveSmallIntegerField(BOX_LABELS[category], null=True, blank=True)


class Seat(models.Model):
    """A player's column on a card, in turn order."""

    # Up to this many blank boxes are named in what the column lacks; more are counted.
    BLANKS_NAMED = 4

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
    def filled(self) -> int:
        """How many of its 13 boxes hold a score."""
        return sum(value is not None for value in self.scores.values())

    @property
    def totals(self) -> rules.Totals:
        return rules.totals(self.scores, self.yahtzee_bonuses)

    @property
    def problems(self) -> list[str]:
        """What stops this column from being finalized: blank boxes and inconsistencies."""
        scores = self.scores
        problems = []
        blank = [box_name(c) for c, value in scores.items() if value is None]
        if len(blank) > Seat.BLANKS_NAMED:
            # Early in the game a list of every box would be a wall of text: count them.
            problems.append(
                ngettext("%(n)s casilla sin anotar.", "%(n)s casillas sin anotar.", len(blank))
                % {"n": len(blank)}
            )
        elif blank:
            problems.append(gettext("Sin anotar: %(boxes)s.") % {"boxes": ", ".join(blank)})
        inconsistent = rules.inconsistencies(scores, self.yahtzee_bonuses)
        return problems + [str(problem_text(problem)) for problem in inconsistent]


class ChangeQuerySet(models.QuerySet):
    def recent(self, scorecard):
        """A card's latest changes, newest first; all of them once it is finalized."""
        changes = self.filter(scorecard=scorecard).select_related("author").order_by("-pk")
        return changes if scorecard.is_finalized else changes[: Change.RECENT]

    def after(self, scorecard, version):
        """The changes that brought a card from `version` to the one it was read at (not a
        later one, made since), newest first."""
        changes = self.filter(
            scorecard=scorecard, version__gt=version, version__lte=scorecard.version
        )
        return changes.select_related("author").order_by("-pk")


def in_words(changes, seats, *, with_rolls=False) -> list["Change"]:
    """Changes (a query, or those a write just recorded), each with what the card's log
    says of it: `lines`, one per item; for an extra Yahtzee `joker` (its box's line) and
    `joker_bonus` (whether it added the +100); with_rolls, `turn`: the rolls of the turn it
    ended."""
    players = {seat.pk: seat.player.name for seat in seats}
    changes = list(changes)
    rolls = {}
    if with_rolls and changes:
        for roll in Roll.objects.filter(change__in=changes).order_by("pk"):
            rolls.setdefault(roll.change_id, []).append(roll)
    for change in changes:
        change.lines = [
            {
                "player": players.get(seat_id, ""),
                "box": box_label(box),
                "bonus": box == BONUS_BOX,
                "old": said(old),
                "new": said(new),
                "written": old is None,
                "cleared": new is None,
            }
            for seat_id, box, old, new in change.items
        ]
        if change.kind == Change.Kind.JOKER:
            boxes = [line for line in change.lines if not line["bonus"]]
            change.joker = boxes[0] if boxes else None
            change.joker_bonus = len(boxes) < len(change.lines)
        change.turn = rolls.get(change.pk, [])
    return changes


def log_summary(changes, *, digital=False) -> str:
    """A finished game's log in one sentence: a physical game's entries, corrections, extra
    Yahtzees and undos; a digital game's turns, rolls and extra Yahtzees (nothing in it is
    corrected or undone). changes come from in_words."""
    jokers = sum(change.kind == Change.Kind.JOKER for change in changes)
    jokers_said = ngettext("%(n)s Yahtzee adicional", "%(n)s Yahtzees adicionales", jokers) % {
        "n": jokers
    }
    if digital:
        rolls = sum(len(change.turn) for change in changes)
        parts = {
            "turns": ngettext("%(n)s turno", "%(n)s turnos", len(changes)) % {"n": len(changes)},
            "rolls": ngettext("%(n)s tirada", "%(n)s tiradas", rolls) % {"n": rolls},
            "jokers": jokers_said,
        }
        return gettext("%(turns)s, %(rolls)s y %(jokers)s.") % parts
    undos = sum(change.kind == Change.Kind.UNDO for change in changes)
    corrections = sum(change.kind == Change.Kind.BOX and change.is_correction for change in changes)
    entries = len(changes) - undos - jokers - corrections
    parts = {
        "total": ngettext("%(n)s cambio", "%(n)s cambios", len(changes)) % {"n": len(changes)},
        "entries": ngettext("%(n)s anotación", "%(n)s anotaciones", entries) % {"n": entries},
        "corrections": ngettext("%(n)s corrección", "%(n)s correcciones", corrections)
        % {"n": corrections},
        "jokers": jokers_said,
        "undos": ngettext("%(n)s deshecho", "%(n)s deshechos", undos) % {"n": undos},
    }
    return gettext("%(total)s: %(entries)s, %(corrections)s, %(jokers)s y %(undos)s.") % parts


class Change(models.Model):
    """One acknowledged write to a card: append-only, the card's memory.

    items holds what it wrote, in order: [[seat id, box, old, new], ...], where box is a
    rules.Category value or BONUS_BOX and old/new are scores (None: not written).
    """

    RECENT = 5

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
    # The card's version this change made: a live page that shows an older version asks
    # for the changes after it, and gets only the cells they wrote.
    version = models.PositiveIntegerField(_("versión"), null=True, editable=False)
    # The Idempotency-Key the write came with (scorecards.once): sent again, the same write
    # finds its change here and is not made twice.
    key = models.UUIDField(_("clave"), null=True, blank=True, editable=False)

    objects = ChangeQuerySet.as_manager()

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
            # An index of its own, which SQLite adds without rebuilding the table and its
            # append-only triggers; it also finds a key on its card.
            models.UniqueConstraint(
                fields=["scorecard", "key"],
                condition=Q(key__isnull=False),
                name="change_key_once",
            ),
        ]

    def __str__(self):
        # In the admin, next to times Django shows in the local zone.
        return f"{self.get_kind_display()} · {timezone.localtime(self.created_at):%H:%M:%S}"

    @property
    def is_correction(self) -> bool:
        return any(old is not None for _seat, _box, old, _new in self.items)

    def summary(self, seats) -> str:
        """Its items in words («Ana: Chance sin anotar → 23»); seats maps seat id to seat."""
        return "; ".join(
            f"{seats.get(seat_id, seat_id)}: {box_label(box)} {said(old)} → {said(new)}"
            for seat_id, box, old, new in self.items
        )


def without_usernames(seats):
    """seats, each player named by their display name, or «Jugador N» (N their turn) where
    they have none: a public page (a shared game) never shows a username. In memory only,
    on seats read for that page."""
    for seat in seats:
        if not seat.player.display_name:
            seat.player.display_name = gettext("Jugador %(n)s") % {"n": seat.order + 1}
    return seats


class ShareQuerySet(models.QuerySet):
    def public(self, token) -> "Share":
        """The share a public link names, with its game and seats: 404 for a link never
        made or withdrawn (a withdrawn share keeps its row and picture, not its token)."""
        share = self.defer("picture").select_related("scorecard__organizer")
        share = share.filter(token=token).first()
        if share is None:
            raise Http404
        models.prefetch_related_objects([share.scorecard], seats_in_order())
        return share


class Share(models.Model):
    """A finished game's public, read-only link («Compartir»), and its picture for a chat's
    preview. One per game: withdrawing the link empties its token, and sharing again makes
    a new one, so a withdrawn link stays dead; the picture stays, drawn once.

    The picture is kept here, in the database, rather than in the cache or a media folder:
    it survives a restart and a cache clear, goes with the club's backups and restores
    (safekeeping copies every model), and needs no writable folder on the app servers.
    Only shared games have one, about 30 KB each.
    """

    scorecard = models.OneToOneField(
        Scorecard, on_delete=models.CASCADE, related_name="share", verbose_name=_("tarjeta")
    )
    # secrets.token_urlsafe(16): 128 bits, unguessable; empty (NULL) once withdrawn.
    token = models.CharField(
        _("enlace"), max_length=32, unique=True, null=True, blank=True, editable=False
    )
    shared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
        verbose_name=_("compartida por"),
    )
    shared_at = models.DateTimeField(_("compartida"), default=timezone.now)
    # The PNG a chat shows for the link (scorecards.picture), 1200 by 630.
    picture = models.BinaryField(_("imagen"), editable=False)

    objects = ShareQuerySet.as_manager()

    class Meta:
        verbose_name = _("partida compartida")
        verbose_name_plural = _("partidas compartidas")

    def __str__(self):
        return str(self.scorecard)


class KeptKey(models.Model):
    """The Idempotency-Key of a write that changed nothing (its box already held its value):
    no change to keep it with, so kept here, so that it still names that write and no other
    (scorecards.once). Not part of the card, which it leaves as it was: it goes with a
    discarded card and is never written to a finalized one (the write is refused first).

    kind and items as the change the write would have made: [[seat id, box, value, value]].
    """

    scorecard = models.ForeignKey(
        Scorecard, on_delete=models.CASCADE, related_name="kept_keys", verbose_name=_("tarjeta")
    )
    key = models.UUIDField(_("clave"), editable=False)
    kind = models.CharField(_("tipo"), max_length=10, choices=Change.Kind.choices)
    items = models.JSONField(_("casillas"), default=list)
    created_at = models.DateTimeField(_("fecha"), auto_now_add=True)

    class Meta:
        verbose_name = _("clave sin cambio")
        verbose_name_plural = _("claves sin cambio")
        constraints = [
            models.UniqueConstraint(fields=["scorecard", "key"], name="kept_key_once"),
        ]

    def __str__(self):
        return str(self.key)


class Roll(models.Model):
    """One roll of a digital game's dice: append-only, written with the box its turn ended in.

    dice are the five faces in position order («31456»); kept, the 1-based positions held
    from the roll before («14»), empty on a turn's first roll.
    """

    scorecard = models.ForeignKey(
        Scorecard, on_delete=models.CASCADE, related_name="rolls", verbose_name=_("tarjeta")
    )
    seat = models.ForeignKey(
        Seat, on_delete=models.CASCADE, related_name="+", db_index=False, verbose_name=_("jugador")
    )
    # The change that wrote the box this turn ended in.
    change = models.ForeignKey(
        Change, on_delete=models.CASCADE, related_name="rolls", verbose_name=_("cambio")
    )
    round = models.PositiveSmallIntegerField(_("ronda"))
    number = models.PositiveSmallIntegerField(_("tirada"))
    dice = models.CharField(_("dados"), max_length=rules.DICE)
    kept = models.CharField(_("guardados"), max_length=rules.DICE, blank=True)
    rolled_at = models.DateTimeField(_("hora"))

    class Meta:
        verbose_name = _("tirada")
        verbose_name_plural = _("tiradas")
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(number__gte=1, number__lte=rules.ROLLS), name="roll_number_range"
            ),
            models.CheckConstraint(
                condition=Q(round__gte=1, round__lte=len(Category)), name="roll_round_range"
            ),
        ]

    def __str__(self):
        return f"{self.dice} · {self.number}"

    @property
    def spaced(self) -> str:
        """Its dice as a page shows them: «3 1 4 5 6»."""
        return " ".join(self.dice)

    @property
    def kept_faces(self) -> str:
        """The faces it kept from the roll before, in position order: «4 5 6»."""
        return " ".join(self.dice[int(position) - 1] for position in self.kept)


def screen_token() -> str:
    """A screen link's token: unguessable, and short enough for a URL typed on a TV."""
    return secrets.token_urlsafe(24)


class Screen(models.Model):
    """A device the admin lets show «Pantalla del club» without an account (a TV, a laptop
    in the room): its link carries the token. Withdrawn (not active, or deleted), the link
    answers 404. The token opens that page and its updates, nothing else: no session."""

    # last_seen is written at most this often (seconds): a screen polls every few seconds.
    SEEN_EVERY = 60

    name = models.CharField(
        _("nombre"), max_length=60, help_text=_("Dónde está: «Tele del salón».")
    )
    token = models.CharField(
        _("código"), max_length=64, unique=True, default=screen_token, editable=False
    )
    active = models.BooleanField(
        _("activa"), default=True, help_text=_("Desmárcala para retirar el enlace: dará 404.")
    )
    created_at = models.DateTimeField(_("creada"), auto_now_add=True)
    last_seen = models.DateTimeField(
        _("vista por última vez"), null=True, blank=True, editable=False
    )

    class Meta:
        verbose_name = _("pantalla del club")
        verbose_name_plural = _("pantallas del club")
        ordering = ["name", "pk"]

    def __str__(self):
        return self.name

    @classmethod
    def admits(cls, user, token: str | None) -> bool:
        """Who sees «Pantalla del club»: with a screen link's token, whoever holds it while
        the link is active (logged in or not); without one, staff. The one place that says
        so: the screen's views ask nothing else. A link let in is noted as seen (at most
        once every SEEN_EVERY seconds: the admin's «vista por última vez»)."""
        if token is None:
            return user.is_authenticated and user.is_staff
        found = cls.objects.filter(token=token, active=True).values_list("pk", "last_seen")
        if (screen := found.first()) is None:
            return False
        pk, last_seen = screen
        now = timezone.now()
        if last_seen is None or (now - last_seen).total_seconds() >= cls.SEEN_EVERY:
            cls.objects.filter(pk=pk).update(last_seen=now)
        return True
