"""Migration 0006 moves every change's items into the change's row, and back again;
0007 moves the seat's checks into domains on PostgreSQL and 0009 puts them back on the table;
0011's triggers look at every card a seat or a roll belongs to; 0012 and 0013 leave them as
they are, and 0014 keeps them through SQLite's rebuilds of the card's table; accounts 0003
adds «Juega» without taking anyone out of the game; accesses 0001 takes the sign-in records'
content types from accounts. scorecards.triggers.CURRENT is what they leave."""

import io
import json

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from scorecards import triggers
from tests.factories import make_scorecard

BEFORE = [("scorecards", "0005_created_once")]
AFTER = [("scorecards", "0006_change_items_inline")]
DOMAINS = [("scorecards", "0007_seat_checks_in_domains")]
USERS = [("accounts", "0003_plays")]  # as they are now, on both sides


def migrate(targets):
    """The database migrated to targets; the models as they were there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets + USERS).apps


def latest():
    """The newest migration of every app: where a test leaves the database."""
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def refusal(sql, params=()) -> str | None:
    """The database's message if it refuses the statement, None if it takes it."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
    except IntegrityError as error:
        return str(error)
    return None


def refused(sql, params=()):
    return refusal(sql, params) is not None


def rows(sql):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchall()


@pytest.fixture
def old_log(flushable_db):
    """Two cards in the schema before 0006: one in progress, one finalized, with a box
    write, an extra Yahtzee (two items), an undo and a change without items. The
    database goes back to the latest schema afterwards."""
    apps = migrate(BEFORE)
    User = apps.get_model("accounts", "User")
    Scorecard, Seat, Change, Item = (
        apps.get_model("scorecards", name) for name in ("Scorecard", "Seat", "Change", "ChangeItem")
    )
    olga, ana, ben = (User.objects.create(username=name) for name in ("olga", "ana", "ben"))
    playing, done = (Scorecard.objects.create(organizer=olga) for _ in range(2))
    a, b = (
        Seat.objects.create(scorecard=playing, player=player, order=n)
        for n, player in enumerate((ana, ben))
    )
    c = Seat.objects.create(scorecard=done, player=ana, order=0)

    def change(card, kind, *items, undoes=None):
        made = Change.objects.create(scorecard=card, author=olga, kind=kind, undoes=undoes)
        for seat, box, old, new in items:
            Item.objects.create(change=made, seat=seat, box=box, old=old, new=new)
        return made

    box = change(playing, "box", (a, "ones", None, 3))
    joker = change(playing, "joker", (b, "fours", None, 20), (b, "yahtzee_bonuses", 0, 1))
    undo = change(playing, "undo", (a, "ones", 3, None), undoes=box)
    empty = change(playing, "box")
    final = change(done, "box", (c, "chance", None, 23))
    Scorecard.objects.filter(pk=done.pk).update(finalized_at="2026-11-29T20:00:00Z")
    yield {
        "seats": (a.pk, b.pk, c.pk),
        "changes": (box.pk, joker.pk, undo.pk, empty.pk, final.pk),
        "done": done.pk,
        "author": olga.pk,
    }
    migrate(latest())


def test_0006_moves_the_items_into_their_change(old_log):
    a, b, c = old_log["seats"]
    box, joker, undo, empty, final = old_log["changes"]
    apps = migrate(AFTER)
    Change = apps.get_model("scorecards", "Change")
    assert {change.pk: change.items for change in Change.objects.all()} == {
        box: [[a, "ones", None, 3]],
        joker: [[b, "fours", None, 20], [b, "yahtzee_bonuses", 0, 1]],
        undo: [[a, "ones", 3, None]],
        empty: [],
        final: [[c, "chance", None, 23]],
    }
    assert Change.objects.get(pk=undo).undoes_id == box
    assert "scorecards_changeitem" not in connection.introspection.table_names()
    # The triggers came back: a finalized card's log takes nothing new, and no change
    # is ever rewritten; a second undo of one change is refused too.
    assert refused(
        "INSERT INTO scorecards_change (scorecard_id, author_id, created_at, kind, items)"
        " VALUES (%s, %s, '2026-11-29 21:00:00', 'box', '[]')",
        [old_log["done"], old_log["author"]],
    )
    assert refused(f"UPDATE scorecards_change SET items = '[]' WHERE id = {box}")
    assert refused(
        "INSERT INTO scorecards_change"
        " (scorecard_id, author_id, created_at, kind, items, undoes_id)"
        f" SELECT scorecard_id, author_id, created_at, 'undo', '[]', {box}"
        f" FROM scorecards_change WHERE id = {undo}"
    )


