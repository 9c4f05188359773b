"""The admin's index says when the club's last backup was made, and where."""

import io
import os
import time

import pytest
from django.core.management import call_command
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(username="admin", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def folder(settings, tmp_path):
    settings.BACKUP_DIR = tmp_path / "copias"
    return settings.BACKUP_DIR


def status(client) -> str:
    page = client.get(reverse("admin:index"))
    assert page.status_code == 200
    text = page.content.decode()
    start = text.index('<ul class="messagelist backup-status">')
    return " ".join(text[start : text.index("</ul>", start)].split())


def test_it_warns_when_there_is_no_backup(staff_client, folder):
    said = status(staff_client)
    assert '<li class="warning">' in said
    assert f"No hay ninguna copia de seguridad del club en {folder}." in said
    assert "«manage.py backup»" in said


def test_it_says_when_and_where_the_last_backup_was_made(staff_client, folder):
    call_command("backup", stdout=io.StringIO())
    newest = next(folder.iterdir())
    (folder / "notas.txt").write_text("not a backup")
    said = status(staff_client)
    assert '<li class="success">' in said
    assert "Última copia de seguridad: " in said
    assert f", en {newest}." in said


def test_it_warns_when_the_newest_backup_is_older_than_a_week(staff_client, folder):
    call_command("backup", stdout=io.StringIO())
    newest = next(folder.iterdir())
    eight_days_ago = time.time() - 8 * 24 * 3600
    os.utime(newest, (eight_days_ago, eight_days_ago))
    said = status(staff_client)
    assert '<li class="warning">' in said
    assert "La última copia de seguridad es del " in said
    assert "(hace 1 semana, 1 día)" in said
    assert f"en {newest}: tiene más de una semana." in said
