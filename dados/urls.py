from django.contrib import admin
from django.urls import include, path
from django.views.i18n import set_language

admin.site.site_header = "Dados — administración"
admin.site.site_title = "Dados"
admin.site.index_title = "Jugadores y tarjetas"

urlpatterns = [
    path("", include("scorecards.urls")),
    path("", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("idioma/", set_language, name="set_language"),
]
