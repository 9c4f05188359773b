from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import forms, views

urlpatterns = [
    path("perfil/", views.profile, name="profile"),
    path(
        "entrar/",
        auth_views.LoginView.as_view(
            authentication_form=forms.LoginForm, redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("salir/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "contrasena/",
        views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "contrasena/cambiada/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
]
