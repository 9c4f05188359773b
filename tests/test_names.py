"""Display names (accounts.names): nothing hidden in them, kept in NFKC, compared case,
accents and lookalike letters aside, and shown isolated so they never move the numbers
around them."""

import re
import unicodedata

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.template import Context, Template
from django.urls import reverse

from accounts.names import fold, hidden_characters, names_html, normalize
from tests.factories import UserFactory, finalized_games, make_scorecard

pytestmark = pytest.mark.django_db
User = get_user_model()

# The bidi controls, zero-width characters, the soft hyphen and the BOM, and a few more of
# what shows nothing: a control character, a line separator, a Hangul filler.
HIDDEN = [
    *(chr(c) for c in range(0x202A, 0x202F)),  # LRE, RLE, PDF, LRO, RLO
    *(chr(c) for c in range(0x2066, 0x206A)),  # LRI, RLI, FSI, PDI
    *(chr(c) for c in range(0x200B, 0x2010)),  # ZWSP, ZWNJ, ZWJ, LRM, RLM
    "\u2060",  # word joiner
    "\ufeff",  # BOM
    "\u00ad",  # soft hyphen
    "\u0007",
    "\u2028",
    "\u3164",
    "\ufffc",  # object replacement: drawn as nothing in most fonts
]
ARABIC = "علي"
HEBREW = "דני"


def save_name(client, name):
    return client.post(reverse("profile"), {"display_name": name})


# What may be a name


@pytest.mark.parametrize("char", HIDDEN, ids=lambda c: f"U+{ord(c):04X}")
def test_a_name_with_a_hidden_character_is_refused_and_nothing_saved(ana_client, ana, char):
    response = save_name(ana_client, f"Ana{char}Mar")
    assert response.status_code == 200
    assert "caracteres invisibles o de control" in response.text
    assert f"U+{ord(char):04X}" in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana"


def test_a_right_to_left_override_cannot_be_saved(ana_client, ana):
    # The attack of the issue: «‮591» would show another player's 195 as 591.
    response = save_name(ana_client, "Ana \u202e")
    assert response.status_code == 200
    assert (
        "El nombre lleva caracteres invisibles o de control (U+202E), que no se ven pero"
        " cambian cómo se muestra: escríbelo sin ellos."
    ) in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana"


def test_a_name_saved_before_the_check_may_stay_until_it_is_changed(client):
    old = User.objects.create(username="old", display_name="Old\u200b")
    client.force_login(old)
    assert save_name(client, "Old\u200b").status_code == 302
    assert save_name(client, "Olde\u200b").status_code == 200
    old.refresh_from_db()
    assert old.display_name == "Old\u200b"


def test_right_to_left_letters_and_emoji_are_names(ana_client, ana):
    for name in (ARABIC, HEBREW, "Ana 🎲", "Zoë", "Nguyễn", "李小龍", "Ἀλέξανδρος"):
        response = save_name(ana_client, name)
        assert response.status_code == 302, name
        ana.refresh_from_db()
        assert ana.display_name == name


def test_a_name_is_kept_in_nfkc_with_single_spaces(ana_client, ana):
    # Fullwidth letters and an ideographic space, a decomposed accent, spaces in a row.
    save_name(ana_client, "\uff21\uff4e\uff41\u3000Lo\u0301pez   Ruiz ")
    ana.refresh_from_db()
    assert ana.display_name == "Ana López Ruiz"
    assert normalize("ﬁona") == "fiona"


def test_a_name_that_nfkc_makes_too_long_is_refused(ana_client, ana):
    # «㍿» is one character, and four in NFKC: 57 + 4 > 60.
    response = save_name(ana_client, "a" * 57 + "\u337f")
    assert response.status_code == 200
    assert "como mucho 60 caracteres" in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana"


# When two names are the same


@pytest.mark.parametrize(
    "twin",
    [
        "tom",
        "TOM",
        " Tom ",
        "\u0422om",  # Cyrillic capital te
        "\u0422\u043em",  # Cyrillic te and o
        "\u03a4om",  # Greek capital tau
        "\uff34\uff4f\uff4d",  # fullwidth
        "Tóm",
    ],
)
def test_a_lookalike_of_another_players_name_is_refused(ana_client, ana, twin):
    UserFactory(username="tom", display_name="Tom")
    response = save_name(ana_client, twin)
    assert response.status_code == 200
    assert "Ya hay un jugador que se llama «Tom»" in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana"


