"""A request's commits are on disk before its answer leaves, and the disk works while the
answer is built.

The app's database backends (dados.sqlite, dados.postgresql) end a commit made inside a
request in two steps: the commit itself, then the wait for the disk. Inside
synced_before_answer (entered by a middleware placed before anything that may write)
they start the first and leave the second for the end of the request, once the view has
built its answer; outside it (management commands, tests of the services) they do both
at once.
"""

from contextlib import contextmanager
from contextvars import ContextVar

# The connections whose last commit is still to be finished before the answer leaves.
_unfinished: ContextVar[list | None] = ContextVar("dados_unfinished_commits", default=None)


def inside_request() -> bool:
    """Whether a commit made now can be finished at the end of the request."""
    return _unfinished.get() is not None


def finish_later(wrapper) -> bool:
    """Whether wrapper.sync_commit() will be called before this request's answer leaves
    (False outside a request: then the caller finishes its commit at once)."""
    unfinished = _unfinished.get()
    if unfinished is None:
        return False
    unfinished.append(wrapper)
    return True


@contextmanager
def synced_before_answer():
    """Within it, a commit starts and returns; leaving it finishes them all.

    Raises the first error (after trying every one) if a commit could not be finished.
    """
    unfinished = []
    token = _unfinished.set(unfinished)
    try:
        yield
    finally:
        _unfinished.reset(token)
        errors = []
        for wrapper in dict.fromkeys(unfinished):
            try:
                wrapper.sync_commit()
            except Exception as error:  # every one is tried; the first is raised
                errors.append(error)
        if errors:
            raise errors[0]
