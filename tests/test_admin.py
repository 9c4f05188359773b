import re

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from scorecards import services
from scorecards.models import Scorecard, Seat
from tests.factories import (
    PASSWORD,
    UserFactory,
    enter,
    fill,
    finalized_games,
    make_scorecard,
)

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def staff():
    return UserFactory(username="admin", display_name="Admin", is_staff=True, is_superuser=True)


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


def changelist():
    return reverse("admin:accounts_user_changelist")


def run_action(client, action, users):
    return client.post(
        changelist(),
        {"action": action, "_selected_action": [u.pk for u in users]},
        follow=True,
    )


def logged_in_client(user):
    from django.test import Client

    other = Client()
    other.force_login(user)
    return other


# The list


def test_the_player_list_shows_games_and_last_game(staff_client, ana):
    finalized_games([ana, UserFactory()], 3)
    response = staff_client.get(changelist())
    assert response.status_code == 200
    for header in ("Nombre visible", "Partidas", "Última partida", "Último inicio de sesión"):
        assert header in response.text
    row = next(line for line in response.text.split("<tr") if ">Ana<" in line)
    assert re.search(r"field-games[^>]*>3<", row)
    last_game = re.search(r"field-last_game[^>]*>([^<]*)<", row).group(1)
    assert str(timezone.localdate().year) in last_game


def test_the_admin_speaks_spanish_where_django_does_not(staff_client, ana, ben):
    """The few strings Django's Spanish leaves in English (locale/es), and the change
    log's labels (the model's)."""
    response = staff_client.get(changelist())
    assert ">Ejecutar<" in response.text
    assert ">Run<" not in response.text
    card = make_scorecard(players=[ana, ben])
    enter(card, card.seats.first(), card.organizer, ones=3)
    page = staff_client.get(reverse("admin:scorecards_scorecard_change", args=[card.pk])).text
    for english in ("Created at", "Author", "Kind", "Version"):
        assert f">{english}<" not in page
    for spanish in ("Fecha", "Autor", "Tipo", "Versión"):
        assert spanish in page


def test_the_player_list_searches_and_filters(staff_client, ana):
    UserFactory(username="gone", display_name="Ausente", is_active=False)
    found = staff_client.get(changelist(), {"q": "ausen"})
    assert "Ausente" in found.text
    assert ">Ana<" not in found.text
    active = staff_client.get(changelist(), {"is_active__exact": "1"})
    assert ">Ana<" in active.text
    assert "Ausente" not in active.text


def visible_text(html: str) -> str:
    """What a reader of the page meets: its text, the text of its images and controls."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    said = re.findall(r'\b(?:alt|title|aria-label|placeholder)="([^"]*)"', html)
    said += re.findall(r'<input type="submit"[^>]*\bvalue="([^"]*)"', html)
    return " ".join([re.sub(r"<[^>]*>", " ", html), *said])


# English that Django, django-axes or a boolean icon put in the Spanish admin before.
ENGLISH = [
    "Access attempt",
    "Access failure",
    "Access log",
    "Attempted Access",
    "Failed access",
    "Attempt Time",
    "Attempt Remaining",
    "IP Address",
    "User Agent",
    "HTTP Accept",
    "Failed Logins",
    "Logout Time",
    "Form Data",
    "Meta Data",
    "Locked Out",
    "Not set",
    "Clean up",
    "Axes",
    "Search",
    "Select an option",
    "Run",
    "True",
    "False",
    "Status",
    "If disabled",
    "Cleaned up",
    "Si, estoy",  # Django's Spanish, without its accent
]
ENGLISH_WORDS = re.compile(r"\b(the|and|of|by|for|with|this|to|Add|Change|Delete|View|Save)\b")


def test_the_admin_is_all_spanish(staff_client, ana, ben):
    """Every admin page a staff member meets, django-axes' included, logged in in Spanish."""
    from axes.models import AccessAttempt, AccessFailureLog, AccessLog

    UserFactory(username="org", display_name="Organiza", plays=False)
    card = make_scorecard(players=[ana, ben])
    enter(card, card.seats.first(), card.organizer, ones=3)
    seen = {"user_agent": "Firefox", "ip_address": "192.0.2.1", "http_accept": "*/*"}
    attempt = AccessAttempt.objects.create(
        username="ana", path_info="/entrar/", failures_since_start=2, **seen
    )
    AccessAttempt.objects.create(username="ben", path_info="/", failures_since_start=5, **seen)
    failure = AccessFailureLog.objects.create(
        username="ana", path_info="/entrar/", locked_out=True, **seen
    )
    log = AccessLog.objects.create(username="ana", path_info="/entrar/", **seen)
    pages = [
        reverse("admin:index"),
        changelist(),
        changelist() + "?q=an&is_active__exact=1&_facets=1",
        reverse("admin:accounts_user_add"),
        reverse("admin:accounts_user_import"),
        reverse("admin:accounts_user_change", args=[ana.pk]),
        reverse("admin:accounts_user_temporary_password", args=[ana.pk]),
        reverse("admin:auth_user_password_change", args=[ana.pk]),
        reverse("admin:accounts_user_history", args=[ana.pk]),
        reverse("admin:app_list", args=["accounts"]),
        reverse("admin:accesses_accessattempt_changelist"),
        reverse("admin:accesses_accessattempt_changelist") + "?q=ana&locked_out=yes",
        reverse("admin:accesses_accessattempt_change", args=[attempt.pk]),
        reverse("admin:accesses_accessattempt_delete", args=[attempt.pk]),
        reverse("admin:accesses_accessfailurelog_changelist"),
        reverse("admin:accesses_accessfailurelog_change", args=[failure.pk]),
        reverse("admin:accesses_accesslog_changelist"),
        reverse("admin:accesses_accesslog_change", args=[log.pk]),
        reverse("admin:scorecards_scorecard_changelist"),
        reverse("admin:scorecards_scorecard_change", args=[card.pk]),
        reverse("admin:app_list", args=["accesses"]),
    ]
    for url in pages:
        response = staff_client.get(url)
        assert response.status_code == 200, url
        text = visible_text(response.text)
        assert [e for e in ENGLISH if e in text] == [], url
        assert ENGLISH_WORDS.findall(text) == [], url
    index = staff_client.get(reverse("admin:index")).text
    # django-axes' records, named in Spanish, in a section of their own.
    accesses = re.search(r'<div class="app-accesses module.*?</div>', index, re.S)[0]
    for spanish in ("Accesos", "Intentos de acceso", "Fallos de acceso", "Registros de acceso"):
        assert spanish in accesses
    assert "Intentos de ana desde 192.0.2.1" in staff_client.get(pages[12]).text
    assert "Fallo de ana desde 192.0.2.1" in staff_client.get(pages[15]).text
    assert "Entrada de ana, " in staff_client.get(pages[17]).text
    users = staff_client.get(changelist()).text
    assert 'alt="Sí"' in users
    assert 'alt="No"' in users  # «Organiza» does not play
    attempts = staff_client.get(reverse("admin:accesses_accessattempt_changelist")).text
    assert "Quedan 3 intentos" in attempts
    assert "Bloqueado" in attempts
    done = staff_client.post(
        reverse("admin:accesses_accessattempt_changelist"),
        {"action": "cleanup_expired_attempts", "_selected_action": [attempt.pk]},
        follow=True,
    )
    assert "0 intentos caducados borrados." in done.text


