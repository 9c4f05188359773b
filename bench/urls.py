"""The app's URLs plus the floor views the benchmark compares every scenario with."""

from django.urls import path

from bench import views
from dados.urls import urlpatterns as app_urlpatterns

urlpatterns = [
    path("_bench/suelo/", views.floor_get, name="bench_floor_get"),
    path("_bench/suelo/post/", views.floor_post, name="bench_floor_post"),
    path("_bench/suelo/escritura/<int:n>/", views.floor_write, name="bench_floor_write"),
    *app_urlpatterns,
]
