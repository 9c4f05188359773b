"""Usernames: typed in any case at log-in, one account per username whatever its case, and
made without accents or spaces from the display name when the admin leaves it empty."""

import re
from pathlib import Path

import pytest
from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.management import call_command
from django.urls import reverse

from accounts.names import plain_username
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()
ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(username="admin", is_staff=True, is_superuser=True))
    return client


def log_in(client, username, password=PASSWORD, address="203.0.113.7"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def add_player(client, **data):
    return client.post(
        reverse("admin:accounts_user_add"), {"password_mode": "generar", **data}, follow=True
    )


# Log-in


@pytest.mark.parametrize("typed", ["Íñigo", "ÍÑIGO", "íñigo"])
def test_inigo_logs_in_whatever_the_case_he_types(client, typed):
    inigo = UserFactory(username="íñigo", display_name="Íñigo")
    response = log_in(client, typed)
    assert response.status_code == 302
    assert client.session[SESSION_KEY] == str(inigo.pk)


@pytest.mark.parametrize("typed", ["ANA", "Ana"])
def test_an_ascii_username_logs_in_whatever_its_case(client, ana, typed):
    assert log_in(client, typed).status_code == 302
    assert client.session[SESSION_KEY] == str(ana.pk)


def test_the_case_aside_the_password_is_still_checked(client, ana):
    response = log_in(client, "ANA", "una-contraseña-mala")
    assert response.status_code == 200
    assert SESSION_KEY not in client.session
    assert (
        "Ten en cuenta que la contraseña distingue mayúsculas y minúsculas; el usuario, no."
        in response.text
    )


def test_two_accounts_that_differ_only_by_case_log_in_only_as_spelled(client):
    """Registered before the admin refused such pairs: neither is chosen for the other."""
    lower = UserFactory(username="leo")
    upper = UserFactory(username="Leo")
    assert log_in(client, "Leo").status_code == 302
    assert client.session[SESSION_KEY] == str(upper.pk)
    client.post(reverse("logout"))
    assert log_in(client, "leo").status_code == 302
    assert client.session[SESSION_KEY] == str(lower.pk)
    client.post(reverse("logout"))
    assert log_in(client, "LEO").status_code == 200
    assert SESSION_KEY not in client.session


def test_failures_in_any_case_add_up_to_one_lockout(client, ana):
    """«Ana», «ANA» and «ana» are one account: five tries in all, not five each."""
    for typed in ("Ana", "ANA", "aNa", "anA", "ana"):
        log_in(client, typed, "mal")
    locked = log_in(client, "ANA")
    assert locked.status_code == 429
    assert SESSION_KEY not in client.session


# The admin: one account per username whatever its case, accents included


def test_the_admin_refuses_a_username_that_is_another_in_capitals_with_accents(
    staff_client,
):
    UserFactory(username="íñigo", display_name="Íñigo")
    response = add_player(staff_client, username="Íñigo", display_name="Íñigo Segundo")
    assert "Ya hay un jugador con ese nombre de usuario: «íñigo»." in response.text
    assert User.objects.filter(display_name="Íñigo Segundo").count() == 0


def test_the_admin_refuses_renaming_a_player_to_anothers_username_in_capitals(staff_client):
    UserFactory(username="íñigo", display_name="Íñigo")
    ana = UserFactory(username="ana", display_name="Ana")
    url = reverse("admin:accounts_user_change", args=[ana.pk])
    form = staff_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "password"}
    data |= {"username": "ÍÑIGO", "date_joined_0": "2026-01-01", "date_joined_1": "10:00"}
    response = staff_client.post(url, data)
    assert "Ya hay un jugador con ese nombre de usuario: «íñigo»." in response.text
    ana.refresh_from_db()
    assert ana.username == "ana"


@pytest.mark.parametrize(
    ("name", "username"),
    [
        ("María José", "mariajose"),
        ("Íñigo", "inigo"),
        ("Maximiliano Fernández-Villaverde", "maximilianofernandez-villaverde"),
        ("Ñoño O'Brien", "nonoobrien"),
        ("Straße", "strasse"),
    ],
)
def test_a_username_without_accents_or_spaces_is_made_from_the_display_name(name, username):
    assert plain_username(name) == username


def test_an_empty_username_is_made_from_the_display_name(staff_client):
    UserFactory(username="MariaJose", display_name="María José Pérez")
    response = add_player(staff_client, username="", display_name="María José")
    # «mariajose» is taken, whatever its case: the next one free.
    made = User.objects.get(display_name="María José")
    assert made.username == "mariajose2"
    assert "(<bdi>mariajose2</bdi>)" in response.text  # beside the temporary password
    assert made.must_change_password


def test_the_add_form_says_an_empty_username_is_made_for_you(staff_client):
    page = staff_client.get(reverse("admin:accounts_user_add")).text
    assert "Si lo dejas vacío, se forma con el nombre visible" in page


def test_a_username_with_accents_is_warned_about_once_then_kept(staff_client):
    first = add_player(staff_client, username="íñigo", display_name="Íñigo")
    assert not User.objects.filter(display_name="Íñigo").exists()
    assert (
        "«íñigo» lleva acentos u otros signos que no todos los teclados escriben, y habrá"
        " que escribirlos igual al entrar. Sin ellos sería «inigo»."
    ) in first.text
    assert re.search(r'<input type="hidden" name="warned_username" value="íñigo"', first.text)
    # Saved again as it was: kept.
    add_player(staff_client, username="íñigo", display_name="Íñigo", warned_username="íñigo")
    assert User.objects.get(display_name="Íñigo").username == "íñigo"