def test_the_axes_clean_up_removes_the_attempts_past_their_cool_off(staff_client):
    """django-axes' own action fails there (AttributeError: no axes_attempt_time)."""
    from axes.models import AccessAttempt

    seen = {"user_agent": "Firefox", "ip_address": "192.0.2.1", "http_accept": "*/*"}
    old = AccessAttempt.objects.create(username="ana", failures_since_start=5, **seen)
    AccessAttempt.objects.filter(pk=old.pk).update(
        attempt_time=timezone.now() - timezone.timedelta(hours=1)
    )
    recent = AccessAttempt.objects.create(username="ben", failures_since_start=1, **seen)
    done = staff_client.post(
        reverse("admin:accesses_accessattempt_changelist"),
        {"action": "cleanup_expired_attempts", "_selected_action": [recent.pk]},
        follow=True,
    )
    assert done.status_code == 200
    assert "1 intento caducado borrado." in done.text
    assert list(AccessAttempt.objects.values_list("username", flat=True)) == ["ben"]


def test_the_admin_sets_and_filters_who_plays(staff_client, ana):
    organizer = UserFactory(username="org", display_name="Organiza", plays=False)
    add_form = staff_client.get(reverse("admin:accounts_user_add")).text
    assert 'name="plays"' in add_form
    assert "Juega" in add_form
    page = staff_client.get(reverse("admin:accounts_user_change", args=[organizer.pk])).text
    assert re.search(r'<input type="checkbox" name="plays"(?![^>]*checked)', page)
    resting = staff_client.get(changelist(), {"plays__exact": "0"}).text
    assert "Organiza" in resting
    assert ">Ana<" not in resting
    assert "Por juega" in resting
    staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "marta", "display_name": "Marta", "password_mode": "generar"},
    )
    assert User.objects.get(username="marta").plays is False  # an unticked box
    staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "lucas", "display_name": "Lucas", "plays": "on", "password_mode": "generar"},
    )
    assert User.objects.get(username="lucas").plays is True
    assert re.search(r'name="plays"[^>]*checked', add_form)  # ticked unless unticked


@pytest.mark.parametrize("username", ["ANA", "Ana", "aNa"])
def test_a_username_is_taken_whatever_its_case(staff_client, ana, username):
    response = staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": username, "display_name": "Otra Ana", "password_mode": "generar"},
    )
    assert response.status_code == 200
    assert "Ya hay un jugador con ese nombre de usuario: «ana»." in response.text
    assert list(User.objects.filter(username__iexact="ana")) == [ana]


# Registering and passwords


