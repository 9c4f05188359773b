"""The card's sheet (table, what is missing, recent changes): built once per version.

Every phone at the table fetches the sheet after each write, and the write itself answers
with it, so it is the app's hottest HTML. Two things keep it cheap (bench/RESULTS.md):

- The table's 78 to 130 score cells are built here rather than in the template: through
  the template language the table took 1.9 ms to render, here it takes about 0.2 ms.
- The whole sheet is cached per card version (and viewer role, names and language), so
  the card page and every player's refresh after a write share one rendering. Only the
  CSRF token of the organizer's forms is added per request.
"""

import functools
import hashlib
import json
from html import escape as html_escape

from django.conf import settings
from django.core.cache import cache
from django.db import connections
from django.template.backends.utils import csrf_input
from django.template.loader import render_to_string
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone, translation
from django.utils.crypto import constant_time_compare, salted_hmac
from django.utils.safestring import SafeData, mark_safe
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext as _

from dados import prepared
from scorecards import rules
from scorecards.labels import box_name
from scorecards.models import BONUS, Change, Scorecard, as_aware
from scorecards.rules import Category

RECENT_CHANGES = 5
# A version stops being asked for once the next write lands; an idle card is rendered
# again at most once an hour.
CACHE_SECONDS = 60 * 60
# Where the organizer's forms get this request's CSRF token in a cached sheet.
CSRF_SLOT = "<!--csrf-->"


def escape(text) -> str:
    """django.utils.html.escape, minus its check for lazy arguments: this module calls
    it some 25 times per write, on plain text."""
    return html_escape(str(text))


def url_setup() -> tuple[str, str]:
    """What a URL reversed now depends on besides its name and arguments: the prefix the
    app is served under and the URL configuration (the request's, else ROOT_URLCONF).
    Every URL worked out once and kept is kept under it."""
    return get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF


def card_url(pk) -> str:
    """reverse("scorecard", args=[pk]) at a tenth of the cost: every write's answer and
    every sheet start from it."""
    head, tail = _card_url_around(*url_setup())
    return f"{head}{int(pk)}{tail}"


@functools.lru_cache(maxsize=16)
def _card_url_around(_script_prefix, urlconf) -> tuple[str, str]:
    marker = 987654321  # any id: the URL is the same around it
    head, _, tail = reverse("scorecard", args=[marker], urlconf=urlconf).partition(str(marker))
    return head, tail


def conditional_escape(text) -> str:
    """django.utils.html.conditional_escape for the same: the words are escaped already."""
    return text if isinstance(text, SafeData) else html_escape(str(text))


def sheet_html(request, scorecard, *, error=None) -> str:
    """The sheet of a card loaded by Scorecard.objects.with_seats, for this request."""
    can_edit = scorecard.can_edit(request.user)
    if error:
        html, _consistent = render(scorecard, can_edit, error=error)
    else:
        # Renames through the app bump names_version; the names themselves are in the
        # key too, for a rename made any other way.
        names = [scorecard.organizer.name, *(seat.player.name for seat in scorecard.seat_list)]
        parts = [scorecard.pk, scorecard.version, can_edit, scorecard.names_version]
        parts += [get_language(), *names]
        key = "sheet:" + hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()
        html = cache.get(key)
        if html is None:
            html, consistent = render(scorecard, can_edit)
            if consistent:
                cache.set(key, html, CACHE_SECONDS)
    if can_edit:
        html = html.replace(CSRF_SLOT, csrf_input(request))
    return mark_safe(html)


def render(scorecard, can_edit, *, error=None) -> tuple[str, bool]:
    """The sheet's HTML, and whether its change log is of the same version as its table.

    The card and its log are two reads; a write committed between them gives a log one
    step ahead of the table. Such a sheet is served (the next poll corrects it) but
    never cached.
    """
    seats = scorecard.seat_list
    base = card_url(scorecard.pk)
    changes, log_version = recent_changes(scorecard, seats)
    words = _words(get_language())
    version = scorecard.version
    context = {
        "scorecard": scorecard,
        "can_edit": can_edit,
        "error": error,
        "table": mark_safe(table(scorecard, seats, base, can_edit)),
        "poll": mark_safe(poll_html(scorecard.pk, base, version)),
        "changes": mark_safe("".join(change_html(change, words) for change in changes)),
        "has_changes": bool(changes),
        "log_summary": log_summary(changes) if scorecard.is_finalized else None,
        "csrf_slot": mark_safe(CSRF_SLOT),
    }
    if can_edit:  # only the organizer's sheet has the actions and says what is missing
        problems = [(s.player.name, problems) for s in seats if (problems := s.problems)]
        context["version"] = mark_safe(version_html(version))
        context["answer_format"] = mark_safe(ANSWER_FORMAT)
        context["undo"] = mark_safe(undo_html(bool(changes), words))
        context["problems"] = mark_safe(problems_html(problems, words, is_open=bool(error)))
    html = render_to_string("scorecards/card.html#sheet", context)
    return html, log_version == scorecard.version


