"""Passwords: the change a temporary password forces, temporary passwords kept out of
cookies, and Django's Spanish for passwords and forms in «tú»."""

import base64
import binascii
import contextlib
import re
import zlib
from pathlib import Path
from urllib.parse import unquote

import django
import pytest
from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user_model
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()
NEW = "una-clave-nueva-de-2026"


@pytest.fixture
def lucia():
    """A player who has just logged in with a temporary password."""
    user = UserFactory(username="lucia", display_name="Lucía")
    temporary = user.set_temporary_password()
    user.save()
    client = Client()
    response = client.post(reverse("login"), {"username": "lucia", "password": temporary})
    assert response.status_code == 302
    user.client, user.temporary = client, temporary
    return user


# The forced change: a set-password form


def test_the_forced_change_asks_only_for_the_new_password_twice(lucia):
    text = lucia.client.get(reverse("password_change")).text
    assert 'name="old_password"' not in text
    assert 'name="new_password1"' in text
    assert 'name="new_password2"' in text
    assert "No puede ser la temporal" in text


def test_the_forced_change_keeps_the_session_and_ends_the_temporary_password(lucia):
    response = lucia.client.post(
        reverse("password_change"), {"new_password1": NEW, "new_password2": NEW}
    )
    assert response.status_code == 302
    assert response.url == reverse("password_change_done")
    lucia.refresh_from_db()
    assert lucia.check_password(NEW)
    assert not lucia.must_change_password
    # Still logged in, with the session's hash of the new password.
    assert lucia.client.session[SESSION_KEY] == str(lucia.pk)
    assert lucia.client.get(reverse("history")).status_code == 200
    # The normal change asks for the old password again.
    assert 'name="old_password"' in lucia.client.get(reverse("password_change")).text


def test_the_forced_change_refuses_the_temporary_password_itself(lucia):
    response = lucia.client.post(
        reverse("password_change"),
        {"new_password1": lucia.temporary, "new_password2": lucia.temporary},
    )
    assert response.status_code == 200
    assert "Esa es tu contraseña temporal: elige una nueva." in response.text
    lucia.refresh_from_db()
    assert lucia.check_password(lucia.temporary)
    assert lucia.must_change_password


def test_the_forced_change_still_validates_the_new_password(lucia):
    response = lucia.client.post(
        reverse("password_change"), {"new_password1": "12345678", "new_password2": "12345678"}
    )
    assert response.status_code == 200
    lucia.refresh_from_db()
    assert lucia.must_change_password
    response = lucia.client.post(
        reverse("password_change"), {"new_password1": NEW, "new_password2": NEW + "x"}
    )
    assert "no coinciden" in response.text


def test_a_normal_change_still_needs_the_old_password(ana_client, ana):
    response = ana_client.post(
        reverse("password_change"), {"new_password1": NEW, "new_password2": NEW}
    )
    assert response.status_code == 200
    ana.refresh_from_db()
    assert ana.check_password(PASSWORD)


# Each error under its field, all at once


def field_errors(text, name):
    """The errors shown under the field `name` (templates/includes/field.html)."""
    found = re.search(rf'<ul class="errorlist" id="id_{name}_error">(.*?)</ul>', text, re.S)
    return re.findall(r"<li>(.*?)</li>", found[1]) if found else []


def shown_value(text, name):
    """The value a password input shows again, None if it shows none."""
    tag = re.search(rf'<input type="password" name="{name}"[^>]*>', text)[0]
    value = re.search(r'value="([^"]*)"', tag)
    return value[1] if value else None


def test_the_forced_changes_errors_sit_under_the_field_they_are_about(lucia):
    response = lucia.client.post(
        reverse("password_change"), {"new_password1": "lucia-2", "new_password2": "lucia-3"}
    )
    assert response.status_code == 200
    new, repeated = (
        field_errors(response.text, "new_password1"),
        field_errors(response.text, "new_password2"),
    )
    # A short password too similar to the username that does not match: all three at once.
    assert any("se parece demasiado" in error for error in new), new
    assert any("demasiado corta" in error for error in new), new
    assert repeated == ["Los dos campos de contraseña no coinciden."]
    # Refused, the new password is not shown again: it has to be chosen anew.
    assert shown_value(response.text, "new_password1") is None
    assert shown_value(response.text, "new_password2") is None
    lucia.refresh_from_db()
    assert lucia.must_change_password


def test_a_good_new_password_stays_when_only_its_repetition_is_wrong(lucia):
    response = lucia.client.post(
        reverse("password_change"), {"new_password1": NEW, "new_password2": NEW + "x"}
    )
    assert field_errors(response.text, "new_password1") == []
    assert field_errors(response.text, "new_password2") == [
        "Los dos campos de contraseña no coinciden."
    ]
    assert shown_value(response.text, "new_password1") == NEW
    assert shown_value(response.text, "new_password2") is None
    # A page holding a password is kept by no cache, not even the browser's.
    assert "no-store" in response["Cache-Control"]
    response = lucia.client.post(reverse("password_change"), {"new_password1": NEW})
    assert shown_value(response.text, "new_password1") == NEW
    assert field_errors(response.text, "new_password2") != []