def test_a_chosen_password_gets_every_error_at_once_under_its_field(staff_client):
    response = staff_client.post(
        reverse("admin:accounts_user_add"),
        {
            "username": "lucia",
            "display_name": "Lucía",
            "password_mode": "elegir",
            "password1": "123",
            "password2": "124",
        },
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert "demasiado corta" in " ".join(errors["password1"])
    assert errors["password2"] == ["Las dos contraseñas no coinciden."]
    assert not User.objects.filter(username="lucia").exists()


def test_registering_with_a_generated_password_shows_it_once(staff_client):
    response = staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "lucia", "display_name": "Lucía", "password_mode": "generar"},
        follow=True,
    )
    lucia = User.objects.get(username="lucia")
    assert lucia.must_change_password
    password = response.text.split("<code>")[1].split("</code>")[0]
    assert lucia.check_password(password)
    again = staff_client.get(reverse("admin:accounts_user_change", args=[lucia.pk]))
    assert password not in again.text
    assert LogEntry.objects.filter(object_id=str(lucia.pk)).exists()


def test_a_temporary_password_must_be_changed_at_first_log_in(staff_client):
    from django.test import Client

    client = Client()
    staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "lucia", "display_name": "Lucía", "password_mode": "generar"},
    )
    lucia = User.objects.get(username="lucia")
    temporary = lucia.set_temporary_password()
    lucia.save()
    client.post(reverse("login"), {"username": "lucia", "password": temporary})
    response = client.get(reverse("history"))
    assert response.status_code == 302
    assert response.url == reverse("password_change")
    assert "Tu contraseña es temporal" in client.get(response.url).text
    assert client.get(reverse("history"), headers={"HX-Request": "true"})["HX-Redirect"]
    client.post(
        reverse("password_change"),
        {
            "old_password": temporary,
            "new_password1": "mi-clave-nueva-2026",
            "new_password2": "mi-clave-nueva-2026",
        },
    )
    lucia.refresh_from_db()
    assert not lucia.must_change_password
    assert client.get(reverse("history")).status_code == 200


def test_registering_with_a_chosen_password(staff_client):
    staff_client.post(
        reverse("admin:accounts_user_add"),
        {
            "username": "marcos",
            "display_name": "Marcos",
            "password_mode": "elegir",
            "password1": "clave-de-marcos-1",
            "password2": "clave-de-marcos-1",
        },
    )
    marcos = User.objects.get(username="marcos")
    assert marcos.check_password("clave-de-marcos-1")
    assert not marcos.must_change_password


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"password1": "clave-de-marcos-1", "password2": "otra"}, "no coinciden"),
        ({"password1": "", "password2": ""}, "Escribe la contraseña"),
        ({"password1": "123", "password2": "123"}, "demasiado corta"),
    ],
)
def test_a_bad_chosen_password_registers_nobody(staff_client, data, message):
    response = staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "marcos", "display_name": "Marcos", "password_mode": "elegir", **data},
    )
    assert response.status_code == 200
    assert message in response.text
    assert not User.objects.filter(username="marcos").exists()


def test_resetting_a_password_issues_a_temporary_one_and_ends_sessions(staff_client, ana):
    player = logged_in_client(ana)
    response = run_action(staff_client, "temporary_password", [ana])
    password = response.text.split("<code>")[1].split("</code>")[0]
    ana.refresh_from_db()
    assert ana.check_password(password)
    assert not ana.check_password(PASSWORD)
    assert ana.must_change_password
    assert player.get(reverse("home")).status_code == 302
    assert LogEntry.objects.filter(object_id=str(ana.pk), change_message__contains="temporal")


# Deactivating


def test_deactivating_ends_sessions_and_keeps_history(staff_client, ana):
    from django.test import Client

    client = Client()
    (card,) = finalized_games([ana, UserFactory()], 1)
    player = logged_in_client(ana)
    key = player.session.session_key
    done = run_action(staff_client, "deactivate", [ana])
    assert "1 jugador desactivado." in done.text  # one, not «1 jugadores»
    ana.refresh_from_db()
    assert not ana.is_active
    assert not Session.objects.filter(session_key=key).exists()
    assert player.get(reverse("home")).status_code == 302
    client.post(reverse("login"), {"username": "ana", "password": PASSWORD})
    assert SESSION_KEY not in client.session
    assert Seat.objects.filter(player=ana, scorecard=card).exists()
    assert "Ana" not in staff_client.get(reverse("scorecard_new")).text
    assert LogEntry.objects.filter(object_id=str(ana.pk), change_message="Desactivado.")

    done = run_action(staff_client, "reactivate", [ana, UserFactory(is_active=False)])
    assert "2 jugadores reactivados." in done.text
    ana.refresh_from_db()
    assert ana.is_active


def test_deactivating_in_the_change_form_also_ends_sessions(staff_client, ana):
    player = logged_in_client(ana)
    response = staff_client.post(
        reverse("admin:accounts_user_change", args=[ana.pk]),
        {
            "username": "ana",
            "display_name": "Ana",
            "is_active": "",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "10:00:00",
        },
    )
    assert response.status_code == 302, response.text[:3000]
    assert player.get(reverse("home")).status_code == 302


# Deleting


