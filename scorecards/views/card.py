"""The card page and its live parts: the page, its poll, its stream, and its QR code.

The sheet and the patches are the same for every viewer (scorecards.sheets); the page
around the sheet says who is looking, which shows each their own controls (card.html).
"""

from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.handlers.asgi import ASGIRequest
from django.db import connections
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from scorecards import live, presence, services, sheets
from scorecards.models import Access, Scorecard, Share
from scorecards.views.share import shared_url


def card_for(request, pk) -> Scorecard:
    """The card with its organizer and seats, if this user may see it (404 otherwise)."""
    return Scorecard.objects.seen(pk, request.user)


def sheet_answer(scorecard, *, error=None, status=200) -> HttpResponse:
    """The card's sheet alone, the fragment htmx swaps in: the one everyone shares, or,
    with a refusal's message, this answer's own."""
    if error is None:
        content = sheets.sheet(scorecard)
    else:
        content = sheets.render_sheet(scorecard, error=error)
    response = HttpResponse(content, status=status)
    response["X-Dados-Version"] = scorecard.version
    return response


def patch_answer(content, since, version) -> HttpResponse:
    """A patch from version `since` to `version`: the page applies it unless it shows
    `version` or a later one already (live.js), and asks for what it missed when it is
    behind `since`."""
    response = HttpResponse(content)
    response["HX-Reswap"] = "none"
    response["X-Dados-Base"] = since
    response["X-Dados-To"] = version
    return response


# The sheet's forms, which carry no CSRF token of their own (the sheet is everyone's): the
# page gives each its viewer's.
TOKEN_FORMS = ("undo-form", "roll-form", "score-form", "rematch-form")


@login_required
@require_GET
@vary_on_headers("HX-Request")
def scorecard_detail(request, pk):
    """The card page: the sheet everyone shares, in a page that says who is looking."""
    scorecard = card_for(request, pk)
    if request.htmx:
        return sheet_answer(scorecard)
    access = scorecard.access(request.user)
    context = {
        "scorecard": scorecard,
        "access": access,
        "sheet": mark_safe(sheets.sheet(scorecard)),  # the template's own sheet partial
        "streams": streams(request) and not scorecard.is_finalized,
        "token_forms": TOKEN_FORMS,
        "own_column": own_column(scorecard, request.user),
    }
    # A digital game's stream says who follows the card (scorecards.presence).
    context["presence"] = context["streams"] and scorecard.is_digital
    if access.writes_by_hand:
        context["pickers"] = sheets.picker_copies()
    if access.shares:
        # «Compartir»: the game's public link, if it has one now (scorecards.views.share).
        token = Share.objects.filter(scorecard=scorecard).values_list("token", flat=True).first()
        context["shared_url"] = shared_url(token) if token else None
    return render(request, "scorecards/card.html", context)


def own_column(scorecard, user) -> int | None:
    """The sheet's column of the viewer's seat, if they have one, counted as CSS's
    :nth-child counts a row's cells (the box's heading first)."""
    seats = scorecard.seats.all()
    return next((n for n, seat in enumerate(seats, start=2) if seat.player_id == user.pk), None)


@require_GET
@login_required
def scorecard_live(request, pk):
    """Live card poll, with the version the page shows: 204 while the card is still at
    it, else what changed since: the patch everyone shares, or the whole sheet."""
    cards = Scorecard.objects.for_user(request.user).filter(pk=pk)
    card = cards.values(*sheets.CARD_FIELDS, "mode").first()
    if card is None:
        raise Http404
    digital = card.pop("mode") == Scorecard.DIGITAL
    if digital and card["finalized_at"] is None and streams(request):
        # A phone that polls follows the card too, as one that holds its stream (where
        # there are streams to say so).
        presence.polled(pk, request.user.pk)
    since = services.parse_version(request.GET.get("version"))
    if since == card["version"]:
        return HttpResponse(status=204)
    # X-Dados-Shared says whether it was rendered here (as a proxy's X-Cache-Status
    # does): the bench's hit rate.
    if since is not None and (content := sheets.cached(card, f"patch:{since}")) is not None:
        found = True
    else:
        scorecard = card_for(request, pk)
        if since is None or (cells := sheets.cells_since(scorecard, since)) is None:
            return sheet_answer(scorecard)
        content, found = sheets.patch(scorecard, since, cells)
    response = patch_answer(content, since, card["version"])
    response["X-Dados-Shared"] = "hit" if found else "miss"
    return response


