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


TRANSLATE = re.compile(r'\{% translate "((?:[^"\\]|\\.)*)"')
BLOCK = re.compile(r"\{% blocktranslate\b[^%]*%\}(.*?)\{% endblocktranslate %\}", re.S)


def looked_up(source: str) -> list[str]:
    """The msgids Django looks a template's translate and blocktranslate tags up by: each
    «%» of their text doubled (as makemessages writes it), each variable as %(name)s."""
    found = [text.replace("%", "%%") for text in TRANSLATE.findall(source)]
    for body in BLOCK.findall(source):
        # The singular: the entry's msgid (its plural is msgid_plural).
        singular = body.split("{% plural %}")[0]
        found.append(re.sub(r"\{\{\s*(\w+)\s*\}\}", r"%(\1)s", singular.replace("%", "%%")))
    return found


def test_the_template_messages_are_found_as_django_looks_them_up():
    """A template's «%» is doubled when its message is looked up: an entry written with one
    is never found, and the page stays in Spanish («El servidor no ha guardado el cambio
    (error %(status)s)» did). The admin's templates also use Django's own catalog."""
    msgids = {msgid for _flags, msgid, _strings in po_entries()}
    sources = [p for p in TEMPLATES.rglob("*.html") if "admin" not in p.parts]
    messages = [message for path in sources for message in looked_up(path.read_text())]
    assert any("%%" in message for message in messages)  # «% de victorias»
    assert len(messages) > 300
    assert [message for message in messages if message not in msgids] == []


@pytest.mark.django_db
def test_the_failed_write_message_is_in_english_for_an_english_page(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = client.get("/entrar/").text
    assert 'data-failed="The server did not save the change (error %(status)s). Try again."' in (
        page
    )


def test_every_message_has_an_english_translation():
    entries = po_entries()
    assert len(entries) > 200
    missing = [msgid for flags, msgid, strings in entries if "fuzzy" in flags or not all(strings)]
    assert missing == []


@pytest.mark.django_db
def test_spanish_is_the_default_even_for_an_english_browser(client):
    page = client.get("/entrar/", headers={"Accept-Language": "en-US,en;q=0.9"})
    assert '<html lang="es">' in page.text
    assert "Anota tus partidas con dados físicos" in page.text


@pytest.mark.django_db
def test_the_language_switch_remembers_english(client):
    response = client.post("/idioma/", {"language": "en", "next": "/entrar/"})
    assert response.status_code == 302
    assert response.url == "/entrar/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"
    page = client.get("/entrar/")
    assert '<html lang="en">' in page.text
    assert "Score your games with physical dice" in page.text
    client.post("/idioma/", {"language": "es", "next": "/entrar/"})
    assert '<html lang="es">' in client.get("/entrar/").text


@pytest.mark.django_db
def test_an_unknown_language_keeps_spanish(client):
    client.post("/idioma/", {"language": "xx", "next": "/entrar/"})
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "xx"
    assert '<html lang="es">' in client.get("/entrar/").text


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["es", "en"])
def test_the_language_switch_names_each_language_in_its_own(client, language):
    client.post("/idioma/", {"language": language, "next": "/entrar/"})
    page = client.get("/entrar/").text
    switch = re.search(r'<form[^>]*class="language-switch".*?</form>', page, re.S)[0]
    names = re.findall(r'<button[^>]*lang="(\w+)"[^>]*>([^<]*)</button>', switch)
    assert names == [("es", "Español"), ("en", "English")]
    assert "Inglés" not in switch


@pytest.mark.parametrize(
    ("language", "date", "moment"),
    [("es", "6/12/2026", "6/12/2026 20:05"), ("en", "6 Dec 2026", "6 Dec 2026 20:05")],
)
def test_short_dates_read_the_same_way_for_each_languages_readers(language, date, moment):
    import datetime

    from django.template import Context, Template
    from django.utils import translation

    template = Template('{{ day|date:"SHORT_DATE_FORMAT" }}|{{ at|date:"SHORT_DATETIME_FORMAT" }}')
    context = Context(
        {"day": datetime.date(2026, 12, 6), "at": datetime.datetime(2026, 12, 6, 20, 5)}
    )
    with translation.override(language):
        assert template.render(context) == f"{date}|{moment}"