def test_a_player_with_games_cannot_be_deleted(staff_client, ana):
    finalized_games([ana, UserFactory()], 1)
    url = reverse("admin:accounts_user_delete", args=[ana.pk])
    page = staff_client.get(url)
    assert "desactívalo en su lugar" in page.text
    staff_client.post(url, {"post": "yes"})
    assert User.objects.filter(pk=ana.pk).exists()
    response = run_action(staff_client, "delete_selected", [ana])
    assert "desactívalo en su lugar" in response.text
    staff_client.post(
        changelist(), {"action": "delete_selected", "_selected_action": [ana.pk], "post": "yes"}
    )
    assert User.objects.filter(pk=ana.pk).exists()


@pytest.mark.parametrize(
    ("selected", "spanish", "english"),
    [
        (1, "lo seleccionado (jugador)", "the selected player?"),
        (2, "lo seleccionado (jugadores)", "the selected players?"),
    ],
)
def test_deleting_the_selected_players_reads_well_for_one_and_for_several(
    staff_client, ana, ben, selected, spanish, english
):
    players = [ana, ben][:selected]
    page = run_action(staff_client, "delete_selected", players).text
    assert f"¿Seguro que quieres eliminar {spanish}?" in page
    assert "los jugador " not in page
    assert "Eliminar múltiples objetos" not in page
    assert "<title>Eliminar lo seleccionado |" in page
    done = staff_client.post(
        changelist(),
        {"action": "delete_selected", "_selected_action": [u.pk for u in players], "post": "yes"},
        follow=True,
    ).text
    noun = "jugador" if selected == 1 else "jugadores"
    assert f"Se eliminó lo seleccionado: {selected} {noun}." in done
    assert "Eliminado/s" not in done
    assert not User.objects.filter(pk__in=[u.pk for u in players]).exists()

    staff_client.post("/idioma/", {"language": "en", "next": "/"})
    others = [UserFactory(username=f"other{i}") for i in range(selected)]
    page = run_action(staff_client, "delete_selected", others).text
    assert f"Are you sure you want to delete {english}" in page
    assert "<title>Delete the selection |" in page


def test_an_organizer_of_a_card_in_progress_cannot_be_deleted(staff_client, ana):
    make_scorecard(ana)
    staff_client.post(reverse("admin:accounts_user_delete", args=[ana.pk]), {"post": "yes"})
    assert User.objects.filter(pk=ana.pk).exists()


def test_a_player_without_games_can_be_deleted(staff_client, ana):
    staff_client.post(reverse("admin:accounts_user_delete", args=[ana.pk]), {"post": "yes"})
    assert not User.objects.filter(pk=ana.pk).exists()


# Onboarding a club


def test_the_csv_import_registers_everyone_and_prints_passwords_once(tmp_path, capsys):
    path = tmp_path / "club.csv"
    path.write_text("usuario,nombre\nlucia,Lucía\nmarcos,Marcos Pérez\n", encoding="utf-8")
    call_command("import_players", path)
    out = capsys.readouterr().out
    for username in ("lucia", "marcos"):
        user = User.objects.get(username=username)
        password = next(line for line in out.splitlines() if line.startswith(username + "\t"))
        assert user.check_password(password.split("\t")[2])
        assert user.must_change_password
    assert User.objects.get(username="marcos").display_name == "Marcos Pérez"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("lucia,Lucía\nbad user!,X\n", "no válido"),
        ("lucia,Lucía\nlucia,Otra\n", "ya aparece en la línea 1"),
        ("lucia,Lucía\nana,Ana\n", "ya está registrado"),
        ("lucia,Lucía\nmarcos\n", "dos columnas"),
        ("lucia,\n", "de 1 a 60 caracteres"),
        ("", "ningún jugador"),
    ],
)
def test_one_bad_row_refuses_the_whole_file(tmp_path, ana, content, message):
    path = tmp_path / "club.csv"
    path.write_text(content, encoding="utf-8")
    before = set(User.objects.values_list("username", flat=True))
    with pytest.raises(CommandError, match=message):
        call_command("import_players", path)
    assert set(User.objects.values_list("username", flat=True)) == before


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="No se puede leer"):
        call_command("import_players", tmp_path / "nope.csv")


# Onboarding a club in the admin: the same list, pasted or uploaded


def import_url():
    return reverse("admin:accounts_user_import")


def issued_passwords(page: str) -> dict[str, str]:
    """username: temporary password, as the result page's table shows them."""
    rows = re.findall(r"<td><bdi>([^<]*)</bdi></td><td><code>([^<]*)</code>", page)
    return dict(rows)


@pytest.fixture
def clerk(db):
    """A staff member who may see and change players but not add them."""
    from django.contrib.auth.models import Permission
    from django.test import Client

    client = Client()
    user = UserFactory(username="clerk", display_name="Clerk", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=["view_user", "change_user"]))
    client.force_login(user)
    return client


def test_the_player_list_links_to_the_import(staff_client, clerk):
    assert import_url() in staff_client.get(changelist()).text
    assert import_url() not in clerk.get(changelist()).text


