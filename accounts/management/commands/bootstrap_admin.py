import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "On an empty database, create an admin account and print its password once."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username, **options):
        User = get_user_model()
        if User.objects.exists():
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser(
            username=username, password=password, display_name="Administración"
        )
        bar = "=" * 60
        self.stdout.write(
            f"{bar}\n"
            "Cuenta de administración creada (se muestra una sola vez):\n"
            f"  usuario:    {username}\n"
            f"  contraseña: {password}\n"
            "Cámbiala tras entrar en «Cambiar contraseña».\n"
            f"{bar}"
        )