def test_0006_gives_the_items_back_when_unapplied(old_log):
    before = rows("SELECT change_id, seat_id, box, old, new FROM scorecards_changeitem ORDER BY id")
    migrate(AFTER)
    migrate(BEFORE)
    after = rows("SELECT change_id, seat_id, box, old, new FROM scorecards_changeitem ORDER BY id")
    assert after == before
    assert len(after) == 5
    assert "items" not in {
        column.name
        for column in connection.introspection.get_table_description(
            connection.cursor(), "scorecards_change"
        )
    }
    # 0002's triggers again: the log's items are append-only, and a finalized card's
    # items stay.
    assert refused("UPDATE scorecards_changeitem SET new = 4")
    [final] = [
        pk
        for pk, change in rows("SELECT id, change_id FROM scorecards_changeitem")
        if change == old_log["changes"][-1]
    ]
    assert refused(f"DELETE FROM scorecards_changeitem WHERE id = {final}")


def test_the_items_are_stored_as_plain_json(old_log):
    migrate(AFTER)
    [(items,)] = rows(f"SELECT items FROM scorecards_change WHERE id = {old_log['changes'][1]}")
    b = old_log["seats"][1]
    assert json.loads(items) == [[b, "fours", None, 20], [b, "yahtzee_bonuses", 0, 1]]


def seat_checks():
    """The seat table's own CHECK constraints, and the seat's domains (PostgreSQL)."""
    table = rows(
        "SELECT count(*) FROM pg_constraint"
        " WHERE conrelid = 'scorecards_seat'::regclass AND contype = 'c'"
    )[0][0]
    domains = rows("SELECT count(*) FROM pg_type WHERE typname LIKE 'dados\\_seat\\_%%'")[0][0]
    return table, domains


@pytest.mark.parametrize(
    ("column", "bad", "good", "name"),
    [
        ("chance", 4, 5, "seat_chance_allowed"),
        ("fives", 17, 25, "seat_fives_allowed"),
        ("yahtzee_bonuses", 13, 12, "seat_yahtzee_bonuses_range"),
        # SQLite names a positive field's check by its condition.
        ('"order"', -1, 7, {"postgresql": "scorecards_seat_order_check", "sqlite": "order"}),
        ("total", -1, 0, {"postgresql": "scorecards_seat_total_check", "sqlite": "total"}),
    ],
)
def test_0007_refuses_the_same_values_by_the_same_names_both_ways(
    flushable_db, column, bad, good, name
):
    seat = make_scorecard(n=2).seats.first().pk
    update = f"UPDATE scorecards_seat SET {column} = %s WHERE id = %s"
    postgres = connection.vendor == "postgresql"
    if isinstance(name, dict):
        name = name[connection.vendor]
    try:
        for target, checks in ((AFTER, (31, 0)), (DOMAINS, (0, 17)), (AFTER, (31, 0))):
            migrate(target)
            if postgres:  # SQLite keeps its table checks: 0007 changes nothing there
                assert seat_checks() == checks
            assert name in (refusal(update, [bad, seat]) or "")
            assert refusal(update, [good, seat]) is None
    finally:
        migrate(latest())
    assert refused(update, [bad, seat])


