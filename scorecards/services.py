"""Writes that span several models: each one is a single transaction with its change log.

Who may act is Scorecard.access; a card a user may not see does not exist for them (404),
one they only see is not theirs to change (403). Any other refusal is a Refused, with a
message for the person at the table.
"""

import secrets
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from accounts.forms import name_taken
from accounts.models import GUESTS_PER_DAY, same_name
from accounts.names import fold, isolate_text
from scorecards import once, picture, rules
from scorecards.labels import BONUS_BOX, BOX_LABELS, box_label, names_list, said
from scorecards.models import BOXES, Change, FinalizedError, Scorecard, Seat, Share
from scorecards.refusals import Refused
from scorecards.rules import Category

MAX_PLAYERS = 10


class Written(NamedTuple):
    """What a write leaves: the card as it now is, and the change it recorded (None for a
    roll or dice held, or when the box already held the value); replayed, the write was sent
    again with its key (scorecards.once), and the change is the one its first send recorded
    (None if that send changed nothing)."""

    scorecard: Scorecard
    change: Change | None
    replayed: bool = False


def parse_value(raw) -> int | None:
    """'' means «Sin anotar»; anything else must be a plain non-negative integer."""
    if raw is None or raw == "":
        return None
    text = str(raw).strip()
    if not text.isascii() or not text.isdigit() or len(text) > 9:
        raise Refused(_("«%(value)s» no es una puntuación.") % {"value": str(raw)[:20]})
    return int(text)


def parse_version(raw) -> int | None:
    """A card version as a page sends it: up to 9 ASCII digits, spaces around them aside
    (as the writes that check it take them), else None."""
    raw = "" if raw is None else str(raw).strip()
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 9 else None


def _check_version(scorecard, version, *, unknown, changed) -> None:
    """Refuse unless version is the card's own: `unknown` (400) when it is no version,
    `changed` (409) when the card has moved on since."""
    seen = parse_version(version)
    if seen is None:
        raise Refused(unknown)
    if seen != scorecard.version:
        raise Refused(changed, status=409)


def card_in_play(scorecard_id, user, *, lock) -> Scorecard:
    """The card with its seats if user may see it (else 404) and it is in progress (else
    Refused, 409); with lock (in a transaction), locked until the transaction ends."""
    cards = Scorecard.objects.select_for_update(of=("self",)) if lock else Scorecard.objects
    scorecard = cards.seen(scorecard_id, user)
    if scorecard.is_finalized:
        raise Refused(str(FinalizedError.message), status=409, reason="closed")
    return scorecard


def organized_card(scorecard_id, user, *, lock=True, by_hand=False) -> Scorecard:
    """The card in play (card_in_play) if user organizes it (else 403); with by_hand, only
    a physical game's, whose boxes are written by hand (a digital one's dice decide: 409)."""
    scorecard = card_in_play(scorecard_id, user, lock=lock)
    access = scorecard.access(user)
    if not access.organizes:
        raise PermissionDenied
    if by_hand and not access.writes_by_hand:
        raise Refused(
            _("En una partida con dados virtuales deciden los dados: no se anota a mano."),
            status=409,
        )
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


def _bump(scorecard, **fields) -> None:
    """Move the card to its next version, with fields, in the caller's transaction on a
    card locked. The version moves only from the one read, so a write that somehow
    slipped past the lock changes nothing."""
    moved = (
        Scorecard.objects.in_progress()
        .filter(pk=scorecard.pk, version=scorecard.version)
        .update(version=F("version") + 1, **fields)
    )
    if not moved:  # the lock (or SQLite's IMMEDIATE transaction) rules this out
        raise RuntimeError(f"card {scorecard.pk} changed while locked")
    scorecard.version += 1
    for name, value in fields.items():
        setattr(scorecard, name, value)


def _record(scorecard, author, kind, items, undoes=None, key=None, **fields) -> Written:
    """Write the changed boxes, their change log entry (with the write's key) and the card's
    new version (with fields of the card's own), on a card organized_card() locked."""
    _bump(scorecard, **fields)
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
        key=key,
    )
    return Written(scorecard, change)


# Who may sit at a card: an active account that plays (an admin's, until «Juega» is ticked,
# does not); as a filter, for the lists that offer players.
SEATABLE = Q(is_active=True, plays=True)


def check_seatable(players) -> None:
    """Refuse, naming them, players who may not sit at a card (SEATABLE)."""
    if any(not p.is_active for p in players):
        raise Refused(_("Solo se pueden elegir jugadores activos."))
    if resting := [p for p in players if not p.plays]:
        raise Refused(
            ngettext(
                "%(names)s no juega en Dados y no puede estar en una tarjeta.",
                "%(names)s no juegan en Dados y no pueden estar en una tarjeta.",
                len(resting),
            )
            % {"names": names_list([isolate_text(p.name) for p in resting])}
        )


