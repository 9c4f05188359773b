from django.urls import include, path

from scorecards.views import card, history, new, players, writes

# One card's pages, under tarjetas/<pk>/.
card = [
    path("casilla/<int:seat_id>/<str:box>/", writes.box, name="box"),
    path("vivo/", card.scorecard_live, name="scorecard_live"),
    path("eventos/", card.scorecard_events, name="scorecard_events"),
    path("", card.scorecard_detail, name="scorecard"),
    path("yahtzee-extra/<int:seat_id>/", writes.joker, name="joker"),
    path("deshacer/", writes.undo, name="undo"),
    path("tirar/", writes.roll, name="roll"),
    path("guardar/", writes.hold, name="hold"),
    path("anotar/", writes.score, name="score"),
    path("finalizar/", writes.finalize, name="finalize"),
    path("descartar/", writes.discard, name="discard"),
    path("mesa/", writes.table_settings, name="table_settings"),
    path("exportar.json", history.scorecard_json, name="scorecard_json"),
    path("revancha/", writes.rematch, name="rematch"),
    path("qr/", card.scorecard_qr, name="scorecard_qr"),
]

urlpatterns = [
    path("", history.home, name="home"),
    path("tarjetas/<int:pk>/", include(card)),
    path("tarjetas/nueva/", new.scorecard_new, name="scorecard_new"),
    path("tarjetas/nueva/invitado/", new.guest_add, name="guest_add"),
    path("tarjetas/nueva/orden/", new.scorecard_order, name="scorecard_order"),
    path("tarjetas/crear/", new.scorecard_create, name="scorecard_create"),
    path("historial/", history.history, name="history"),
    path("historial/exportar.csv", history.history_csv, name="history_csv"),
    path("jugadores/<int:pk>/", players.player, name="player"),
    path("clasificacion/", players.ranking, name="ranking"),
    path("records/", players.records, name="records"),
]
