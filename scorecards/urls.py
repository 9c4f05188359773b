from django.urls import include, path, re_path

from scorecards.views import card, history, new, players, screen, share, writes

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
    path("compartir/", share.scorecard_share, name="scorecard_share"),
    path("dejar-de-compartir/", share.scorecard_unshare, name="scorecard_unshare"),
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
    # «Pantalla del club»: staff's, and a screen link's (its token, which "vivo" never is).
    path("pantalla/", screen.screen_page, name="screen"),
    path("pantalla/vivo/", screen.screen_live, name="screen_live"),
    path("pantalla/<slug:token>/", screen.screen_page, name="screen_token"),
    path("pantalla/<slug:token>/vivo/", screen.screen_live, name="screen_token_live"),
    # A shared game, public: its token is the whole of its address (secrets.token_urlsafe).
    re_path(r"^compartida/(?P<token>[A-Za-z0-9_-]{1,32})/$", share.shared, name="shared"),
    re_path(
        r"^compartida/(?P<token>[A-Za-z0-9_-]{1,32})/imagen\.png$",
        share.shared_picture,
        name="shared_picture",
    ),
]