def test_the_normal_changes_errors_sit_under_the_field_they_are_about(ana_client, ana):
    response = ana_client.post(
        reverse("password_change"),
        {"old_password": "mala", "new_password1": "123", "new_password2": "124"},
    )
    assert response.status_code == 200
    assert field_errors(response.text, "old_password") != []
    new = field_errors(response.text, "new_password1")
    assert any("demasiado corta" in error for error in new), new
    assert any("solo números" in error for error in new), new
    assert field_errors(response.text, "new_password2") == [
        "Los dos campos de contraseña no coinciden."
    ]
    assert shown_value(response.text, "old_password") is None
    ana.refresh_from_db()
    assert ana.check_password(PASSWORD)
    response = ana_client.post(
        reverse("password_change"),
        {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW},
    )
    assert response.status_code == 302
    ana.refresh_from_db()
    assert ana.check_password(NEW)


# Temporary passwords: typed from a printed sheet on a phone


LOOK_ALIKES = set("lI1|oO0")


def test_temporary_passwords_have_no_look_alikes_over_many_draws():
    from accounts.models import TEMPORARY_ALPHABET, temporary_password

    drawn = [temporary_password() for _n in range(5000)]
    assert not LOOK_ALIKES & set(TEMPORARY_ALPHABET)
    for password in drawn:
        assert re.fullmatch(r"[a-z2-9]{5}-[a-z2-9]{5}-[a-z2-9]{5}", password), password
        assert not LOOK_ALIKES & set(password), password
    # Every symbol of the alphabet is drawn, and nothing else.
    assert set("".join(drawn)) - {"-"} == set(TEMPORARY_ALPHABET)
    assert len(set(drawn)) == len(drawn)


def test_temporary_passwords_are_as_strong_as_token_urlsafe_9():
    import math

    from accounts.models import TEMPORARY_ALPHABET, temporary_password

    symbols = len(temporary_password().replace("-", ""))
    assert len(set(TEMPORARY_ALPHABET)) == len(TEMPORARY_ALPHABET)
    # token_urlsafe(9): nine random bytes, 72 bits.
    assert symbols * math.log2(len(TEMPORARY_ALPHABET)) >= 9 * 8


def test_the_password_validators_accept_temporary_passwords():
    from django.contrib.auth.password_validation import validate_password

    from accounts.models import temporary_password

    user = UserFactory.build(username="lucia", display_name="Lucía", email="")
    for _n in range(500):
        validate_password(temporary_password(), user)


def test_a_temporary_password_logs_in_and_must_be_changed(lucia):
    assert re.fullmatch(r"[a-z2-9]{5}-[a-z2-9]{5}-[a-z2-9]{5}", lucia.temporary)
    assert lucia.must_change_password
    assert lucia.client.get(reverse("history")).url == reverse("password_change")


# Temporary passwords never in a cookie


def decoded(value):
    """A cookie's value and everything it may hide: URL-decoded, and each part between
    colons as base64 and zlib (how Django signs and compresses a cookie's messages)."""
    found = [value, unquote(value)]
    for text in list(found):
        text = text.strip('"').replace("\\054", ",").replace("\\072", ":")
        found.append(text)
        for part in re.split(r"[:,;=\s]", text):
            part = part.removeprefix(".")
            try:
                raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
            except (binascii.Error, ValueError):
                continue
            found.append(raw.decode("utf-8", "replace"))
            with contextlib.suppress(zlib.error):
                found.append(zlib.decompress(raw).decode("utf-8", "replace"))
    return found


def set_cookies(response):
    """Every Set-Cookie header of a response, as sent."""
    return [morsel.OutputString() for morsel in response.cookies.values()]


def test_the_decoder_finds_a_password_in_djangos_messages_cookie(rf):
    # What the messages cookie held before: the test would have seen the password there.
    from django.contrib.messages.storage.cookie import CookieStorage
    from django.http import HttpResponse

    request = rf.get("/")
    storage = CookieStorage(request)
    storage.add(30, "Contraseña temporal: <code>s3cr3t-Pa55word</code> " + "x" * 200)
    response = HttpResponse()
    storage.update(response)
    (cookie,) = set_cookies(response)
    assert "s3cr3t-Pa55word" not in cookie  # signed, compressed: not readable as such...
    assert any("s3cr3t-Pa55word" in text for text in decoded(cookie))  # ...but not encrypted


def test_messages_live_in_the_session():
    assert settings.MESSAGE_STORAGE == "django.contrib.messages.storage.session.SessionStorage"