def test_names_alike_only_with_accents_are_the_same(ana_client):
    UserFactory(username="oscar", display_name="oscar")
    response = save_name(ana_client, "Óscar")
    assert "Ya hay un jugador que se llama «oscar»" in response.text


def test_an_invisible_twin_saved_before_the_check_is_still_a_twin(ana_client):
    User.objects.create(username="old", display_name="Be\u200bn")
    response = save_name(ana_client, "Ben")
    assert "Ya hay un jugador que se llama" in response.text


def test_different_names_are_not_twins(ana_client, ana):
    UserFactory(username="tom", display_name="Tom")
    for name in ("Tomás", "Toni", "Anna", "Ana María"):
        assert save_name(ana_client, name).status_code == 302, name


def test_fold_sets_aside_case_accents_invisibles_and_lookalikes():
    assert fold("Óscar") == fold("oscar") == "oscar"
    assert fold("\u0410\u043d\u0430") != fold("Ana")  # Cyrillic «н» is not a Latin letter
    assert fold("\u0391na") == fold("Ana")  # Greek capital alpha
    assert fold("\u039dico") == fold("Nico")  # Greek capital nu is an N...
    assert fold("Da\u03bdid") == fold("David")  # ...and its small letter a v
    assert fold("A\u00adna\u200d") == fold("Ana")
    assert fold("  Ana   María ") == "ana maria"
    assert fold("İker") == fold("iker")
    assert hidden_characters("A\u202eB\u202e\u200b") == ["U+202E", "U+200B"]


# The admin and the import refuse the same


def test_the_admin_refuses_a_hidden_character_and_a_lookalike(client):
    staff = UserFactory(username="admin", display_name="Admin", is_staff=True, is_superuser=True)
    client.force_login(staff)
    UserFactory(username="tom", display_name="Tom")
    add = reverse("admin:accounts_user_add")
    for name, message in (
        ("Lu\u202ecia", "caracteres invisibles o de control (U+202E)"),
        ("\u0422om", "Ya hay un jugador que se llama «Tom»"),
    ):
        response = client.post(
            add, {"username": "lucia", "display_name": name, "password_mode": "generar"}
        )
        assert response.status_code == 200
        assert message in response.text
        assert not User.objects.filter(username="lucia").exists()
    client.post(
        add, {"username": "lucia", "display_name": "\uff2cucía", "password_mode": "generar"}
    )
    assert User.objects.get(username="lucia").display_name == "Lucía"
    lucia = User.objects.get(username="lucia")
    response = client.post(
        reverse("admin:accounts_user_change", args=[lucia.pk]),
        {"username": "lucia", "display_name": "Lucía\u2066", "is_active": "on"},
    )
    assert response.status_code == 200
    assert "U+2066" in response.text
    lucia.refresh_from_db()
    assert lucia.display_name == "Lucía"


def test_importing_players_refuses_hidden_characters_and_lookalikes(tmp_path):
    UserFactory(username="tom", display_name="Tom")
    path = tmp_path / "jugadores.csv"
    for rows, message in (
        ("usuario,nombre\nlucia,Lu\u202ecia\n", "Línea 2: El nombre lleva caracteres invisibles"),
        ("usuario,nombre\ntomas,\u0422om\n", "Línea 2: ya hay un jugador que se llama «Tom»"),
        ("usuario,nombre\nana,Ana\nana2,ANA\n", "Línea 3: ya hay un jugador que se llama «Ana»"),
    ):
        path.write_text(rows, encoding="utf-8")
        with pytest.raises(CommandError, match=message):
            call_command("import_players", path)
    assert User.objects.count() == 1
    path.write_text("usuario,nombre\nlucia,\uff2cucía  Gil\n", encoding="utf-8")
    call_command("import_players", path)
    assert User.objects.get(username="lucia").display_name == "Lucía Gil"


# Every way a name is given obeys one rule


# Marks that draw nothing of their own but change the letter before them: an emoji's and
# a standardized variation selector, an ideographic one, a Mongolian free one.
SELECTORS = ["\ufe0f", "\ufe00", "\U000e0100", "\u180b"]
# Letters of Cherokee and Lisu drawn as Latin «A» and «B».
FOREIGN_TWINS = [("\u13aana", "Ana"), ("\ua4eena", "Ana"), ("\u13f4erto", "Berto")]
# Lookalikes the confusables data lacks: Coptic alfa and vida (drawn as the Greek capitals
# they were split from), and Latin small capitals.
UNLISTED_TWINS = [("\u2c80na", "Ana"), ("\u2c82erto", "Berto"), ("\u1d00na", "Ana")]
# Every enclosing mark: a circle, a square, a keycap, a diamond... drawn round a letter.
ENCLOSING = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Me"]
WAYS = ["guest", "profile", "admin add", "admin change", "import page", "import"]


