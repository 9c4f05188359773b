"""The card without a network: the service worker that keeps the card pages a phone has
seen and the files they need, and the page it shows for one it has not seen.

The worker (templates/offline/sw.js) is served from the site's root, so that its scope
is the whole site. Its cache of static files is named after their hashed names: a deploy
that changes one installs a new worker, which deletes the old cache.
"""

import hashlib
import json
import re

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from scorecards.templatetags.dados import MODULES

# What every page loads (base.html, card.html), kept on the phone from the install on.
PRECACHED = (
    "css/dados.css",
    "js/dados.js",
    *(f"js/{name}.js" for name in MODULES),
    "img/dados.svg",
    "img/apple-touch-icon.png",
    "img/icon-192.png",
    "manifest.webmanifest",
    "django_htmx/htmx-2.min.js",
    "django_htmx/ext/hx-sse-2.min.js",
)


@require_GET
@cache_control(no_cache=True)
def service_worker(request):
    urls = [static(name) for name in PRECACHED]
    context = {
        "version": _version(urls),
        "precached": json.dumps(urls),
        "outbox": static("js/outbox.js"),
        "offline": reverse("offline"),
        # Logging out or in, the app's way or the admin's, forgets the pages kept.
        "forget": json.dumps(
            [reverse("logout"), reverse("login"), reverse("admin:logout"), reverse("admin:login")]
        ),
        # A card page's address, as a pattern: the pages the worker keeps.
        "card": "^" + re.escape(reverse("scorecard", args=[12345])).replace("12345", r"\d+") + "$",
        "admin": reverse("admin:index"),
    }
    content = render_to_string("offline/sw.js", context)
    return HttpResponse(content, content_type="text/javascript; charset=utf-8")


def _version(urls) -> str:
    """The static files' version: their hashed names say it, or, where they are not
    hashed (DEBUG), their contents."""
    digest = hashlib.blake2b("\n".join(urls).encode(), digest_size=8)
    if not settings.DEBUG:
        return digest.hexdigest()
    for name in PRECACHED:
        with open(finders.find(name), "rb") as file:
            digest.update(file.read())
    return digest.hexdigest()


@require_GET
def offline(request):
    """What a phone shows for a page it has not kept, without a network: the worker keeps
    it from its install on, and shows it at the address asked for."""
    return render(request, "offline/offline.html")
