"""A digital game's turn, played with the server's dice: «Tirar» (turn_roll), a die held or
released between rolls (turn_hold) and the box the turn ends in (turn_score).

The turn in progress lives on the card (Scorecard.turn_rolls, each roll with who made it,
and Scorecard.turn_held) until its box is written; its rolls are then stored with that
change, append-only. The browser never rolls: it says which dice to keep, and the server
checks that they are the dice of the last roll, at most three times a turn. Every action
is one transaction on the card locked, and moves its version, so that every phone's stream
brings it (scorecards.live).

Who may play the turn is Access.plays_turn (its player, or the organizer for any seat);
every other refusal is a services.Refused, as for the card's other writes.
"""

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.names import isolate_text
from scorecards import dice, rules
from scorecards.labels import BONUS_BOX, box_name
from scorecards.models import Change, Roll, Scorecard, Turn
from scorecards.services import (
    Refused,
    Written,
    _bump,
    _check_version,
    _finalize,
    _record,
    _set,
    card_in_play,
)


def _turn(scorecard_id, user, version, shown=None) -> tuple[Scorecard, Turn]:
    """A digital card in progress, locked, and whose turn it is, if user may play that
    turn (Access.plays_turn).

    version is the card version the person saw, and is required: a request made on an
    older view of the turn (another phone played meanwhile, or a replay) changes nothing.
    With shown (the dice a roll's page showed), a roll refused because another rolled
    after them says who (_rolled_by).
    """
    scorecard = card_in_play(scorecard_id, user, lock=True)
    if not scorecard.is_digital:
        raise Refused(_("Esta tarjeta es de dados físicos: no se tira en la app."), status=409)
    turn = scorecard.turn
    if turn is None:  # every box filled: the last one finalized the card
        raise Refused(_("Todas las casillas están anotadas."), status=409)
    access = scorecard.access(user)
    if not access.takes_part:
        raise Refused(_("No juegas en esta tarjeta: puedes mirarla, no tirar."), status=409)
    if not access.plays_turn:
        raise Refused(
            _("Ahora le toca a %(name)s: espera a tu turno.")
            % {"name": isolate_text(turn.seat.player.name)},
            status=409,
        )
    _check_version(
        scorecard,
        version,
        unknown=_("No sabemos qué tirada estás viendo: recarga la tarjeta."),
        changed=_rolled_by(scorecard, turn, user, shown)
        or _("La tarjeta ha cambiado desde que la viste: mira los dados de ahora."),
    )
    return scorecard, turn


def _rolled_by(scorecard, turn, user, shown) -> str | None:
    """Who rolled the turn's dice after those the page showed (two phones, the player's and
    the organizer's, rolled at once), if not user."""
    rolls = scorecard.turn_rolls
    if shown is None or not rolls or str(shown).strip() == rolls[-1][0]:
        return None
    roller = rolls[-1][3] if len(rolls[-1]) > 3 else None
    if roller is None or roller == user.pk:
        return None
    if roller == turn.seat.player_id:
        name = turn.seat.player.name
        return _("Ha tirado %(name)s desde su móvil: mira sus dados.") % {
            "name": isolate_text(name)
        }
    if roller == scorecard.organizer_id and user.pk == turn.seat.player_id:
        name = scorecard.organizer.name
        return _("Ha tirado %(name)s por ti: mira tus dados.") % {"name": isolate_text(name)}
    return None


def _kept(raw_positions) -> set[int]:
    """The 1-based positions of the dice to keep, as a page sends them, or Refused."""
    kept = set()
    for raw in raw_positions:
        text = str(raw).strip()
        if not (len(text) == 1 and text in "12345"):
            raise Refused(_("Los dados guardados no son válidos."))
        kept.add(int(text))
    return kept


def _positions(kept) -> str:
    """Kept positions as the card stores them: «145»."""
    return "".join(str(position) for position in sorted(kept))


