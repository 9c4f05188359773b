"""Read the English .po file: the translations the app ships."""

import ast
import re
from pathlib import Path

PO = Path(__file__).resolve().parent.parent / "locale" / "en" / "LC_MESSAGES" / "django.po"


def po_entries():
    """(flags, msgid, [msgstr, ...]) for every live entry of the English .po file."""
    entries = []
    for block in PO.read_text().split("\n\n")[1:]:
        fields, current = {}, None
        for line in block.splitlines():
            if match := re.match(r'^(msgid|msgid_plural|msgstr(?:\[\d\])?) (".*")$', line):
                current = match.group(1)
                fields[current] = ast.literal_eval(match.group(2))
            elif line.startswith('"') and current:
                fields[current] += ast.literal_eval(line)
        if "msgid" in fields and not block.lstrip().startswith("#~"):
            flags = " ".join(line for line in block.splitlines() if line.startswith("#,"))
            strings = [v for k, v in fields.items() if k.startswith("msgstr")]
            entries.append((flags, fields["msgid"], strings))
    return entries


def spanish_phrases() -> list[str]:
    """Spanish source texts an English page must never show (their fixed parts)."""
    phrases = set()
    for _flags, msgid, strings in po_entries():
        if strings and strings[0] == msgid:
            continue
        for part in re.split(r"%\(\w+\)s|<[^>]+>", msgid.replace("%%", "%")):
            part = part.strip(" .,:;·—()«»")
            if len(part) >= 8 and " " in part:
                phrases.add(part)
    return sorted(phrases)