def test_staff_who_may_not_add_players_cannot_import(clerk):
    assert clerk.get(import_url()).status_code == 403
    response = clerk.post(import_url(), {"text": "lucia,Lucía\n"})
    assert response.status_code == 403
    assert not User.objects.filter(username="lucia").exists()


@pytest.mark.parametrize("how", ["paste", "upload"])
def test_importing_registers_everyone_and_shows_their_passwords_once(staff_client, how):
    from django.core.files.uploadedfile import SimpleUploadedFile

    csv = "usuario;nombre\nlucia;Lucía\nmarcos;Marcos  Pérez\n"
    if how == "paste":
        data = {"text": csv}
    else:
        data = {"upload": SimpleUploadedFile("club.csv", ("\ufeff" + csv).encode())}
    response = staff_client.post(import_url(), data)
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert "2 jugadores registrados" in response.text
    passwords = issued_passwords(response.text)
    assert set(passwords) == {"lucia", "marcos"}
    for username, password in passwords.items():
        user = User.objects.get(username=username)
        assert user.check_password(password)
        assert user.must_change_password
    assert User.objects.get(username="marcos").display_name == "Marcos Pérez"
    assert LogEntry.objects.filter(change_message="Registrado desde una lista CSV.").count() == 2
    # Shown once: kept in no session, on no page after this one.
    for session in Session.objects.all():
        assert not any(p in str(session.get_decoded()) for p in passwords.values())
    for page in (changelist(), import_url(), reverse("admin:index")):
        assert not any(p in staff_client.get(page).text for p in passwords.values())


def test_an_imported_player_must_change_the_password_at_first_log_in(staff_client):
    from django.test import Client

    response = staff_client.post(import_url(), {"text": "lucia,Lucía"})
    password = issued_passwords(response.text)["lucia"]
    player = Client()
    player.post(reverse("login"), {"username": "lucia", "password": password})
    assert player.get(reverse("history")).url == reverse("password_change")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("lucia,Lucía\nbad user!,X\n", "Línea 2: usuario «bad user!» no válido"),
        ("lucia,Lucía\nlucia,Otra\n", "Línea 2: «lucia» ya aparece en la línea 1."),
        ("lucia,Lucía\nLUCIA,Otra\n", "Línea 2: «LUCIA» ya aparece en la línea 1."),
        ("lucia,Lucía\nANA,Otra Ana\n", "Línea 2: el usuario «ana» ya está registrado."),
        ("lucia,Lucía\nmarcos\n", "Línea 2: debe tener dos columnas"),
        ("lucia,\n", "Línea 1: el nombre visible debe tener de 1 a 60 caracteres."),
        ("lucia,Lucía\nana2,ÁNA\n", "Línea 2: ya hay un jugador que se llama «Ana»."),
        ("oscar,Óscar\noscar2,oscar\n", "Línea 2: ya hay un jugador que se llama «Óscar»."),
        ("lucia,Lu\u202ecía\n", "Línea 1: El nombre lleva caracteres invisibles"),
        ("usuario,nombre\n\n", "El archivo no tiene ningún jugador."),
    ],
)
def test_one_bad_line_registers_nobody_and_says_which(staff_client, ana, content, message):
    before = set(User.objects.values_list("username", flat=True))
    response = staff_client.post(import_url(), {"text": content})
    assert response.status_code == 200
    assert "No se ha registrado a nadie" in response.text
    assert message in response.text
    assert content.split(",")[0] in response.text  # the list is there to correct
    assert set(User.objects.values_list("username", flat=True)) == before