PLAIN = [("scorecards", "0009_plain_checks_and_change_version")]
TUNED = [("scorecards", "0008_labels_in_spanish")]


@pytest.fixture
def finished_games(flushable_db):
    """At 0008, the schema before plain Django: a finalized game with its change log and
    a game in progress. The database goes back to the latest schema afterwards."""
    apps = migrate(TUNED)
    User = apps.get_model("accounts", "User")
    Scorecard, Seat, Change = (
        apps.get_model("scorecards", n) for n in ("Scorecard", "Seat", "Change")
    )
    olga, ana = (User.objects.create(username=name) for name in ("olga", "ana"))
    done, playing = (Scorecard.objects.create(organizer=olga, version=1) for _ in range(2))
    final = Seat.objects.create(scorecard=done, player=ana, order=0, chance=23, total=23, place=1)
    Seat.objects.create(scorecard=playing, player=ana, order=0, ones=3)
    Change.objects.create(
        scorecard=done, author=olga, kind="box", items=[[final.pk, "chance", None, 23]]
    )
    Scorecard.objects.filter(pk=done.pk).update(finalized_at="2026-11-29T20:00:00Z")
    yield {"done": done.pk, "playing": playing.pk, "seat": final.pk}
    migrate(latest())


def test_0009_migrates_a_database_holding_finalized_games_and_back(finished_games):
    seat = finished_games["seat"]
    update = "UPDATE scorecards_seat SET chance = %s WHERE id = %s"
    postgres = connection.vendor == "postgresql"
    for target in (PLAIN, TUNED, PLAIN):
        apps = migrate(target)
        if postgres:  # the checks on the table after 0009, in domains at 0008
            assert seat_checks() == ((31, 0) if target == PLAIN else (0, 17))
        Seat = apps.get_model("scorecards", "Seat")
        assert Seat.objects.get(pk=seat).chance == 23
        # The finalized game still refuses every change, and impossible values stay out.
        assert "finalized" in (refusal(update, [24, seat]) or "")
        assert refused(
            "UPDATE scorecards_seat SET chance = 4 WHERE scorecard_id = %s",
            [finished_games["playing"]],
        )
    Change = apps.get_model("scorecards", "Change")
    assert list(Change.objects.values_list("version", flat=True)) == [None]
    tables = connection.introspection.table_names()
    assert "scorecards_statsversion" not in tables


def test_accounts_0003_keeps_every_existing_account_playing(flushable_db):
    """Staff and superusers included: only the admin unticks «Juega», never a migration."""
    before, after = [("accounts", "0002_must_change_password")], [("accounts", "0003_plays")]

    def users_at(targets):
        executor = MigrationExecutor(connection)
        executor.migrate(targets)
        executor.loader.build_graph()
        return executor.loader.project_state(targets).apps.get_model("accounts", "User")

    User = users_at(before)
    assert "plays" not in {f.name for f in User._meta.get_fields()}
    User.objects.create(username="admin", is_staff=True, is_superuser=True)
    User.objects.create(username="ana", display_name="Ana")
    try:
        User = users_at(after)
        assert dict(User.objects.values_list("username", "plays")) == {"admin": True, "ana": True}
        users_at(before)  # and it undoes cleanly
    finally:
        migrate(latest())


def test_accesses_0001_takes_the_records_content_types_from_accounts(flushable_db):
    """The sign-in records' permissions and the admin's log of them follow the records
    from accounts to accesses, and back when it is undone."""
    from django.contrib.contenttypes.models import ContentType

    before = [("accounts", "0006_axes_records_to_accesses"), ("accesses", None)]
    after = [("accesses", "0001_initial")]

    def migrated(targets):
        executor = MigrationExecutor(connection)
        executor.migrate(targets)

    try:
        migrated(before)
        record = ContentType.objects.get(app_label="accounts", model="accesslog")
        migrated(after)
        record.refresh_from_db()
        assert record.app_label == "accesses"
        migrated(before)
        record.refresh_from_db()
        assert record.app_label == "accounts"
    finally:
        migrate(latest())
        ContentType.objects.clear_cache()


