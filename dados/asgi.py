import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dados.settings")
# The settings keep no database connection between requests under ASGI (dados.settings).
os.environ.setdefault("DADOS_SERVER", "asgi")

application = get_asgi_application()