def test_the_command_refuses_the_same_lines(tmp_path, ana):
    path = tmp_path / "club.csv"
    path.write_text("ana2,ÁNA\nAna,Otra\n", encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_players", path)
    assert "Línea 1: ya hay un jugador que se llama «Ana»." in str(refused.value)
    assert "Línea 2: el usuario «ana» ya está registrado." in str(refused.value)
    assert list(User.objects.all()) == [ana]


def test_the_import_asks_for_one_list(staff_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    def refused(data, message):
        response = staff_client.post(import_url(), data)
        assert response.status_code == 200
        assert message in response.text
        assert not User.objects.filter(username="lucia").exists()

    refused({"text": "  "}, "Pega la lista de jugadores o elige un archivo.")
    upload = SimpleUploadedFile("club.csv", b"lucia,Luc\xeda\n")
    refused({"upload": upload}, "El archivo no está en UTF-8")
    upload = SimpleUploadedFile("club.csv", b"lucia,Lucia\n")
    refused({"text": "lucia,Lucía", "upload": upload}, "no las dos cosas")
    many = "".join(f"p{i},Jugador {i}\n" for i in range(51))
    refused({"text": many}, "La lista tiene 51 jugadores")
    big = SimpleUploadedFile("club.csv", b"lucia,Lucia\n" + b" " * 100_001)
    refused({"upload": big}, "demasiado grande")


# A player's page


def test_a_players_page_shows_no_password_hash(staff_client, ana):
    ana.password = make_password("una-clave-larga-2026", hasher="pbkdf2_sha256")  # production's
    ana.save()
    page = staff_client.get(reverse("admin:accounts_user_change", args=[ana.pk])).text
    for detail in ("pbkdf2", "algoritmo", "iteraciones", "salt", "hash", ana.password[-10:]):
        assert detail not in page
    assert "Nadie puede ver la contraseña de un jugador" in page
    assert reverse("admin:accounts_user_temporary_password", args=[ana.pk]).endswith(
        "/contrasena-temporal/"
    )
    assert 'href="../contrasena-temporal/"' in page
    assert 'href="../password/"' in page


def test_a_players_page_issues_a_temporary_password_after_asking(staff_client, ana):
    player = logged_in_client(ana)
    url = reverse("admin:accounts_user_temporary_password", args=[ana.pk])
    asked = staff_client.get(url)
    assert "recibirá una contraseña temporal nueva" in asked.text
    ana.refresh_from_db()
    assert ana.check_password(PASSWORD)  # asking changes nothing
    done = staff_client.post(url, follow=True)
    assert done.redirect_chain[-1][0] == reverse("admin:accounts_user_change", args=[ana.pk])
    password = done.text.split("<code>")[1].split("</code>")[0]
    ana.refresh_from_db()
    assert ana.check_password(password)
    assert ana.must_change_password
    assert player.get(reverse("home")).status_code == 302


def test_staff_who_may_not_change_players_cannot_reset_a_password(client, ana):
    from django.contrib.auth.models import Permission

    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.set(Permission.objects.filter(codename="view_user"))
    client.force_login(viewer)
    url = reverse("admin:accounts_user_temporary_password", args=[ana.pk])
    assert client.post(url).status_code == 403
    assert client.get(url).status_code == 403
    ana.refresh_from_db()
    assert ana.check_password(PASSWORD)


# The admin's own words


def test_the_admin_index_reads_naturally(staff_client):
    index = staff_client.get(reverse("admin:index")).text
    assert ">Ver</a>" in index  # beside «Tarjetas de puntos», which staff only see
    assert "Vista" not in index
    assert "Ninguno disponible" not in index
    assert "Todavía no has hecho ninguna." in index


def test_adding_and_changing_a_player_reads_naturally(staff_client):
    def message(response):
        return re.sub(r"<[^>]*>", "", response.text.split('class="messagelist"')[1])

    data = {"username": "lucia", "display_name": "Lucía", "password_mode": "generar"}
    added = staff_client.post(reverse("admin:accounts_user_add"), data, follow=True)
    assert "Se añadió el jugador «Lucía». Puedes volver a editarlo abajo." in message(added)
    data = {"username": "marcos", "display_name": "Marcos", "password_mode": "generar"}
    another = staff_client.post(
        reverse("admin:accounts_user_add"), {**data, "_addanother": "1"}, follow=True
    )
    assert "Se añadió el jugador «Marcos». Puedes añadir otro jugador abajo." in message(another)
    lucia = User.objects.get(username="lucia")
    change = {
        "username": "lucia",
        "display_name": "Lucía Gil",
        "is_active": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "10:00:00",
    }
    url = reverse("admin:accounts_user_change", args=[lucia.pk])
    changed = staff_client.post(url, {**change, "_continue": "1"}, follow=True)
    assert "Se modificó el jugador «Lucía Gil». Puedes volver a editarlo abajo." in message(changed)
    saved = staff_client.post(url, change, follow=True)
    assert "Se modificó el jugador «Lucía Gil»." in message(saved)


def test_the_admin_quotes_names_as_the_app_does(staff_client, ana):
    added = staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "lucia", "display_name": "Lucía", "password_mode": "generar"},
        follow=True,
    )
    assert "Se añadió el jugador «Lucía»." in re.sub(r"<[^>]*>", "", added.text)
    assert "“" not in added.text
    history = staff_client.get(reverse("admin:index")).text
    assert "“" not in history
    lucia = User.objects.get(username="lucia")
    deleted = staff_client.post(
        reverse("admin:accounts_user_delete", args=[lucia.pk]), {"post": "yes"}, follow=True
    )
    assert "Se eliminó jugador «Lucía»." in deleted.text
    missing = staff_client.get(reverse("admin:accounts_user_change", args=[lucia.pk]), follow=True)
    assert f"No existe jugador con el ID «{lucia.pk}»." in missing.text


# Scorecards in the admin


def test_every_scorecard_is_listed_and_can_be_opened(staff_client, ana):
    card = make_scorecard(players=[ana])
    response = staff_client.get(reverse("admin:scorecards_scorecard_changelist"))
    assert "en juego" in response.text
    assert "Ana" in response.text
    assert (
        staff_client.get(reverse("admin:scorecards_scorecard_change", args=[card.pk])).status_code
        == 200
    )