DIGITAL = [("scorecards", "0010_digital_play")]
EVERY_CARD = [("scorecards", "0011_triggers_check_every_card")]


def taken(sql, params=()) -> bool:
    """Whether the database takes the statement; what it did is rolled back either way."""
    with transaction.atomic():
        took = refusal(sql, params) is None
        transaction.set_rollback(True)
    return took


@pytest.fixture
def two_games(flushable_db):
    """At 0010: a finalized game and a game in progress, each with a seat, a change and a
    roll, and a roll of the game in progress that names the finalized game's change (0010
    let it in). The database goes back to the latest schema afterwards."""
    apps = migrate(DIGITAL)
    User = apps.get_model("accounts", "User")
    Scorecard, Seat, Change, Roll = (
        apps.get_model("scorecards", n) for n in ("Scorecard", "Seat", "Change", "Roll")
    )
    olga, ana, ben = (User.objects.create(username=name) for name in ("olga", "ana", "ben"))
    done, playing = (Scorecard.objects.create(organizer=olga) for _ in range(2))
    # Another player and turn in each game, so that no unique constraint refuses a move.
    games = {"done": (done, ana, 0), "playing": (playing, ben, 1)}
    ids = {}
    for name, (card, player, order) in games.items():
        seat = Seat.objects.create(scorecard=card, player=player, order=order, chance=23)
        change = Change.objects.create(
            scorecard=card, author=olga, kind="box", items=[[seat.pk, "chance", None, 23]]
        )
        roll = Roll.objects.create(scorecard=card, seat=seat, change=change, **ROLL)
        ids[name] = {"scorecard": card.pk, "seat": seat.pk, "change": change.pk, "roll": roll.pk}
    ids["stray"] = Roll.objects.create(
        scorecard=playing, seat_id=ids["playing"]["seat"], change_id=ids["done"]["change"], **ROLL
    ).pk
    Scorecard.objects.filter(pk=done.pk).update(finalized_at="2026-11-29T20:00:00Z")
    yield ids
    migrate(latest())


ROLL = {"round": 1, "number": 1, "dice": "12345", "kept": "", "rolled_at": "2026-11-29T20:00Z"}
ADD_ROLL = (
    "INSERT INTO scorecards_roll (scorecard_id, seat_id, change_id, round, number, dice, kept,"
    " rolled_at) VALUES (%s, %s, %s, 1, 2, '12345', '1', '2026-11-29 21:00:00')"
)


@pytest.mark.parametrize("table", ["seat", "change", "roll"])
@pytest.mark.parametrize(("source", "target"), [("playing", "done"), ("done", "playing")])
def test_nothing_moves_into_or_out_of_a_finalized_game(two_games, table, source, target):
    migrate(latest())
    row, card = two_games[source][table], two_games[target]["scorecard"]
    message = refusal(f"UPDATE scorecards_{table} SET scorecard_id = %s WHERE id = %s", [card, row])
    # Changes and rolls are never updated at all; a seat only while its game is in progress.
    assert ("finalized" if table == "seat" else "append-only") in (message or "")
    assert rows(f"SELECT scorecard_id FROM scorecards_{table} WHERE id = {row}") == [
        (two_games[source]["scorecard"],)
    ]


def test_a_finalized_games_turns_take_no_roll_and_lose_none_through_another_card(two_games):
    migrate(latest())
    done, playing = two_games["done"], two_games["playing"]
    add = [playing["scorecard"], playing["seat"], done["change"]]
    assert "finalized" in (refusal(ADD_ROLL, add) or "")
    stray = two_games["stray"]
    assert "finalized" in (refusal("DELETE FROM scorecards_roll WHERE id = %s", [stray]) or "")
    assert rows(f"SELECT id FROM scorecards_roll WHERE change_id = {done['change']}") == [
        (done["roll"],),
        (stray,),
    ]
    # The game in progress still rolls, with its own changes.
    assert taken(ADD_ROLL, [playing["scorecard"], playing["seat"], playing["change"]])


