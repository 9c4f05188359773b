"""The app's own scripts and styles reach a phone minified; the rest as they are."""

from django.core.files.base import ContentFile

from dados.storage import MinifiedStaticFilesStorage

SCRIPT = b"// What the next engineer reads.\nvar answer = 42;  // and why\n"
STYLE = b"/* Why it looks so. */\n.cell {\n  color: red;\n}\n"


def saved(tmp_path, name, content):
    storage = MinifiedStaticFilesStorage(location=tmp_path, base_url="/static/")
    source = ContentFile(content)
    source.read()  # as hashing it would have
    storage._save(name, source)
    return (tmp_path / name).read_bytes()


def test_the_apps_scripts_and_styles_are_saved_minified(tmp_path):
    assert saved(tmp_path, "js/dados.js", SCRIPT) == b"var answer=42;"
    assert saved(tmp_path, "css/dados.css", STYLE) == b".cell{color:red}"


def test_other_static_files_are_saved_as_they_are(tmp_path):
    assert saved(tmp_path, "admin/js/core.js", SCRIPT) == SCRIPT
    assert saved(tmp_path, "js/data.json", SCRIPT) == SCRIPT
