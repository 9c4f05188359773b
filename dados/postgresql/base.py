"""PostgreSQL whose box writes commit while their answer is built.

A box write is one statement (scorecards.services). In autocommit PostgreSQL commits it
before answering: the worker waits for the server's WAL flush and only then builds the
answer. Inside a request (dados.durable) the write is instead sent as a pipeline of one
message (run_committing_later): the statement, a Flush and a Sync. The statement runs
as a transaction of its own; the Flush sends its rows back at once, and the server goes
on to commit it at the Sync without waiting for the worker. The answer is built while
the server commits, and the Sync's answer (the commit's outcome) is read when the
answer is ready (sync_commit, from dados.middleware) or before anything else uses the
connection. A commit that fails fails the request; no answer leaves before the commit
is on disk. That answer is awaited in poll(), as psycopg awaits its own: libpq's
blocking wait would hold the GIL, and every other thread of a threaded worker would stop
with it.

Against a BEGIN sent with the statement and a COMMIT sent after its rows (how it was
done before), this saves the worker a message and the server a wake-up and two
statements to parse: 0.3 ms of CPU per write, and the commit starts sooner
(bench/RESULTS.md).

Until the Sync is answered the connection is in libpq's pipeline mode, in a transaction
that Django does not know of: every way in (a cursor, commit, rollback, a change of
autocommit, the health check, close) reads that answer first.
"""

import select

from django.db import OperationalError
from django.db.backends.postgresql import base
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer

from dados import durable

_ROWS = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


class DatabaseWrapper(base.DatabaseWrapper):
    _commit_pending = False  # a statement's Sync was sent and its answer not read yet
    _commit_error = None  # a commit that failed when read early, for the request's end

    def commits_later(self) -> bool:
        """Whether run_committing_later may run a statement now."""
        return durable.inside_request() and self.get_autocommit() and not self.in_atomic_block

    def run_committing_later(self, cursor, params, *, name=None, sql=None) -> list[tuple]:
        """Run one statement as a transaction of its own and return its rows; the answer
        to its commit is read before the request's answer leaves (at once outside a
        request).

        The statement is the one prepared as `name`, or `sql` with $1, $2 … placeholders;
        its parameters and rows are adapted as `cursor` (a Django cursor) adapts them. A
        statement that fails raises its error, and the server has rolled it back.
        """
        pgconn = self.connection.pgconn
        adapt = Transformer.from_context(cursor.cursor)
        values = adapt.dump_sequence(params, [PyFormat.TEXT] * len(params))
        with self.wrap_database_errors:
            try:
                pgconn.enter_pipeline_mode()
                if name is None:
                    pgconn.send_query_params(sql.encode(), values, param_types=adapt.types)
                else:
                    pgconn.send_query_prepared(name.encode(), values)
                pgconn.send_flush_request()  # the rows as soon as they are there
                pgconn.pipeline_sync()  # then the commit
                self._commit_pending = True
                while pgconn.flush():  # the connection does not block: wait for the socket
                    _wait(pgconn, select.POLLOUT)
                result = _next_result(pgconn)
                _next_result(pgconn)  # the end of the statement's results
            except errors.OperationalError:
                self._commit_pending = False
                self.close()
                raise
            if result.status not in _ROWS:
                # The server skips to the Sync and rolls the statement back.
                self._read_commit(failed=True)
                raise errors.error_from_result(result, encoding=adapt.encoding)
            adapt.set_pgresult(result)
            rows = adapt.load_rows(0, result.ntuples, tuple)
        if not durable.finish_later(self):
            self.sync_commit()
        return rows

    def sync_commit(self):
        """Read the answer to the commit sent last; raise if it (or one read early) failed."""
        try:
            self._read_commit()
        finally:
            error, self._commit_error = self._commit_error, None
        if error is not None:
            raise error

    def _read_commit(self, *, failed=False):
        """The pending Sync's answer, if one is pending: every way into the connection
        reads it first. With failed, the statement failed and nothing was to commit."""
        if not self._commit_pending:
            return
        self._commit_pending = False
        pgconn = self.connection.pgconn
        refusals = []
        try:
            with self.wrap_database_errors:
                ends = 0  # libpq's None between one query's results and the next's
                while True:
                    result = _next_result(pgconn)
                    if result is None:
                        ends += 1
                        if ends > 2:  # nothing more to come: the Sync was lost
                            raise errors.OperationalError("the server did not answer the sync")
                        continue
                    if result.status == pq.ExecStatus.PIPELINE_SYNC:
                        break
                    ends = 0
                    if result.status == pq.ExecStatus.FATAL_ERROR:
                        refusals.append(result.error_message.decode(errors="replace"))
                pgconn.exit_pipeline_mode()
        except OperationalError as error:
            if failed:
                self.close()
                return
            self._commit_error = OperationalError(f"the commit's outcome is unknown: {error}")
            self.close()
            raise self._commit_error from error
        if refusals and not failed:
            # A commit the server refused (a deferred check failed, the disk did not
            # take it): it rolled the statement back.
            self._commit_error = OperationalError(f"the commit failed: {refusals[0].strip()}")
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


def _next_result(pgconn):
    """The next result on the connection, waiting for it in poll() (libpq's own blocking
    wait holds the GIL: every other thread of the worker would stop)."""
    pgconn.consume_input()
    while pgconn.is_busy():
        _wait(pgconn, select.POLLIN)
        pgconn.consume_input()
    return pgconn.get_result()


def _wait(pgconn, event):
    """Until the connection's socket is ready."""
    poller = select.poll()
    poller.register(pgconn.socket, event)
    poller.poll()
