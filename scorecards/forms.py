import functools
from urllib.parse import urlencode

from django import forms
from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.names import names_html, sentence, sort_key
from scorecards import rules
from scorecards.dice import MAX_ROUNDS, faces_sum, is_roll, verified_who_starts
from scorecards.models import Scorecard, Seat
from scorecards.stats import Period


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self):
        super().__init__(format="%Y-%m-%d")


PLAYED, ORGANIZED = "jugadas", "organizadas"


class PlayersByName(forms.models.ModelChoiceIterator):
    """A choice of players in the order every list of players is shown (names.sort_key)."""

    def __iter__(self):
        if self.field.empty_label is not None:
            yield ("", self.field.empty_label)
        for player in sorted(self.queryset, key=lambda p: sort_key(p.name)):
            yield self.choice(player)


class PlayerChoiceField(forms.ModelChoiceField):
    iterator = PlayersByName


def mode_field():
    """«Modalidad»: every game, or only those of one mode."""
    return forms.ChoiceField(
        choices=[
            ("", gettext_lazy("Todas")),
            (Scorecard.PRESENCIAL, gettext_lazy("Presencial")),
            (Scorecard.DIGITAL, gettext_lazy("Digital")),
        ],
        required=False,
        label=gettext_lazy("Modalidad"),
        error_messages={"invalid_choice": gettext_lazy("Elige todas, presencial o digital.")},
    )


class ModeFilterForm(forms.Form):
    """The statistics' filter by mode (GET `modalidad`); an unknown value means all games."""

    modalidad = mode_field()

    @property
    def mode(self) -> str | None:
        """The chosen mode, or None for every game (also when the value is invalid)."""
        return (self.cleaned_data["modalidad"] or None) if self.is_valid() else None

    @property
    def params(self) -> dict:
        """The GET parameters of the mode shown: none for every game."""
        return {"modalidad": self.mode} if self.mode else {}

    def links(self, keep=None) -> list[dict]:
        """Each choice as a link: its value («» for all), label, whether it is shown, and
        its query string, which carries the other filters' parameters (keep) too."""
        shown = self.mode or ""
        return [
            {
                "value": value,
                "label": label,
                "current": value == shown,
                "query": urlencode(({"modalidad": value} if value else {}) | (keep or {})),
            }
            for value, label in self.fields["modalidad"].choices
        ]


TICKED = "on"


def ticked_field():
    """A box of «Lo que ve la mesa»: ticked, it sends what a browser's checkbox sends
    without a value of its own («on»); unticked, nothing."""
    return forms.ChoiceField(
        choices=[(TICKED, TICKED)],
        required=False,
        error_messages={
            "invalid_choice": gettext_lazy(
                "Lo que ve la mesa se elige marcando o desmarcando sus casillas."
            )
        },
    )


class TableSettingsForm(forms.Form):
    """«Lo que ve la mesa», as «Crear tarjeta» and the card page send it: its totals hidden
    from the players until the end, and the upper bonus's pace (Scorecard.hide_totals,
    show_bonus_pace). Any other value is refused."""

    ocultar_totales = ticked_field()
    ritmo_bonus = ticked_field()

    @property
    def refusal(self) -> str:
        """Why it is refused: the first of its errors."""
        return next(iter(self.errors.values()))[0]

    @property
    def settings(self) -> dict:
        """The choices, as services.scorecard_create and scorecard_settings take them."""
        return {
            "hide_totals": self.cleaned_data["ocultar_totales"] == TICKED,
            "show_bonus_pace": self.cleaned_data["ritmo_bonus"] == TICKED,
        }


THIS_MONTH, THIS_YEAR = "mes", "anio"


