"""«Importar jugadores» refuses what it cannot read, line by line, in the admin and in
`manage.py import_players`, and registers nobody when it does (issue 48, findings 5 and 6)."""

import html

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def staff_client(client):
    staff = UserFactory(username="admin", display_name="Admin", is_staff=True, is_superuser=True)
    client.force_login(staff)
    return client


def usernames():
    return set(User.objects.values_list("username", flat=True))


def refused_in_the_admin(client, data):
    """The import page's answer to data: it registers nobody, and says so."""
    before = usernames()
    response = client.post(reverse("admin:accounts_user_import"), data)
    assert response.status_code == 200
    assert "No se ha registrado a nadie" in response.text
    assert usernames() == before
    return html.unescape(response.text)


def refused_by_the_command(tmp_path, text):
    """import_players' error for a file holding text: it registers nobody."""
    path = tmp_path / "club.csv"
    path.write_text(text, encoding="utf-8", newline="")
    before = usernames()
    with pytest.raises(CommandError) as refused:
        call_command("import_players", path)
    assert usernames() == before
    return str(refused.value)


LONG_FIELD = "u3," + "x" * 140_000  # over the csv module's field limit (131,072)
UNCLOSED = 'u1,"Uno\nu2,Dos\n'


def test_a_pasted_list_over_the_uploads_limit_is_refused_clearly(staff_client):
    pasted = "".join(f"p{i},Jugador {i}\n" for i in range(10_000))
    assert len(pasted.encode()) > 100_000
    page = refused_in_the_admin(staff_client, {"text": pasted})
    assert "La lista pegada es demasiado larga" in page
    assert "100 KB" in page


def test_a_pasted_list_just_under_the_limit_is_read(staff_client):
    pasted = "lucia,Lucía\n" + " " * (100_000 - len("lucia,Lucía\n".encode()))
    response = staff_client.post(reverse("admin:accounts_user_import"), {"text": pasted})
    assert "1 jugador" in response.text
    assert User.objects.filter(username="lucia").exists()


def test_a_field_over_the_csv_modules_limit_is_a_line_error_when_pasted(staff_client):
    page = refused_in_the_admin(staff_client, {"text": "lucia,Lucía\n" + LONG_FIELD})
    assert "La lista pegada es demasiado larga" in page


def test_a_field_over_the_csv_modules_limit_is_a_line_error_in_the_command(tmp_path):
    error = refused_by_the_command(tmp_path, "lucia,Lucía\n" + LONG_FIELD + "\n")
    assert "Línea 2: es demasiado larga" in error


def test_a_long_line_inside_the_paste_limit_is_a_line_error(staff_client):
    page = refused_in_the_admin(staff_client, {"text": "lucia,Lucía\nu3," + "x" * 5000})
    assert "Línea 2: es demasiado larga" in page


@pytest.mark.parametrize("how", ["paste", "upload"])
def test_an_unclosed_quote_is_refused_naming_its_line(staff_client, how):
    if how == "paste":
        data = {"text": UNCLOSED}
    else:
        data = {"upload": SimpleUploadedFile("club.csv", UNCLOSED.encode())}
    page = refused_in_the_admin(staff_client, data)
    assert "Línea 1: unas comillas no se cierran" in page
    assert "Unou2" not in page


def test_the_command_refuses_an_unclosed_quote_naming_its_line(tmp_path):
    error = refused_by_the_command(tmp_path, "lucia,Lucía\n" + UNCLOSED)
    assert "Línea 2: unas comillas no se cierran" in error
    assert not User.objects.filter(username="u1").exists()


def test_text_after_a_closing_quote_is_refused(staff_client):
    page = refused_in_the_admin(staff_client, {"text": 'u1,"Uno"Dos\n'})
    assert "Línea 1: unas comillas no se cierran" in page


