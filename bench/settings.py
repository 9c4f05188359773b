"""The production settings plus the benchmark's floor views (bench/urls.py).

Only `make bench` serves these settings: the floor views are never in the app's own URLs.
"""

from dados.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
