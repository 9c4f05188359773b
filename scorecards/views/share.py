"""«Compartir»: a finished game's public, read-only link, made and withdrawn by its players
and organizer on the card page; the page it opens, for anyone, logged in or not; and its
picture, the page's Open Graph image (scorecards.picture)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from accounts.names import isolate_text
from scorecards import services, sheets
from scorecards.labels import names_list
from scorecards.models import Share
from scorecards.refusals import Refused

# A game's picture never changes (a finished game does not): chats and browsers keep it.
PICTURE_KEPT_FOR = 365 * 24 * 3600


def shared_url(token) -> str:
    """A share's public address, at the configured site (as the QR code's), never at the
    Host a request names."""
    return settings.SITE_URL + reverse("shared", args=[token])


def share_answer(request, pk, token, *, error=None, status=200):
    """The card page's «Compartir» section, with the game's link (token) or without: its
    htmx swap, or the card page."""
    if not request.htmx:
        if error:
            messages.error(request, error)
        return redirect("scorecard", pk=pk)
    context = {
        "scorecard": {"pk": pk},
        "shared_url": shared_url(token) if token else None,
        "share_error": error,
    }
    return render(request, "scorecards/card.html#share", context, status=status)


@login_required
@require_POST
def scorecard_share(request, pk):
    """«Compartir»: make the game's public link (or find the one it has)."""
    try:
        share = services.scorecard_share(scorecard_id=pk, user=request.user)
    except Refused as refused:
        return share_answer(request, pk, None, error=refused.message, status=refused.status)
    return share_answer(request, pk, share.token)


@login_required
@require_POST
def scorecard_unshare(request, pk):
    """«Dejar de compartir»: the public link answers 404 from now on."""
    try:
        services.scorecard_unshare(scorecard_id=pk, user=request.user)
    except Refused as refused:
        return share_answer(request, pk, None, error=refused.message, status=refused.status)
    return share_answer(request, pk, None)


@require_safe
def shared(request, token):
    """A shared game's public page: the final card, the positions and the date."""
    share = Share.objects.public(token)
    scorecard = share.scorecard
    context = sheets.shared_context(scorecard)
    day = formats.date_format(timezone.localtime(scorecard.finalized_at), "DATE_FORMAT")
    winners = [c for c in context["ranked"] if c["place"] == 1]
    names = names_list([isolate_text(c["seat"].player.name) for c in winners])
    total = winners[0]["totals"].total
    if len(winners) > 1:
        said = _("Empate: %(names)s con %(total)s") % {"names": names, "total": total}
    else:
        said = _("Gana %(name)s con %(total)s") % {"name": names, "total": total}
    others = [
        f"{isolate_text(c['seat'].player.name)} {c['totals'].total}"
        for c in context["ranked"][len(winners) :]
    ]
    context |= {
        "title": _("Partida de Dados del %(date)s") % {"date": day},
        "description": f"{said}. {', '.join(others)}." if others else f"{said}.",
        "page_url": shared_url(token),
        "image_url": settings.SITE_URL + reverse("shared_picture", args=[token]),
    }
    response = render(request, "scorecards/shared.html", context)
    # Asked again each time: a withdrawn link is gone at once, from every cache.
    response["Cache-Control"] = "no-cache"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


@require_safe
def shared_picture(request, token):
    """A shared game's picture, drawn when it was first shared: 404 once withdrawn."""
    share = Share.objects.filter(token=token).values_list("picture", flat=True).first()
    if share is None:
        return HttpResponse(_("Este enlace no existe o se dejó de compartir."), status=404)
    response = HttpResponse(bytes(share), content_type="image/png")
    response["Cache-Control"] = f"public, max-age={PICTURE_KEPT_FOR}, immutable"
    response["X-Robots-Tag"] = "noindex"
    return response