def scorecard_create(
    *,
    organizer,
    players,
    token=None,
    mode=Scorecard.PRESENCIAL,
    hide_totals=False,
    show_bonus_pace=False,
) -> Scorecard:
    """Create a card with the players in turn order, and what the table sees
    (scorecard_settings).

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
    check_seatable(players)
    if mode not in Scorecard.Mode.values:
        raise Refused(_("Elige si jugáis con dados físicos o con dados virtuales."))
    if token is not None and (made := _created_with(organizer, token)):
        if _same_game(made, players, mode):
            return made
        token = None
    try:
        with transaction.atomic():
            scorecard = Scorecard.objects.create(
                organizer=organizer,
                creation_token=token,
                mode=mode,
                hide_totals=hide_totals,
                show_bonus_pace=show_bonus_pace,
            )
            Seat.objects.bulk_create(
                Seat(scorecard=scorecard, player=p, order=i) for i, p in enumerate(players)
            )
    except IntegrityError:
        # The same token's other request created it meanwhile (scorecard_created_once).
        if token is None or not (made := _created_with(organizer, token)):
            raise
        if _same_game(made, players, mode):
            return made
        return scorecard_create(
            organizer=organizer,
            players=players,
            mode=mode,
            hide_totals=hide_totals,
            show_bonus_pace=show_bonus_pace,
        )
    return scorecard


def _created_with(organizer, token) -> Scorecard | None:
    return Scorecard.objects.filter(organizer=organizer, creation_token=token).first()


def _same_game(scorecard, players, mode) -> bool:
    """Whether scorecard is still in progress, in this mode, with these players in this
    order."""
    seated = scorecard.seats.order_by("order").values_list("player_id", flat=True)
    return (
        not scorecard.is_finalized
        and scorecard.mode == mode
        and list(seated) == [p.pk for p in players]
    )


class Rematch(NamedTuple):
    """What «Revancha» leaves: the rematch's card, and whether this tap made it (a
    second tap, or another player's, finds the one made first)."""

    scorecard: Scorecard
    made: bool


def rematch_seating(finished) -> list:
    """A rematch's players in turn order: the next one starts, the first sits last."""
    players = [seat.player for seat in finished.seats.all()]
    return players[1:] + players[:1]


def scorecard_rematch(*, scorecard_id, user) -> Rematch:
    """A new card for a finished game, tapped by user (its organizer or a player): the same
    players in the same mode, seeing what that game's table saw, the next one starting (the
    second seat first, the first last), and the same organizer, whoever taps, so the phone
    that scored the game scores the next one (user only if that organizer may no longer log
    in). Only one per game: whoever comes later gets the card made first."""
    finished = Scorecard.objects.seen(scorecard_id, user)
    access = finished.access(user)
    if not access.starts_rematch:
        if not access.takes_part:
            raise PermissionDenied
        raise Refused(
            _("La partida aún no ha terminado: la revancha se juega después."), status=409
        )
    if made := finished.rematches.first():
        return Rematch(made, made=False)
    players = rematch_seating(finished)
    check_seatable(players)
    organizer = finished.organizer if finished.organizer.is_active else user
    try:
        with transaction.atomic():
            scorecard = Scorecard.objects.create(
                organizer=organizer,
                mode=finished.mode,
                rematch_of=finished,
                hide_totals=finished.hide_totals,
                show_bonus_pace=finished.show_bonus_pace,
            )
            Seat.objects.bulk_create(
                Seat(scorecard=scorecard, player=p, order=i) for i, p in enumerate(players)
            )
    except IntegrityError:
        # Another tap made it meanwhile (scorecard_rematch_once).
        if not (made := finished.rematches.first()):
            raise
        return Rematch(made, made=False)
    return Rematch(scorecard, made=True)


def shared_game(scorecard_id, user) -> Scorecard:
    """The finished game user may share or stop sharing (Access.shares), with its seats:
    404 to those who do not see it, a refusal to the others."""
    finished = Scorecard.objects.seen(scorecard_id, user)
    access = finished.access(user)
    if not access.shares:
        if not access.takes_part:
            raise Refused(_("Solo quien jugó u organizó la partida puede compartirla."), status=403)
        raise Refused(_("La partida aún no ha terminado: se comparte cuando acaba."), status=409)
    return finished