def test_0011_checks_every_card_a_seat_or_roll_belongs_to_and_undoes_cleanly(two_games):
    done, playing = two_games["done"], two_games["playing"]
    move = "UPDATE scorecards_seat SET scorecard_id = %s WHERE id = %s"
    write = "UPDATE scorecards_seat SET ones = 1 WHERE id = %s"
    postgres = connection.vendor == "postgresql"
    for target in (EVERY_CARD, DIGITAL, EVERY_CARD):
        migrate(target)
        before = target == DIGITAL
        # At 0010 SQLite's seat trigger looked only at the card a seat came from
        # (PostgreSQL's function at both), and a roll's trigger only at its own card.
        assert taken(move, [done["scorecard"], playing["seat"]]) is (before and not postgres)
        assert taken(ADD_ROLL, [playing["scorecard"], playing["seat"], done["change"]]) is before
        assert refused(move, [playing["scorecard"], done["seat"]])
        assert "finalized" in (refusal(write, [done["seat"]]) or "")
        assert taken(write, [playing["seat"]])
        assert taken(ADD_ROLL, [playing["scorecard"], playing["seat"], playing["change"]])
    assert rows("SELECT id, scorecard_id FROM scorecards_seat ORDER BY id") == [
        (done["seat"], done["scorecard"]),
        (playing["seat"], playing["scorecard"]),
    ]
    assert rows("SELECT count(*) FROM scorecards_roll") == [(3,)]


REMATCH = [("scorecards", "0012_rematch")]


def test_0012_keeps_the_triggers_and_the_games_both_ways(two_games):
    """Unapplied, SQLite rebuilds the card's table to drop the rematch column: the
    finalized game is still protected afterwards, and again once 0012 is back."""
    done, playing = two_games["done"], two_games["playing"]
    migrate(EVERY_CARD)
    at_0011 = trigger_definitions()
    migrate(REMATCH)
    assert trigger_definitions() == at_0011
    rematch = "UPDATE scorecards_scorecard SET rematch_of_id = %s WHERE id = %s"
    another = (
        "INSERT INTO scorecards_scorecard"
        " (organizer_id, created_at, mode, version, turn_rolls, rematch_of_id)"
        " SELECT organizer_id, created_at, mode, 0, '[]', %s FROM scorecards_scorecard"
        " WHERE id = %s"
    )
    with transaction.atomic():
        assert taken(another, [done["scorecard"], playing["scorecard"]])
        assert refusal(rematch, [done["scorecard"], playing["scorecard"]]) is None
        # One rematch per game: a second card is refused by the unique index (SQLite
        # names its column, PostgreSQL the index).
        message = refusal(another, [done["scorecard"], playing["scorecard"]]) or ""
        assert "rematch_of_id" in message or "scorecard_rematch_once" in message
        transaction.set_rollback(True)
    for target in (EVERY_CARD, REMATCH):
        migrate(target)
        assert trigger_definitions() == at_0011
        assert "finalized" in (
            refusal("UPDATE scorecards_seat SET ones = 1 WHERE id = %s", [done["seat"]]) or ""
        )
        assert taken("UPDATE scorecards_seat SET ones = 1 WHERE id = %s", [playing["seat"]])
    assert rows("SELECT id FROM scorecards_scorecard ORDER BY id") == [
        (done["scorecard"],),
        (playing["scorecard"],),
    ]


KEYED = [("scorecards", "0013_change_key")]


