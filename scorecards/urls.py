from django.urls import path

from scorecards import views

urlpatterns = [
    path("tarjetas/nueva/", views.scorecard_new, name="scorecard_new"),
    path("tarjetas/nueva/orden/", views.scorecard_order, name="scorecard_order"),
    path("tarjetas/crear/", views.scorecard_create, name="scorecard_create"),
    path("tarjetas/<int:pk>/", views.scorecard_detail, name="scorecard"),
    path("tarjetas/<int:pk>/vivo/", views.scorecard_live, name="scorecard_live"),
    path("tarjetas/<int:pk>/casilla/<int:seat_id>/<str:box>/", views.box, name="box"),
    path("tarjetas/<int:pk>/yahtzee-extra/<int:seat_id>/", views.joker, name="joker"),
    path("tarjetas/<int:pk>/deshacer/", views.undo, name="undo"),
    path("tarjetas/<int:pk>/finalizar/", views.finalize, name="finalize"),
    path("tarjetas/<int:pk>/descartar/", views.discard, name="discard"),
    path("tarjetas/<int:pk>/exportar.json", views.scorecard_json, name="scorecard_json"),
    path("historial/", views.history, name="history"),
    path("historial/exportar.csv", views.history_csv, name="history_csv"),
    path("jugadores/<int:pk>/", views.player, name="player"),
    path("clasificacion/", views.ranking, name="ranking"),
]