def written_html(scorecard, recorded) -> str:
    """What one write changed, as out-of-band swaps for the page that made it.

    The changed boxes' cells and the sums, positions, the version (poll and undo), what is
    missing, and the new log entry on top of «Últimos cambios»; the error of an earlier
    refused write goes away. Only correct when that page showed the version just before
    this write: the view checks it, and answers with the whole sheet otherwise.

    Every write answers with this, so it is built without the template language, from
    the same pieces as the sheet.
    """
    seats = scorecard.seat_list
    base = card_url(scorecard.pk)
    language = get_language()
    words = _words(language)
    cells = {(seat.pk, box) for seat, box, _old, _new in recorded.items}
    changed = {box for _seat, box in cells}
    rows = table_rows(
        scorecard, seats, base, True, boxes=changed, cells=cells, oob=OOB, words=words
    )
    players = {seat.pk: seat.player.name for seat in seats}
    change = _entry(
        recorded.kind,
        recorded.created_at,
        recorded.author.name,
        [
            (players[seat.pk], words[box], _said(old, words), _said(new, words))
            for seat, box, old, new in recorded.items
        ],
    )
    problems = [
        (players[seat.pk], problems) for seat in seats if (problems := seat.problems_in(language))
    ]
    version = scorecard.version
    return "".join(
        [
            # Cells and rows in templates of their own: a <tr> after a <td> would not parse.
            "<template>",
            *(row for row in rows if row.startswith("<td")),
            "</template><template>",
            *(row for row in rows if not row.startswith("<td")),
            "</template>\n",
            poll_html(scorecard.pk, base, version, OOB),
            f'\n<div id="sheet-alert"{OOB}></div>\n',
            version_html(version, OOB),
            undo_html(True, words, OOB),
            "\n",
            problems_html(problems, words, oob=OOB),
            '\n<ol hx-swap-oob="afterbegin:#recent-changes">',
            change_html(change, words),
            "</ol>\n",
        ]
    )


# The pieces of the sheet a write's answer swaps in out of band. Built in Python rather
# than as template partials so that the sheet and the write's answer share them, and
# the answer stays cheap; every text in them is escaped here.
OOB = ' hx-swap-oob="true"'


def poll_html(pk, base, version, oob="") -> str:
    return (
        f'<div class="poll" id="sheet-poll" hx-get="{escape(base)}{escape(poll_path(pk, version))}"'
        ' hx-trigger="every 3s"'
        f' hx-target="#sheet" hx-swap="outerHTML"{oob}></div>'
    )


def poll_path(pk, version) -> str:
    """What a page showing this version of the card polls, after the card's URL."""
    return f"vivo/?v={version}&t={shown_token(pk, version)}"


def shown_token(pk, version) -> str:
    """What a page showing this version of the card polls with: proof that the poller
    was shown it. It is the same for everyone who may see the card, so it is part of the
    cached sheet."""
    return salted_hmac("dados.live", f"{int(pk)}:{version}", algorithm="sha256").hexdigest()[:32]


def still_shown(pk, version: str, token: str) -> bool:
    """Whether a page that was shown this version of the card, and proves it with its
    token, still shows the card's current version.

    The live poll asks it every 3 s from every phone at the table, before reading the
    session or the user: while nothing changed, the answer (204, no content) tells
    whoever holds the page only what they were already shown, so it needs no more
    than the card's version. Any other poll goes through the session, the user and who
    may see the card.
    """
    if not (0 < len(version) <= 20 and version.isascii() and version.isdigit()):
        return False
    if not constant_time_compare(token, shown_token(pk, version)):
        return False
    return str(Scorecard.objects.version_of(pk)) == version


