"""PostgreSQL whose box writes commit while their answer is built.

A box write is one statement (scorecards.services). In autocommit PostgreSQL commits it
before answering: the worker waits for the server's WAL flush and only then builds the
answer. Inside a request (dados.durable) the write instead opens its own transaction
(BEGIN, sent with the statement in one message), reads the statement's rows, and sends
COMMIT without waiting for it (commit_later). The answer is built while the server
commits, and its result is read when the answer is ready (sync_commit, from
dados.middleware) or before anything else uses the connection. A COMMIT that fails fails
the request; no answer leaves before the commit is on disk. That answer is awaited in
poll(), as psycopg awaits its own: libpq's blocking wait would hold the GIL, and every
other thread of a threaded worker would stop with it.

Until its COMMIT is answered the connection holds a transaction that Django does not
know of: every way in (a cursor, commit, rollback, a change of autocommit, the health
check, close) reads that answer first.
"""

import select

from django.db import OperationalError
from django.db.backends.postgresql import base
from psycopg import pq
from psycopg.pq import TransactionStatus

from dados import durable


class DatabaseWrapper(base.DatabaseWrapper):
    _commit_pending = False  # a COMMIT was sent and its answer not read yet
    _commit_error = None  # a COMMIT that failed when read early, for the request's end

    def commits_later(self) -> bool:
        """Whether a statement may open a transaction now for commit_later to end."""
        return durable.inside_request() and self.get_autocommit() and not self.in_atomic_block

    def commit_later(self):
        """Send COMMIT for the transaction a statement opened with BEGIN; its answer is
        read before the request's answer leaves."""
        pgconn = self.connection.pgconn
        with self.wrap_database_errors:
            pgconn.send_query(b"COMMIT")
            self._commit_pending = True
            while pgconn.flush():  # the connection does not block: wait for the socket
                _wait(pgconn, select.POLLOUT)
        if not durable.finish_later(self):
            self.sync_commit()

    def rollback_own(self):
        """End a transaction opened with BEGIN that is not to be committed (its statement
        failed, or reading its rows did); a connection that cannot is closed."""
        try:
            if self.connection.info.transaction_status != TransactionStatus.IDLE:
                self.connection.rollback()  # psycopg's own: Django did not open it
        except BaseException:
            self.close()
            raise

    def sync_commit(self):
        """Read the answer to the COMMIT sent last; raise if it (or one read early) failed."""
        try:
            self._read_commit()
        finally:
            error, self._commit_error = self._commit_error, None
        if error is not None:
            raise error

    def _read_commit(self):
        """The pending COMMIT's answer, if one is pending: every way into the connection
        reads it first."""
        if not self._commit_pending:
            return
        self._commit_pending = False
        pgconn = self.connection.pgconn
        results = []
        try:
            with self.wrap_database_errors:
                while True:
                    pgconn.consume_input()
                    while pgconn.is_busy():  # waiting in poll() lets other threads run
                        _wait(pgconn, select.POLLIN)
                        pgconn.consume_input()
                    if (result := pgconn.get_result()) is None:
                        break
                    results.append(result)
        except OperationalError as error:
            self._commit_error = OperationalError(f"the commit's outcome is unknown: {error}")
            self.close()
            raise self._commit_error from error
        # A transaction that failed answers COMMIT with ROLLBACK.
        answers = [(result.status, result.command_status) for result in results]
        if answers != [(pq.ExecStatus.COMMAND_OK, b"COMMIT")]:
            message = next(
                (r.error_message.decode(errors="replace") for r in results if r.error_message),
                "the server did not answer COMMIT: its outcome is unknown",
            )
            self._commit_error = OperationalError(f"the commit failed: {message.strip()}")
            if pgconn.status != pq.ConnStatus.OK:
                self.close()
            raise self._commit_error

    def _cursor(self, name=None):
        self._read_commit()
        return super()._cursor(name)

    def _commit(self):
        self._read_commit()
        return super()._commit()

    def _rollback(self):
        self._read_commit()
        return super()._rollback()

    def _set_autocommit(self, autocommit):
        self._read_commit()
        return super()._set_autocommit(autocommit)

    def is_usable(self):
        try:
            self._read_commit()
        except OperationalError:
            return False
        return super().is_usable()

    def _close(self):
        try:
            self._read_commit()
        except OperationalError:
            pass  # kept in _commit_error for the request's end
        finally:
            self._commit_pending = False
        return super()._close()


def _wait(pgconn, event):
    """Until the connection's socket is ready, without holding the GIL (libpq's own
    blocking waits hold it: every other thread of the worker would stop)."""
    poller = select.poll()
    poller.register(pgconn.socket, event)
    poller.poll()
