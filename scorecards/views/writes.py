"""The card's writes, and the pickers and confirmations that lead to them: a box, an extra
Yahtzee, «Deshacer», a digital turn's roll, held dice and box, «Finalizar», «Descartar»,
«Revancha».

Each answers the page that made it with the patch everyone gets (scorecards.sheets): the
write renders it, and the table's other phones find it in the cache.
"""

import functools

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from accounts.names import isolate_text
from scorecards import records, rules, services, sheets, turns
from scorecards.forms import TableSettingsForm
from scorecards.labels import BONUS_BOX, box_name
from scorecards.models import BOXES, Scorecard
from scorecards.rules import Category
from scorecards.services import Refused, Written
from scorecards.views.card import card_for, patch_answer, sheet_answer


def _refused(request, pk, refused: Refused, written=None):
    """Answer a refused write: the message in the card fragment, or back on the page.

    For the phone's outbox (static/js/outbox.js), a write to a box refused as a conflict
    (409) also says what that box holds now (X-Dados-Now: the value, or empty for «sin
    anotar»), so that a write whose value is already there counts as taken; and why, when
    the card is finalized (X-Dados-Refusal: closed)."""
    if request.htmx:
        scorecard = card_for(request, pk)
        response = sheet_answer(scorecard, error=refused.message, status=refused.status)
        if refused.reason:
            response["X-Dados-Refusal"] = refused.reason
        seat = scorecard.seat(written[0]) if written and written[1] in BOXES else None
        if refused.status == 409 and seat is not None:
            now = getattr(seat, written[1])
            response["X-Dados-Now"] = "" if now is None else str(now)
        if request.htmx.target == "picker":
            # Asked for a picker or the confirmation: the sheet with its message replaces
            # the sheet, not the dialog's content.
            response["HX-Retarget"] = "#sheet"
            response["HX-Reswap"] = "outerHTML"
        return response
    messages.error(request, refused.message)
    return redirect("scorecard", pk=pk)


def answers_refusals(view):
    """A card's view whose service may refuse: the refusal is the answer (_refused)."""

    @functools.wraps(view)
    def wrapped(request, pk, *args, **kwargs):
        try:
            return view(request, pk, *args, **kwargs)
        except Refused as refused:
            # The box a write names: in its address, or the joker's in its form.
            box = kwargs.get("box") or request.POST.get("box")
            written = (kwargs["seat_id"], box) if "seat_id" in kwargs and box else None
            return _refused(request, pk, refused, written)

    return wrapped


def _saved(request, written: Written):
    """Answer a write: to the page that made it, only what changed, if that page was current
    (it sends the version it showed); otherwise the whole sheet. A write sent again with
    its key (scorecards.once) is answered as taken, and says so (X-Dados-Replayed)."""
    scorecard, change, replayed = written
    since = services.parse_version(request.POST.get("version"))
    # The patch is the write's own: a roll's, which records no change, is the turn alone;
    # a replayed write's only while nothing came after its change.
    own = change.version == scorecard.version if change else scorecard.is_digital
    if not request.htmx:
        response = redirect("scorecard", pk=scorecard.pk)
    elif own and since == scorecard.version - 1:
        made = [change] if change else []
        items = change.items if change else []
        cells = [sheets.cell(scorecard.seat(seat_id), box) for seat_id, box, *_ in items]
        cells = [c for c in cells if c["box"] != BONUS_BOX]
        # Rendered here for everyone: the table's streams and polls find it in the cache.
        content = sheets.patch(scorecard, since, cells, made=made)[0]
        response = patch_answer(content, since, scorecard.version)
    else:
        response = sheet_answer(scorecard)
    if replayed:
        response["X-Dados-Replayed"] = "1"
    return response


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@answers_refusals
def box(request, pk, seat_id, box):
    """One box: its picker (GET) or its write (POST)."""
    if request.method == "POST":
        written = services.box_write(
            scorecard_id=pk,
            seat_id=seat_id,
            box=box,
            value=request.POST.get("value"),
            was=request.POST.get("was"),
            author=request.user,
            key=request.headers.get("Idempotency-Key"),
        )
        return _saved(request, written)
    return _box_picker(request, pk, seat_id, box)


