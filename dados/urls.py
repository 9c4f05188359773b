from django.contrib import admin
from django.urls import include, path
from django.views.i18n import set_language

from scorecards.views import offline

admin.site.site_header = "Dados — administración"
admin.site.site_title = "Dados"
admin.site.index_title = "Jugadores y tarjetas"

urlpatterns = [
    path("", include("scorecards.urls")),
    path("", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("idioma/", set_language, name="set_language"),
    # At the root: a service worker's scope is the folder it is served from.
    path("sw.js", offline.service_worker, name="service_worker"),
    path("sin-conexion/", offline.offline, name="offline"),
]
