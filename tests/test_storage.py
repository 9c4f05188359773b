"""dados.storage: production's static URLs, each worked out once per process."""

import json

import pytest
from whitenoise.storage import CompressedManifestStaticFilesStorage

from dados.storage import MemoizedManifestStaticFilesStorage


def _with_manifest(folder, hashed_css):
    manifest = {"paths": {"css/dados.css": hashed_css}, "version": "1.1"}
    (folder / "staticfiles.json").write_text(json.dumps(manifest))
    return folder


@pytest.fixture
def static_root(tmp_path):
    return _with_manifest(tmp_path, "css/dados.0123abcd.css")


def _storages(static_root):
    options = {"location": static_root, "base_url": "/static/"}
    return (
        MemoizedManifestStaticFilesStorage(**options),
        CompressedManifestStaticFilesStorage(**options),
    )


def _lookups(storage, monkeypatch) -> list:
    """The names the storage looks up in its manifest from now on."""
    looked_up = []
    stored_name = storage.stored_name
    monkeypatch.setattr(
        storage, "stored_name", lambda name: looked_up.append(name) or stored_name(name)
    )
    return looked_up


def test_it_answers_the_hashed_url_whitenoise_would(static_root):
    ours, theirs = _storages(static_root)
    assert (
        ours.url("css/dados.css") == theirs.url("css/dados.css") == "/static/css/dados.0123abcd.css"
    )
    assert ours.url("css/dados.css") == "/static/css/dados.0123abcd.css"  # from its memory


def test_it_works_each_url_out_once(static_root, monkeypatch):
    ours, _theirs = _storages(static_root)
    looked_up = _lookups(ours, monkeypatch)
    for _ in range(3):
        ours.url("css/dados.css")
    assert looked_up == ["css/dados.css"]


def test_a_name_missing_from_the_manifest_fails_every_time(static_root):
    ours, _theirs = _storages(static_root)
    for _ in range(2):  # a failure is not remembered as an answer
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry"):
            ours.url("js/missing.js")


def test_each_storage_remembers_its_own_manifests_urls(tmp_path, static_root):
    other = tmp_path / "other"
    other.mkdir()
    _with_manifest(other, "css/dados.feedf00d.css")
    ours, _theirs = _storages(static_root)
    assert ours.url("css/dados.css") == "/static/css/dados.0123abcd.css"
    theirs_too = MemoizedManifestStaticFilesStorage(location=other, base_url="/static/")
    assert theirs_too.url("css/dados.css") == "/static/css/dados.feedf00d.css"


def test_force_is_not_remembered(static_root, monkeypatch):
    ours, _theirs = _storages(static_root)
    looked_up = _lookups(ours, monkeypatch)
    for _ in range(2):
        assert ours.url("css/dados.css", force=True) == "/static/css/dados.0123abcd.css"
    assert looked_up == ["css/dados.css", "css/dados.css"]