# Sent with every write by a sheet whose cells have ids (with the version, through the
# forms' hx-include): only such a sheet gets the written cells alone. A page rendered
# before the cells had ids (open during a deploy) sends none and gets the whole sheet.
ANSWER_FORMAT = '<input type="hidden" id="sheet-answer" name="answer" value="cells">'


def version_html(version, oob="") -> str:
    return f'<input type="hidden" id="sheet-version" name="version" value="{version}"{oob}>'


def undo_html(can_undo, words, oob="") -> str:
    disabled = "" if can_undo else " disabled"
    return f'<button type="submit" id="undo-button"{disabled}{oob}>{words["undo"]}</button>'


def problems_html(problems, words, *, is_open=False, oob="") -> str:
    """«Para finalizar falta»: [(player name, [reason, ...]), ...], open after a refusal."""
    if not problems:
        return f'<div id="sheet-problems"{oob}></div>'
    items = "".join(_problem_item(name, tuple(reasons)) for name, reasons in problems)
    return (
        f'<div id="sheet-problems"{oob}>\n'
        f'  <details class="problems"{" open" if is_open else ""}>\n'
        f"    <summary><strong>{words['to_finalize']}</strong></summary>\n"
        f"    <ul>{items}</ul>\n  </details>\n  </div>"
    )


@functools.lru_cache(maxsize=4096)
def _problem_item(name, reasons) -> str:
    """One column's problems: the same on every write until that column changes."""
    return f"<li><strong>{escape(name)}</strong>: {escape(' '.join(reasons))}</li>"


def change_html(change, words) -> str:
    """One entry of the change log."""
    kind = change["kind"]
    if kind == Change.Kind.UNDO:
        what = f" {words['undid']}"
    elif kind == Change.Kind.JOKER:
        what = f" · {words['joker_kind']}"
    else:
        what = ""
    items = "; ".join(
        f"{escape(player)}, {conditional_escape(box)}: {conditional_escape(old)}"
        f" → {conditional_escape(new)}"
        for player, box, old, new in change["items"]
    )
    return (
        f'\n      <li><time datetime="{change["iso"]}">{change["time"]}</time>'
        f" · {escape(change['author'])}{what}:\n        {items}\n      </li>\n"
    )


def places(scorecard, seats, totals=None) -> list[int]:
    """Stored positions of a finalized card, live ones while it is in progress."""
    if scorecard.is_finalized:
        return [seat.place for seat in seats]
    return rules.positions([t.total for t in totals or (seat.totals for seat in seats)])


def table(scorecard, seats, base, can_edit) -> str:
    """The card's table: a row per box, the sums and bonuses, total and position."""
    words = _words(get_language())
    names = "".join(f'<th scope="col">{escape(seat.player.name)}</th>' for seat in seats)
    caption, box_col = words["caption"], words["box_col"]
    return (
        '<div class="sheet-scroll">\n  <table class="sheet">\n'
        f'    <caption class="visually-hidden">{caption}</caption>\n'
        f'    <thead>\n      <tr><th scope="col" class="box-col">{box_col}</th>{names}</tr>\n'
        "    </thead>\n    <tbody>\n      "
        + "\n      ".join(table_rows(scorecard, seats, base, can_edit))
        + "\n    </tbody>\n  </table>\n  </div>"
    )


