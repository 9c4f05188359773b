from django.apps import AppConfig


class ScorecardsConfig(AppConfig):
    name = "scorecards"
    verbose_name = "Tarjetas de puntos"
