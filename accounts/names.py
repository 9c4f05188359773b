"""Players' display names: what may be one, how it is kept, when two are the same, and how
a page shows one.

A name is typed by one player and read by all the others, so it must not be able to
disguise itself or disturb what is around it:

- It has no control or format characters. Bidi controls (U+202A to U+202E, U+2066 to
  U+2069)
  would reorder the text after the name, a total of 195 reading as 591; zero-width
  characters, the soft hyphen and the BOM would make an invisible twin of a name.
- It is kept in NFKC, so «Ana» in fullwidth letters (U+FF21...) is saved as «Ana».
- Two names are the same when they fold alike (`fold`): case, accents, invisible
  characters and lookalike letters of other scripts aside. «Óscar» is «oscar», and
  «Tom» with a Cyrillic «T» (U+0422) is «Tom».
- A page shows it isolated (`isolate`, `<bdi>`), so that a right-to-left name never
  moves the numbers beside it.

The lookalikes are a small table in code rather than a dependency: the Cyrillic, Greek
and Armenian letters that Unicode's confusables data (UTS #39) gives as a single Latin
letter, and a few Latin letters drawn like others (dotless i, small capitals). Full
UTS #39 skeletons would also merge Latin with Latin («l» and «I», «rn» and «m»), which
the table leaves out: two real names may differ by just that.
"""

import unicodedata

from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import get_text_list
from django.utils.translation import gettext

# Never visible as themselves: controls (Cc), format characters such as the bidi
# controls, zero-width characters, the soft hyphen and the BOM (Cf), surrogates (Cs),
# private use (Co), unassigned code points (Cn), and line and paragraph separators.
HIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
# Letters and marks that draw nothing, though their category says otherwise: the Hangul
# fillers, the braille blank, the combining grapheme joiner and Khmer's inherent vowels.
BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f\u17b4\u17b5")

# Letters of other scripts drawn like a Latin letter, mapped to it. Applied after NFKD and
# before casefolding, so Greek capital nu becomes «N» while its small letter becomes «v».
_LOOKALIKE = (
    # Greek
    "ͿΑΒΕΖΗΙΚΜΝΟΡΤΥΧαγινορσυϜϳϺ",  # noqa: RUF001
    "JABEZHIKMNOPTYXayivopouFjM",
    # Cyrillic
    "ЅІЈАВЕКМНОРСТУХЬагеорсухѕіјѡѴѵҮүһҽӀӏԁԌԛԜԝꙇ",  # noqa: RUF001
    "SIJABEKMHOPCTYXbareopcyxsijwVvYyheIidGqWwi",
    # Armenian
    "ՍՏՕագզհոռսցքօ",  # noqa: RUF001
    "USOwqqhnnugfo",
    # Latin letters drawn like other Latin letters
    "ıɑɡɩɪʏᴄᴏᴜᴠᴡᴢꜱ",  # noqa: RUF001
    "iagiiycouvwzs",
)
LOOKALIKES = str.maketrans(
    "".join(_LOOKALIKE[0::2]),
    "".join(_LOOKALIKE[1::2]),
)


def is_hidden(char: str) -> bool:
    """Whether char is a control, format or other character that shows nothing itself."""
    return char in BLANKS or unicodedata.category(char) in HIDDEN_CATEGORIES


def hidden_characters(text: str) -> list[str]:
    """The hidden characters in text, once each, as «U+202E»."""
    found = dict.fromkeys(f"U+{ord(c):04X}" for c in text if is_hidden(c))
    return list(found)


def normalize(text: str) -> str:
    """A name as it is kept: NFKC, each run of spaces one space, none at the ends."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def fold(text: str) -> str:
    """text for comparing names and searching them: case, accents, invisible characters
    and lookalike letters aside. «Óscar» and «oscar» alike, and a Cyrillic «T» (U+0422)
    a Latin «T»."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c) and not is_hidden(c))
    text = unicodedata.normalize("NFKD", text.translate(LOOKALIKES).casefold())
    return " ".join("".join(c for c in text if not unicodedata.combining(c)).split())


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
