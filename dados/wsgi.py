import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dados.settings")

application = get_wsgi_application()
# The URLconf and the views, loaded now rather than by the first request.
get_resolver().url_patterns  # noqa: B018

# What is loaded by now (Django, the apps, the URLconf and views) lives as long as the worker:
# moved out of the garbage collector's way, a collection only walks what requests made.
# Every request allocates thousands of objects, so collections are frequent; a box write
# triggers several (bench/RESULTS.md).
gc.freeze()