def scorecard_share(*, scorecard_id, user) -> Share:
    """«Compartir»: a finished game's public link, made by one of its players or its
    organizer; the link it has already if it has one. Its picture is drawn the first time
    only (a finished game never changes): sharing again after a withdrawal keeps it and
    makes a new token, so the withdrawn link stays dead."""
    finished = shared_game(scorecard_id, user)
    share = Share.objects.defer("picture").filter(scorecard=finished).first()
    if share is None:
        # Drawn before the write's transaction, which holds SQLite's one write lock.
        drawn = picture.draw(finished)
        try:
            with transaction.atomic():
                share = Share.objects.create(
                    scorecard=finished, token=new_token(), shared_by=user, picture=drawn
                )
        except IntegrityError:
            # Another tap shared it meanwhile: theirs stands.
            share = Share.objects.defer("picture").get(scorecard=finished)
    if share.token is None:
        token, now = new_token(), timezone.now()
        # Only where it is still withdrawn: two taps at once make one link.
        Share.objects.filter(pk=share.pk, token__isnull=True).update(
            token=token, shared_by=user, shared_at=now
        )
        share.refresh_from_db(fields=["token", "shared_by", "shared_at"])
    return share


def scorecard_unshare(*, scorecard_id, user) -> None:
    """«Dejar de compartir»: the game's public link answers 404 from now on; its picture
    is kept for a later share."""
    finished = shared_game(scorecard_id, user)
    Share.objects.filter(scorecard=finished).update(token=None)


def new_token() -> str:
    """A share's token: 128 random bits, 22 characters safe in an address."""
    return secrets.token_urlsafe(16)


class NameTaken(Refused):
    """A guest's name that another player's reads as (accounts.models.same_name)."""

    def __init__(self, player):
        super().__init__(name_taken(player))
        self.player = player


def guest_add(*, added_by, name):
    """A player account for a guest (GUEST), named name (accounts.forms.GuestForm cleans
    it): they play tonight and cannot log in until the admin gives them a log-in.
    Refused past GUESTS_PER_DAY guests added by the same account today, and (NameTaken)
    when another player's name reads as name."""
    User = get_user_model()
    with transaction.atomic():
        # Guests are added one after another, whoever adds them, so that each counts the
        # guests and checks the names of those added before it: every guest_add locks the
        # one row that stands for the players' table (on SQLite, each transaction already
        # waits for the one before).
        players = ContentType.objects.get_for_model(User)
        ContentType.objects.select_for_update().filter(pk=players.pk).first()
        today = User.objects.filter(added_by=added_by, date_joined__date=timezone.localdate())
        if today.count() >= GUESTS_PER_DAY:
            raise Refused(
                _(
                    "Ya has añadido %(max)s invitados hoy, el máximo por día: si alguien más"
                    " juega, pide a la administración que lo registre."
                )
                % {"max": GUESTS_PER_DAY}
            )
        if other := same_name(name):
            raise NameTaken(other)
        # The admin may rename it when giving the guest a log-in.
        return User.objects.create_user(
            _guest_username(name), password=None, display_name=name, added_by=added_by
        )


def _guest_username(name) -> str:
    """A free username for a guest: «invitado-ana-garcia», «invitado-ana-garcia-2» …"""
    User = get_user_model()
    base = "-".join(filter(None, ["invitado", slugify(fold(name))[:60]]))
    username, n = base, 1
    while User.objects.filter(username__iexact=username).exists():
        n += 1
        username = f"{base}-{n}"
    return username


@once.keyed
def box_write(*, scorecard_id, seat_id, box, value, was, author, key=None) -> Written:
    """Write one box (or the bonus count) if it still holds what the writer saw; with a key
    the card already holds, the write sent again is not made twice (scorecards.once)."""
    with transaction.atomic():
        # Who may write comes first: a stranger learns nothing from how the data is wrong.
        scorecard = organized_card(scorecard_id, author, by_hand=True)
        key = once.parse_key(key)
        new, seen = _box_values(box, value, was)
        seat = _seat(scorecard, seat_id)
        # Before what the box holds, which this write's first send may have changed.
        kind = Change.Kind.BOX
        if found := once.replayed(scorecard, key, kind=kind, seat=seat, box=box, value=new):
            return Written(scorecard, found if isinstance(found, Change) else None, replayed=True)
        current = getattr(seat, box)
        if current == new:
            # Already there (a retried request whose answer was lost, another device's
            # write): nothing to write, the card's version stays; its key is kept.
            once.keep(scorecard, key, kind=kind, seat=seat, box=box, value=new)
            return Written(scorecard, None)
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
            and seat.yahtzee_bonuses
            and rules.yahtzee_bonus_due(seat.scores)
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
        if box == BONUS_BOX and new > rules.bonus_line_limit(seat.scores, current):
            # Without 50 in Yahtzee there is no bonus: refused now, not only at the end,
            # or the total and the live positions would count it meanwhile.
            raise Refused(
                _("%(player)s no tiene 50 en Yahtzee: sin ellos no hay bonus de Yahtzee.")
                % {"player": isolate_text(seat.player.name)},
                status=409,
            )
        return _record(scorecard, author, kind, [_set(seat, box, new)], key=key)


