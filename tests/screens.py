"""What the view tests of the scorecards share: the request a box picker sends, the
version a page shows, a finished game."""

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
