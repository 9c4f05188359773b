"""SQLite whose writers queue in the kernel instead of in SQLite's busy handler.

Every write transaction starts with BEGIN IMMEDIATE (settings.sqlite_database). When
another process holds the write lock, SQLite's busy handler sleeps 1, 2, 5, 10 ms …
between tries, while a write holds the lock for about half a millisecond (most of it
the fsync of the commit). Under load the two workers then lost more time asleep than
writing (bench/RESULTS.md). Here a writer first takes an exclusive flock on a file next
to the database, held until its transaction ends, and is woken when the previous one
ends. SQLite's own locking still decides; the queue only orders the app's writers.

The threads of one process take turns on a lock of their own first, for at most the
busy timeout; after that (a thread of the process holds a write transaction open
while waiting for this one) the writer goes straight to SQLite's busy handler, as
without the queue. Between processes the wait has no limit of its own: every holder
is a transaction of the app, a gunicorn worker stuck past its timeout is killed, and
a process that ends lets go of its lock with its file.

The fsync of a commit happens after the write lock is let go. With synchronous=FULL
(settings), SQLite syncs the WAL file inside COMMIT, so the next writer waits for this
one's disk flush as well. A transaction begun here instead runs with
synchronous=NORMAL, whose COMMIT is the same minus that one sync of the WAL (SQLite's
documentation of PRAGMA synchronous), and this connection then fdatasyncs the WAL file
itself, before Django's commit returns (outside requests; see below): nothing is
acknowledged before it is on disk, as with FULL, but the other worker writes meanwhile
(bench/RESULTS.md). Its WAL frames are appended after this one's, and the sync of any
later commit flushes this one's too. Checkpoints and restarts of the WAL are synced by
SQLite as in FULL. The first transaction of a connection, and statements outside
transactions, keep FULL.

Inside a request (dados.durable.synced_before_answer, entered by dados.middleware)
that sync runs while the view builds its answer, and the request waits for it only
when the answer is ready to leave. Where the kernel gives an io_uring (Linux 5.1+, not
refused by a container's seccomp profile), the commit submits the fdatasync itself to
it (dados.sqlite.uring) and the end of the request collects its result, which by then
is there (bench/RESULTS.md, ninth pass). Elsewhere the commit only asks the kernel to
start writing the WAL's new frames out (sync_file_range), and the fdatasync when the
request is done then mostly waits for the disk's cache flush alone (0.12 ms for a
write's 40 KB at once, 0.05 ms when its writing began 0.3 ms earlier); off Linux the
commit syncs at once. The request that wrote answers only after the sync, and a
failed sync fails it. Until then (the rest of that request, about a
millisecond) other connections can already read the commit, and another device may be
shown it before it is on disk; on_commit callbacks also run before the sync.
"""

import ctypes
import fcntl
import logging
import os
import threading

from django.db import OperationalError
from django.db.backends.sqlite3 import base

from dados import durable
from dados.sqlite.uring import FsyncRing

logger = logging.getLogger(__name__)
# fsync where fdatasync is missing (macOS); both flush the WAL's frames.
_datasync = getattr(os, "fdatasync", os.fsync)

# Held by the thread of this process whose connection holds the file lock.
_process_writer = threading.Lock()


def _writeback_starter():
    """fd -> whether the kernel took sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE):
    start writing the file's dirty pages out, without waiting. None off Linux."""
    try:
        function = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    function.restype = ctypes.c_int
    return lambda fd: function(fd, 0, 0, 2) == 0


_start_writeback = _writeback_starter()