def _box_values(box, value, was) -> tuple[int | None, int | None]:
    """The value to write and the one the writer saw, or Refused: the box or the value
    is not one of the card's."""
    if box not in BOXES:
        raise Refused(_("Esa casilla no existe."), status=404)
    new = (parse_value(value) or 0) if box == BONUS_BOX else parse_value(value)
    seen = parse_value(was)
    if new is not None and new not in rules.allowed_values(box):
        raise Refused(
            _("%(box)s: %(value)s no es una puntuación posible.")
            % {"box": box_label(box), "value": new}
        )
    return new, seen


@once.keyed
def joker_write(*, scorecard_id, seat_id, face, box, author, key=None) -> Written:
    """An extra five of a kind: the joker box and, with 50 in Yahtzee, the +100 bonus; with
    a key the card already holds, not made twice (scorecards.once)."""
    with transaction.atomic():
        scorecard = organized_card(scorecard_id, author, by_hand=True)
        key = once.parse_key(key)
        face, category = _joker_roll(face, box)
        seat = _seat(scorecard, seat_id)
        kind, score = Change.Kind.JOKER, rules.joker_score(face, category)
        if change := once.replayed(scorecard, key, kind=kind, seat=seat, box=category, value=score):
            return Written(scorecard, change, replayed=True)
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
        with_bonus = rules.yahtzee_bonus_due(seat.scores)
        if with_bonus and seat.yahtzee_bonuses >= rules.MAX_YAHTZEE_BONUSES:
            raise Refused(
                _("No puede haber más de %(max)s bonus de Yahtzee.")
                % {"max": rules.MAX_YAHTZEE_BONUSES},
                status=409,
            )
        items = [_set(seat, category.value, score)]
        if with_bonus:
            items.append(_set(seat, BONUS_BOX, seat.yahtzee_bonuses + 1))
        return _record(scorecard, author, kind, items, key=key)


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


@once.keyed
def change_undo(*, scorecard_id, author, version, key=None) -> Written:
    """Undo the latest change not yet undone, restoring every value it wrote.

    version is the card version the person saw, and is required: if the card changed
    since (another device wrote), nothing is undone. An undo sent again with the key
    its card already holds (the outbox's, its answer lost) is taken once.
    """
    with transaction.atomic():
        scorecard = organized_card(scorecard_id, author, by_hand=True)
        key = once.parse_key(key)
        if change := once.replayed_undo(scorecard, key):
            return Written(scorecard, change, replayed=True)
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
        return _record(scorecard, author, Change.Kind.UNDO, items, undoes=target, key=key)


def scorecard_finalize(*, scorecard_id, author, version=None) -> Scorecard:
    """Store totals and positions and close the card for ever, or refuse while a seat has
    problems (Seat.problems, which the card shows).

    version, when given, is the card version whose totals the person confirmed: a card
    that changed since is not finalized with totals nobody saw.
    """
    with transaction.atomic():
        scorecard = organized_card(scorecard_id, author)
        if scorecard.is_digital:
            raise Refused(
                _("Una partida con dados virtuales se finaliza sola con la última casilla."),
                status=409,
            )
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
        if any(seat.problems for seat in seats):
            raise Refused(_("Aún no se puede finalizar."), status=409)
        _finalize(scorecard, seats)
    return scorecard


def _finalize(scorecard, seats) -> None:
    """Store each seat's total and position and close the card, in the caller's
    transaction on the card locked."""
    totals = [seat.totals.total for seat in seats]
    for seat, total, place in zip(seats, totals, rules.positions(totals), strict=True):
        seat.total, seat.place = total, place
    Seat.objects.bulk_update(seats, ["total", "place"])
    scorecard.finalized_at = timezone.now()
    scorecard.version += 1
    scorecard.save(update_fields=["finalized_at", "version"])


def scorecard_settings(*, scorecard_id, author, hide_totals, show_bonus_pace) -> Scorecard:
    """What the table sees, chosen by whoever organizes the card in play: its totals hidden
    from the players until the end, the upper bonus's pace. A change moves the card's
    version, so that every phone's page gets the whole sheet again (sheets.cells_since),
    which says both; choosing what it already has changes nothing."""
    with transaction.atomic():
        scorecard = organized_card(scorecard_id, author)
        chosen = {"hide_totals": hide_totals, "show_bonus_pace": show_bonus_pace}
        if any(getattr(scorecard, name) != value for name, value in chosen.items()):
            _bump(scorecard, **chosen, settings_version=scorecard.version + 1)
    return scorecard


def scorecard_discard(*, scorecard_id, author) -> None:
    with transaction.atomic():
        scorecard = organized_card(scorecard_id, author)
        try:
            scorecard.delete()
        except IntegrityError:
            raise Refused(str(FinalizedError.message), status=409, reason="closed") from None