def test_a_scorecard_shows_its_change_log_in_words(staff_client, ana, ben):
    card = make_scorecard(players=[ana, ben])
    seat = card.seats.get(player=ben)
    page = reverse("admin:scorecards_scorecard_change", args=[card.pk])

    def write(value, was):
        services.box_write(
            scorecard_id=card.pk,
            seat_id=seat.pk,
            box="chance",
            value=value,
            was=was,
            author=card.organizer,
        )

    def queries():
        with CaptureQueriesContext(connection) as captured:
            text = staff_client.get(page).text
        return text, len(captured)

    write("23", "")
    write("", "23")
    staff_client.get(page)  # the first visit also does what a session's first does
    text, two = queries()
    assert "Ben: Libre (Chance) sin anotar → 23" in text
    assert "Ben: Libre (Chance) 23 → sin anotar" in text
    for _ in range(3):
        write("23", "")
        write("", "23")
    assert queries()[1] == two  # the players are read once, not per change


def test_a_scorecard_shows_the_key_each_change_came_with(staff_client, ana):
    card = make_scorecard(players=[ana])
    seat = card.seats.get()
    key = "0f8e2a34-5b6c-4d7e-8f90-a1b2c3d4e5f6"
    for box, sent in (("ones", key), ("twos", None)):
        services.box_write(
            scorecard_id=card.pk,
            seat_id=seat.pk,
            box=box,
            value="2",
            was="",
            author=card.organizer,
            key=sent,
        )
    page = staff_client.get(reverse("admin:scorecards_scorecard_change", args=[card.pk]))
    assert page.status_code == 200
    assert '<th class="column-key">Clave' in page.text
    shown = re.findall(r'<td class="field-key">\s*<p>([^<]*)</p>', page.text)
    assert shown == ["-", key]  # newest first; shown, not a field to edit


def test_a_finalized_scorecard_is_read_only_and_cannot_be_deleted(staff_client, ana):
    card = make_scorecard(players=[ana])
    fill(card)
    services.scorecard_finalize(scorecard_id=card.pk, author=card.organizer)
    change = reverse("admin:scorecards_scorecard_change", args=[card.pk])
    page = staff_client.get(change)
    assert page.status_code == 200
    assert 'name="ones"' not in page.text
    assert staff_client.post(change, {"organizer": ana.pk}).status_code == 403
    delete = reverse("admin:scorecards_scorecard_delete", args=[card.pk])
    assert staff_client.post(delete, {"post": "yes"}).status_code == 403
    response = staff_client.post(
        reverse("admin:scorecards_scorecard_changelist"),
        {"action": "delete_selected", "_selected_action": [card.pk], "post": "yes"},
        follow=True,
    )
    assert response.status_code == 200
    assert "está finalizada y no se puede borrar" in response.text
    assert Scorecard.objects.get(pk=card.pk).is_finalized
    assert card.seats.get().ones == 3


@pytest.mark.parametrize("undone", [False, True])
def test_staff_can_discard_a_card_in_progress(staff_client, ana, undone):
    card = make_scorecard(players=[ana])
    if undone:
        enter(card, card.seats.get(), card.organizer, ones=3)
        version = Scorecard.objects.get(pk=card.pk).version
        services.change_undo(scorecard_id=card.pk, author=card.organizer, version=version)
    staff_client.post(reverse("admin:scorecards_scorecard_delete", args=[card.pk]), {"post": "yes"})
    assert not Scorecard.objects.filter(pk=card.pk).exists()
    assert LogEntry.objects.filter(object_id=str(card.pk), action_flag=3).exists()


# Who may do what


ADMIN_URLS = [
    ("admin:index", []),
    ("admin:accounts_user_changelist", []),
    ("admin:accounts_user_add", []),
    ("admin:accounts_user_import", []),
    ("admin:accounts_user_change", ["user"]),
    ("admin:accounts_user_temporary_password", ["user"]),
    ("admin:accounts_user_delete", ["user"]),
    ("admin:auth_user_password_change", ["user"]),
    ("admin:scorecards_scorecard_changelist", []),
    ("admin:scorecards_scorecard_change", ["card"]),
    ("admin:scorecards_scorecard_delete", ["card"]),
]


@pytest.mark.parametrize(("name", "args"), ADMIN_URLS)
def test_non_staff_never_reach_the_admin(client, ana, name, args):
    card = make_scorecard(players=[ana])
    values = {"user": ana.pk, "card": card.pk}
    url = reverse(name, args=[values[a] for a in args])
    client.force_login(ana)
    for response in (client.get(url), client.post(url, {"post": "yes", "is_active": ""})):
        assert response.status_code == 302
        assert response.url.startswith(reverse("admin:login"))
    assert User.objects.get(pk=ana.pk).is_active
    assert Scorecard.objects.filter(pk=card.pk).exists()


@pytest.mark.parametrize("action", ["deactivate", "temporary_password", "delete_selected"])
def test_non_staff_cannot_run_admin_actions(client, ana, action):
    victim = UserFactory()
    client.force_login(ana)
    response = run_action(client, action, [victim])
    assert reverse("admin:login") in response.redirect_chain[0][0]
    victim.refresh_from_db()
    assert victim.is_active
    assert victim.check_password(PASSWORD)


# Players themselves


def test_a_player_changes_their_display_name(client, ana):
    client.force_login(ana)
    response = client.post(reverse("profile"), {"display_name": "Ana María"}, follow=True)
    assert "Nombre guardado" in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana María"


