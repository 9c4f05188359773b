import functools

from django import template
from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse

from scorecards.labels import BOX_LABELS, names_list
from scorecards.rules import Category

register = template.Library()


@register.filter
def names(players) -> str:
    """«Ana, Ben y Carla»: players' names as a sentence list, in the active language."""
    return names_list([player.name for player in players])


@register.filter
def box_label(category) -> str:
    """A box's name in the active language."""
    return BOX_LABELS[Category(category)]


@register.simple_tag
def page_url(name) -> str:
    """{% url name %} for a page without arguments, worked out once per process.

    Every page's header and footer link to seven such pages; through {% url %} they cost
    some 60 µs of each page (bench/RESULTS.md). The URL depends only on the name, the
    prefix the app is served under and the URL configuration. Names without a namespace
    only: {% url %} would look a namespaced one up in the current app.
    """
    if ":" in name:
        raise ValueError(f"page_url takes names without a namespace, not {name!r}")
    return _page_url(name, get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF)


@functools.lru_cache(maxsize=64)
def _page_url(name, _script_prefix, urlconf) -> str:
    return reverse(name, urlconf=urlconf)