def _box_picker(request, pk, seat_id, box):
    """The values a box may take; with the dice typed in, the score they make."""
    scorecard = services.organized_card(pk, request.user, lock=False, by_hand=True)
    seat = scorecard.seat(seat_id)
    if box not in BOXES or seat is None:
        raise Http404
    dice = _dice(request.GET.get("dados", ""))
    context = {"scorecard": scorecard, "picker": sheets.picker(scorecard, box, seat, dice=dice)}
    template = "scorecards/picker.html#picker" if request.htmx else "scorecards/picker.html"
    return render(request, template, context)


def _dice(raw: str) -> list[int]:
    return [
        int(c)
        for c in raw[: rules.DICE]
        if c.isascii() and c.isdigit() and 1 <= int(c) <= rules.FACES
    ]


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@answers_refusals
def joker(request, pk, seat_id):
    """«Yahtzee adicional»: its picker (GET) or its write (POST)."""
    if request.method == "POST":
        written = services.joker_write(
            scorecard_id=pk,
            seat_id=seat_id,
            face=request.POST.get("face"),
            box=request.POST.get("box"),
            author=request.user,
            key=request.headers.get("Idempotency-Key"),
        )
        return _saved(request, written)
    return _joker_picker(request, pk, seat_id)


def _joker_picker(request, pk, seat_id):
    """The face of the five dice, then only the boxes the joker order allows."""
    scorecard = services.organized_card(pk, request.user, lock=False, by_hand=True)
    seat = scorecard.seat(seat_id)
    if seat is None:
        raise Http404
    face = (_dice(request.GET.get("cara", "")) or [None])[0]
    choices = []
    if face is not None and seat.yahtzee is not None:
        allowed = rules.joker_boxes(face, seat.scores)
        choices = [
            {"box": c.value, "label": box_name(c), "score": rules.joker_score(face, c)}
            for c in Category
            if c in allowed
        ]
    context = {
        "scorecard": scorecard,
        "seat": seat,
        "face": face,
        "faces": range(1, rules.FACES + 1),
        "choices": choices,
        "bonus": rules.yahtzee_bonus_due(seat.scores),
    }
    template = "scorecards/joker.html#picker" if request.htmx else "scorecards/joker.html"
    return render(request, template, context)


@login_required
@require_POST
@answers_refusals
def undo(request, pk):
    written = services.change_undo(
        scorecard_id=pk,
        author=request.user,
        version=request.POST.get("version"),
        key=request.headers.get("Idempotency-Key"),
    )
    return _saved(request, written)


def _dice_sent(request) -> dict:
    """What the turn's dice form sends, with «Tirar» or a die held: the version and the
    dice its page showed, and the positions it keeps."""
    return {
        "version": request.POST.get("version"),
        "shown": request.POST.get("dados"),
        "keep": request.POST.getlist("guardar"),
    }


@login_required
@require_POST
@answers_refusals
def roll(request, pk):
    """«Tirar»: the server rolls the dice the player does not keep."""
    written = turns.turn_roll(scorecard_id=pk, author=request.user, **_dice_sent(request))
    return _saved(request, written)


@login_required
@require_POST
@answers_refusals
def hold(request, pk):
    """A die tapped between two rolls: the dice held now, for the other phones to see
    (turns.turn_hold). Its page keeps showing its own taps: the answer moves its version,
    so that its next hold or «Tirar» is not refused for it."""
    since = services.parse_version(request.POST.get("version"))
    held = turns.turn_hold(scorecard_id=pk, author=request.user, **_dice_sent(request))
    scorecard = held.scorecard
    if not request.htmx:
        return redirect("scorecard", pk=pk)
    if scorecard.version == since:
        return HttpResponse(status=204)  # held already: nothing moved
    return patch_answer(sheets.held(scorecard), since, scorecard.version)


