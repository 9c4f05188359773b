"""Writes taken once, however often they are sent: the organizer's phone keeps its writes in
an outbox and sends them again when the network comes back (issue 50), each with the
Idempotency-Key it was first sent with.

The key is kept with the change its write made (Change.key, once per card), or, when the
write changed nothing (its box already held its value), on its own (KeptKey, once per card
too; the card's lock keeps a key in only one of the two). A box or an extra Yahtzee sent
with a key its card already holds is that write again, whose answer was lost: it changes
nothing and is answered as taken. Another write with that key is refused, whether or not
the key's first write changed anything.
"""

import functools
import re
import uuid

from django.db import IntegrityError
from django.utils.translation import gettext as _

from scorecards.models import Change, KeptKey
from scorecards.refusals import Refused

# A UUID as crypto.randomUUID() writes it, in either case.
KEY_TEXT = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII | re.IGNORECASE
)


def parse_key(raw) -> uuid.UUID | None:
    """The Idempotency-Key a write came with: None without one, else a UUID or Refused."""
    if raw is None:
        return None
    if not KEY_TEXT.fullmatch(raw):
        raise Refused(
            _("La clave de este envío (Idempotency-Key) no es un UUID: no se ha anotado nada.")
        )
    return uuid.UUID(raw)


def same_write(change, *, kind, seat, box, value) -> bool:
    """Whether change (or a KeptKey) is what this write makes: the same kind, and its first
    item the same seat's box with the same value. An extra Yahtzee's face counts by the
    score it gives that box: the card keeps no dice, so two faces that score alike there
    (in Full, say) make the same write."""
    seat_id, written_box, _old, new = change.items[0]
    return (change.kind, seat_id, written_box, new) == (kind, seat.pk, box, value)


def replayed(scorecard, key, *, kind, seat, box, value) -> Change | KeptKey | None:
    """The change this write made when first sent with key (or its KeptKey, if it changed
    nothing), on the card locked (services.organized_card); None without a key, or for one
    the card does not hold. Refused (422) when key was sent with another write."""
    if key is None:
        return None
    change = scorecard.changes.filter(key=key).first() or held(scorecard.pk, key)
    if change is not None and not same_write(change, kind=kind, seat=seat, box=box, value=value):
        raise reused()
    return change


def replayed_undo(scorecard, key) -> Change | None:
    """The undo made when first sent with key, as replayed() for a box; Refused (422) when
    key made another write."""
    if key is None:
        return None
    change = scorecard.changes.filter(key=key).first() or held(scorecard.pk, key)
    if change is not None and change.kind != Change.Kind.UNDO:
        raise reused()
    return change


def reused() -> Refused:
    return Refused(
        _(
            "Esta clave (Idempotency-Key) ya se usó en esta tarjeta para otra anotación: "
            "no se ha anotado nada."
        ),
        status=422,
    )


def held(scorecard_id, key) -> KeptKey | None:
    """The key a write that changed nothing kept on the card, if any."""
    return KeptKey.objects.filter(scorecard_id=scorecard_id, key=key).first()


def keep(scorecard, key, *, kind, seat, box, value) -> None:
    """Keep key, sent with a write that changed nothing, on the card locked: sent again it
    is that write, and it may make no other. Nothing without a key."""
    if key is not None:
        items = [(seat.pk, box, value, value)]
        KeptKey.objects.create(scorecard=scorecard, key=key, kind=kind, items=items)


def keyed(write):
    """A write that takes key=, with the database as the last guard: should another request
    with the same key record its change (or keep its key) first after all (the card's lock
    queues them), change_key_once (or kept_key_once) refuses this one's, and the write, made
    once more, finds that change (or key)."""

    @functools.wraps(write)
    def once(*, scorecard_id, key=None, **kwargs):
        try:
            return write(scorecard_id=scorecard_id, key=key, **kwargs)
        except IntegrityError:
            found = key is not None and (
                Change.objects.filter(scorecard_id=scorecard_id, key=parse_key(key)).exists()
                or held(scorecard_id, parse_key(key))
            )
            if not found:
                raise  # refused for another reason
            return write(scorecard_id=scorecard_id, key=key, **kwargs)

    return once
