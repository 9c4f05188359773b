"""The floors: the least an authenticated request costs in this app and middleware stack.

Same middleware as every page (session and user lookup, CSRF, CSP, axes ...), no query of
its own and a few bytes of answer. Each scenario's median is reported as a multiple of it.
The durable write floor adds the least a write that must survive a crash costs.
"""

from django.contrib.auth.decorators import login_required
from django.db import connection, transaction
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET, require_POST

from dados import prepared

TICKS = "bench_tick"  # the rows floor_write rewrites


def create_ticks(rows: int) -> None:
    """(Re)create the rows floor_write rewrites, numbered 1 to rows, in the database."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {TICKS}")
        cursor.execute(f"CREATE TABLE {TICKS} (id integer PRIMARY KEY, n integer NOT NULL)")
        cursor.executemany(
            f"INSERT INTO {TICKS} (id, n) VALUES (%s, 0)", [(i,) for i in range(1, rows + 1)]
        )


@login_required
@require_GET
def floor_get(request):
    return HttpResponse("ok", content_type="text/plain")


@login_required
@require_POST
def floor_post(request):
    # CsrfViewMiddleware has already checked the X-CSRFToken header against the cookie.
    return HttpResponse("ok", content_type="text/plain")


@login_required
@require_POST
def floor_write(request, n):
    """The POST floor plus one row rewritten in its own transaction, on disk before the
    answer leaves, by the means the box write uses: on PostgreSQL the statement opens the
    transaction and the COMMIT is answered at the end of the request; on SQLite the WAL's
    sync runs while the request ends (dados.durable)."""
    if not 0 < n < 2**31:  # beyond any row; the databases would refuse the number
        raise Http404
    sql = f"UPDATE {TICKS} SET n = n + 1 WHERE id = %s"
    if hasattr(connection, "commit_later") and connection.commits_later():
        with connection.cursor() as cursor:
            prepared.execute(cursor, sql, [n], begin=True)
        connection.commit_later()
    else:
        with transaction.atomic(), connection.cursor() as cursor:
            prepared.execute(cursor, sql, [n])
    return HttpResponse("ok", content_type="text/plain")