@pytest.mark.parametrize("name", ["Ben", "ben", " BEN ", "Bén"])
def test_a_name_another_player_shows_is_refused(client, ana, ben, name):
    """Two columns of one card would read alike: case and accents aside."""
    client.force_login(ana)
    response = client.post(reverse("profile"), {"display_name": name})
    assert response.status_code == 200
    assert "Ya hay un jugador que se llama «Ben»" in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana"
    # Her own name in other letters is hers to keep.
    assert client.post(reverse("profile"), {"display_name": "ANA"}).status_code == 302


def test_the_admin_refuses_a_name_another_player_shows(staff_client, ana):
    response = staff_client.post(
        reverse("admin:accounts_user_add"),
        {"username": "ana2", "display_name": "ána", "password_mode": "generar"},
    )
    assert response.status_code == 200
    assert "Ya hay un jugador que se llama «Ana»" in response.text
    assert not User.objects.filter(username="ana2").exists()
    # Nor in another player's change form.
    other = UserFactory(username="pepe", display_name="Pepe")
    change = reverse("admin:accounts_user_change", args=[other.pk])
    form = {"username": "pepe", "display_name": "ANA", "is_active": "on"}
    response = staff_client.post(change, form)
    assert "Ya hay un jugador que se llama «Ana»" in response.text
    other.refresh_from_db()
    assert other.display_name == "Pepe"
    # Two players named alike from before can still be changed otherwise.
    User.objects.filter(pk=other.pk).update(display_name="Ana")
    form["display_name"], form["is_active"] = "Ana", ""
    staff_client.post(change, form)
    other.refresh_from_db()
    assert not other.is_active


def test_an_empty_display_name_is_refused(client, ana):
    client.force_login(ana)
    response = client.post(reverse("profile"), {"display_name": "   "})
    assert response.status_code == 200
    assert (
        "Escribe el nombre que verán los demás" in response.text or "obligatorio" in response.text
    )
    ana.refresh_from_db()
    assert ana.display_name == "Ana"


def test_the_players_list_reads_well_in_spanish(staff_client):
    page = staff_client.get(reverse("admin:accounts_user_changelist")).text
    assert "Por acceso al admin" in page
    assert "es staff" not in page.lower()
    assert "Eliminar los jugadores seleccionados" in page
    assert "seleccionado/s" not in page


def test_a_generated_password_ignores_the_chosen_passwords_fields(staff_client):
    # Hidden while «Generar» is chosen (static/css/admin.css), and ignored if sent anyway.
    response = staff_client.post(
        reverse("admin:accounts_user_add"),
        {
            "username": "lucia",
            "display_name": "Lucía",
            "password_mode": "generar",
            "password1": "123",
            "password2": "otra",
        },
    )
    assert response.status_code == 302
    lucia = User.objects.get(username="lucia")
    assert lucia.must_change_password
    assert not lucia.check_password("123")


def breadcrumbs(page: str) -> list[tuple[str, str]]:
    """The breadcrumbs' links of an admin page, as (text, address)."""
    trail = re.search(r'<ol class="breadcrumbs">(.*?)</ol>', page, re.S)[1]
    return re.findall(r'<a href="([^"]*)">([^<]*)</a>', trail)


def test_the_sign_in_records_are_a_section_of_their_own_everywhere(staff_client):
    """On the index, in the breadcrumbs and on the section's own page: «Accesos» holds the
    sign-in records, «Jugadores» only the players."""
    index = staff_client.get(reverse("admin:index")).text
    players = index.split('class="app-accounts module')[1].split("</table>")[0]
    assert "Jugadores" in players
    assert "access" not in players
    accesses = index.split('class="app-accesses module')[1].split("</table>")[0]
    assert f'href="{reverse("admin:app_list", args=["accesses"])}" class="section"' in accesses
    assert reverse("admin:accesses_accesslog_changelist") in accesses
    home, section = reverse("admin:index"), reverse("admin:app_list", args=["accesses"])
    for url in (
        reverse("admin:accesses_accesslog_changelist"),
        reverse("admin:accesses_accessattempt_changelist"),
        reverse("admin:accesses_accessfailurelog_changelist"),
    ):
        assert breadcrumbs(staff_client.get(url).text)[:2] == [
            (home, "Inicio"),
            (section, "Accesos"),
        ]
    section_page = staff_client.get(section).text
    assert "<title>Administración de Accesos " in section_page
    for name in ("Intentos de acceso", "Fallos de acceso", "Registros de acceso"):
        assert name in section_page
    assert reverse("admin:accounts_user_changelist") not in section_page.split("<main")[1]
    players_page = staff_client.get(reverse("admin:app_list", args=["accounts"])).text
    assert reverse("admin:accounts_user_changelist") in players_page
    assert "acceso" not in players_page.split('id="content-main"')[1].split("</table>")[0]
    assert breadcrumbs(staff_client.get(changelist()).text) == [
        (home, "Inicio"),
        (reverse("admin:app_list", args=["accounts"]), "Jugadores"),
    ]
