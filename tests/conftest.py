import pytest

from tests.factories import UserFactory


@pytest.fixture
def alice(db):
    return UserFactory(username="ana", display_name="Ana")


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client