@pytest.fixture
def club(db):
    """Ana and Berto, Pepe who renames himself or adds a guest, and an admin."""
    UserFactory(username="ana", display_name="Ana")
    UserFactory(username="berto", display_name="Berto")
    pepe = UserFactory(username="pepe", display_name="Pepe")
    staff = UserFactory(username="admin", display_name="Admin", is_staff=True, is_superuser=True)
    return {"pepe": pepe, "staff": staff}


def give(way, club, name) -> str:
    """Name a new player (or rename Pepe) the way way does; what it answers. Each refuses:
    the state of every account is checked unchanged after."""
    from django.core.exceptions import ValidationError
    from django.test import Client

    from accounts.club import club_register, club_rows

    before = set(User.objects.values_list("username", "display_name"))
    client = Client()
    client.force_login(club["staff" if way.startswith(("admin", "import")) else "pepe"])
    if way == "guest":
        data = {"invitado": name, "modo": "presencial"}
        response = client.post(reverse("guest_add"), data)
        assert response.status_code == 400
    elif way == "profile":
        response = save_name(client, name)
        assert response.status_code == 200
    elif way == "admin add":
        data = {"username": "nuevo", "display_name": name, "password_mode": "generar"}
        response = client.post(reverse("admin:accounts_user_add"), data)
        assert response.status_code == 200
    elif way == "admin change":
        data = {"username": "pepe", "display_name": name, "is_active": "on"}
        response = client.post(reverse("admin:accounts_user_change", args=[club["pepe"].pk]), data)
        assert response.status_code == 200
    elif way == "import page":
        response = client.post(reverse("admin:accounts_user_import"), {"text": f"nuevo,{name}\n"})
        assert "No se ha registrado a nadie" in response.text
    else:
        with pytest.raises(ValidationError) as refused:
            club_register(club_rows(f"nuevo,{name}\n"))
        response = None
    assert set(User.objects.values_list("username", "display_name")) == before
    return response.text if response else " ".join(refused.value)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("selector", SELECTORS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_variation_selector_cannot_make_a_second_ana(club, way, selector):
    text = give(way, club, f"Ana{selector}")
    assert f"El nombre lleva caracteres invisibles o de control (U+{ord(selector):04X})" in text


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(("twin", "name"), FOREIGN_TWINS, ids=["cherokee", "lisu", "berto"])
def test_a_lookalike_in_any_script_is_another_players_name(club, way, twin, name):
    text = give(way, club, twin)
    assert f"a hay un jugador que se llama «{name}»" in text


@pytest.mark.parametrize("way", WAYS)
def test_an_object_replacement_cannot_make_a_second_ana(club, way):
    text = give(way, club, "Ana\ufffc")
    assert "El nombre lleva caracteres invisibles o de control (U+FFFC)" in text


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(("twin", "name"), UNLISTED_TWINS, ids=["coptic", "vida", "small"])
def test_a_lookalike_the_data_lacks_is_another_players_name(club, way, twin, name):
    text = give(way, club, twin)
    assert f"a hay un jugador que se llama «{name}»" in text


@pytest.mark.parametrize("way", WAYS)
def test_an_enclosing_mark_is_refused(club, way):
    text = give(way, club, "Ana\u20dd")
    assert "El nombre lleva signos que encierran la letra de delante (U+20DD)" in text


@pytest.mark.parametrize("mark", ENCLOSING, ids=lambda c: f"U+{ord(c):04X}")
def test_every_enclosing_mark_is_refused_and_folds_away(ana_client, ana, mark):
    response = save_name(ana_client, f"Be{mark}a")
    assert f"signos que encierran la letra de delante (U+{ord(mark):04X})" in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana"
    # One saved before the check is still a twin.
    assert fold(f"Ana{mark}") == fold(f"A{mark}na") == "ana"
    assert hidden_characters(f"Ana{mark}") == [f"U+{ord(mark):04X}"]


@pytest.mark.parametrize("way", WAYS)
def test_a_name_of_accents_alone_is_refused(club, way):
    text = give(way, club, "\u0301\u0301")
    assert "El nombre no tiene nada que se pueda leer" in text


@pytest.mark.parametrize("way", WAYS)
def test_an_accent_without_its_letter_is_refused(club, way):
    text = give(way, club, "Ana \u0301Mar")
    assert "El nombre lleva acentos o signos sueltos (U+0301)" in text


@pytest.mark.parametrize(
    "name",
    [
        "\u0301Ana",  # at the start
        "Ana \u0301",  # after a space
        "Ana \u20dd",  # an enclosing circle round nothing
        "\u00b4Ana",  # a spacing acute, kept as a space and a combining one
    ],
)
def test_a_lone_mark_is_refused_wherever_it_is(ana_client, ana, name):
    response = save_name(ana_client, name)
    assert "acentos o signos sueltos" in response.text
    ana.refresh_from_db()
    assert ana.display_name == "Ana"


def test_names_with_their_accents_on_their_letters_are_names(ana_client, ana):
    # Decomposed accents, a stack of two in Vietnamese, a Devanagari vowel sign, and an
    # emoji with the selector a phone types after it (a symbol: only its look changes).
    for name in (
        "Lo\u0301pez",
        "Nguy\u00ea\u0303n",
        "\u0905\u092e\u093f\u0924",
        "Ana \u2764\ufe0f",
    ):
        response = save_name(ana_client, name)
        assert response.status_code == 302, name
        ana.refresh_from_db()
        assert ana.display_name == normalize(name)


def test_an_emoji_with_and_without_its_selector_is_one_name(ana_client):
    UserFactory(username="bea", display_name="Bea \u2764")
    response = save_name(ana_client, "Bea \u2764\ufe0f")
    assert "Ya hay un jugador que se llama «Bea \u2764»" in response.text


def test_a_selector_after_a_letter_or_a_second_one_is_refused():
    assert hidden_characters("Ana\ufe0f") == ["U+FE0F"]
    assert hidden_characters("\u2764\ufe0f") == []
    assert hidden_characters("\u2764\ufe0f\ufe0f") == ["U+FE0F"]
    assert hidden_characters("\u2764\ufe00") == ["U+FE00"]
    assert hidden_characters("\u0301\u0301") == ["U+0301"]


def test_fold_sets_aside_selectors_and_lookalikes_of_any_script():
    for selector in SELECTORS:
        assert fold(f"Ana{selector}") == "ana"
    for twin, name in FOREIGN_TWINS:
        assert fold(twin) == fold(name)
    # A stroke of another script is a capital «I» where it is a capital.
    assert fold("\u0399\u00f1igo") == fold("I\u00f1igo")  # Greek capital iota
    assert fold("\u0406van") == fold("Ivan")  # Cyrillic capital I
    # Coptic letters are the Greek capitals they were split from, their small letters the
    # same drawn small, and a Latin small capital is its letter.
    assert fold("\u2c80\u2c9b\u2c81") == "ana"  # Ⲁⲛⲁ
    assert fold("\u2c84\u2c86") == fold("\u0393\u0394")  # Coptic gamma, dalda: Greek
    assert fold("\u0299\u1d07\u0280\u1d1b\u1d0f") == "berto"  # ʙᴇʀᴛᴏ
    assert fold("\u2c85") == "r"  # where the data has the letter, it is what counts
    assert fold("\ufffcAna") == "ana"
    # Latin letters are never merged with Latin letters: two real names may differ so.
    assert fold("Ivan") != fold("lvan")
    assert fold("Erna") != fold("Ema")
    assert fold("B0b") != fold("Bob")


def test_a_name_saved_with_a_selector_before_the_check_may_stay(client):
    old = User.objects.create(username="old", display_name="Ana\ufe0f")
    client.force_login(old)
    assert save_name(client, "Ana\ufe0f").status_code == 302
    old.refresh_from_db()
    assert old.display_name == "Ana\ufe0f"


# Every name shown isolated


def test_a_right_to_left_name_next_to_a_total_in_history_is_isolated(ana_client, ana):
    ali = UserFactory(username="ali", display_name=ARABIC)
    (card,) = finalized_games([ana, ali], 1)
    seats = {seat.player: seat for seat in card.seats.all()}
    text = ana_client.get(reverse("history")).text
    # The name in its own <bdi>: its direction cannot reach the total after it.
    assert f"<bdi>{ARABIC}</bdi> {seats[ali].total}" in text
    assert f"<bdi>Ana</bdi> {seats[ana].total}" in text
    winner = max(seats.values(), key=lambda seat: seat.total).player
    assert f"Gana: <bdi>{winner.name}</bdi>" in text


def test_a_name_saved_with_bidi_controls_before_the_check_stays_inside_its_bdi(ana_client, ana):
    mallory = User.objects.create(username="mallory", display_name="\u202e<b>Mal</b>")
    finalized_games([ana, mallory], 1)
    text = ana_client.get(reverse("history")).text
    assert "<bdi>\u202e&lt;b&gt;Mal&lt;/b&gt;</bdi> " in text


def shown_names(text, name):
    """Each place the page shows name: the 12 characters before it, what isolates it
    («<bdi>», or FSI where markup cannot go), or what else."""
    body = text[text.index("<body") :]
    # A <select>'s options are plain text each on a line of its own, and a text field
    # whose direction follows its text (dir="auto") is a paragraph of its own too.
    body = re.sub(r"<option\b[^>]*>[^<]*</option>", "", body)
    body = re.sub(r'<input\b[^>]*\bdir="auto"[^>]*>', "", body)
    return [body[max(0, m.start() - 12) : m.start()] for m in re.finditer(name, body)]


def test_every_page_that_shows_a_name_isolates_it(client, ana):
    # The pages other than the card's, for a player named in Hebrew who plays, is ranked,
    # is on a card in progress and is being seated at a new table.
    dani = UserFactory(username="dani", display_name=HEBREW)
    finalized_games([dani, ana], 5)
    make_scorecard(organizer=dani, players=[dani, ana])
    client.force_login(dani)
    order = reverse("scorecard_order")
    pages = {
        "home": reverse("home"),
        "history": reverse("history"),
        "new": reverse("scorecard_new"),
        "order": f"{order}?p={ana.pk}&p={dani.pk}",
        "order, who starts": f"{order}?p={ana.pk}&p={dani.pk}&t=12&t=12",
        "order, a wrong sum": f"{order}?p={ana.pk}&p={dani.pk}&t=12&t=40",
        "order, starter": f"{order}?p={ana.pk}&p={dani.pk}&t=12&t=20",
        "player": reverse("player", args=[dani.pk]),
        "a rival": reverse("player", args=[ana.pk]),
        "ranking": reverse("ranking"),
        "profile": reverse("profile"),
    }
    for page, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, page
        shown = shown_names(response.text, HEBREW)
        assert shown, page
        bare = [before for before in shown if not before.endswith(("<bdi>", "\u2068"))]
        assert bare == [], page


def test_names_in_sentences_are_isolated_each():
    assert names_html(["Ana", ARABIC, "<b>"]) == (
        f"<bdi>Ana</bdi>, <bdi>{ARABIC}</bdi> y <bdi>&lt;b&gt;</bdi>"
    )
    rendered = Template(
        "{% load dados %}{{ name|bdi }} {{ name|isolated }} {{ people|names }}"
    ).render(Context({"name": "<i>", "people": [UserFactory.build(display_name="Bea")]}))
    assert rendered == "<bdi>&lt;i&gt;</bdi> \u2068&lt;i&gt;\u2069 <bdi>Bea</bdi>"


def test_the_admins_temporary_passwords_isolate_the_names(admin_client):
    dani = UserFactory(username="dani", display_name=HEBREW)
    response = admin_client.post(
        reverse("admin:accounts_user_changelist"),
        {"action": "temporary_password", "_selected_action": [dani.pk]},
        follow=True,
    )
    assert f"<strong><bdi>{HEBREW}</bdi></strong> (<bdi>dani</bdi>)" in response.text


SPANISH_ORDER = ["Ana", "Ángela", "éric", "Maximiliano", "Nuria", "Ñoño"]


def test_names_sort_in_spanish_order():
    from accounts.names import sort_key

    shuffled = ["Ñoño", "Maximiliano", "éric", "Nuria", "Ángela", "Ana"]
    assert sorted(shuffled, key=sort_key) == SPANISH_ORDER
    # «ñ» is a letter after «n», however it is written (one code point or n + tilde).
    spelled = ["Ñandú", "Nz", "O", "N\u0303a"]
    assert sorted(spelled, key=sort_key) == ["Nz", "N\u0303a", "Ñandú", "O"]
    # Names that fold alike still come in one order.
    assert sorted(["ana", "Ana"], key=sort_key) == sorted(["Ana", "ana"], key=sort_key)
