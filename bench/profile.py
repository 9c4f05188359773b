"""In-process timings of the benchmark's scenarios, and a profile of one of them.

    python bench/profile.py                   # median ms and queries per scenario (SQLite)
    python bench/profile.py --profile write   # pyinstrument's view of one scenario
    DATABASE_URL=postgres://... python bench/profile.py --no-seed

Uses the database `make bench` seeded (bench/.cache/, copied so the writes here do not
touch it) unless --no-seed, and Django's test client through the whole middleware stack:
no HTTP and no gunicorn, so the numbers show what the app itself costs per request.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SCENARIOS = ["floor_get", "floor_post", "card", "poll_same", "poll_changed", "history"]
SCENARIOS += ["player", "ranking", "write"]


def seeded_copy() -> Path:
    seeds = sorted(
        (ROOT / "bench" / ".cache").glob("seed-*.sqlite3"), key=lambda path: path.stat().st_mtime
    )
    if not seeds:
        sys.exit("No seeded database: run `make bench BENCH_ARGS='--db sqlite --only card'` once.")
    target = Path(tempfile.mkdtemp(prefix="dados-profile-")) / "db.sqlite3"
    shutil.copyfile(seeds[-1], target)
    return target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--only", action="append", choices=SCENARIOS)
    parser.add_argument("--profile", choices=SCENARIOS, help="print pyinstrument's profile")
    parser.add_argument("--no-seed", action="store_true", help="use DATABASE_URL as it is")
    args = parser.parse_args(argv)

    if not args.no_seed:
        os.environ["DATABASE_URL"] = f"sqlite:///{seeded_copy()}"
    os.environ.setdefault("SECRET_KEY", "dados-profile-only-secret-key-0123456789-abcdefghijklmnop")
    os.environ.update(DEBUG="false", SECURE_SSL_REDIRECT="false", ALLOWED_HOSTS="testserver")
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    import django

    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from bench.run import _allowed
    from bench.seed import HOST_USERNAME
    from scorecards.models import Scorecard, Seat
    from scorecards.rules import Category

    from django.contrib.auth import get_user_model  # isort: skip

    host = get_user_model().objects.get(username=HOST_USERNAME)
    # As in the benchmark: each card in progress has its own organizer; the host plays.
    card = Scorecard.objects.in_progress().select_related("organizer").order_by("pk").first()
    seats = Seat.objects.filter(scorecard=card).select_related("player").order_by("order")
    watcher = next(s.player for s in seats if s.player_id != card.organizer_id)
    seat = seats.last()
    client, organizing, watching = Client(enforce_csrf_checks=False), Client(), Client()
    client.force_login(host)
    organizing.force_login(card.organizer)
    watching.force_login(watcher)
    choices = [v for v in sorted(_allowed(Category.CHANCE)) if v][:2]
    state = {"chance": Seat.objects.values_list("chance", flat=True).get(pk=seat.pk)}
    state["version"] = Scorecard.objects.get(pk=card.pk).version

    def write():
        # As the organizer's page does: the value it showed and the version it was at.
        now = state["chance"]
        state["chance"] = new = choices[0] if now != choices[0] else choices[1]
        body = {
            "value": new,
            "was": "" if now is None else now,
            "version": state["version"],
            "answer": "cells",
        }
        response = organizing.post(
            f"/tarjetas/{card.pk}/casilla/{seat.pk}/chance/",
            urlencode(body),  # as htmx sends it
            content_type="application/x-www-form-urlencoded",
            headers={"HX-Request": "true"},
        )
        state["version"] += 1
        return response

    from scorecards.sheet import poll_path

    def poll(lag):
        # Nothing writes while the polls run: the version read before them stays current.
        card.refresh_from_db(fields=["version"])
        url = f"/tarjetas/{card.pk}/{poll_path(card.pk, card.version - lag)}"
        return lambda: watching.get(url)

    requests = {
        "floor_get": lambda: client.get("/_bench/suelo/"),
        "floor_post": lambda: client.post("/_bench/suelo/post/"),
        "card": lambda: organizing.get(f"/tarjetas/{card.pk}/"),
        "poll_same": poll(0),
        "poll_changed": poll(1),
        "history": lambda: client.get("/historial/"),
        "player": lambda: client.get(f"/jugadores/{host.pk}/"),
        "ranking": lambda: client.get("/clasificacion/"),
        "write": write,
    }
    expected = {"poll_same": 204}
    chosen = [args.profile] if args.profile else (args.only or SCENARIOS)
    print(f"{connection.vendor}, {args.requests} requests each: median and p90 in ms")
    for key in chosen:
        run = requests[key]
        for _ in range(5):  # warm caches and connections
            response = run()
        if response.status_code != expected.get(key, 200):
            sys.exit(f"{key}: answered {response.status_code}")
        if args.profile:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0002)
            profiler.start()
            for _ in range(args.requests):
                run()
            profiler.stop()
            print(profiler.output_text(unicode=True, color=False, show_all=False))
            continue
        times = []
        for _ in range(args.requests):
            began = time.perf_counter()
            run()
            times.append((time.perf_counter() - began) * 1000)
        # Counted apart: capturing queries wraps every cursor in Django's debug cursor,
        # which would add its own cost to the timings above.
        with CaptureQueriesContext(connection) as queries:
            for _ in range(10):
                run()
        per = len(queries.captured_queries) / 10
        times.sort()
        print(
            f"{key:<13} {statistics.median(times):7.2f} {times[int(len(times) * 0.9)]:7.2f}"
            f"   {per:.0f} queries"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