def test_0013_keeps_the_triggers_and_the_change_log_both_ways(two_games):
    """A change's key is a column and an index that SQLite adds and drops without
    rebuilding the change log's table: its triggers stay as they were, and a key is only
    written with its change."""
    done, playing = two_games["done"], two_games["playing"]
    migrate(REMATCH)
    at_0012 = trigger_definitions()
    key = "0f8e2a34-5b6c-4d7e-8f90-a1b2c3d4e5f6"
    add = (
        "INSERT INTO scorecards_change (scorecard_id, author_id, created_at, kind, items,"
        ' "key") SELECT scorecard_id, author_id, created_at, kind, items, %s'
        " FROM scorecards_change WHERE id = %s"
    )
    for target in (KEYED, REMATCH, KEYED):
        migrate(target)
        assert trigger_definitions() == at_0012
        assert "finalized" in (
            refusal("UPDATE scorecards_seat SET ones = 1 WHERE id = %s", [done["seat"]]) or ""
        )
        assert "append-only" in (
            refusal("UPDATE scorecards_change SET kind = 'undo' WHERE id = %s", [playing["change"]])
            or ""
        )
    assert "append-only" in (
        refusal('UPDATE scorecards_change SET "key" = %s WHERE id = %s', [key, playing["change"]])
        or ""
    )
    assert "finalized" in (refusal(add, [key, done["change"]]) or "")
    with transaction.atomic():
        assert refusal(add, [key, playing["change"]]) is None
        # Once per card: SQLite names the columns, PostgreSQL the index.
        message = refusal(add, [key, playing["change"]]) or ""
        assert "scorecards_change.key" in message or "change_key_once" in message
        transaction.set_rollback(True)
    assert rows("SELECT count(*) FROM scorecards_change") == [(2,)]


HELD = [("scorecards", "0014_turn_held")]


def test_0014_holds_what_each_turn_in_progress_kept_and_keeps_the_triggers(two_games):
    """SQLite rebuilds the card's table to add the column, and again to take it away: the
    finalized game is protected all along, and a turn in progress holds what its last
    roll kept."""
    done, playing = two_games["done"], two_games["playing"]
    migrate(KEYED)
    at_0013 = trigger_definitions()
    at = "2026-11-29T21:00:00+00:00"
    turn = json.dumps([["31456", "", at], ["32256", "14", at]])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE scorecards_scorecard SET mode = 'digital', turn_rolls = %s WHERE id = %s",
            [turn, playing["scorecard"]],
        )
    for target in (HELD, KEYED, HELD):
        migrate(target)
        assert trigger_definitions() == at_0013
        assert "finalized" in (
            refusal("UPDATE scorecards_seat SET ones = 1 WHERE id = %s", [done["seat"]]) or ""
        )
        assert taken("UPDATE scorecards_seat SET ones = 1 WHERE id = %s", [playing["seat"]])
    assert rows("SELECT id, turn_held FROM scorecards_scorecard ORDER BY id") == [
        (done["scorecard"], ""),
        (playing["scorecard"], "14"),
    ]


def trigger_definitions() -> list:
    """Every trigger of the database, as the database keeps it, and on PostgreSQL the
    functions they run."""
    if connection.vendor == "postgresql":
        return rows(
            "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger"
            " WHERE NOT tgisinternal ORDER BY 1, 2"
        ) + rows("SELECT proname, prosrc FROM pg_proc WHERE proname LIKE 'dados\\_%%' ORDER BY 1")
    return rows(
        "SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY 1, 2"
    )


def test_the_current_triggers_are_the_ones_the_migrations_leave(flushable_db):
    """tests/conftest.py drops and creates triggers.CURRENT around a flush."""
    migrated = trigger_definitions()
    assert len(migrated) >= 5
    with connection.schema_editor() as editor:
        triggers.CURRENT.drop(editor)
    assert trigger_definitions() == []
    with connection.schema_editor() as editor:
        triggers.CURRENT.create(editor)
    assert trigger_definitions() == migrated


@pytest.mark.django_db
def test_the_models_need_no_new_migration():
    """What `makemigrations --check` says: every model change has its migration."""
    out = io.StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()
