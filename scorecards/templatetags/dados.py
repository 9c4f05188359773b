from django import template
from django.utils.text import get_text_list
from django.utils.translation import gettext as _

from scorecards.labels import BOX_LABELS
from scorecards.rules import Category

register = template.Library()


@register.filter
def names(players) -> str:
    """«Ana, Ben y Carla»: players' names as a sentence list, in the active language."""
    return get_text_list([player.name for player in players], _("y"))


@register.filter
def box_label(category) -> str:
    """A box's name in the active language."""
    return BOX_LABELS[Category(category)]
