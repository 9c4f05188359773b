import functools

from django import template
from django.urls import reverse

from scorecards.labels import BOX_LABELS, names_list
from scorecards.rules import Category
from scorecards.sheet import url_setup

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
    return _page_url(name, *url_setup())


@functools.lru_cache(maxsize=64)
def _page_url(name, _script_prefix, urlconf) -> str:
    return reverse(name, urlconf=urlconf)


# More distinct values than a {% once %} part has (languages times pages): start again.
ONCE_LIMIT = 256


@register.tag
def once(parser, token):
    """{% once value ... %}…{% endonce %}: the part rendered once per process for each
    distinct set of values (and URL prefix and configuration, as {% page_url %}), and
    that HTML reused.

    For the parts of every page's header and footer that depend only on the language
    and the page: their translations, links and static files cost 0.3 ms of every page
    (bench/RESULTS.md). The part may use nothing that changes from request to request
    besides these values (no user, form, token or nonce), nor anything that changes
    while the process runs. Templates are compiled once per process in production (the
    cached loader), so each {% once %} node keeps its HTML as long.
    """
    values = [parser.compile_filter(bit) for bit in token.split_contents()[1:]]
    nodelist = parser.parse(("endonce",))
    parser.delete_first_token()
    return OnceNode(nodelist, values)


class OnceNode(template.Node):
    def __init__(self, nodelist, values):
        self.nodelist, self.values = nodelist, values
        self.rendered = {}

    def render(self, context):
        key = (*url_setup(), *(value.resolve(context) for value in self.values))
        html = self.rendered.get(key)
        if html is None:
            html = self.nodelist.render(context)
            if len(self.rendered) >= ONCE_LIMIT:
                self.rendered.clear()
            self.rendered[key] = html
        return html
