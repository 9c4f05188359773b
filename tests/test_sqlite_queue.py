"""SQLite writers queue on a file lock (dados.sqlite) rather than in SQLite's busy handler."""

import errno
import fcntl
import os
import sqlite3
import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from dados.durable import synced_before_answer
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


def test_a_second_thread_of_the_same_process_waits_its_turn(transactional_db):
    """gthread workers, and the test suite's live server, write from several threads."""
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
        assert not finished.wait(0.3)
    thread.join(10)
    assert finished.is_set()


def _wrapper(path, timeout):
    from dados.settings import BASE_DIR, database_from_url
    from dados.sqlite.base import DatabaseWrapper

    config = database_from_url(f"sqlite:///{path}", BASE_DIR)
    config["OPTIONS"]["timeout"] = timeout
    config.update({"ATOMIC_REQUESTS": False, "AUTOCOMMIT": True, "CONN_MAX_AGE": 0})
    config.update({"CONN_HEALTH_CHECKS": False, "TIME_ZONE": None})
    config.update({"USER": "", "PASSWORD": "", "HOST": "", "PORT": ""})
    return DatabaseWrapper(config)


def _write_a_row(wrapper):
    wrapper.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)
    with wrapper.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        cursor.execute("INSERT INTO t VALUES (1)")
    wrapper.commit()
    wrapper.set_autocommit(True)


def test_a_thread_that_waited_out_the_timeout_goes_on_without_the_queue(
    tmp_path, django_db_blocker
):
    from dados.sqlite import base

    wrapper = _wrapper(tmp_path / "x.sqlite3", timeout=0.2)
    with django_db_blocker.unblock():
        wrapper.ensure_connection()
        assert base._process_writer.acquire(timeout=5)  # another thread of this process writes
        try:
            _write_a_row(wrapper)  # after 0.2 s, through SQLite's own locking
            assert not wrapper._queued
        finally:
            base._process_writer.release()
            wrapper.close()
    with sqlite3.connect(tmp_path / "x.sqlite3") as check:
        assert check.execute("SELECT count(*) FROM t").fetchone() == (1,)


def test_without_a_lock_file_writes_go_on_as_before(tmp_path, django_db_blocker):
    (tmp_path / "x.sqlite3-writers").symlink_to(tmp_path / "missing" / "lock")
    wrapper = _wrapper(tmp_path / "x.sqlite3", timeout=5)
    with django_db_blocker.unblock():
        try:
            wrapper.ensure_connection()
            assert wrapper._queue_fd is None
            _write_a_row(wrapper)
        finally:
            wrapper.close()
    with sqlite3.connect(tmp_path / "x.sqlite3") as check:
        assert check.execute("SELECT count(*) FROM t").fetchone() == (1,)


def _synchronous() -> int:
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA synchronous")
        return cursor.fetchone()[0]


FULL, NORMAL = 2, 1


def test_a_commit_is_synced_to_disk_after_the_queue_is_let_go(transactional_db, monkeypatch):
    """NORMAL inside the transaction, then the WAL's own fdatasync before commit returns."""
    from dados.sqlite import base

    with transaction.atomic():  # the connection's first transaction runs with FULL
        UserFactory(username="ana")
    synced = []

    def fdatasync(fd):
        path = os.readlink(f"/proc/self/fd/{fd}")
        # Who reads now sees the commit; the next writer may already write.
        other = sqlite3.connect(connection.settings_dict["NAME"])
        try:
            seen = other.execute(
                "SELECT count(*) FROM accounts_user WHERE username = 'ben'"
            ).fetchone()[0]
        finally:
            other.close()
        synced.append((path, _taken(_queue_path()), seen))

    monkeypatch.setattr(base, "_datasync", fdatasync)
    assert _synchronous() == FULL
    with transaction.atomic():
        assert _synchronous() == NORMAL
        UserFactory(username="ben")
        assert synced == []
    wal = f"{connection.settings_dict['NAME']}-wal"
    assert synced == [(os.path.realpath(wal), False, 1)]
    assert _synchronous() == FULL  # outside transactions SQLite syncs every commit itself


