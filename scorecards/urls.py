from django.urls import path

from scorecards import views

urlpatterns = [
    path("tarjetas/nueva/", views.scorecard_new, name="scorecard_new"),
    path("historial/", views.history, name="history"),
]
