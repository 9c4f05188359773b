"""Every user-facing string is translated: in the templates, in the .po file, on the pages."""

import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.po import po_entries

TEMPLATES = Path(settings.BASE_DIR) / "templates"
# Names that are the same in every language.
UNTRANSLATABLE = {"Dados", "Yahtzee", "CSV", "JSON", "Español", "English"}
LETTERS = re.compile(r"[^\W\d_]{2,}")


def bare_text(source: str) -> list[str]:
    """Text a user would read that is not inside a translation tag."""
    source = re.sub(
        r"\{% blocktranslate.*?%\}.*?\{% endblocktranslate %\}", " ", source, flags=re.S
    )
    source = re.sub(r"\{#.*?#\}", " ", source, flags=re.S)
    source = re.sub(r"\{% comment %\}.*?\{% endcomment %\}", " ", source, flags=re.S)
    source = re.sub(r"\{%.*?%\}|\{\{.*?\}\}", " ", source, flags=re.S)
    found = re.findall(r'\b(?:aria-label|title|placeholder|alt)="([^"]*)"', source)
    source = re.sub(r"<(script|style)\b.*?</\1>", " ", source, flags=re.S)
    source = re.sub(r"<!--.*?-->|<[^>]*>", " ", source, flags=re.S)
    found += source.split("\n")
    words = []
    for text in found:
        words += [w for w in LETTERS.findall(text) if w not in UNTRANSLATABLE]
    return words


@pytest.mark.parametrize(
    "template", sorted(str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.html"))
)
def test_every_template_string_is_marked_for_translation(template):
    assert bare_text((TEMPLATES / template).read_text()) == []


def test_every_message_has_an_english_translation():
    entries = po_entries()
    assert len(entries) > 200
    missing = [msgid for flags, msgid, strings in entries if "fuzzy" in flags or not all(strings)]
    assert missing == []
