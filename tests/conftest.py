import importlib

import pytest

from tests.factories import UserFactory


@pytest.fixture
def alice(db):
    return UserFactory(username="ana", display_name="Ana")


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


def _finalized_triggers(action):
    from django.db import connection

    migration = importlib.import_module("scorecards.migrations.0002_finalized_triggers")
    with connection.schema_editor() as editor:
        getattr(migration, action)(None, editor)


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