class PeriodForm(forms.Form):
    """The period the statistics and «Historial» cover (GET `periodo`, or `desde` and
    `hasta`): every game («Siempre»), this month's, this year's, or those finalized between
    two days, both included, by the club's clock. Invalid, it means every game."""

    periodo = forms.ChoiceField(
        choices=[
            ("", gettext_lazy("Siempre")),
            (THIS_MONTH, gettext_lazy("Este mes")),
            (THIS_YEAR, gettext_lazy("Este año")),
        ],
        required=False,
        label=gettext_lazy("Periodo"),
        error_messages={
            "invalid_choice": gettext_lazy("Elige siempre, este mes, este año o unas fechas.")
        },
    )
    desde = forms.DateField(required=False, label=gettext_lazy("Desde"), widget=DateInput())
    hasta = forms.DateField(required=False, label=gettext_lazy("Hasta"), widget=DateInput())

    def clean(self):
        data = super().clean()
        if data.get("desde") and data.get("hasta") and data["desde"] > data["hasta"]:
            raise forms.ValidationError(_("«Desde» no puede ser posterior a «Hasta»."))
        if data.get("periodo") and (data.get("desde") or data.get("hasta")):
            raise forms.ValidationError(_("Elige un periodo o unas fechas, no las dos cosas."))
        return data

    @functools.cached_property
    def period(self) -> Period | None:
        """The period asked for, or None for every game (also when the input is invalid)."""
        if not self.is_valid():
            return None
        data = self.cleaned_data
        today = timezone.localdate()
        if data["periodo"] == THIS_MONTH:
            return Period(first=today.replace(day=1))
        if data["periodo"] == THIS_YEAR:
            return Period(first=today.replace(month=1, day=1))
        if data["desde"] or data["hasta"]:
            return Period(data["desde"], data["hasta"])
        return None

    @property
    def params(self) -> dict:
        """The GET parameters of the period shown: none for every game."""
        if self.period is None:
            return {}
        if self.cleaned_data["periodo"]:
            return {"periodo": self.cleaned_data["periodo"]}
        return {
            name: self.cleaned_data[name].isoformat()
            for name in ("desde", "hasta")
            if self.cleaned_data[name]
        }

    @property
    def dates(self) -> bool:
        """Whether the period shown is one of two dates (or one), not a named one."""
        return self.period is not None and not self.cleaned_data["periodo"]

    def links(self, keep=None) -> list[dict]:
        """Each named period as a link: its value («» for always), label, whether it is
        shown, and its query string, which carries the other filters' parameters (keep)."""
        shown = None if self.dates else (self.params.get("periodo") or "")
        return [
            {
                "value": value,
                "label": label,
                "current": value == shown,
                "query": urlencode((keep or {}) | ({"periodo": value} if value else {})),
            }
            for value, label in self.fields["periodo"].choices
        ]

    @property
    def problems(self) -> list[str]:
        """What is wrong with the period asked, once each; the dates' own errors are
        also said by their fields."""
        problems = [*self.errors.get("periodo", []), *self.non_field_errors()]
        if "desde" in self.errors or "hasta" in self.errors:
            problems.append(_("Revisa las fechas."))
        return problems


class HistoryFilterForm(PeriodForm):
    """«Historial» filters: games shared with another player, of a period, played or
    organized by me, of one mode."""

    # «Desde» and «Hasta» share a row of the two-column grid.
    field_order = ["jugador", "desde", "hasta", "periodo", "partidas", "modalidad"]

    jugador = PlayerChoiceField(
        # Everyone who plays, and anyone who sat at a card; never an account that only
        # administers.
        queryset=get_user_model()
        .objects.filter(Q(plays=True) | Exists(Seat.objects.filter(player=OuterRef("pk"))))
        .order_by("display_name", "username"),
        required=False,
        label=gettext_lazy("Con"),
        empty_label=gettext_lazy("Cualquier jugador"),
        error_messages={"invalid_choice": gettext_lazy("Ese jugador no existe.")},
    )
    partidas = forms.ChoiceField(
        choices=[
            ("", gettext_lazy("Todas")),
            (PLAYED, gettext_lazy("Las que jugué")),
            (ORGANIZED, gettext_lazy("Las que organicé")),
        ],
        required=False,
        label=gettext_lazy("Mis partidas"),
        error_messages={
            "invalid_choice": gettext_lazy("Elige todas, las que jugaste o las que organizaste.")
        },
    )
    modalidad = mode_field()

    def __init__(self, *args, me=None, **kwargs):
        super().__init__(*args, **kwargs)
        if me is not None:
            # Every game of my history is with me: «Con» offers the others.
            field = self.fields["jugador"]
            field.queryset = field.queryset.exclude(pk=me.pk)

    def filter(self, cards, me):
        """Narrow a queryset of my cards by the valid filters; invalid ones are ignored."""
        if not self.is_valid():
            return cards
        mine = self.cleaned_data.get("partidas")
        if mine == PLAYED:
            cards = cards.filter(seats__player=me)
        elif mine == ORGANIZED:
            cards = cards.filter(organizer=me)
        if other := self.cleaned_data.get("jugador"):
            # Its own join, apart from «Las que jugué»'s: their seat, not mine.
            cards = cards.filter(seats__player=other)
        if period := self.period:
            cards = cards.filter(period.condition())
        if mode := self.cleaned_data.get("modalidad"):
            cards = cards.filter(mode=mode)
        return cards


def possible_sum(raw: str) -> bool:
    """Whether raw is a sum five dice can show: 5 to 30."""
    raw = raw.strip()
    low, high = rules.DICE, rules.DICE * rules.FACES
    return raw.isascii() and raw.isdigit() and len(raw) <= 2 and low <= int(raw) <= high


def order_query(ids, mode=Scorecard.PRESENCIAL, *, rolled=None) -> str:
    """The order page's query (WhoStartsForm's) for these players in this order, the mode
    if digital and the app's signed rolls of «¿Quién empieza?» if any."""
    pairs = [("p", i) for i in ids]
    if mode == Scorecard.DIGITAL:
        pairs.append(("modo", Scorecard.DIGITAL))
    if rolled:
        pairs.append(("tiradas", rolled))
    return urlencode(pairs)


