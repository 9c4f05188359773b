"""Players' display names: what may be one, how it is kept, when two are the same, and how
a page shows one.

A name is typed by one player and read by all the others, so it must not be able to
disguise itself or disturb what is around it:

- It has nothing that shows nothing or changes how the letters beside it look
  (`hidden_characters`). Bidi controls (U+202A to U+202E, U+2066 to U+2069) would reorder
  the text after the name, a total of 195 reading as 591; zero-width characters, joiners,
  the soft hyphen, the BOM, tag characters and variation selectors would make an invisible
  twin of a name; an accent with no letter under it (a lone combining mark) lands on
  whatever is beside it; an enclosing mark (a circle, a square, a keycap: U+20DD...) turns
  the letter before it into a symbol and reaches over its neighbours. Only U+FE0E and
  U+FE0F after a symbol pass: they choose how a symbol is drawn («❤️» as a phone types
  it), and `fold` sets them aside.
- It is not blank once those are set aside (`is_blank`): two acute accents (U+0301) alone
  are no name.
- It is kept in NFKC, so «Ana» in fullwidth letters (U+FF21...) is saved as «Ana».
- Two names are the same when they fold alike (`fold`): case, accents, invisible
  characters and lookalike letters of any script aside. «Óscar» is «oscar», «Tom» with a
  Cyrillic «T» (U+0422) is «Tom», «Ana» with a Cherokee «A» (U+13AA) is «Ana», and so is
  «ᴀna» with a small capital (U+1D00) or «Ⲁna» with a Coptic alfa (U+2C80).
- A page shows it isolated (`isolate`, `<bdi>`), so that a right-to-left name never
  moves the numbers beside it.

The lookalikes come from Unicode's confusables data (UTS #39) as confusable-homoglyphs
ships it: pure Python, the package django-registration uses to refuse lookalike usernames,
its data updated with Unicode's. Each letter outside ASCII becomes the ASCII letter the data
draws it like; ASCII itself is left alone, because full UTS #39 skeletons (ICU's, or the
`confusables` package's) also merge Latin with Latin («l» and «I», «rn» and «m»), and two
real names may differ by just that («Erna», «Ema»). Where the data has no ASCII letter for
a letter, Unicode's own names still tell of two kinds: a Latin small capital is its letter
drawn small (U+1D00 LATIN LETTER SMALL CAPITAL A), and the Coptic alphabet's first 25
letters (U+2C80 to U+2CB1) were split from the Greek letters they are drawn as, so each
folds as that Greek capital does (its small letter, as that capital drawn small).
"""

import functools
import unicodedata

from confusable_homoglyphs import confusables
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import get_text_list
from django.utils.translation import gettext

# Never visible as themselves: controls (Cc), format characters such as the bidi
# controls, joiners, zero-width and tag characters, the soft hyphen and the BOM (Cf),
# surrogates (Cs), private use (Co), unassigned code points (Cn), and line and paragraph
# separators.
HIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
# Letters, marks and symbols that draw nothing, though their category says otherwise: the
# Hangul fillers, the braille blank, the combining grapheme joiner, Khmer's inherent vowels
# and the object replacement character (a stand-in that most fonts leave empty).
BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5\ufffc")
# Marks that draw nothing and change the look of the character before them: the variation
# selectors, ideographic ones and Mongolian free ones.
SELECTORS = frozenset(
    chr(c) for c in [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), *range(0x180B, 0x1810)]
)
# Text or emoji style: after a symbol, all they change is how that symbol is drawn.
EMOJI_STYLE = frozenset("\ufe0e\ufe0f")
# The Greek capitals that Coptic's capitals U+2C80, U+2C82 ... U+2CB0 were split from, in
# order: alfa, vida, gamma, dalda, eie, sou, zata, hate, thethe, iauda, kapa, laula, mi, ni,
# ksi, o, pi, ro, sima, tau, ua, fi, khi, psi, oou.
GREEK_OF_COPTIC = dict(
    zip(map(chr, range(0x2C80, 0x2CB2, 2)), "ΑΒΓΔΕϚΖΗΘΙΚΛΜΝΞΟΠΡϹΤΥΦΧΨΩ", strict=True)
)
SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "


def is_hidden(char: str) -> bool:
    """Whether char is a control, format or other character that shows nothing itself."""
    return char in BLANKS or char in SELECTORS or unicodedata.category(char) in HIDDEN_CATEGORIES


def is_mark(char: str) -> bool:
    """Whether char is a combining mark, drawn on the character before it."""
    return unicodedata.category(char).startswith("M") and not is_hidden(char)


def is_enclosing(char: str) -> bool:
    """Whether char is an enclosing mark, drawn round the character before it."""
    return unicodedata.category(char) == "Me"


def invisible_characters(text: str) -> list[str]:
    """The characters in text that show nothing themselves, once each, as «U+202E»."""
    found, previous = {}, ""
    for char in text:
        style = char in EMOJI_STYLE and previous and unicodedata.category(previous) == "So"
        if is_hidden(char) and not style:
            found[f"U+{ord(char):04X}"] = None
        previous = char
    return list(found)


def lone_marks(text: str) -> list[str]:
    """The combining marks that have no character to be drawn on in text as it is kept
    (at its start, or after a space), once each, as «U+0301»."""
    found, on_something = {}, False
    # As kept: NFKC makes a spacing accent (U+00B4) a space and a combining one.
    for char in normalize(text):
        if is_mark(char):
            if not on_something:
                found[f"U+{ord(char):04X}"] = None
        elif not is_hidden(char):
            on_something = not char.isspace()
    return list(found)