def table_rows(
    scorecard, seats, base, can_edit, *, boxes=None, cells=None, oob="", words=None
) -> list[str]:
    """The table's rows, each with an id; with boxes, only theirs and the sums; with
    cells ({(seat id, box), ...}), only those cells of the boxes' rows.

    oob is an attribute every row (or cell) gets (hx-swap-oob) when a write answers with
    just what it changed; words, _words() of the current language if the caller has them.
    """
    words = words or _words(get_language())
    blank = words["blank"]
    names = [escape(seat.player.name) for seat in seats]
    totals = [seat.totals for seat in seats]
    positions = places(scorecard, seats, totals)

    def sum_row(label, cells, css="sum"):
        return (
            f'<tr id="row-{label}" class="{css}"{oob}><th scope="row">{words[label]}</th>'
            f"{''.join(cells)}</tr>"
        )

    columns = list(zip(seats, names, strict=True))

    def box_row(box, label):
        cells = (box_cell(seat, name, box, label, blank, base, can_edit) for seat, name in columns)
        return f'<tr id="row-{box}"{oob}><th scope="row">{label}</th>{"".join(cells)}</tr>'

    def upper_bonus(t):
        if t.upper_bonus:
            return '<td><span class="reached">✓ 35</span></td>'
        if scorecard.is_finalized:  # nothing is missing any more: the game is over
            return "<td>0</td>"
        missing = words["missing"] % {"missing": max(0, 63 - t.upper)}
        return f'<td><span class="progress">0 <small>{missing}</small></span></td>'

    def yahtzee_bonus(seat, name, t):
        if not can_edit:
            return f"<td>{t.yahtzee_bonus}</td>"
        url = f"{base}casilla/{seat.pk}/{BONUS}/"
        aria = words["bonus_aria"] % {"name": name, "count": seat.yahtzee_bonuses}
        html = (
            f'<td><a class="cell" href="{url}" hx-get="{url}" hx-target="#picker"'
            f' aria-label="{aria}">{t.yahtzee_bonus}</a>'
        )
        if seat.yahtzee is not None:
            url = f"{base}yahtzee-extra/{seat.pk}/"
            aria = words["joker_aria"] % {"name": name}
            html += (
                f'<a class="joker-link" href="{url}" hx-get="{url}" hx-target="#picker"'
                f' aria-label="{aria}">{words["joker"]}</a>'
            )
        return html + "</td>"

    def box_cells(box, label):
        return "".join(
            box_cell(seat, name, box, label, blank, base, can_edit, oob)
            for seat, name in columns
            if (seat.pk, box) in cells
        )

    row = box_row if cells is None else box_cells
    rows = [row(box, words[box]) if boxes is None or box in boxes else None for box in _CATEGORIES]
    # With boxes, a sum row only if one of them counts in it: the upper sum and its bonus
    # for the upper boxes, the lower sum for the lower ones, the Yahtzee bonus row for
    # the bonus count and the Yahtzee box (which brings the «Yahtzee adicional» link).
    upper = boxes is None or not boxes.isdisjoint(_UPPER)
    lower = boxes is None or not boxes.isdisjoint(_LOWER)
    bonus = boxes is None or not boxes.isdisjoint((BONUS, Category.YAHTZEE.value))
    places_row = (f"<td>{words['nth'] % {'place': p}}</td>" for p in positions)
    rows = [
        *rows[:6],
        sum_row("upper", (f"<td>{t.upper}</td>" for t in totals)) if upper else None,
        sum_row("upper_bonus", map(upper_bonus, totals)) if upper else None,
        *rows[6:],
        sum_row("lower", (f"<td>{t.lower}</td>" for t in totals)) if lower else None,
        sum_row(BONUS, map(yahtzee_bonus, seats, names, totals)) if bonus else None,
        sum_row("total", (f"<td>{t.total}</td>" for t in totals), "total"),
        sum_row("place", places_row, "place"),
    ]
    return [row for row in rows if row is not None]


def box_cell(seat, name, box, label, blank, base, can_edit, oob="") -> str:
    """One player's box: a link to its picker on the organizer's sheet. Its id lets a
    write's answer swap in just this cell."""
    value = getattr(seat, box)
    if value is None:
        state, shown, said = " blank", '<span aria-hidden="true">·</span>', blank
    elif value == 0:
        state, shown, said = " scratched", '<span class="zero">0</span>', 0
    else:
        state, shown, said = "", value, value
    aria = f"{label} — {name}: {said}"
    cell = f'<td id="c{seat.pk}-{box}"{oob}>'
    if can_edit:
        url = f"{base}casilla/{seat.pk}/{box}/"
        return (
            f'{cell}<a class="cell{state}" href="{url}" hx-get="{url}" hx-target="#picker"'
            f' hx-push-url="false" aria-label="{aria}">{shown}</a></td>'
        )
    return (
        f'{cell}<span class="cell{state}"><span aria-hidden="true">{shown}</span>'
        f'<span class="visually-hidden">{aria}</span></span></td>'
    )


_CATEGORIES = tuple(c.value for c in Category)  # enum members' .value costs on every call
_UPPER = frozenset(c.value for c in rules.UPPER)
_LOWER = frozenset(c.value for c in rules.LOWER)


