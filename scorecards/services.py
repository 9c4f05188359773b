"""Writes that span several models: each one is a single transaction with its change log."""

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.names import isolate_text
from scorecards import rules
from scorecards.labels import BOX_LABELS, box_label, said
from scorecards.models import BONUS, BOXES, Change, FinalizedError, Scorecard, Seat
from scorecards.rules import Category

MAX_PLAYERS = 10


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
        return list(range(rules.MAX_YAHTZEE_BONUSES + 1))
    return sorted(rules.allowed_scores(box))


def parse_value(raw) -> int | None:
    """'' means «Sin anotar»; anything else must be a plain non-negative integer."""
    if raw is None or raw == "":
        return None
    text = str(raw).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise Refused(_("«%(value)s» no es una puntuación.") % {"value": str(raw)[:20]})
    return int(text)


def parse_version(raw) -> int | None:
    """A card version as a page sends it: up to 9 ASCII digits, else None."""
    raw = raw or ""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 9 else None


def _check_version(scorecard, version, *, unknown, changed) -> None:
    """Refuse unless version is the card's own: `unknown` (400) when it is no version,
    `changed` (409) when the card has moved on since."""
    seen = parse_version("" if version is None else str(version).strip())
    if seen is None:
        raise Refused(unknown)
    if seen != scorecard.version:
        raise Refused(changed, status=409)


def editable(scorecard_id, user, *, lock=True) -> Scorecard:
    """The card with its seats if user may change it; with lock (in a transaction), locked
    until the transaction ends.

    A card they may not see does not exist (404), one they may only see is not theirs
    to change (403), and a finalized one changes for nobody (409).
    """
    cards = Scorecard.objects.for_user(user).with_seats()
    if lock:
        cards = cards.select_for_update(of=("self",))
    scorecard = cards.filter(pk=scorecard_id).first()
    if scorecard is None:
        raise Refused(_("Esa tarjeta no existe."), status=404, access=True)
    if scorecard.is_finalized:
        raise Refused(str(FinalizedError.message), status=409)
    if not scorecard.editable:
        raise Refused(_("Solo quien organiza puede cambiar esta tarjeta."), status=403, access=True)
    return scorecard


def _seat(scorecard, seat_id) -> Seat:
    seat = scorecard.seat(seat_id)
    if seat is None:
        raise Refused(_("Ese jugador no está en esta tarjeta."), status=404)
    return seat


def _set(seat, box, new):
    old = getattr(seat, box)
    setattr(seat, box, new)
    return (seat, box, old, new)


def _record(scorecard, author, kind, items, undoes=None) -> Change:
    """Write the changed boxes, their change log entry and the card's new version.

    In the caller's transaction, on a card editable() locked. The version moves only
    from the one read, so a write that somehow slipped past the lock changes nothing.
    """
    moved = (
        Scorecard.objects.in_progress()
        .filter(pk=scorecard.pk, version=scorecard.version)
        .update(version=F("version") + 1)
    )
    if not moved:  # the lock (or SQLite's IMMEDIATE transaction) rules this out
        raise RuntimeError(f"card {scorecard.pk} changed while locked")
    scorecard.version += 1
    written = {}
    for seat, box, _old, new in items:
        written.setdefault(seat.pk, {})[box] = new
    for seat_pk, fields in written.items():
        Seat.objects.filter(pk=seat_pk).update(**fields)
    change = Change.objects.create(
        scorecard=scorecard,
        author=author,
        kind=kind,
        undoes=undoes,
        items=[(seat.pk, box, old, new) for seat, box, old, new in items],
        version=scorecard.version,
    )
    scorecard.recorded = change
    return change


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
    with transaction.atomic():
        # Who may write comes first: a stranger learns nothing from how the data is wrong.
        scorecard = editable(scorecard_id, author)
        new, seen = _box_values(box, value, was)
        seat = _seat(scorecard, seat_id)
        current = getattr(seat, box)
        if current == new:
            # Already there (a retried request whose answer was lost): nothing to do.
            return scorecard
        if current != seen:
            raise Refused(
                _(
                    "%(player)s, %(box)s cambió mientras tanto (ahora: %(now)s). "
                    "Revisa la tarjeta y vuelve a intentarlo."
                )
                % {
                    "player": isolate_text(seat.player.name),
                    "box": box_label(box),
                    "now": said(current),
                },
                status=409,
            )
        if (
            box == Category.YAHTZEE
            and current == rules.YAHTZEE_SCORE
            and new != current
            and seat.yahtzee_bonuses
        ):
            # The bonuses were earned on that 50: without it they would still count.
            raise Refused(
                _(
                    "%(player)s tiene bonus de Yahtzee, que solo valen con 50 en Yahtzee: "
                    "quítalos antes de cambiar esta casilla."
                )
                % {"player": isolate_text(seat.player.name)},
                status=409,
            )
        if box == BONUS and new > current and seat.yahtzee != rules.YAHTZEE_SCORE:
            # Without 50 in Yahtzee there is no bonus: refused now, not only at the end,
            # or the total and the live positions would count it meanwhile.
            raise Refused(
                _("%(player)s no tiene 50 en Yahtzee: sin ellos no hay bonus de Yahtzee.")
                % {"player": isolate_text(seat.player.name)},
                status=409,
            )
        _record(scorecard, author, Change.Kind.BOX, [_set(seat, box, new)])
    return scorecard


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