class DatabaseWrapper(base.DatabaseWrapper):
    _queue_fd = None  # the open lock file, with a connection to a database file
    _queued = False  # whether this connection holds it
    _wal_fd = None  # the WAL file, opened inside this connection's first transaction
    _wal_checked = False  # whether that was tried (not WAL mode, no file: FULL throughout)
    _sync_after_commit = False  # this transaction commits with NORMAL: sync the WAL after
    _sync_pending = False  # its last commit's sync waits for synced_before_answer's end
    _sync_error = None  # a sync that failed when the connection closed, not yet raised
    _ring = None  # this connection's FsyncRing, if the kernel gave one
    _ring_tried = False

    def get_new_connection(self, conn_params):
        conn = super().get_new_connection(conn_params)
        name = str(self.settings_dict["NAME"])
        if not self.is_in_memory_db() and not name.startswith("file:"):
            try:
                # Read-only is enough to lock it: whoever creates it (the app, or
                # `migrate` run as another user), every user who may read it can queue.
                flags = os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC
                self._queue_fd = os.open(f"{name}-writers", flags, 0o644)
            except OSError:
                self._queue_fd = None  # no queue: SQLite's busy handler, as before
        return conn

    def _start_transaction_under_autocommit(self):
        self._queued = self._queue()
        try:
            if self._wal_fd is not None:
                self.connection.execute("PRAGMA synchronous=NORMAL")
                self._sync_after_commit = True
            super()._start_transaction_under_autocommit()
            if not self._wal_checked and self._queue_fd is not None:
                self._wal_checked = True
                self._open_wal()
        except BaseException:
            # BEGIN may have gone through: its transaction (and SQLite's write lock) ends here.
            if self.connection is not None and self.connection.in_transaction:
                self.connection.rollback()
            self._end_transaction()
            raise

    def _open_wal(self):
        """The WAL file, while this connection is in a transaction: then it is the one
        SQLite uses, and it stays so while the connection is open (SQLite deletes it
        only when the last connection closes; restarts and truncation keep the file)."""
        if self.connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            return
        # SQLite's own name for the database file (symbolic links resolved), as it
        # names its WAL.
        main = next(row[2] for row in self.connection.execute("PRAGMA database_list"))
        try:
            self._wal_fd = os.open(f"{main}-wal", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self._wal_fd = None  # no sync of its own: FULL, as SQLite does it

    def _queue(self) -> bool:
        """Wait for this connection's turn to write; False if SQLite's busy handler must."""
        if self._queue_fd is None or self.transaction_mode != "IMMEDIATE":
            return False
        timeout = float(self.settings_dict["OPTIONS"].get("timeout", 5))
        if not _process_writer.acquire(timeout=timeout):
            return False
        try:
            # Blocking: the kernel wakes the next writer the moment the last one is done
            # (polling with sleeps of 50 µs and more gave 710 writes/s instead of 800).
            fcntl.flock(self._queue_fd, fcntl.LOCK_EX)
        except BaseException:
            _process_writer.release()
            raise
        return True

    def _dequeue(self):
        if self._queued:
            self._queued = False
            try:
                fcntl.flock(self._queue_fd, fcntl.LOCK_UN)
            finally:
                _process_writer.release()

    def _commit(self):
        sync = self._sync_after_commit
        try:
            super()._commit()
        finally:
            committed = self.connection is not None and not self.connection.in_transaction
            try:
                self._end_transaction_when_done()
            finally:
                if sync and committed:
                    self._sync_or_start()

    def _sync_or_start(self):
        """Sync the WAL now, or, inside a request, start it and finish before the answer:
        nothing is answered before it is on disk."""
        if durable.inside_request():
            ring = self._fsync_ring()
            if ring is not None and ring.submit(self._wal_fd):
                durable.finish_later(self)
                return
            if _start_writeback and _start_writeback(self._wal_fd):
                self._sync_pending = True
                durable.finish_later(self)
                return
        self._synced(_datasync, self._wal_fd)

    def _fsync_ring(self):
        if not self._ring_tried:
            self._ring_tried = True
            self._ring = FsyncRing.open()
        return self._ring

    def sync_commit(self):
        """Finish the syncs the request's commits started; raise if one (or one at
        close) failed."""
        try:
            if self._ring is not None and self._ring.in_flight:
                self._synced(FsyncRing.collect, self._ring)
            if self._sync_pending:
                self._sync_pending = False
                self._synced(_datasync, self._wal_fd)
        finally:
            error, self._sync_error = self._sync_error, None
        if error is not None:
            raise self._sync_failed(error)

    def _synced(self, sync, target):
        try:
            sync(target)
        except OSError as error:
            # The commit is visible but maybe not on disk, and Linux reports a failed
            # writeback only once per open file: this connection cannot tell again.
            # Drop it (the next request opens another) and fail the request.
            logger.critical("fdatasync of the SQLite WAL failed: %s", error)
            self.close()
            raise self._sync_failed(error) from error

    @staticmethod
    def _sync_failed(error):
        return OperationalError(f"the commit could not be synced to disk: {error}")

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._end_transaction_when_done()

    def _end_transaction_when_done(self):
        # A commit that failed leaves the transaction open: its rollback lets go.
        if self.connection is None or not self.connection.in_transaction:
            self._end_transaction()

    def _end_transaction(self):
        """Back to FULL for whatever runs outside a transaction, and the next writer's turn."""
        try:
            self._dequeue()
        finally:
            if self._sync_after_commit:
                if self.connection is not None:
                    self.connection.execute("PRAGMA synchronous=FULL")
                self._sync_after_commit = False

    def _close(self):
        # Closed before the request's end: its syncs cannot wait.
        pending = []
        if self._ring is not None and self._ring.in_flight:
            pending.append((FsyncRing.collect, self._ring))
        if self._sync_pending:
            self._sync_pending = False
            pending.append((_datasync, self._wal_fd))
        for sync, target in pending:
            try:
                sync(target)
            except OSError as error:
                logger.critical("fdatasync of the SQLite WAL failed: %s", error)
                self._sync_error = self._sync_error or error
        try:
            return super()._close()
        finally:
            self._sync_after_commit = False
            if self._queue_fd is not None:
                self._dequeue()
                os.close(self._queue_fd)
                self._queue_fd = None
            if self._wal_fd is not None:
                os.close(self._wal_fd)
                self._wal_fd = None
            self._wal_checked = False
            if self._ring is not None:
                self._ring.close()
                self._ring = None
            self._ring_tried = False