@functools.cache
def _words(language) -> dict[str, str]:
    """The table's words in one language, escaped: translated once per process."""
    with translation.override(language):
        words = {c.value: box_name(c) for c in Category} | {
            BONUS: _("Bonus Yahtzee"),
            "upper": _("Suma superior"),
            "upper_bonus": _("Bonus superior"),
            "lower": _("Suma inferior"),
            "total": _("Total"),
            "place": _("Posición"),
            "nth": _("%(place)sº"),
            "caption": _("Puntos por casilla y jugador"),
            "box_col": _("Casilla"),
            "blank": _("sin anotar"),
            "missing": _("faltan %(missing)s"),
            "bonus_aria": _("Bonus Yahtzee — %(name)s: %(count)s × 100"),  # noqa: RUF001
            "joker_aria": _("Yahtzee adicional — %(name)s"),
            "joker": _("+ Yahtzee adicional"),
            "undo": _("↶ Deshacer"),
            "undid": _("deshizo un cambio"),
            "joker_kind": _("Yahtzee adicional"),
            "to_finalize": _("Para finalizar falta"),
        }
    return {key: mark_safe(escape(text)) for key, text in words.items()}


def recent_changes(scorecard, seats) -> tuple[list[dict], int | None]:
    """The card's latest changes, newest first (all of them once finalized), and the card's
    version as the same query saw it: one query, one snapshot."""
    connection = connections[Change.objects.db]
    users = scorecard.organizer._meta.db_table
    cards, changes = Scorecard._meta.db_table, Change._meta.db_table
    if scorecard.is_finalized:
        which, params = "", []
    else:
        which = (
            f" AND c.id IN (SELECT id FROM {changes} WHERE scorecard_id = %s"
            " ORDER BY id DESC LIMIT %s)"
        )
        params = [scorecard.pk, RECENT_CHANGES]
    sql = (
        "SELECT s.version, c.id, c.kind, c.created_at, a.display_name, a.username, c.items"
        f" FROM {cards} s LEFT JOIN {changes} c ON c.scorecard_id = s.id{which}"
        f" LEFT JOIN {users} a ON a.id = c.author_id"
        " WHERE s.id = %s ORDER BY c.id DESC"
    )
    with connection.cursor() as cursor:
        prepared.execute(cursor, sql, [*params, scorecard.pk])
        rows = cursor.fetchall()
    words = _words(get_language())
    players = {seat.pk: seat.player.name for seat in seats}
    entries = []
    version = rows[0][0] if rows else None
    for _version, pk, kind, created_at, display_name, username, items in rows:
        if pk is None:  # no change at all: the card's row alone
            continue
        items = json.loads(items)  # text on both databases (Change.items)
        said = [
            (players.get(seat_id, ""), words.get(box, box), _said(old, words), _said(new, words))
            for seat_id, box, old, new in items
        ]
        entry = _entry(kind, as_aware(connection, created_at), display_name or username, said)
        entry["correction"] = any(old is not None for _seat, _box, old, _new in items)
        entries.append(entry)
    return entries, version


def _said(value, words):
    return words["blank"] if value is None else value


def _entry(kind, created_at, author, items) -> dict:
    """One change for the log: when, who, what kind, and (player, box, old, new) items."""
    when = timezone.localtime(created_at)
    return {
        "kind": kind,
        "iso": when.isoformat(),
        "time": f"{when.hour:02}:{when.minute:02}:{when.second:02}",
        "author": author,
        "items": items,
        "correction": False,
    }


def log_summary(changes) -> str:
    """A finished game's log in one sentence: entries, corrections, extra Yahtzees, undos."""
    counts = {"entries": 0, "corrections": 0, "jokers": 0, "undos": 0}
    for change in changes:
        if change["kind"] == Change.Kind.UNDO:
            counts["undos"] += 1
        elif change["kind"] == Change.Kind.JOKER:
            counts["jokers"] += 1
        elif change["correction"]:
            counts["corrections"] += 1
        else:
            counts["entries"] += 1
    words = {
        "total": ngettext("%(n)s cambio", "%(n)s cambios", len(changes)),
        "entries": ngettext("%(n)s anotación", "%(n)s anotaciones", counts["entries"]),
        "corrections": ngettext("%(n)s corrección", "%(n)s correcciones", counts["corrections"]),
        "jokers": ngettext(
            "%(n)s Yahtzee adicional", "%(n)s Yahtzees adicionales", counts["jokers"]
        ),
        "undos": ngettext("%(n)s deshecho", "%(n)s deshechos", counts["undos"]),
    }
    counts["total"] = len(changes)
    parts = {key: text % {"n": counts[key]} for key, text in words.items()}
    return _("%(total)s: %(entries)s, %(corrections)s, %(jokers)s y %(undos)s.") % parts