def joker_write(*, scorecard_id, seat_id, face, box, author) -> Scorecard:
    """An extra five of a kind: the joker box and, with 50 in Yahtzee, the +100 bonus."""
    with transaction.atomic():
        scorecard = editable(scorecard_id, author)
        face, category = _joker_roll(face, box)
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
        with_bonus = seat.yahtzee == rules.YAHTZEE_SCORE
        if with_bonus and seat.yahtzee_bonuses >= rules.MAX_YAHTZEE_BONUSES:
            raise Refused(
                _("No puede haber más de %(max)s bonus de Yahtzee.")
                % {"max": rules.MAX_YAHTZEE_BONUSES},
                status=409,
            )
        items = [_set(seat, category.value, rules.joker_score(face, category))]
        if with_bonus:
            items.append(_set(seat, BONUS, seat.yahtzee_bonuses + 1))
        _record(scorecard, author, Change.Kind.JOKER, items)
    return scorecard


def _joker_roll(face, box) -> tuple[int, Category]:
    """The face and box an extra Yahtzee form sent, or Refused."""
    # One plain digit from 1 to 6: int() would also take "٣" or " 3".
    text = "" if face is None else str(face)
    try:
        category = Category(box)
    except (TypeError, ValueError):
        raise Refused(_("Elige la cara de los dados y una casilla.")) from None
    if not (len(text) == 1 and text in "123456"):
        raise Refused(_("Elige la cara de los dados y una casilla."))
    return int(text), category


def change_undo(*, scorecard_id, author, version) -> Scorecard:
    """Undo the latest change not yet undone, restoring every value it wrote.

    version is the card version the person saw, and is required: if the card changed
    since (another device wrote, or this is a replayed request), nothing is undone.
    """
    with transaction.atomic():
        scorecard = editable(scorecard_id, author)
        _check_version(
            scorecard,
            version,
            unknown=_(
                "No sabemos qué versión de la tarjeta estás viendo: recárgala y vuelve a deshacer."
            ),
            changed=_("La tarjeta ha cambiado desde que la viste: revisa antes de deshacer."),
        )
        target = (
            scorecard.changes.exclude(kind=Change.Kind.UNDO)
            .filter(undone_by__isnull=True)
            .order_by("-pk")
            .first()
        )
        if target is None:
            raise Refused(_("No hay nada que deshacer."), status=409)
        seats = {seat.pk: seat for seat in scorecard.seats.all()}
        items = []
        for seat_id, box, old, new in target.items:
            seat = seats[seat_id]
            if getattr(seat, box) != new:
                raise Refused(_("La tarjeta cambió después: no se puede deshacer."), status=409)
            items.append(_set(seat, box, old))
        _record(scorecard, author, Change.Kind.UNDO, items, undoes=target)
    return scorecard


def scorecard_finalize(*, scorecard_id, author, version=None) -> Scorecard:
    """Store totals and positions and close the card for ever, or refuse with its problems.

    version, when given, is the card version whose totals the person confirmed: a card
    that changed since is not finalized with totals nobody saw.
    """
    with transaction.atomic():
        scorecard = editable(scorecard_id, author)
        if version is not None:
            _check_version(
                scorecard,
                version,
                unknown=_(
                    "No sabemos qué resultados estás viendo: "
                    "vuelve a la tarjeta y finaliza desde allí."
                ),
                changed=_(
                    "La tarjeta ha cambiado desde que viste los resultados: "
                    "revísalos antes de finalizar."
                ),
            )
        seats = list(scorecard.seats.all())
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
    return scorecard


def scorecard_discard(*, scorecard_id, author) -> None:
    with transaction.atomic():
        scorecard = editable(scorecard_id, author)
        try:
            scorecard.delete()
        except IntegrityError:
            raise Refused(str(FinalizedError.message), status=409) from None
