import os
import warnings

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dados.settings")
# The settings keep no database connection between requests under ASGI (dados.settings).
os.environ.setdefault("DADOS_SERVER", "asgi")

# WhiteNoise answers a static file with a FileResponse, a synchronous iterator, which
# Django's ASGI handler reads whole on a thread before sending, and warns about each
# time. The files are small (the CSS, the script, the icons: under 60 KB each) and,
# with their hashed names, cached by each phone for a year, so that is fine as it is.
warnings.filterwarnings(
    "ignore",
    message="StreamingHttpResponse must consume synchronous iterators",
    category=Warning,
)

application = get_asgi_application()