@login_required
@require_POST
@answers_refusals
def score(request, pk):
    """«Anotar»: the turn ends in the box the player chose; the last one ends the game."""
    written = turns.turn_score(
        scorecard_id=pk,
        author=request.user,
        version=request.POST.get("version"),
        box=request.POST.get("casilla"),
    )
    if written.scorecard.is_finalized:
        messages.success(request, _("Partida terminada. Ya está en el historial."))
        return redirect("scorecard", pk=pk)  # to htmx, a whole-page one (dados.middleware)
    return _saved(request, written)


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
@answers_refusals
def finalize(request, pk):
    """«Finalizar y guardar resultados»: confirm (GET) with each player's total and
    position, then finalize (POST)."""
    if request.method == "GET":
        return _finalize_confirm(request, pk)
    # Required: the version whose totals the confirmation showed.
    services.scorecard_finalize(
        scorecard_id=pk, author=request.user, version=request.POST.get("version", "")
    )
    messages.success(request, _("Resultados guardados. La partida ya está en el historial."))
    return redirect("scorecard", pk=pk)  # to htmx, a whole-page one (dados.middleware)


def _finalize_confirm(request, pk):
    scorecard = services.organized_card(pk, request.user, lock=False, by_hand=True)
    seats = list(scorecard.seats.all())
    standings = sorted(
        (
            {"place": place, "name": seat.player.name, "total": seat.totals.total}
            for seat, place in zip(seats, scorecard.places, strict=True)
        ),
        # No places on a card with nothing written, where only the problems are shown.
        key=lambda row: row["place"] or 0,
    )
    context = {
        "scorecard": scorecard,
        "standings": standings,
        "problems": sheets.problems(seats),
    }
    if not context["problems"]:
        context["records_set"] = records.said(records.would_set(scorecard), seats)
    template = "scorecards/finalize.html#confirm" if request.htmx else "scorecards/finalize.html"
    return render(request, template, context)


@login_required
@require_http_methods(["GET", "POST"])
@answers_refusals
def table_settings(request, pk):
    """«Lo que ve la mesa», chosen by whoever organizes the card in play: its page (GET), or
    the choice (POST), whose answer is the card page again; the other phones get the whole
    sheet, which says the card's choice, through their stream or poll
    (services.scorecard_settings)."""
    if request.method == "GET":
        scorecard = services.organized_card(pk, request.user, lock=False)
        return render(request, "scorecards/table_settings.html", {"scorecard": scorecard})
    form = TableSettingsForm(request.POST)
    if not form.is_valid():
        # Whoever may not change the card is told that first (404, 403, 409).
        services.organized_card(pk, request.user, lock=False)
        raise Refused(form.refusal)
    services.scorecard_settings(scorecard_id=pk, author=request.user, **form.settings)
    messages.success(request, _("Guardado lo que ve la mesa."))
    return redirect("scorecard", pk=pk)  # to htmx, a whole-page one (dados.middleware)


@login_required
@require_http_methods(["GET", "POST"])
@answers_refusals
def discard(request, pk):
    """Discard a card in progress, after confirming."""
    if request.method == "POST":
        services.scorecard_discard(scorecard_id=pk, author=request.user)
        messages.success(request, _("Tarjeta descartada."))
        return redirect("home")
    scorecard = services.organized_card(pk, request.user, lock=False)
    return render(request, "scorecards/discard.html", {"scorecard": scorecard})


@login_required
@require_POST
@answers_refusals
def rematch(request, pk):
    """«Revancha»: a new card for a finished game's players (services.scorecard_rematch);
    a second tap, or another player's, goes to the one made first."""
    scorecard, made = services.scorecard_rematch(scorecard_id=pk, user=request.user)
    if made and scorecard.organizer_id == request.user.pk:
        messages.success(request, _("Revancha: nueva tarjeta con los mismos jugadores."))
    elif made:
        messages.success(
            request,
            _("Revancha: nueva tarjeta con los mismos jugadores; la organiza %(name)s.")
            % {"name": isolate_text(scorecard.organizer.name)},
        )
    elif Scorecard.objects.for_user(request.user).filter(pk=scorecard.pk).exists():
        messages.info(request, _("Ya había una revancha de esta partida: es esta."))
    else:
        # The game's organizer, who did not play, once a player made the rematch while
        # they could not log in: that rematch is its players' alone.
        messages.info(
            request,
            _("%(name)s ya organiza la revancha de esta partida.")
            % {"name": isolate_text(scorecard.organizer.name)},
        )
        return redirect("scorecard", pk=pk)
    return redirect("scorecard", pk=scorecard.pk)