def enclosing_marks(text: str) -> list[str]:
    """The enclosing marks in text, once each, as «U+20DD»."""
    return list(dict.fromkeys(f"U+{ord(char):04X}" for char in text if is_enclosing(char)))


def hidden_characters(text: str) -> list[str]:
    """Every character that may not be in a name, once each, as «U+202E»: the invisible
    ones, the lone marks and the enclosing ones."""
    found = invisible_characters(text) + lone_marks(text) + enclosing_marks(text)
    return list(dict.fromkeys(found))


def is_blank(text: str) -> bool:
    """Whether text shows nothing to read once invisible characters, marks and spaces are
    set aside."""
    return all(is_hidden(c) or is_mark(c) or c.isspace() for c in normalize(text))


def normalize(text: str) -> str:
    """A name as it is kept: NFKC, each run of spaces one space, none at the ends."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def fold(text: str) -> str:
    """text for comparing names and searching them: case, accents, invisible characters
    and lookalike letters aside. «Óscar» and «oscar» alike, and a Cyrillic «T» (U+0422)
    a Latin «T»."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not _is_accent(c) and not is_hidden(c))
    # Lookalikes before casefolding, so Greek capital nu is «N» and its small letter «v»;
    # and after, for what casefolding makes (Cherokee small letters fold to capitals).
    text = _latin(_latin(text).casefold()).casefold()
    text = unicodedata.normalize("NFKD", text)
    return " ".join("".join(c for c in text if not _is_accent(c)).split())


def _is_accent(char: str) -> bool:
    return bool(unicodedata.combining(char)) or is_enclosing(char)


def _latin(text: str) -> str:
    return "".join(map(latin_lookalike, text))


@functools.cache
def latin_lookalike(char: str) -> str:
    """The ASCII letters char is drawn like, per Unicode's confusables data, or else as a
    small capital or a Coptic letter (the module's docstring), or char itself: Cherokee
    letter go (U+13AA) is «A», Coptic gamma (U+2C84) Greek «Γ». ASCII is left as it is."""
    if char.isascii():
        return char
    found = confusables.is_confusable(char, greedy=True)
    for homoglyph in found[0]["homoglyphs"] if found else []:
        # Right-to-left lookalikes come wrapped in LEFT-TO-RIGHT MARKs.
        glyph = homoglyph["c"].strip("\u200e")
        if glyph.isascii() and glyph.isalpha():
            # The data draws a stroke as «l»; a capital one passes for an «I».
            return "I" if glyph == "l" and char.isupper() else glyph
    letter = unicodedata.name(char, "").removeprefix(SMALL_CAPITAL)
    if len(letter) == 1 and letter.isascii():
        return letter.lower()
    if char in GREEK_OF_COPTIC:
        return latin_lookalike(GREEK_OF_COPTIC[char])
    if char.upper() in GREEK_OF_COPTIC:
        return latin_lookalike(GREEK_OF_COPTIC[char.upper()]).lower()
    return char


# What a suggested username keeps besides lowercase ASCII letters and digits: what Django's
# usernames allow and a phone's keyboard has at hand.
USERNAME_MARKS = frozenset(".-_")


def plain_username(text: str) -> str:
    """text as a username that any keyboard types: lowercase ASCII letters and digits, and
    «.», «-» or «_»; accents left off the letters, spaces and anything else left out.
    «María José» is «mariajose», «Íñigo» «inigo»."""
    decomposed = unicodedata.normalize("NFKD", text).casefold()
    return "".join(c for c in decomposed if (c.isascii() and c.isalnum()) or c in USERNAME_MARKS)


def free_username(base: str, taken) -> str:
    """base, or base2, base3... : the first that is not in taken (casefolded usernames)."""
    candidate, n = base, 1
    while candidate.casefold() in taken:
        n += 1
        candidate = f"{base}{n}"
    return candidate


def sort_key(name: str) -> tuple[str, str]:
    """A key that puts names in Spanish alphabetical order, as every list of players is
    shown: case and accents aside («Ángela» beside «Ana»), but «ñ» a letter of its own
    after «n» («Nuria» before «Ñoño»); names that still sort alike, by their text.
    In Python rather than the database's collation, so SQLite and PostgreSQL agree."""
    decomposed = unicodedata.normalize("NFD", name)
    # «~» sorts after every letter: «n~» after «nz», and before «o».
    spanish = decomposed.replace("n\u0303", "n~").replace("N\u0303", "N~")
    return fold(spanish), name


def isolate(name) -> SafeString:
    """A name in HTML, isolated from the text around it: a right-to-left name, or one
    with bidi controls saved before they were refused, cannot reorder what follows it."""
    return format_html("<bdi>{}</bdi>", name)


def isolate_text(name) -> str:
    """A name isolated where markup cannot go (a page's <title>, an attribute): between
    FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE."""
    return f"\u2068{name}\u2069"


def names_html(names) -> SafeString:
    """«Ana, Ben y Carla» in HTML, each name isolated, in the active language."""
    isolated = [isolate(name) for name in names]
    return mark_safe(get_text_list(isolated, format_html("{}", gettext("y"))))


def sentence(text: str, **values) -> SafeString:
    """A translated %-style sentence in HTML: the text and values escaped, except what is
    already HTML, such as isolated names."""
    escaped = {key: conditional_escape(value) for key, value in values.items()}
    return mark_safe(conditional_escape(text) % escaped)
