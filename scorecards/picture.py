"""A finished game's picture for a chat's link preview (the shared page's Open Graph image):
«Dados», the date, the players in position order with their totals, the winner marked.

Drawn on the server with Pillow and the DejaVu Sans font bundled in scorecards/fonts (free,
with its licence there), never the system's: a server without it draws the same picture.
It is drawn once per game (scorecards.services.scorecard_share) and kept with its share.
"""

import functools
import io
from pathlib import Path

from django.conf import settings
from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _
from PIL import Image, ImageDraw, ImageFont

from scorecards.models import without_usernames

# What messaging apps and social sites expect of a large preview.
WIDTH, HEIGHT = 1200, 630
FONTS = Path(__file__).parent / "fonts"
# The site's colours (static/css/dados.css), light: a chat shows previews on either.
BACKGROUND = "#fbf8f3"
TEXT = "#1d1b19"
MUTED = "#5c5650"
LINE = "#d8d0c6"
ACCENT = "#a4231b"
ACCENT_TEXT = "#ffffff"
WINNER_BG = "#f8ece4"
MARGIN = 64
# More players than this and the last rows become «y N más»: the preview stays readable.
ROWS = 6


@functools.cache
def font(size: int, *, bold=False) -> ImageFont.FreeTypeFont:
    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(FONTS / name), size)


def fitted(draw, text: str, face, width: int) -> str:
    """text, cut with «…» where it is wider than width."""
    if draw.textlength(text, font=face) <= width:
        return text
    while text and draw.textlength(text + "…", font=face) > width:
        text = text[:-1]
    return text.rstrip() + "…"


def draw(scorecard) -> bytes:
    """The game's picture as a PNG, in the site's language: its seats as read with the card
    (positions and totals stored at finalize), named as a public page names them."""
    with translation.override(settings.LANGUAGE_CODE):
        return _draw(scorecard, without_usernames(scorecard.seats.all()))


def _draw(scorecard, seats) -> bytes:
    image = Image.new("RGB", (WIDTH, HEIGHT), BACKGROUND)
    pen = ImageDraw.Draw(image)
    # A band at the top: the app's name, and the day the game was finished.
    pen.rectangle((0, 0, WIDTH, 120), fill=ACCENT)
    pen.text((MARGIN, 60), "Dados", font=font(64, bold=True), fill=ACCENT_TEXT, anchor="lm")
    day = formats.date_format(timezone.localtime(scorecard.finalized_at), "DATE_FORMAT")
    pen.text((WIDTH - MARGIN, 60), day, font=font(36), fill=ACCENT_TEXT, anchor="rm")

    ranked = sorted(seats, key=lambda seat: (seat.place, seat.order))
    winners = sum(seat.place == 1 for seat in ranked)
    shown = ranked if len(ranked) <= ROWS else ranked[: ROWS - 1]
    # Fewer players, larger rows: a chat shows the picture a few hundred pixels wide.
    lines = len(shown) + (len(shown) < len(ranked))
    row = min(112, (HEIGHT - 120 - 2 * 30) // lines)
    size = max(36, min(56, row // 2))
    top = 120 + (HEIGHT - 120 - lines * row) // 2
    for n, seat in enumerate(shown):
        y = top + n * row
        middle = y + row // 2
        winner = seat.place == 1
        if winner:
            pen.rounded_rectangle(
                (MARGIN - 24, y + 4, WIDTH - MARGIN + 24, y + row - 4), radius=16, fill=WINNER_BG
            )
            pen.rounded_rectangle(
                (MARGIN - 24, y + 4, MARGIN - 14, y + row - 4), radius=5, fill=ACCENT
            )
        face = font(size, bold=winner)
        colour = ACCENT if winner else TEXT
        pen.text(
            (MARGIN, middle),
            _("%(place)sº") % {"place": seat.place},
            font=face,
            fill=colour,
            anchor="lm",
        )
        total = str(seat.total)
        pen.text(
            (WIDTH - MARGIN, middle), total, font=font(size, bold=True), fill=colour, anchor="rm"
        )
        right = WIDTH - MARGIN - pen.textlength(total, font=font(size, bold=True)) - 40
        if winner:
            label = _("gana") if winners == 1 else _("empate")
            small = font(28, bold=True)
            pen.text((right, middle), label, font=small, fill=ACCENT, anchor="rm")
            right -= pen.textlength(label, font=small) + 32
        left = MARGIN + 110
        pen.text(
            (left, middle),
            fitted(pen, seat.player.name, face, int(right - left)),
            font=face,
            fill=TEXT,
            anchor="lm",
        )
        if not winner and n + 1 < len(shown):
            pen.line((MARGIN, y + row, WIDTH - MARGIN, y + row), fill=LINE, width=2)
    if len(shown) < len(ranked):
        y = top + len(shown) * row + row // 2
        more = len(ranked) - len(shown)
        pen.text(
            (MARGIN + 110, y),
            _("y %(n)s más") % {"n": more},
            font=font(size),
            fill=MUTED,
            anchor="lm",
        )
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()
