import functools

import segno
from django import template
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.templatetags.static import static
from django.utils.safestring import mark_safe

from accounts.names import isolate, isolate_text, names_html
from scorecards.labels import box_name

register = template.Library()


@register.filter
def names(people) -> str:
    """«Ana, Ben y Carla»: the names of players, or of the players in seats, as a sentence
    list in the active language, each isolated in a <bdi>."""
    return names_html([getattr(person, "player", person).name for person in people])


@register.filter
def bdi(name) -> str:
    """A name isolated in a <bdi>, so that a right-to-left name cannot reorder the numbers
    and words around it. Every name a page shows goes through it."""
    return isolate(name)


@register.filter
def isolated(name) -> str:
    """A name isolated where markup cannot go: a <title>, an attribute."""
    return isolate_text(name)


@register.filter
def box_label(category) -> str:
    """A box's name in the active language."""
    return box_name(category)


@register.simple_tag
def qr_code(text) -> str:
    """text as a QR code: SVG markup as segno draws it, black on white with its quiet
    zone, sized by the page's CSS."""
    code = segno.make(text, error="m")
    return mark_safe(
        code.svg_inline(
            dark="#000", light="#fff", border=4, omitsize=True, svgclass="qr-code", lineclass=None
        )
    )


# The page's ES modules (static/js/dados.js imports them, and they each other), which every
# page loads and the service worker keeps (scorecards.views.offline): one missing here is
# missing from a reload without a network (tests/test_offline.py checks the list).
MODULES = (
    "session",
    "live",
    "versions",
    "unsent",
    "unsent-view",
    "outbox",
    "messages",
    "picker",
    "turn",
    "page",
)


@register.simple_tag
def modules() -> tuple[str, ...]:
    """The addresses of the modules dados.js imports, for the page to ask for them at once
    (modulepreload) rather than one import after another on a slow network. Looked up once
    (0.13 ms a page otherwise): they change only with a deploy, or a test's settings."""
    return _module_urls()


@functools.cache
def _module_urls() -> tuple[str, ...]:
    return tuple(static(f"js/{name}.js") for name in MODULES)


@receiver(setting_changed)
def _static_changed(*, setting, **kwargs):
    if setting in ("STATIC_URL", "STORAGES"):
        _module_urls.cache_clear()