@pytest.mark.parametrize("how", ["register", "reset"])
def test_a_temporary_password_is_shown_once_and_set_in_no_cookie(admin_client, how):
    if how == "register":
        response = admin_client.post(
            reverse("admin:accounts_user_add"),
            {"username": "lucia", "display_name": "Lucía", "password_mode": "generar"},
        )
    else:
        user = UserFactory(username="lucia", display_name="Lucía")
        response = admin_client.post(
            reverse("admin:accounts_user_changelist"),
            {"action": "temporary_password", "_selected_action": [user.pk]},
        )
    assert response.status_code == 302
    shown = admin_client.get(response.url)
    password = re.search(r"<code>([^<]+)</code>", shown.text)[1]
    assert User.objects.get(username="lucia").check_password(password)
    for answer in (response, shown):
        for cookie in set_cookies(answer):
            assert not any(password in text for text in decoded(cookie)), cookie
    assert not any(password in text for text in decoded(str(admin_client.cookies)))
    # Once: the next page does not show it again.
    assert password not in admin_client.get(response.url).text


# «Tú», never «usted»; «caracteres», never «carácteres»

USTED = re.compile(
    r"\b(Su|Sus|usted|Usted|introduzca|Introduzca|Ingrese|ingrese|Escoja|Seleccione|"
    r"Asegúrese|Compruebe|Observe|vuelva a introducirla)\b|Por favor, introduzca|"
    r"carácteres|carácter\(es\)"
)


def usted_forms(text):
    return sorted({m[0] for m in USTED.finditer(text)})


def test_the_log_in_error_says_tu(client, ana):
    response = client.post(reverse("login"), {"username": "ana", "password": "mala"})
    assert "Escribe un nombre de usuario y una contraseña correctos" in response.text
    assert usted_forms(response.text) == []


@pytest.mark.parametrize(
    ("password", "error"),
    [
        ("corta1", "La contraseña es demasiado corta: debe tener al menos 8 caracteres."),
        ("password", "Esta contraseña es demasiado común."),
        ("1234567890123", "Esta contraseña tiene solo números."),
    ],
)
def test_the_password_forms_say_tu(ana_client, ana, lucia, password, error):
    for client, old in ((ana_client, PASSWORD), (lucia.client, None)):
        data = {"new_password1": password, "new_password2": password}
        if old:
            data["old_password"] = old
        text = client.post(reverse("password_change"), data).text
        assert error in text
        # The validators' help, shown under the new password.
        assert "Tu contraseña no puede parecerse demasiado a tus otros datos personales." in text
        assert "Tu contraseña debe tener al menos 8 caracteres." in text
        assert usted_forms(text) == []
    text = ana_client.post(
        reverse("password_change"),
        {"old_password": "mala", "new_password1": NEW, "new_password2": NEW},
    ).text
    assert "Tu contraseña antigua no es correcta. Vuelve a escribirla." in text
    assert usted_forms(text) == []


def test_a_form_fields_errors_say_tu(ana_client):
    text = ana_client.get(reverse("history"), {"desde": "2026-13-45"}).text
    assert "Escribe una fecha válida." in text
    text = ana_client.post(reverse("profile"), {"display_name": "x" * 61}).text
    assert "Este valor debe tener como mucho 60 caracteres (tiene 61)." in text
    assert usted_forms(text) == []


def catalog(path):
    """{msgid: [msgstr, ...]} of a .po file."""
    entries = {}
    for block in Path(path).read_text(encoding="utf-8").split("\n\n"):
        fields, current = {}, None
        for line in block.splitlines():
            if match := re.match(r'^(msgid|msgid_plural|msgstr(?:\[\d\])?) "(.*)"$', line):
                current = match[1]
                fields[current] = match[2]
            elif line.startswith('"') and current:
                fields[current] += line[1:-1]
        if fields.get("msgid"):
            entries[fields["msgid"]] = [v for k, v in fields.items() if k.startswith("msgstr")]
    return entries


def test_every_usted_of_djangos_password_and_form_texts_is_overridden():
    ours = catalog(Path(settings.BASE_DIR) / "locale" / "es" / "LC_MESSAGES" / "django.po")
    assert [m for m, strings in ours.items() if usted_forms(" ".join(strings))] == []
    django_es = Path(django.__file__).parent / "{}" / "locale" / "es" / "LC_MESSAGES" / "django.po"
    missing = []
    for part in ("contrib/auth", "conf"):
        for msgid, strings in catalog(str(django_es).format(part)).items():
            # The debug page's and the CSRF page's texts: this app never shows them.
            if re.search(r"Referer|referrer|cookies|DEBUG", msgid):
                continue
            if usted_forms(" ".join(strings)) and msgid not in ours:
                missing.append(msgid)
    assert missing == []
