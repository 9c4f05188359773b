"""The app's URLs under another path: a second URL configuration for tests."""

from django.urls import include, path

urlpatterns = [path("otro/", include("dados.urls"))]
