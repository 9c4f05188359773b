"""«Pantalla del club» and its updates, for staff at /pantalla/ and for a screen link's token
at /pantalla/<token>/ (Screen.admits says who).

The page polls its update address every few seconds (static/js/screen.js) with the state
it shows (scorecards.screen.state): 204 after one query while nothing moved, else the
board, rendered once per state for every screen. A poll rather than the cards' streams:
a screen follows every card, including those created after it opened, without a session
of its own; and a stream per card, or one that watches them all, would hold a connection
and a watcher per screen for what one query every three seconds says.
"""

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from scorecards import screen
from scorecards.models import Screen

# How often the page asks whether the board moved, and how long it shows a page of tables
# when they are more than fit, in ms (screen.js reads them).
POLL_EVERY_MS = 3000
PAGE_EVERY_MS = 12000


def _admit(request, token):
    """Nothing, when the request may see the screen (Screen.admits); else the answer it
    gets: a withdrawn or unknown link 404, the log-in page for a stranger at /pantalla/,
    and 403 for a player who is not staff."""
    if Screen.admits(request.user, token):
        return None
    if token is not None:
        raise Http404
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    return render(request, "scorecards/screen_refused.html", status=403)


@require_GET
@never_cache
def screen_page(request, token=None):
    """The screen: the board as it is now, which the page then keeps up to date."""
    if (refused := _admit(request, token)) is not None:
        return refused
    shown = screen.state()
    context = {
        "board": mark_safe(screen.board(shown)),  # the template's own board partial
        "token": token,
        "poll_every": POLL_EVERY_MS,
        "page_every": PAGE_EVERY_MS,
    }
    return render(request, "scorecards/screen.html", context)


@require_GET
@never_cache
def screen_live(request, token=None):
    """The board's update, with the state the page shows (?estado=): 204 while it still
    is the state, else the board at the state now (the one every screen shares)."""
    if (refused := _admit(request, token)) is not None:
        return refused
    shown = screen.state()
    if request.GET.get("estado") == shown.digest:
        return HttpResponse(status=204)
    response = HttpResponse(screen.board(shown))
    response["X-Dados-Screen"] = shown.digest
    return response
