import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

# A person's name, as the header and the change log show it («Admin anotó 30 en Seises de
# Ana»), and not the header's «Administración» link.
DISPLAY_NAME = "Admin"


class Command(BaseCommand):
    help = "On an empty database, create an admin account and print its password once."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username, **options):
        User = get_user_model()
        if User.objects.exists():
            return
        password = secrets.token_urlsafe(12)
        # It administers and may organize cards, but does not play until «Juega» is ticked.
        User.objects.create_superuser(
            username=username, password=password, display_name=DISPLAY_NAME, plays=False
        )
        bar = "=" * 60
        self.stdout.write(
            f"{bar}\n"
            "Cuenta de administración creada (se muestra una sola vez):\n"
            f"  usuario:    {username}\n"
            f"  contraseña: {password}\n"
            "Tras entrar, cámbiala en tu perfil (tu nombre, arriba) → «Cambiar contraseña».\n"
            "La administración está en /admin/. Esta cuenta no juega: para jugar con ella,\n"
            "marca «Juega» en su ficha (Administración → Jugadores).\n"
            f"{bar}"
        )
