from django import template

from scorecards.labels import box_name, names_list

register = template.Library()


@register.filter
def names(players) -> str:
    """«Ana, Ben y Carla»: players' names as a sentence list, in the active language."""
    return names_list([player.name for player in players])


@register.filter
def box_label(category) -> str:
    """A box's name in the active language."""
    return box_name(category)