def test_a_nul_byte_in_an_uploaded_file_is_a_line_error(staff_client, tmp_path):
    """Django's form field refuses NUL in a paste; a file goes to the database unless
    the import refuses it (a 500 on PostgreSQL)."""
    upload = SimpleUploadedFile("club.csv", b"lucia,Lucia\nu\x001,Uno\n")
    page = refused_in_the_admin(staff_client, {"upload": upload})
    assert "Línea 2: lleva un carácter nulo (NUL)" in page
    error = refused_by_the_command(tmp_path, "u1,Uno\x00\n")
    assert "Línea 1: lleva un carácter nulo (NUL)" in error


def test_quoted_names_and_quotes_inside_a_name_still_work(staff_client):
    pasted = 'usuario,nombre\nu1,"Pérez, Ana"\nu2,Ana "la rápida"\nu3,"Eva ""Tití"""\n'
    response = staff_client.post(reverse("admin:accounts_user_import"), {"text": pasted})
    assert "3 jugadores registrados" in response.text
    players = User.objects.filter(username__startswith="u")
    names = dict(players.values_list("username", "display_name"))
    assert names == {"u1": "Pérez, Ana", "u2": 'Ana "la rápida"', "u3": 'Eva "Tití"'}


def test_windows_and_old_mac_line_ends_count_lines_alike(staff_client):
    page = refused_in_the_admin(staff_client, {"text": 'a1,Uno\r\na2,Dos\ra3,"Tres\r\n'})
    assert "Línea 3: unas comillas no se cierran" in page


@pytest.mark.parametrize(
    "pasted",
    [
        '"',
        '"\n"\n"',
        "\x00",
        "u1,Uno\x00\n",
        "u\x001,Uno\n",
        ",,,,\n;;;;\n\t\t\t\n",
        ",\n,\n",
        "'\n''\n'''",
        '""",""",""""\n',
        "u1,Uno\x0bDos\nu2,Dos\n",
        "u1,Uno\u2028u2,Dos\n",
        "u1,Uno\x1c\n",
        "\ufeffu1,Uno\n",
        "u1;Uno\nu2,Dos\n",
        "u1,'Uno\nu2,'Dos'\n",
        "\n" * 99_000,
        "a\n" * 49_000,
        "a,b,c,d,e,f\n",
        "\\,\\\n",
        "u1,Uno\\\n",
        "\r\r\r",
    ],
)
@pytest.mark.parametrize("how", ["paste", "upload"])
def test_hostile_lists_get_an_answer_never_a_server_error(staff_client, pasted, how):
    if how == "paste":
        data = {"text": pasted}
    else:
        data = {"upload": SimpleUploadedFile("club.csv", pasted.encode())}
    response = staff_client.post(reverse("admin:accounts_user_import"), data)
    assert response.status_code == 200
    assert not any("\x00" in user.display_name for user in User.objects.all())


@pytest.mark.parametrize("lines", [60, 5_000])
def test_many_unreadable_lines_are_listed_up_to_a_point(staff_client, lines):
    page = refused_in_the_admin(staff_client, {"text": '"\n' * lines})
    assert "Línea 1: unas comillas no se cierran" in page
    assert page.count("unas comillas no se cierran") <= 21
    assert "líneas más que tampoco se pueden leer." in page


def test_a_paste_over_djangos_request_limit_is_a_bad_request_not_a_server_error(staff_client):
    response = staff_client.post(reverse("admin:accounts_user_import"), {"text": "x" * 3_000_000})
    assert response.status_code == 400
    assert not User.objects.filter(username="x").exists()


def test_the_refusals_speak_english_to_an_english_admin(staff_client):
    from django.conf import settings

    staff_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = refused_in_the_admin_in_english(staff_client, {"text": UNCLOSED + '"\n' * 30})
    assert "Line 1: a quote is never closed." in page
    assert "And 11 more lines that cannot be read either." in page
    pasted = "p,P\n" * 30_000
    assert "The pasted list is too long: 100 KB at most." in refused_in_the_admin_in_english(
        staff_client, {"text": pasted}
    )


def refused_in_the_admin_in_english(client, data):
    response = client.post(reverse("admin:accounts_user_import"), data)
    assert "Nobody has been registered" in response.text
    return html.unescape(response.text)