def test_a_rolled_back_transaction_is_not_synced_and_goes_back_to_full(
    transactional_db, monkeypatch
):
    from dados.sqlite import base

    with transaction.atomic():
        UserFactory(username="ana")
    synced = []
    monkeypatch.setattr(base, "_datasync", synced.append)
    with pytest.raises(RuntimeError):
        _refused_write()
    assert synced == []
    assert _synchronous() == FULL
    assert not _taken(_queue_path())


def test_a_commit_that_cannot_be_synced_fails_and_drops_its_connection(
    transactional_db, monkeypatch
):
    """As PostgreSQL on a failed fsync: never acknowledged, and not written on through a
    file whose next sync could not tell."""
    from django.db import OperationalError

    from dados.sqlite import base

    with transaction.atomic():
        UserFactory(username="ana")

    def failing(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(base, "_datasync", failing)
    before = connection.connection
    with pytest.raises(OperationalError, match="could not be synced"), transaction.atomic():
        UserFactory(username="ben")
    assert connection.connection is not before  # dropped (Django opened another at once)
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        before.execute("SELECT 1")
    assert not _taken(_queue_path())
    monkeypatch.undo()
    # The next use opens another connection, back to FULL outside transactions.
    assert _synchronous() == FULL
    assert get_user_model().objects.filter(username="ben").exists()  # committed, though


def test_a_database_not_in_wal_mode_keeps_full(transactional_db, monkeypatch):
    from dados.sqlite import base

    synced = []
    monkeypatch.setattr(base, "_datasync", synced.append)
    with transaction.atomic():
        UserFactory(username="ana")
    assert synced == []  # the connection's first transaction runs with FULL
    connection.close()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
        UserFactory(username="ben")
    assert synced == []
    with transaction.atomic():
        UserFactory(username="carla")
    assert len(synced) == 1


def _without_ring(monkeypatch):
    """As where the kernel gives no io_uring: the writeback started, fdatasync at the end."""
    from dados.sqlite import base

    monkeypatch.setattr(base.DatabaseWrapper, "_fsync_ring", lambda self: None)


@pytest.fixture
def recorded_syncs(transactional_db, monkeypatch):
    """The connection past its first transaction (which keeps FULL), without io_uring;
    every writeback started and every fdatasync, in order."""
    from dados.sqlite import base

    with transaction.atomic():
        UserFactory(username="ana")
    _without_ring(monkeypatch)
    calls = []
    monkeypatch.setattr(base, "_start_writeback", lambda fd: calls.append(("start", fd)) or True)
    monkeypatch.setattr(base, "_datasync", lambda fd: calls.append(("sync", fd)))
    return calls


def _wal_fd_path(fd) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def test_in_a_request_a_commit_starts_its_sync_and_the_end_finishes_it(recorded_syncs):
    calls = recorded_syncs
    wal = os.path.realpath(f"{connection.settings_dict['NAME']}-wal")
    with synced_before_answer():
        with transaction.atomic():
            UserFactory(username="ben")
        assert [kind for kind, _fd in calls] == ["start"]
        assert _wal_fd_path(calls[0][1]) == wal
        assert not _taken(_queue_path())  # the next writer need not wait for the disk
        with transaction.atomic():
            UserFactory(username="carla")
        assert [kind for kind, _fd in calls] == ["start", "start"]
    # One fdatasync covers both commits: the WAL's frames are in one file.
    assert [kind for kind, _fd in calls] == ["start", "start", "sync"]
    assert _wal_fd_path(calls[2][1]) == wal
    assert _synchronous() == FULL


def test_outside_a_request_or_without_sync_file_range_a_commit_syncs_at_once(
    recorded_syncs, monkeypatch
):
    from dados.sqlite import base

    calls = recorded_syncs
    with transaction.atomic():  # a management command, a shell
        UserFactory(username="ben")
    assert [kind for kind, _fd in calls] == ["sync"]
    monkeypatch.setattr(base, "_start_writeback", None)  # not Linux
    with synced_before_answer():
        with transaction.atomic():
            UserFactory(username="carla")
        assert [kind for kind, _fd in calls] == ["sync", "sync"]
    assert len(calls) == 2
    # A kernel that refuses to start the writeback: synced at once as well.
    monkeypatch.setattr(base, "_start_writeback", lambda fd: False)
    with synced_before_answer():
        with transaction.atomic():
            UserFactory(username="dora")
        assert len(calls) == 3


def test_a_connection_closed_before_the_end_syncs_as_it_closes(recorded_syncs):
    calls = recorded_syncs
    with synced_before_answer():
        with transaction.atomic():
            UserFactory(username="ben")
        connection.close()
        assert [kind for kind, _fd in calls] == ["start", "sync"]
    assert len(calls) == 2  # nothing left to sync at the end


def test_a_sync_that_fails_at_close_fails_the_request_at_its_end(recorded_syncs, monkeypatch):
    from django.db import OperationalError

    from dados.sqlite import base

    def failing(fd):
        raise OSError(5, "Input/output error")

    def write_then_close_failing():
        with synced_before_answer():
            with transaction.atomic():
                UserFactory(username="ben")
            monkeypatch.setattr(base, "_datasync", failing)
            connection.close()

    with pytest.raises(OperationalError, match="could not be synced"):
        write_then_close_failing()
    monkeypatch.undo()
    assert connection._sync_error is None  # raised once, not again
    with transaction.atomic():  # the connection's first transaction again: FULL
        UserFactory(username="carla")
    synced = []
    _without_ring(monkeypatch)
    monkeypatch.setattr(base, "_start_writeback", lambda fd: True)
    monkeypatch.setattr(base, "_datasync", synced.append)
    with synced_before_answer(), transaction.atomic():
        UserFactory(username="dora")
    assert len(synced) == 1  # the next request's commit is synced, and nothing raised


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="Linux's sync_file_range")
def test_the_kernel_starts_the_writeback(tmp_path):
    from dados.sqlite import base

    fd = os.open(tmp_path / "wal", os.O_RDWR | os.O_CREAT)
    try:
        os.write(fd, b"frame" * 1000)
        assert base._start_writeback is not None
        assert base._start_writeback(fd) is True
        assert base._start_writeback(-1) is False  # a bad file: the caller syncs at once
    finally:
        os.close(fd)