def turn_roll(*, scorecard_id, author, version, shown, keep) -> Written:
    """Roll the dice of the turn in progress, keeping the positions in keep.

    shown is the dice the page showed (empty before the turn's first roll): the kept
    dice must be those of the last roll. The server rolls; the browser only says which
    dice to keep, and at most three times a turn. The dice kept are those the page sends,
    whatever turn_hold last stored, and stay held for the next roll.
    """
    with transaction.atomic():
        scorecard, _now = _turn(scorecard_id, author, version, str(shown or ""))
        kept = _kept(keep)
        rolls = list(scorecard.turn_rolls)
        if len(rolls) >= rules.ROLLS:
            raise Refused(
                _("Ya has tirado %(n)s veces: elige una casilla.") % {"n": rules.ROLLS},
                status=409,
            )
        previous = rolls[-1][0] if rolls else ""
        if str(shown or "").strip() != previous or (kept and not previous):
            raise Refused(
                _("Los dados guardados no son los de la última tirada: mira los dados de ahora."),
                status=409,
            )
        if len(kept) == rules.DICE:
            raise Refused(_("Has guardado los cinco dados: elige una casilla."), status=409)
        faces = dice.roll(previous, kept)
        at = timezone.now().isoformat()
        rolls.append([faces, _positions(kept), at, author.pk])
        _bump(scorecard, turn_rolls=rolls, turn_held=_positions(kept))
    return Written(scorecard, None)


def turn_hold(*, scorecard_id, author, version, shown, keep) -> Written:
    """Store the dice held now, between two rolls of the turn in progress, for the other
    phones to see: the positions in keep (all of them, not a change), of the dice shown,
    which must be those of the last roll. Holding them again changes nothing (nor the
    version). Only what is shown: the next roll keeps what its own request says."""
    with transaction.atomic():
        scorecard, _now = _turn(scorecard_id, author, version)
        kept = _kept(keep)
        rolls = scorecard.turn_rolls
        if not rolls:
            raise Refused(_("Tira los dados antes de guardar alguno."), status=409)
        if len(rolls) >= rules.ROLLS:
            raise Refused(
                _("Ya has tirado %(n)s veces: elige una casilla.") % {"n": rules.ROLLS},
                status=409,
            )
        if str(shown or "").strip() != rolls[-1][0]:
            raise Refused(
                _("Los dados guardados no son los de la última tirada: mira los dados de ahora."),
                status=409,
            )
        if _positions(kept) != scorecard.turn_held:
            _bump(scorecard, turn_held=_positions(kept))
    return Written(scorecard, None)


def turn_score(*, scorecard_id, author, version, box) -> Written:
    """End the turn in progress in a free box, with what the last roll scores there; an
    extra Yahtzee by the joker order, with its +100 after a 50. The turn's rolls are
    stored with the change, and the last box of the game finalizes the card."""
    with transaction.atomic():
        scorecard, turn = _turn(scorecard_id, author, version)
        seat = turn.seat
        rolls = scorecard.turn_rolls
        if not rolls:
            raise Refused(_("Tira los dados antes de elegir una casilla."), status=409)
        try:
            category = rules.Category(box)
        except ValueError:
            raise Refused(_("Elige una casilla libre.")) from None
        faces = [int(face) for face in rolls[-1][0]]
        choices = rules.choices(faces, seat.scores)
        if category not in choices:
            if getattr(seat, category) is not None:
                message = _("%(box)s ya está anotada: elige una casilla libre.")
            else:
                message = _("Con un Yahtzee adicional, el orden del comodín no permite %(box)s.")
            raise Refused(message % {"box": box_name(category)}, status=409)
        extra = rules.is_extra_yahtzee(faces, seat.scores)
        items = [_set(seat, category.value, choices[category])]
        if (
            extra
            and rules.yahtzee_bonus_due(seat.scores)
            and seat.yahtzee_bonuses < rules.MAX_YAHTZEE_BONUSES
        ):
            items.append(_set(seat, BONUS_BOX, seat.yahtzee_bonuses + 1))
        kind = Change.Kind.JOKER if extra else Change.Kind.BOX
        written = _record(scorecard, author, kind, items, turn_rolls=[], turn_held="")
        Roll.objects.bulk_create(
            Roll(
                scorecard=scorecard,
                seat=seat,
                change=written.change,
                round=turn.round,
                number=number,
                dice=faces_text,
                kept=kept,
                rolled_at=datetime.fromisoformat(at),
            )
            for number, (faces_text, kept, at, *_roller) in enumerate(rolls, start=1)
        )
        if scorecard.turn is None:
            _finalize(scorecard, list(scorecard.seats.all()))
    return written
