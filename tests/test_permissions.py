"""Every URL of the project, for each kind of visitor and card state: the one expected answer.

The URL list comes from the URL configuration itself, so a new URL without an
expectation here makes test_every_url_has_an_expectation fail.
"""

import pytest
from django.contrib.admin.sites import site as admin_site
from django.db import connection
from django.test import Client
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse

from scorecards import services, turns
from scorecards.models import Change, Roll, Scorecard, Screen, Seat
from scorecards.urls import card as card_urls
from tests.dice import Scripted
from tests.factories import UserFactory, fill, make_scorecard

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "stranger", "player", "organizer", "staff"]
STATES = ["in_progress", "finalized"]
LOGIN = "login"  # a redirect to the log-in page
# What a 409 says, when a refusal has one reason only: an expectation may be (409, words).
FINALIZED = "Esta tarjeta ya está finalizada"


def _names(patterns, namespace=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            yield from _names(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield namespace + pattern.name


def everyone(code, anonymous=LOGIN):
    return lambda role, state: anonymous if role == "anonymous" else code


def card_view(role, state):
    return {"anonymous": LOGIN, "stranger": 404}.get(role, 200)


def card_edit(ok, finalized=409):
    """Organizer and staff edit a card in progress; players are refused; strangers see nothing."""

    def expect(role, state):
        if role == "anonymous":
            return LOGIN
        if role == "stranger":
            return 404
        if state == "finalized":
            return finalized
        return ok if role in ("organizer", "staff") else 403

    return expect


def card_stream(role, state):
    """The card's stream: who sees the card may open it. The test client is no ASGI
    server, so the view answers 204 (poll instead); the stream itself, served by uvicorn,
    is in test_live_stream.py."""
    return {"anonymous": LOGIN, "stranger": 404}.get(role, 204)


def card_turn(role, state):
    """Rolling, holding or scoring on the matrix's card, a physical one: refused to everyone
    who sees it, since the app rolls no physical dice (and a finalized card changes for
    nobody)."""
    if role in ("anonymous", "stranger"):
        return {"anonymous": LOGIN, "stranger": 404}[role]
    if state == "finalized":
        return 409, FINALIZED
    return 409, "Esta tarjeta es de dados físicos"


def card_rematch(role, state):
    """«Revancha»: the organizer and the players of a finished game make its next card (to
    htmx, a whole-page redirect to it); staff see the game but play no part in it."""
    if role in ("anonymous", "stranger"):
        return {"anonymous": LOGIN, "stranger": 404}[role]
    if role == "staff":
        return 403
    if state == "in_progress":
        return 409, "La partida aún no ha terminado"
    return 302


def staff_only(role, state):
    """«Pantalla del club» at /pantalla/: staff's (Screen.admits); a player is told so."""
    return {"anonymous": LOGIN, "staff": 200}.get(role, (403, "es de la administración"))


def card_share(role, state):
    """«Compartir» and «Dejar de compartir»: the organizer and the players of a finished
    game (to htmx, the page's share section); staff see the game but play no part in it."""
    if role in ("anonymous", "stranger"):
        return {"anonymous": LOGIN, "stranger": 404}[role]
    if role == "staff":
        return 403, "Solo quien jugó u organizó la partida puede compartirla."
    if state == "in_progress":
        return 409, "La partida aún no ha terminado"
    return 200


def split(expected):
    """(status, words the answer must say or None) of an expectation."""
    return expected if isinstance(expected, tuple) else (expected, None)


# (url name, method) → expectation; requests carry HX-Request, as the app's own forms do.
EXPECTED = {
    ("home", "GET"): everyone(200),
    ("home", "POST"): everyone(405),
    ("login", "GET"): everyone(302, anonymous=200),
    ("login", "POST"): everyone(302, anonymous=200),
    ("logout", "GET"): everyone(405, anonymous=405),
    ("logout", "POST"): everyone(302, anonymous=302),
    ("password_change", "GET"): everyone(200),
    ("password_change", "POST"): everyone(200),
    ("password_change_done", "GET"): everyone(200),
    ("password_change_done", "POST"): everyone(405),
    ("profile", "GET"): everyone(200),
    ("profile", "POST"): everyone(200),
    ("scorecard_new", "GET"): everyone(200),
    ("scorecard_new", "POST"): everyone(405),
    # With no name, nobody is added: 400, and the guest part of the page says why.
    ("guest_add", "GET"): everyone(405),
    ("guest_add", "POST"): everyone(400),
    ("scorecard_order", "GET"): everyone(302),
    ("scorecard_order", "POST"): everyone(405),
    ("scorecard_create", "GET"): everyone(405),
    ("scorecard_create", "POST"): everyone(302),
    ("scorecard", "GET"): card_view,
    ("scorecard", "POST"): everyone(405),
    ("scorecard_live", "GET"): card_view,
    ("scorecard_live", "POST"): everyone(405, anonymous=405),
    ("scorecard_events", "GET"): card_stream,
    ("scorecard_events", "POST"): everyone(405, anonymous=405),
    ("scorecard_json", "GET"): card_view,
    ("scorecard_json", "POST"): everyone(405),
    ("box", "GET"): card_edit(200),
    ("box", "POST"): card_edit(200),
    ("joker", "GET"): card_edit(200),
    ("joker", "POST"): card_edit(200),
    ("undo", "GET"): everyone(405),
    ("undo", "POST"): card_edit(200),
    # The card in progress is incomplete, so even its organizer is told what is missing by
    # the confirmation (GET); a POST without the version the confirmation showed is 400.
    ("finalize", "GET"): card_edit(200),
    ("finalize", "POST"): card_edit(400),
    ("discard", "GET"): card_edit(200),
    ("discard", "POST"): card_edit(302),
    # «Lo que ve la mesa»: its page, and the choice (nothing ticked), back to the card.
    ("table_settings", "GET"): card_edit(200),
    ("table_settings", "POST"): card_edit(302),
    ("roll", "GET"): everyone(405),
    ("roll", "POST"): card_turn,
    ("hold", "GET"): everyone(405),
    ("hold", "POST"): card_turn,
    ("score", "GET"): everyone(405),
    ("score", "POST"): card_turn,
    ("history", "GET"): everyone(200),
    ("history", "POST"): everyone(405),
    ("history_csv", "GET"): everyone(200),
    ("history_csv", "POST"): everyone(405),
    ("player", "GET"): everyone(200),
    ("player", "POST"): everyone(405),
    ("set_language", "GET"): everyone(302, anonymous=302),
    ("set_language", "POST"): everyone(302, anonymous=302),
    ("ranking", "GET"): everyone(200),
    ("ranking", "POST"): everyone(405),
    ("records", "GET"): everyone(200),
    ("records", "POST"): everyone(405),
    ("rematch", "GET"): everyone(405),
    ("rematch", "POST"): card_rematch,
    ("scorecard_qr", "GET"): card_view,
    ("scorecard_qr", "POST"): everyone(405),
    ("scorecard_share", "GET"): everyone(405),
    ("scorecard_share", "POST"): card_share,
    ("scorecard_unshare", "GET"): everyone(405),
    ("scorecard_unshare", "POST"): card_share,
    # A shared game's public page and picture: for anyone, logged in or not; a link never
    # made (or withdrawn) is 404 to all alike.
    ("shared", "GET"): everyone(404, anonymous=404),
    ("shared", "POST"): everyone(405, anonymous=405),
    ("shared_picture", "GET"): everyone(404, anonymous=404),
    ("shared_picture", "POST"): everyone(405, anonymous=405),
    # What a phone keeps for a reload without a network: for anyone, naming no one.
    ("service_worker", "GET"): everyone(200, anonymous=200),
    ("service_worker", "POST"): everyone(405, anonymous=405),
    ("offline", "GET"): everyone(200, anonymous=200),
    ("offline", "POST"): everyone(405, anonymous=405),
    ("screen", "GET"): staff_only,
    ("screen", "POST"): everyone(405, anonymous=405),
    ("screen_live", "GET"): staff_only,
    ("screen_live", "POST"): everyone(405, anonymous=405),
    # A screen link: whoever holds it, logged in or not, sees the screen and nothing else.
    ("screen_token", "GET"): everyone(200, anonymous=200),
    ("screen_token", "POST"): everyone(405, anonymous=405),
    ("screen_token_live", "GET"): everyone(200, anonymous=200),
    ("screen_token_live", "POST"): everyone(405, anonymous=405),
}

DATA = {
    "box": {"value": "1", "was": ""},
    "joker": {"face": "2", "box": "twos"},
    "undo": {"version": "1"},  # the card in progress, after its one write
    "scorecard_events": {"version": "0"},  # a page from before it
    # What a digital card's turn form sends, with the same version.
    "roll": {"version": "1", "dados": ""},
    "hold": {"version": "1", "dados": "", "guardar": ["1"]},
    "score": {"version": "1", "casilla": "chance"},
    "login": {"username": "nadie", "password": "x"},
    "profile": {"display_name": ""},
}


@pytest.fixture
def world():
    """A card in progress and a finalized one, with the same organizer and players."""
    organizer = UserFactory(username="org")
    player, other = UserFactory(username="ply"), UserFactory()
    users = {
        "stranger": UserFactory(username="str"),
        "player": player,
        "organizer": organizer,
        "staff": UserFactory(username="stf", is_staff=True, is_superuser=True),
    }
    finalized = make_scorecard(organizer, [player, other])
    fill(finalized)
    services.scorecard_finalize(scorecard_id=finalized.pk, author=finalized.organizer)
    in_progress = make_scorecard(organizer, [player, other])
    seat = in_progress.seats.get(player=player)
    services.box_write(
        scorecard_id=in_progress.pk,
        seat_id=seat.pk,
        box="yahtzee",
        value="50",
        was="",
        author=organizer,
    )
    cards = {"in_progress": in_progress, "finalized": finalized}
    return users, cards


def url_for(name, card, player):
    seat = Seat.objects.get(scorecard=card, player=player)
    kwargs = {
        "scorecard": {"pk": card.pk},
        "scorecard_live": {"pk": card.pk},
        "scorecard_events": {"pk": card.pk},
        "scorecard_json": {"pk": card.pk},
        "box": {"pk": card.pk, "seat_id": seat.pk, "box": "ones"},
        "joker": {"pk": card.pk, "seat_id": seat.pk},
        "undo": {"pk": card.pk},
        "finalize": {"pk": card.pk},
        "discard": {"pk": card.pk},
        "table_settings": {"pk": card.pk},
        "roll": {"pk": card.pk},
        "hold": {"pk": card.pk},
        "score": {"pk": card.pk},
        "rematch": {"pk": card.pk},
        "scorecard_qr": {"pk": card.pk},
        "scorecard_share": {"pk": card.pk},
        "scorecard_unshare": {"pk": card.pk},
        "shared": {"token": "nuncaCompartida"},
        "shared_picture": {"token": "nuncaCompartida"},
        "player": {"pk": player.pk},
    }.get(name, {})
    if name.startswith("screen_token"):
        kwargs = {"token": Screen.objects.get_or_create(name="Tele")[0].token}
    return reverse(name, kwargs=kwargs)


def snapshot():
    """Every row the app owns, to prove that a request changed nothing."""
    tables = [
        "accounts_user",
        "scorecards_scorecard",
        "scorecards_seat",
        "scorecards_change",
        "scorecards_roll",
        "scorecards_share",
    ]
    with connection.cursor() as cursor:
        rows = {}
        for table in tables:
            cursor.execute(f"SELECT * FROM {table} ORDER BY id")
            rows[table] = cursor.fetchall()
    return rows


def app_urls():
    return sorted(n for n in set(_names(get_resolver().url_patterns)) if ":" not in n)


def test_every_url_has_an_expectation():
    missing = [
        (name, method)
        for name in app_urls()
        for method in ("GET", "POST")
        if (name, method) not in EXPECTED
    ]
    assert missing == []
    assert {name for name, _ in EXPECTED} == set(app_urls())


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("name", "method"), sorted(EXPECTED))
def test_the_permission_matrix(world, name, method, role, state):
    users, cards = world
    client = Client()
    if role != "anonymous":
        client.force_login(users[role])
    url = url_for(name, cards[state], users["player"])
    before = snapshot()
    send = client.get if method == "GET" else client.post
    response = send(url, DATA.get(name, {}), headers={"HX-Request": "true"})
    status = check(response, EXPECTED[name, method](role, state), method)
    if method == "GET" or status >= 400:
        assert snapshot() == before


def check(response, expected, method="GET") -> int:
    """Assert the answer is the one expected; its status (a redirect's, to htmx, 302)."""
    expected, words = split(expected)
    # To htmx a redirect is one the browser follows with the whole page (HX-Redirect).
    status, location = response.status_code, response.get("Location")
    if "HX-Redirect" in response:
        status, location = 302, response["HX-Redirect"]
    if expected == LOGIN and method == "POST":
        # A write without a session: 401, and where to log in (dados.middleware).
        assert status == 401, (response.status_code, response.content[:300])
        assert response["X-Dados-Login"].startswith(reverse("login"))
    elif expected == LOGIN:
        assert status == 302, (response.status_code, response.content[:300])
        assert location.startswith(reverse("login"))
    else:
        assert status == expected, (response.status_code, response.content[:300])
    if words is not None:
        assert words in response.text, response.content[:300]
    return status


def test_admin_urls_answer_only_staff(world):
    users, _ = world
    names = [n for n in set(_names(get_resolver().url_patterns)) if n.startswith("admin:")]
    assert len(names) > 10
    models = {f"{m._meta.app_label}_{m._meta.model_name}": m for m in admin_site._registry}
    checked = 0
    for name in sorted(names):
        kwargs = {}
        pattern = name.split(":")[1]
        model = next((m for key, m in models.items() if pattern.startswith(key)), None)
        if pattern.endswith(("_change", "_delete", "_history")):
            instance = model.objects.first() if model else None
            if instance is None:
                continue
            kwargs = {"object_id": instance.pk}
        elif pattern.endswith("_password_change"):
            kwargs = {"id": users["player"].pk}
        elif pattern in {"app_list"}:
            kwargs = {"app_label": "accounts"}
        elif pattern in {"view_on_site", "autocomplete", "logout", "login", "javascript-catalog"}:
            continue
        try:
            url = reverse(name, kwargs=kwargs)
        except NoReverseMatch:  # a pattern this loop cannot fill in
            continue
        for role in ("anonymous", "player", "organizer"):
            client = Client()
            if role != "anonymous":
                client.force_login(users[role])
            for send in (client.get, client.post):
                response = send(url)
                assert response.status_code == 302, (name, role)
                assert response.url.startswith(reverse("admin:login")), (name, role)
        staff = Client()
        staff.force_login(users["staff"])
        answer = staff.get(url)
        # Staff get in; some admin pages still refuse everyone (adding a scorecard: 403).
        assert answer.status_code < 500, name
        assert not answer.get("Location", "").startswith(reverse("admin:login")), name
        checked += 1
    assert checked >= 10


def test_csrf_is_enforced_on_every_post(world):
    users, cards = world
    for (name, method), expect in EXPECTED.items():
        if method != "POST" or expect("organizer", "in_progress") == 405:
            continue
        client = Client(enforce_csrf_checks=True)
        client.force_login(users["organizer"])
        url = url_for(name, cards["in_progress"], users["player"])
        before = snapshot()
        for headers in ({}, {"HX-Request": "true"}):
            response = client.post(url, DATA.get(name, {}), headers=headers)
            assert response.status_code == 403, name
            assert "La página caducó" in response.text, name  # the CSRF refusal
            # … marked, so that the card's script says so rather than «No tienes permiso»
            assert response["X-Dados-Refusal"] == "expired", name
        assert snapshot() == before, name


# A digital game: the server rolls, the player whose turn it is (or the organizer) scores.

DIGITAL_ROLES = ["anonymous", "stranger", "turn", "waiting", "organizer", "staff"]
BY_HAND = "no se anota a mano"


def digital_write(ok):
    """A write by hand (or its form, GET) on a digital card: only organizer and staff get as
    far as the card's mode, which refuses the write (409); players are refused first, as
    on any card (403)."""

    def expect(role, state):
        if role in ("anonymous", "stranger"):
            return {"anonymous": LOGIN, "stranger": 404}[role]
        if state == "finalized":
            return 409, FINALIZED
        return ok if role in ("organizer", "staff") else 403

    return expect


def digital_turn(role, state):
    """Rolling, holding dice or scoring: the player whose turn it is and the organizer;
    everyone else who sees the card is told whose turn it is."""
    if role in ("anonymous", "stranger"):
        return {"anonymous": LOGIN, "stranger": 404}[role]
    if state == "finalized":
        return 409, FINALIZED
    if role in ("turn", "organizer"):
        return 200  # a patch: the page showed the version before the roll
    if role == "staff":  # sees every card, plays at none it does not sit at
        return 409, "No juegas en esta tarjeta: puedes mirarla, no tirar."
    return 409, "Ahora le toca a \u2068Ben\u2069: espera a tu turno."


DIGITAL = {
    ("scorecard", "GET"): card_view,
    ("scorecard_live", "GET"): card_view,
    ("scorecard_events", "GET"): card_stream,
    ("scorecard_json", "GET"): card_view,
    # The pickers and the finalize confirmation are not offered on a digital card's page;
    # asked for anyway, they are refused like what they would send.
    ("box", "GET"): digital_write((409, BY_HAND)),
    ("box", "POST"): digital_write((409, BY_HAND)),
    ("joker", "GET"): digital_write((409, BY_HAND)),
    ("joker", "POST"): digital_write((409, BY_HAND)),
    ("undo", "POST"): digital_write((409, BY_HAND)),
    ("finalize", "GET"): digital_write((409, BY_HAND)),
    ("finalize", "POST"): digital_write((409, "se finaliza sola con la última casilla")),
    ("discard", "GET"): digital_write(200),
    ("discard", "POST"): digital_write(302),
    ("table_settings", "GET"): digital_write(200),
    ("table_settings", "POST"): digital_write(302),
    ("roll", "POST"): digital_turn,
    ("hold", "POST"): digital_turn,
    ("score", "POST"): digital_turn,
    ("rematch", "POST"): card_rematch,
    ("scorecard_qr", "GET"): card_view,
    ("scorecard_share", "POST"): card_share,
    ("scorecard_unshare", "POST"): card_share,
}


def turn_roll(card, author, keep=()):
    """Roll for the turn in progress, as its page would ask."""
    card.refresh_from_db()
    return turns.turn_roll(
        scorecard_id=card.pk,
        author=author,
        version=str(card.version),
        shown=card.turn_rolls[-1][0] if card.turn_rolls else "",
        keep=[str(position) for position in keep],
    ).scorecard


def turn_score(card, author, box):
    card.refresh_from_db()
    return turns.turn_score(
        scorecard_id=card.pk, author=author, version=str(card.version), box=box
    ).scorecard


@pytest.fixture
def digital(settings):
    """Two digital cards organized by Olga for Ana and Ben, in that order: one in progress
    (Ana has scored her first box, Ben has rolled once: it is Ben's turn), and one that
    Ben's last box finalized."""
    settings.DICE_SOURCE = "tests.dice.Scripted"
    organizer = UserFactory(username="org", display_name="Olga")
    ana = UserFactory(username="ana", display_name="Ana")
    ben = UserFactory(username="ben", display_name="Ben")
    users = {
        "stranger": UserFactory(username="str"),
        "turn": ben,
        "waiting": ana,
        "organizer": organizer,
        "staff": UserFactory(username="stf", is_staff=True, is_superuser=True),
    }
    in_progress = services.scorecard_create(
        organizer=organizer, players=[ana, ben], mode=Scorecard.DIGITAL
    )
    Scripted.faces[:] = [3, 3, 4, 5, 6, 1, 2, 3, 4, 5]
    turn_roll(in_progress, ana)
    turn_score(in_progress, ana, "chance")
    turn_roll(in_progress, ben)  # 12345
    finalized = services.scorecard_create(
        organizer=organizer, players=[ana, ben], mode=Scorecard.DIGITAL
    )
    fill(finalized)
    finalized.seats.filter(player=ben).update(chance=None)
    Scripted.faces[:] = [2, 2, 3, 5, 6]
    turn_roll(finalized, ben)
    assert turn_score(finalized, ben, "chance").is_finalized
    # What the requests roll: Ben keeps his first die and rolls four sixes.
    Scripted.faces[:] = [6] * 5
    cards = {
        "in_progress": Scorecard.objects.get(pk=in_progress.pk),
        "finalized": Scorecard.objects.get(pk=finalized.pk),
    }
    return users, cards


def digital_data(name, card):
    """What each form sends: the version the page showed, Ben's dice and box."""
    version = str(card.version)
    shown = card.turn_rolls[-1][0] if card.turn_rolls else ""
    return {
        "box": {"value": "1", "was": ""},
        "joker": {"face": "2", "box": "twos"},
        "undo": {"version": version},
        "finalize": {"version": version},
        "roll": {"version": version, "dados": shown, "guardar": ["1"]},
        "hold": {"version": version, "dados": shown, "guardar": ["1", "3"]},
        "score": {"version": version, "casilla": "chance"},
    }.get(name, {})


def test_every_card_url_has_a_digital_expectation():
    names = {pattern.name for pattern in card_urls}
    assert {name for name, _ in DIGITAL} == names


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("role", DIGITAL_ROLES)
@pytest.mark.parametrize(("name", "method"), sorted(DIGITAL))
def test_the_digital_permission_matrix(digital, name, method, role, state):
    users, cards = digital
    card = cards[state]
    client = Client()
    if role != "anonymous":
        client.force_login(users[role])
    url = url_for(name, card, users["turn"])
    before = snapshot()
    send = client.get if method == "GET" else client.post
    if method == "POST":
        data = digital_data(name, card)
    else:
        data = {"version": "0"} if name == "scorecard_events" else {}
    response = send(url, data, headers={"HX-Request": "true"})
    status = check(response, DIGITAL[name, method](role, state), method)
    if method == "GET" or status >= 400:
        assert snapshot() == before
    if name not in ("roll", "hold", "score") or status != 200:
        return
    # Played: the page gets a patch, and the card moved on by one version.
    assert response["HX-Reswap"] == "none"
    ben = Seat.objects.get(scorecard=card, player=users["turn"])
    played = Scorecard.objects.get(pk=card.pk)
    assert played.version == card.version + 1
    if name == "roll":
        assert [faces for faces, *_rest in played.turn_rolls] == ["12345", "16666"]
        assert played.turn_rolls[-1][1] == "1"
        return
    if name == "hold":
        assert (played.turn_rolls, played.turn_held) == (card.turn_rolls, "13")
        return
    assert played.turn_rolls == []
    assert ben.chance == 15
    change = Change.objects.get(scorecard=card, version=played.version)
    assert change.author == users[role]
    assert list(Roll.objects.filter(change=change).values_list("seat", "dice")) == [
        (ben.pk, "12345")
    ]