def _organizers_box_write():
    """An organizer's htmx write of 3 into the first player's «Unos», through the whole
    middleware stack (a 500 is answered, not raised): (post, that seat)."""
    from django.test import Client
    from django.urls import reverse

    from tests.factories import make_scorecard

    organizer = UserFactory(username="olga")
    card = make_scorecard(organizer, n=2)
    seat = card.seats.order_by("order").first()
    client = Client(raise_request_exception=False)
    client.force_login(organizer)

    def post():
        return client.post(
            reverse("box", args=[card.pk, seat.pk, "ones"]),
            {"value": "3", "was": "", "version": card.version},
            headers={"HX-Request": "true"},
        )

    return post, seat


def test_a_write_whose_sync_fails_is_answered_with_an_error_not_ok(recorded_syncs, monkeypatch):
    """Through the whole middleware stack: the box write commits, its sync fails when the
    answer is ready, and the organizer gets a 500, never the 200 of a saved box."""
    from dados.sqlite import base
    from scorecards.models import Seat

    post, seat = _organizers_box_write()
    calls = recorded_syncs
    calls.clear()

    def failing(fd):
        calls.append(("sync", fd))
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(base, "_datasync", failing)
    response = post()
    assert response.status_code == 500
    # The error page leaves with every page's security headers.
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'self'" in response["Content-Security-Policy"]
    assert [kind for kind, _fd in calls][-2:] == ["start", "sync"]
    monkeypatch.undo()
    assert Seat.objects.get(pk=seat.pk).ones == 3  # committed, though not known to be on disk


def _ring_or_skip():
    from dados.sqlite.uring import FsyncRing

    ring = FsyncRing.open()
    if ring is None:
        pytest.skip("this kernel gives no io_uring (the writeback path above is used)")
    return ring


def test_the_ring_syncs_a_file_and_reports_what_failed(tmp_path):
    from dados.sqlite import uring

    ring = _ring_or_skip()
    fd = os.open(tmp_path / "wal", os.O_RDWR | os.O_CREAT)
    try:
        os.write(fd, b"frame" * 1000)
        assert ring.submit(fd) is True
        assert ring.submit(fd) is True
        assert ring.in_flight == 2
        ring.collect()
        assert ring.in_flight == 0
        ring.collect()  # nothing in flight: returns at once
        # A file the kernel cannot sync: the error comes back from collect(), after
        # every other sync in flight was waited for.
        assert ring.submit(fd) is True
        assert ring.submit(9999) is True  # not open
        assert ring.submit(fd) is True
        with pytest.raises(OSError, match="fdatasync") as failed:
            ring.collect()
        assert failed.value.errno == errno.EBADF
        assert ring.in_flight == 0
        # A full ring takes no more: the caller syncs itself.
        assert all(ring.submit(fd) for _ in range(uring.ENTRIES))
        assert ring.submit(fd) is False
        ring.collect()
        assert ring.submit(fd) is True  # and it goes on after that
        ring.collect()
    finally:
        ring.close()
        os.close(fd)