class WhoStartsForm:
    """«¿Quién empieza?»: each player's five-dice sum, the highest starts, and the tied
    roll again among themselves.

    The rounds already decided travel as `s` (one comma-separated round each: a sum per
    player, then a sum per player still tied); the round being entered as `t`, one per
    contender. Built from request.GET and the players in their current order.

    With the app's dice (digital), only the rounds it rolled count: signed in `tiradas`
    with the players in the order they rolled (dice.who_starts), so the table may
    be reordered after; typed or unsigned sums are refused.
    """

    def __init__(self, data, players, *, digital=False):
        # As seated in the address; self.players is the order the sums are given in.
        self.table = self.players = list(players)
        self.rounds = []
        # With the app's dice, the dice behind each sum of each round («66566»).
        self.dice = []
        self.starter = None
        self.error = None
        if digital:
            self._parse(self._rolled(data))
        else:
            raw_rounds = data.getlist("s")
            if "t" in data:
                raw_rounds.append(",".join(data.getlist("t")))
            self._parse(raw_rounds)
        self.tied = self._tied() if self.starter is None and self.rounds else []
        self.sums = [] if digital else self._sums(data.getlist("t"))
        # What the seating links carry to keep the result: the signed rolls that decided it.
        self.signed = data["tiradas"] if digital and self.starter is not None else None

    def _rolled(self, data) -> list[str]:
        """The rounds the app rolled for these players, whose sums then follow the order
        they rolled in; none, with why, when the address brings sums the app did not sign."""
        if "t" in data:
            self.error = _("Con dados virtuales no se escriben las sumas: las tira la app.")
            return []
        if "s" not in data and "tiradas" not in data:
            return []
        by_id = {p.pk: p for p in self.table}
        rolled = None if "s" in data else verified_who_starts(data["tiradas"], list(by_id))
        if rolled is None:
            self.error = _("Esas tiradas no las hizo la app: vuelve a tirar los dados.")
            return []
        order, rounds = rolled
        self.players = [by_id[i] for i in order]
        # Each player's five dice, whose sum counts; an address signed before the dice were
        # kept in it brings the sums alone.
        self.dice = [str(round_).split(",") for round_ in rounds]
        return [
            ",".join(str(faces_sum(part)) if is_roll(part) else part for part in dice)
            for dice in self.dice
        ]

    def _parse(self, raw_rounds):
        contenders = list(range(len(self.players)))
        for raw in raw_rounds[:MAX_ROUNDS]:
            sums = [part.strip() for part in raw.split(",")]
            if len(sums) != len(contenders) or not all(possible_sum(s) for s in sums):
                self.error = _("Cada suma de cinco dados está entre 5 y 30.")
                return
            round_sums = dict(zip(contenders, (int(s) for s in sums), strict=True))
            self.rounds.append(round_sums)
            best = max(round_sums.values())
            contenders = [i for i, s in round_sums.items() if s == best]
            if len(contenders) == 1:
                self.starter = contenders[0]
                return

    def _tied(self):
        last = self.rounds[-1]
        best = max(last.values())
        return [self.players[i] for i, s in last.items() if s == best]

    def _sums(self, entered):
        """The sums of the round to enter; after a refusal, as they were typed, the wrong
        ones marked and named in the message."""
        contenders = self.tied or self.players
        entered = (entered if self.error else [])[: len(contenders)]
        entered += [""] * (len(contenders) - len(entered))
        sums = [
            {"player": p, "value": raw[:10], "wrong": bool(self.error) and not possible_sum(raw)}
            for p, raw in zip(contenders, entered, strict=True)
        ]
        if wrong := [s["player"].name for s in sums if s["wrong"]]:
            self.error = sentence(
                _("Revisa la suma de %(names)s: con cinco dados sale entre 5 y 30."),
                names=names_html(wrong),
            )
        return sums

    @property
    def results(self) -> list[list[dict]]:
        """Each round decided so far: its players with their sums, the best marked, and
        with the app's dice the faces each rolled."""
        results = []
        for n, round_ in enumerate(self.rounds):
            best = max(round_.values())
            rolled = self.dice[n] if n < len(self.dice) else [""] * len(round_)
            results.append(
                [
                    {
                        "player": self.players[i],
                        "sum": total,
                        "best": total == best,
                        "dice": [int(face) for face in faces] if is_roll(faces) else [],
                    }
                    for (i, total), faces in zip(round_.items(), rolled, strict=True)
                ]
            )
        return results

    @property
    def seating(self) -> list:
        """The players in turn order: the table from the starter on, once there is one."""
        if self.starter is None:
            return self.table
        at = self.table.index(self.players[self.starter])
        return self.table[at:] + self.table[:at]
