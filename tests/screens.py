"""What the view tests of the scorecards share: the request a box picker sends, the
version a page shows, a finished game, and what a card page shows its viewer."""

import re
from html.parser import HTMLParser
from typing import NamedTuple

from django.urls import reverse

from scorecards import services
from scorecards.models import Scorecard
from tests.factories import fill

HTMX = {"HX-Request": "true"}
SUM_ROWS = ("upper", "upper_bonus", "lower", "yahtzee_bonuses", "total", "place")


def version_of(card):
    return Scorecard.objects.get(pk=card.pk).version


def write(client, card, seat, box, value, was="", htmx=False, version=None):
    """A box write as the picker sends it; from htmx, with the version the page shows."""
    data = {"value": value, "was": was}
    if htmx:
        data["version"] = version_of(card) if version is None else version
    return client.post(
        reverse("box", args=[card.pk, seat.pk, box]), data, headers=HTMX if htmx else {}
    )


def finalize(card):
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)


def card_page(client, card):
    return client.get(reverse("scorecard", args=[card.pk])).text


# The card page's elements each viewer sees: the sheet is the same for everyone, and the
# page hides from its viewer the controls that are not theirs (static/css/dados.css, and
# card.html's viewer_style). This reads those two as the browser does, for the view tests;
# the browser tests check the real thing.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class Viewer(NamedTuple):
    """Who a card page says is looking."""

    me: str
    manager: bool
    part: bool
    every_turn: bool  # plays every seat's digital turn: the card's organizer
    # The rows this viewer does not see while the sheet hides its totals (data-hide-totals):
    # their ids, as the page's style names them; none for whoever manages the card.
    hidden_totals: frozenset[str] = frozenset()

    @classmethod
    def of_page(cls, html: str) -> "Viewer":
        page = re.search(r'<div class="card-page([^"]*)" data-me="(\d+)"', html)
        style = re.search(r"<style[^>]*>(.*?)</style>", html, re.S)[1]
        classes = page[1].split()
        every = "#sheet [data-turn] .not-player" in style
        rule = re.search(r"#sheet\[data-hide-totals\] :is\(([^)]*)\) \{ display: none; \}", style)
        rows = frozenset(re.findall(r"#([\w-]+)", rule[1])) if rule else frozenset()
        return cls(page[2], "manager" in classes, "part" in classes, every, rows)

    def hides(self, classes: set[str], turn: str | None) -> bool:
        hidden = {"only-manager" if not self.manager else "not-manager"}
        if not self.part:
            hidden.add("only-part")
        if turn is not None:
            mine = turn == self.me
            hidden.add("not-mine" if mine else "only-mine")
            hidden.add("not-player" if self.every_turn or mine else "only-player")
        return bool(classes & hidden)


class _Seen(HTMLParser):
    def __init__(self, viewer):
        super().__init__(convert_charrefs=False)
        self.viewer = viewer
        self.out = []
        self.stack = []  # (tag, data-turn in force, hidden)
        self.totals_hidden = False  # by the sheet (data-hide-totals)

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        turn = attributes.get("data-turn", self.stack[-1][1] if self.stack else None)
        hidden = bool(self.stack and self.stack[-1][2])
        classes = set((attributes.get("class") or "").split())
        hidden = hidden or self.viewer.hides(classes, turn)
        if attributes.get("id") == "sheet":
            self.totals_hidden = "data-hide-totals" in attributes
        if self.totals_hidden and attributes.get("id") in self.viewer.hidden_totals:
            hidden = True
        if not hidden:
            self.out.append(self.get_starttag_text())
        if tag not in VOID:
            self.stack.append((tag, turn, hidden))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        while self.stack:
            open_tag, _turn, hidden = self.stack.pop()
            if open_tag == tag:
                break
        else:
            hidden = False
        if not hidden:
            self.out.append(f"</{tag}>")

    def _text(self, text):
        if not (self.stack and self.stack[-1][2]):
            self.out.append(text)

    handle_data = _text

    def handle_entityref(self, name):
        self._text(f"&{name};")

    def handle_charref(self, name):
        self._text(f"&#{name};")

    def handle_comment(self, data):
        self._text(f"<!--{data}-->")


def seen(html: str, viewer: Viewer | None = None) -> str:
    """A card page (or a fragment of one, with the viewer of its page) as its viewer sees
    it: without what the page hides from them."""
    parser = _Seen(viewer or Viewer.of_page(html))
    parser.feed(html)
    parser.close()
    return "".join(parser.out)


def seen_page(client, card, **headers) -> str:
    """The card page as client's viewer sees it."""
    return seen(client.get(reverse("scorecard", args=[card.pk]), headers=headers).text)
