"""SQLite writers queue on a file lock (dados.sqlite) rather than in SQLite's busy handler."""

import fcntl
import os
import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from tests.factories import UserFactory

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the writers' queue is SQLite's"
)


def _queue_path() -> str:
    return f"{connection.settings_dict['NAME']}-writers"


def _taken(path) -> bool:
    """Whether someone holds the queue: another open file cannot lock it now."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing the file lets go of a lock taken here
    return False


def test_a_write_transaction_holds_the_queue_until_it_commits(transactional_db):
    with transaction.atomic():
        UserFactory(username="ana")
        assert _taken(_queue_path())
    assert not _taken(_queue_path())


def _refused_write():
    with transaction.atomic():
        UserFactory(username="ana")
        raise RuntimeError("refused")


def test_a_transaction_that_fails_lets_go_of_the_queue(transactional_db):
    with pytest.raises(RuntimeError):
        _refused_write()
    assert not _taken(_queue_path())
    assert not get_user_model().objects.exists()
    assert not connection.in_atomic_block


def test_a_writer_waits_for_the_one_before_it_and_then_writes(transactional_db):
    connection.ensure_connection()
    holder = os.open(_queue_path(), os.O_RDWR)  # another process's writer, in effect
    fcntl.flock(holder, fcntl.LOCK_EX)
    done, errors = threading.Event(), []

    def write():
        try:
            with transaction.atomic():
                UserFactory(username="ben")
            done.set()
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=write)
    try:
        thread.start()
        assert not done.wait(0.3), "wrote while the queue was taken"
    finally:
        os.close(holder)
    thread.join(10)
    assert done.is_set()
    assert errors == []

    assert get_user_model().objects.filter(username="ben").exists()


def test_a_second_thread_of_the_same_process_leaves_the_queue_to_sqlite(transactional_db):
    """The test suite's live server writes from a thread while a test may hold a write."""
    finished = threading.Event()

    def write():
        try:
            with transaction.atomic():
                UserFactory(username="ben")
            finished.set()
        finally:
            connection.close()

    with transaction.atomic():
        UserFactory(username="ana")
        thread = threading.Thread(target=write)
        thread.start()
        # Waiting in SQLite's busy handler (timeout 20 s), not on the file lock.
        assert not finished.wait(0.3)
    thread.join(10)
    assert finished.is_set()