@require_GET
@login_required
async def scorecard_events(request, pk):
    """The card's stream (scorecards.live): each time its version moves past the one the
    page shows (which the page sends as `version`, and a reconnecting browser as
    Last-Event-ID), the patch that brings the page there, the one everyone shares
    (sheets.stream_patch); or, when the page needs the whole sheet, the version alone, and
    the page asks scorecard_live."""
    user = await request.auser()
    cards = Scorecard.objects.for_user(user).filter(pk=pk)
    card = await cards.values(*sheets.CARD_FIELDS, "mode").afirst()
    if card is None:
        raise Http404
    # A digital game's stream also says who follows the card (scorecards.presence).
    present = card.pop("mode") == Scorecard.DIGITAL
    raw = request.headers.get("Last-Event-ID") or request.GET.get("version")
    shown = services.parse_version(raw)
    if shown is None or shown > card["version"]:
        # Nothing to follow from there: the page's poll gets it the whole sheet.
        return HttpResponse(_("Esa versión de la tarjeta no existe."), status=400)
    over = card["finalized_at"] is not None
    if over and shown == card["version"]:
        return HttpResponse(status=204)  # nothing more will happen: do not reconnect
    if not isinstance(request, ASGIRequest):
        # A WSGI server would hold a thread for the whole stream and send nothing (a
        # proxy that routes the stream to it, say): 204 tells the page not to retry.
        return HttpResponse(status=204)
    language = get_language()
    viewer = live.Viewer(request.session.session_key, user.pk)

    def patch(since, version):
        # On the process's one thread for the streams (live.Versions.run), once for the
        # process's phones that ask for the same change: the write rendered the patch its
        # answer brought, and the first of them finds it in the cache.
        with translation.override(language):
            return sheets.stream_patch(card | {"version": version}, since)

    # The stream holds no connection of its own (Django gives each ASGI request a thread,
    # whose connection would stay open as long as the stream): the process's one
    # thread for the streams reads for all of them.
    await sync_to_async(connections.close_all)()
    # Counted here, with no await before the response: opens arriving together each see
    # the others' count.
    if not live.admit(user.pk):
        return HttpResponse(_("Demasiadas tarjetas abiertas a la vez."), status=429)
    state = live.State(card["version"], over=over)
    login = redirect_to_login(reverse("scorecard", args=[pk]))["Location"]
    # The checks just made (a session that logs this user in, a card they see) are the
    # stream's first.
    looks = live.looks_of(user)
    events = live.stream(
        pk, viewer, shown, state, patch, login, share=language, looks=looks, present=present
    )
    response = StreamingHttpResponse(
        live.Admitted(user.pk, events), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    # Every event as it is written: not held by nginx, nor gzipped (GZipMiddleware
    # leaves alone an answer that says its encoding).
    response["X-Accel-Buffering"] = "no"
    response["Content-Encoding"] = "identity"
    return response


def streams(request) -> bool:
    """Whether the card's page opens its stream: served by ASGI, or by WSGI with the
    streams served apart (STREAMS_APART). Else (runserver, the tests' live servers) it
    polls: a WSGI server would hold a thread for the whole stream and send nothing."""
    return isinstance(request, ASGIRequest) or settings.STREAMS_APART


@login_required
@require_GET
@vary_on_headers("HX-Request")
def scorecard_qr(request, pk):
    """«Seguir en el móvil»: the card's address as a QR code, for a phone at the table to
    scan, and as text to copy; asked for when the card page opens it."""
    scorecard = get_object_or_404(Scorecard.objects.for_user(request.user), pk=pk)
    # The configured address (dados/settings.py), never the Host header a request sends.
    host = urlsplit(settings.SITE_URL).hostname
    context = {
        "scorecard": scorecard,
        "address": settings.SITE_URL + reverse("scorecard", args=[pk]),
        # This computer's own address, or "every interface": no other phone opens it.
        "only_here": host in {"localhost", "127.0.0.1", "::1", "0.0.0.0", "::"},
        # How to serve the other phones is for whoever runs the server: the organizer, staff.
        "manages": Access.manager(request.user, scorecard.organizer_id),
    }
    template = "scorecards/qr.html#follow" if request.htmx else "scorecards/qr.html"
    return render(request, template, context)