def test_a_warned_username_changed_to_another_with_accents_is_warned_again(staff_client):
    response = add_player(
        staff_client, username="óscar", display_name="Óscar", warned_username="íñigo"
    )
    assert "Sin ellos sería «oscar»." in response.text
    assert not User.objects.filter(display_name="Óscar").exists()


def test_a_username_with_a_space_gets_one_without(staff_client):
    response = add_player(staff_client, username="maría josé", display_name="María José")
    assert "Sin espacios ni acentos: «mariajose»." in response.text
    assert not User.objects.filter(display_name="María José").exists()


def test_capitals_alone_are_no_warning(staff_client):
    add_player(staff_client, username="Lucia", display_name="Lucía")
    assert User.objects.get(display_name="Lucía").username == "Lucia"


# The CSV import: the same suggestion, the same uniqueness


def test_the_import_makes_a_blank_username_from_the_display_name(staff_client):
    UserFactory(username="lucia", display_name="Lucía Vieja")
    response = staff_client.post(
        reverse("admin:accounts_user_import"),
        {"text": ",Lucía\n,María José\nmariajose,María José Ruiz\níñigo,Íñigo\n"},
    )
    assert response.status_code == 200
    made = dict(User.objects.values_list("display_name", "username"))
    assert made["Lucía"] == "lucia2"
    assert made["María José"] == "mariajose2"  # clear of the list's own «mariajose»
    assert made["María José Ruiz"] == "mariajose"
    # Kept as typed, and said once on the page of passwords.
    assert made["Íñigo"] == "íñigo"
    assert "<bdi>íñigo</bdi> → inigo" in response.text


def test_the_import_refuses_a_username_another_has_in_other_capitals(staff_client):
    UserFactory(username="íñigo", display_name="Íñigo")
    response = staff_client.post(
        reverse("admin:accounts_user_import"), {"text": "ÍÑIGO,Íñigo Dos\n"}
    )
    assert "Línea 1: el usuario «íñigo» ya está registrado." in response.text
    assert not User.objects.filter(display_name="Íñigo Dos").exists()


def test_the_command_makes_blank_usernames_too_and_warns_of_accents(tmp_path, capsys):
    path = tmp_path / "club.csv"
    path.write_text("usuario,nombre\n,Íñigo Ruiz\níñigo,Íñigo\n", encoding="utf-8")
    call_command("import_players", path)
    assert User.objects.get(display_name="Íñigo Ruiz").username == "inigoruiz"
    said = capsys.readouterr()
    assert said.out.splitlines()[1].startswith("inigoruiz\t")
    assert "«íñigo» lleva acentos" in said.err
    assert "sin ellos sería «inigo»." in said.err


# In a browser


@pytest.mark.browser
def test_inigo_types_his_name_with_a_capital_on_his_phone_and_is_in(browser, server):
    UserFactory(username="íñigo", display_name="Íñigo")
    context = browser.new_context(
        viewport={"width": 360, "height": 740}, base_url=server, locale="es-ES"
    )
    page = context.new_page()
    try:
        page.goto("/entrar/")
        page.locator("#id_username").fill("Íñigo")
        page.locator("#id_password").fill(PASSWORD)
        page.locator("main form button[type=submit]").click()
        page.wait_for_url(re.compile(r"/$"))
        assert page.locator(".user-name").inner_text() == "Íñigo"
    finally:
        context.close()


@pytest.mark.browser
def test_temporary_passwords_keep_to_one_line_on_a_phone(browser, server):
    """On the page of an import's passwords and in the admin's message after registering
    one player: each password's box is one line high at 360 px, hyphens and all."""
    from tests.browsing import log_in as browser_log_in
    from tests.browsing import screenshot

    UserFactory(username="admin", display_name="Admin", is_staff=True, is_superuser=True)
    context = browser.new_context(viewport={"width": 360, "height": 740}, base_url=server)
    page = context.new_page()
    try:
        browser_log_in(page, "admin")
        page.goto(reverse("admin:accounts_user_import"))
        page.locator("#id_text").fill(
            ",Maximiliano Fernández-Villaverde\n,María José Ruiz\n,Íñigo\n"
        )
        page.get_by_role("button", name="Registrar a todos").click()
        codes = page.locator("table.issued-passwords code")
        assert codes.count() == 3
        screenshot(page, ARTIFACTS / "admin-imported-passwords-360.png", full_page=True)
        for code in codes.all():
            assert _one_line(code), code.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        page.emulate_media(media="print")
        for code in codes.all():
            assert _one_line(code), code.inner_text()
        page.emulate_media(media="screen")

        page.goto(reverse("admin:accounts_user_add"))
        page.locator("#id_display_name").fill("Maximiliano Fernández-Villaverde Segundo")
        page.locator("input[name=_save]").click()
        message = page.locator(".messagelist li.warning code")
        message.wait_for()
        screenshot(page, ARTIFACTS / "admin-added-password-360.png", full_page=True)
        assert _one_line(message), message.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
    finally:
        context.close()


def _one_line(code) -> bool:
    """Whether an inline element is laid out on one line: a wrapped one has a box per line."""
    return code.evaluate("e => e.getClientRects().length") == 1