@pytest.fixture
def ring_syncs(transactional_db, monkeypatch):
    """The connection past its first transaction, with io_uring; every submission and
    collection of the real ring, and any fdatasync, in order."""
    from dados.sqlite import base, uring

    _ring_or_skip().close()
    with transaction.atomic():
        UserFactory(username="ana")
    calls = []
    submit, collect = uring.FsyncRing.submit, uring.FsyncRing.collect

    def submitted(ring, fd):
        calls.append(("submit", _wal_fd_path(fd)))
        return submit(ring, fd)

    def collected(ring):
        calls.append(("collect", ring.in_flight))
        return collect(ring)

    monkeypatch.setattr(uring.FsyncRing, "submit", submitted)
    monkeypatch.setattr(uring.FsyncRing, "collect", collected)
    monkeypatch.setattr(base, "_datasync", lambda fd: calls.append(("fdatasync", fd)))
    return calls


def test_in_a_request_a_commit_hands_its_sync_to_the_ring_and_the_end_collects_it(ring_syncs):
    calls = ring_syncs
    wal = os.path.realpath(f"{connection.settings_dict['NAME']}-wal")
    with synced_before_answer():
        with transaction.atomic():
            UserFactory(username="ben")
        assert calls == [("submit", wal)]
        assert connection._ring.in_flight == 1
        assert not _taken(_queue_path())  # the next writer need not wait for the disk
        with transaction.atomic():
            UserFactory(username="carla")
        assert calls == [("submit", wal), ("submit", wal)]
    # Both collected before the answer leaves; no fdatasync of its own.
    assert calls == [("submit", wal), ("submit", wal), ("collect", 2)]
    assert connection._ring.in_flight == 0
    assert _synchronous() == FULL
    # Outside a request (a management command), a commit still syncs at once.
    with transaction.atomic():
        UserFactory(username="dora")
    assert calls[-1][0] == "fdatasync"


def test_a_full_ring_falls_back_to_the_writeback_and_fdatasync(ring_syncs, monkeypatch):
    from dados.sqlite import base, uring

    calls = ring_syncs
    monkeypatch.setattr(base, "_start_writeback", lambda fd: calls.append(("start", fd)) or True)
    monkeypatch.setattr(uring, "ENTRIES", 1)
    with synced_before_answer():
        with transaction.atomic():
            UserFactory(username="ben")
        with transaction.atomic():
            UserFactory(username="carla")
    assert [kind for kind, _ in calls] == ["submit", "submit", "start", "collect", "fdatasync"]


def test_a_connection_closed_before_the_end_collects_its_ring_as_it_closes(ring_syncs):
    calls = ring_syncs
    with synced_before_answer():
        with transaction.atomic():
            UserFactory(username="ben")
        connection.close()
        assert [kind for kind, _ in calls] == ["submit", "collect"]
    assert len(calls) == 2  # nothing left at the end
    assert connection._ring is None  # closed with its connection


def test_a_write_whose_ring_sync_fails_is_answered_with_an_error_not_ok(ring_syncs, monkeypatch):
    """As with fdatasync: the box write commits, the sync the ring reports failed, and the
    organizer gets a 500; the connection is dropped."""
    from dados.sqlite import uring
    from scorecards.models import Seat

    post, seat = _organizers_box_write()
    collect = uring.FsyncRing.collect

    def failing(ring):
        collect(ring)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(uring.FsyncRing, "collect", failing)
    before = connection.connection
    response = post()
    assert response.status_code == 500
    assert ("submit", os.path.realpath(f"{connection.settings_dict['NAME']}-wal")) in ring_syncs
    assert connection.connection is not before
    monkeypatch.undo()
    assert Seat.objects.get(pk=seat.pk).ones == 3  # committed, though not known to be on disk
