from django.apps import AppConfig


class BackupsConfig(AppConfig):
    name = "safekeeping"
    verbose_name = "Copias de seguridad"
