"""The app's URLs plus the two stock floors the bench compares the app's requests with."""

from django.urls import path

from bench import views
from dados.urls import *  # noqa: F403  (the app's error handlers, if it sets any)
from dados.urls import urlpatterns as app_urlpatterns

urlpatterns = [
    path("_bench/suelo/", views.floor_get, name="bench_floor_get"),
    path("_bench/suelo/escritura/", views.floor_write, name="bench_floor_write"),
    *app_urlpatterns,
]
