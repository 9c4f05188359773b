from pathlib import Path

import pytest

from scorecards import triggers
from tests.browsing import CHROMIUM
from tests.factories import UserFactory, make_scorecard


def pytest_configure(config):
    # Tests serve static files as production does, from collectstatic's manifest: built
    # by the main process before any xdist worker starts, when a static file is newer.
    if not hasattr(config, "workerinput") and _static_changed():
        from django.core.management import call_command

        call_command("collectstatic", interactive=False, verbosity=0)


def _static_changed() -> bool:
    from django.conf import settings

    manifest = Path(settings.STATIC_ROOT) / "staticfiles.json"
    if not manifest.exists():
        return True
    built = manifest.stat().st_mtime
    sources = (path for folder in settings.STATICFILES_DIRS for path in Path(folder).rglob("*"))
    return any(path.stat().st_mtime > built for path in sources)


@pytest.fixture(autouse=True, scope="session")
def _static_files_read_once():
    """WhiteNoise reads every collected static file's metadata (1,100 of them) when a
    middleware chain is built, as a server does once at its start. Django's test Client
    builds one per client, so each test paid ~80 ms for it: here the files are read once
    for each folder and WhiteNoise configuration, and each new chain gets the same list."""
    import os

    from django.conf import settings
    from whitenoise.middleware import WhiteNoiseMiddleware

    read = WhiteNoiseMiddleware.update_files_dictionary
    known = {}

    def update_files_dictionary(self, root, prefix):
        configuration = tuple(
            repr(getattr(settings, name, None))
            for name in sorted(dir(settings))
            if name.startswith("WHITENOISE_") or name in ("DEBUG", "STORAGES")
        )
        key = (root, prefix, os.stat(root).st_mtime_ns, configuration)
        if key not in known:
            kept, self.files = self.files, {}
            read(self, root, prefix)
            known[key], self.files = self.files, kept
        self.files.update(known[key])

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WhiteNoiseMiddleware, "update_files_dictionary", update_files_dictionary)
        yield


@pytest.fixture(autouse=True, scope="session")
def _quick_password_hashes():
    """Passwords hashed in this process (the factories' players, the pages' log-ins on the
    live server thread) with Django's quick test hasher, as Django's docs advise for
    tests: the production one takes 0.3 s of CPU on purpose, at every log-in. Hashes made
    with it still check (it stays in the list); the app servers the tests start as
    processes of their own (tests/liveserver.py) keep the production settings."""
    from django.conf import settings
    from django.test import override_settings

    quick = ["django.contrib.auth.hashers.MD5PasswordHasher", *settings.PASSWORD_HASHERS]
    with override_settings(PASSWORD_HASHERS=quick):
        yield


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with empty caches (the pages', the rendered rows'), as its database
    starts empty."""
    from django.core.cache import caches

    for cache in caches.all(initialized_only=True):
        cache.clear()
    yield
    for cache in caches.all(initialized_only=True):
        cache.clear()


@pytest.fixture(autouse=True)
def _site_language():
    """Each test starts in Spanish: a request leaves the language its cookie chose active
    on the thread (dados.middleware.LanguageMiddleware activates each request's own), and
    an English request's test would otherwise hand English to whichever test the worker
    runs next."""
    from django.conf import settings
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)


# The players most tests seat at the table.
@pytest.fixture
def ana(db):
    return UserFactory(username="ana", display_name="Ana")


@pytest.fixture
def ben(db):
    return UserFactory(username="ben", display_name="Ben")


@pytest.fixture
def carla(db):
    return UserFactory(username="carla", display_name="Carla")


@pytest.fixture
def organizer(db):
    return UserFactory(username="org", display_name="Olga")


@pytest.fixture
def card(organizer, ana, ben):
    return make_scorecard(organizer, [ana, ben])


@pytest.fixture
def org_client(client, organizer):
    client.force_login(organizer)
    return client


@pytest.fixture
def ana_client(client, ana):
    client.force_login(ana)
    return client


@pytest.fixture
def scripted(settings):
    """The server's dice are the faces the test puts in this list, in order."""
    from tests.dice import Scripted

    settings.DICE_SOURCE = "tests.dice.Scripted"
    Scripted.faces.clear()
    yield Scripted.faces
    Scripted.faces.clear()


def _finalized_triggers(action):
    from django.db import connection

    with connection.schema_editor() as editor:
        getattr(triggers.CURRENT, action)(editor)


@pytest.fixture
def _recreate_finalized_triggers(django_db_blocker):
    yield
    with django_db_blocker.unblock():
        _finalized_triggers("create")


@pytest.fixture
def flushable_db(_recreate_finalized_triggers, transactional_db):
    """transactional_db for tests that finalize cards.

    The triggers that protect finalized cards also refuse the flush that ends a
    transactional test, so they are dropped just for it and created again after.
    """
    yield
    _finalized_triggers("drop")


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.fail("Chromium is missing: run `make test` (it installs Debian's chromium package)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls made by
    # the test itself (arranging players, reading results) are still synchronous.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def server(flushable_db):
    """A live server that serves static files the production way, through WhiteNoise."""
    from django.test.testcases import LiveServerThread

    thread = LiveServerThread("localhost", static_handler=lambda handler: handler, port=0)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    yield f"http://localhost:{thread.port}"
    thread.terminate()


@pytest.fixture(scope="module")
def seeded_site(request, tmp_path_factory):
    """A migrated SQLite database with what the module's SEED script made, for each of its
    tests' servers to copy: migrated and seeded once (each player's password hashed as in
    production, 0.3 s apiece), not for every test; and what SEED printed."""
    from tests.factories import PASSWORD
    from tests.liveserver import seeded_template, template_database

    folder = tmp_path_factory.mktemp("template")
    with (
        template_database("dados_site", folder, postgres=False) as template,
        seeded_template(
            template, folder, False, "dados_site", request.module.SEED, PASSWORD
        ) as seeded,
    ):
        yield seeded


@pytest.fixture
def site(seeded_site, tmp_path):
    """uvicorn on a fresh copy of the module's seeded database, and what SEED made."""
    from tests.liveserver import served_copy

    with served_copy(*seeded_site, tmp_path) as seeded:
        yield seeded


@pytest.fixture
def phones(browser, site):
    """A phone of its own (360 px) for a user, on one of the module's SEED cards, with the
    service worker ready (the outbox's tests)."""
    from tests.browsing import log_in

    server, seeded = site
    contexts = []

    def open_phone(username, card="physical", context=None):
        if context is None:
            context = browser.new_context(
                viewport={"width": 360, "height": 740}, base_url=server.base
            )
            contexts.append(context)
        page = context.new_page()
        log_in(page, username)
        page.goto(f"/tarjetas/{seeded[card]}/")
        page.evaluate("navigator.serviceWorker.ready.then(() => true)")
        page.seats = seeded["seats"]
        return page

    yield open_phone
    for context in contexts:
        context.close()
