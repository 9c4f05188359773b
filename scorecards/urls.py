from django.urls import include, path

from scorecards import views

# One card's pages, under tarjetas/<pk>/.
card = [
    path("casilla/<int:seat_id>/<str:box>/", views.box, name="box"),
    path("vivo/", views.scorecard_live, name="scorecard_live"),
    path("eventos/", views.scorecard_events, name="scorecard_events"),
    path("", views.scorecard_detail, name="scorecard"),
    path("yahtzee-extra/<int:seat_id>/", views.joker, name="joker"),
    path("deshacer/", views.undo, name="undo"),
    path("tirar/", views.roll, name="roll"),
    path("anotar/", views.score, name="score"),
    path("finalizar/", views.finalize, name="finalize"),
    path("descartar/", views.discard, name="discard"),
    path("exportar.json", views.scorecard_json, name="scorecard_json"),
    path("revancha/", views.rematch, name="rematch"),
    path("qr/", views.scorecard_qr, name="scorecard_qr"),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("tarjetas/<int:pk>/", include(card)),
    path("tarjetas/nueva/", views.scorecard_new, name="scorecard_new"),
    path("tarjetas/nueva/invitado/", views.guest_add, name="guest_add"),
    path("tarjetas/nueva/orden/", views.scorecard_order, name="scorecard_order"),
    path("tarjetas/crear/", views.scorecard_create, name="scorecard_create"),
    path("historial/", views.history, name="history"),
    path("historial/exportar.csv", views.history_csv, name="history_csv"),
    path("jugadores/<int:pk>/", views.player, name="player"),
    path("clasificacion/", views.ranking, name="ranking"),
]
