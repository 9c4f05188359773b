"""Where the servers' CPU went: bench/run.py --profile's py-spy samples, by view and layer.

    python bench/profile.py /tmp/profile              # every file run.py wrote there
    python bench/profile.py /tmp/profile/split-100-pages.txt --top 20

Each sample is one thread's stack, caught running (py-spy leaves idle threads out), so a
share of the samples is a share of the server's busy CPU. A sample's view is the first
frame of Dados's own code under Django's handler (the stream's generator for the
streams); its layer is the nearest frame, from the leaf up, that belongs to one of LAYERS.
"""

import argparse
import re
from collections import Counter
from pathlib import Path

APPS = ("scorecards/", "accounts/", "accesses/", "safekeeping/", "dados/", "bench/")
# From the leaf up, the first frame whose file starts with one of these names its layer.
LAYERS = [
    ("SQL", ("django/db/backends/", "sqlite3/", "psycopg/", "psycopg_pool/")),
    ("ORM", ("django/db/",)),
    ("templates", ("django/template/", "django/templatetags/")),
    (
        "request machinery",
        (
            "django/core/handlers/",
            "django/middleware/",
            "django/contrib/",
            "django/http/",
            "django/urls/",
            "django/views/",
            "django/utils/deprecation.py",
            "django_htmx/",
            "whitenoise/",
            "axes/",
            "django/core/signing.py",
            "django/core/cache/",
        ),
    ),
    (
        "server",
        (
            "gunicorn/",
            "uvicorn/",
            "h11/",
            "httptools/",
            "asyncio/",
            "uvloop/",
            "asgiref/",
            "socket.py",
            "selectors.py",
            "django/core/handlers/asgi.py",
        ),
    ),
    ("Dados", APPS),
]
FRAME = re.compile(r"^(?P<function>.*) \((?P<file>[^():]+)(?::\d+)?\)$")
HANDLER = ("django/core/handlers/base.py",)
VIEW_CALLERS = ("_get_response", "_get_response_async")


def frames(line: str) -> tuple[list[tuple[str, str]], int]:
    stack, _, count = line.rpartition(" ")
    parsed = []
    for frame in stack.split(";"):
        if match := FRAME.match(frame):
            parsed.append((match["function"], match["file"]))
    return parsed, int(count)


def layer_of(stack) -> str:
    for _function, file in reversed(stack):
        for layer, prefixes in LAYERS:
            if file.startswith(prefixes) and not (layer == "server" and "handlers" in file):
                return layer
    return "other (Python, C)"


def view_of(stack) -> str:
    """The first frame of Dados's under the handler's call of the view; else, under no
    handler, the first of Dados's (a stream's generator, its version tick)."""
    called = [i for i, (function, file) in enumerate(stack)
              if file.startswith(HANDLER) and function.endswith(VIEW_CALLERS)]  # fmt: skip
    start = called[-1] + 1 if called else 0
    for function, file in stack[start:]:
        if file.startswith(APPS) and not file.startswith(("dados/asgi", "dados/wsgi")):
            return f"{file.removesuffix('.py')}.{function}"
    if called:
        return "a view of Django's own (the admin, static files)"
    if any(file.startswith(HANDLER) for _, file in stack):
        return "Django's request machinery, before or after the view"
    return "outside any request (the server)"


def summarize(path: Path, rate: int, top: int) -> str:
    by_view, by_layer, by_pair, leaves = Counter(), Counter(), Counter(), Counter()
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        stack, count = frames(line)
        view, layer = view_of(stack), layer_of(stack)
        by_view[view] += count
        by_layer[layer] += count
        by_pair[view, layer] += count
        if stack:
            leaves[f"{stack[-1][0]} ({stack[-1][1]})"] += count
    total = sum(by_view.values()) or 1
    layers = [name for name, _ in by_layer.most_common()]
    lines = [f"### {path.name}: {total} samples, {total / rate:.1f} CPU-seconds", "",
             "| view | share | " + " | ".join(layers) + " |",
             "|---|--:|" + "--:|" * len(layers)]  # fmt: skip
    for view, count in by_view.most_common(top):
        cells = [f"{by_pair[view, layer] / total:.1%}" for layer in layers]
        lines.append(f"| {view} | {count / total:.1%} | " + " | ".join(cells) + " |")
    lines.append("| **all** | 100% | " + " | ".join(
        f"**{by_layer[layer] / total:.1%}**" for layer in layers) + " |")  # fmt: skip
    lines += ["", "Where the samples were caught (leaf functions):", ""]
    lines += [f"- {count / total:.1%} {leaf}" for leaf, count in leaves.most_common(top)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="files or folders of raw stacks")
    parser.add_argument("--rate", type=int, default=100, help="samples per second (run.py's)")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    for path in args.paths:
        for file in sorted(path.glob("*.txt")) if path.is_dir() else [path]:
            print(summarize(file, args.rate, args.top), end="\n\n")


if __name__ == "__main__":
    main()
