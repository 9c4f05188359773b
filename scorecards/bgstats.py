"""A finished game as BG Stats takes it: a link to its createPlay page carrying the play
as JSON (sourceName, sourcePlayId, playDate, durationMin, game, players), the form BG
Stats documents for other apps to send it plays."""

import json
from datetime import UTC
from urllib.parse import quote

CREATE_PLAY = "https://app.bgstatsapp.com/createPlay.html"
SOURCE_NAME = "Dados"
# Yahtzee on BoardGameGeek, by which BG Stats finds the game in its own list.
YAHTZEE_BGG_ID = 2243
# Stable, so that BG Stats, once told which of its games this is, remembers it.
SOURCE_GAME_ID = "dados-yahtzee"


def _date(moment) -> str:
    """BG Stats' date: UTC, «2026-12-07 20:15:00»."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def play(scorecard, changes) -> dict:
    """The finished game (read with its seats) as a BG Stats play: played from its first
    box to its last (changes, the card's log; without one, from its creation to its end),
    each player with their total, position (shared on a tie) and whether they won."""
    moments = [change.created_at for change in changes] or [
        scorecard.created_at,
        scorecard.finalized_at,
    ]
    first, last = min(moments), max(moments)
    return {
        "sourceName": SOURCE_NAME,
        "sourcePlayId": str(scorecard.pk),
        "playDate": _date(first),
        "durationMin": round((last - first).total_seconds() / 60),
        "game": {
            "name": "Yahtzee",
            "bggId": YAHTZEE_BGG_ID,
            "highestWins": True,
            "noPoints": False,
            "sourceGameId": SOURCE_GAME_ID,
        },
        "players": [
            {
                "name": seat.player.name,
                "score": seat.total,
                "rank": seat.place,
                "winner": seat.place == 1,
                "startPlayer": seat.order == 0,
                # The account's id, which no change of name or username moves.
                "sourcePlayerId": f"dados-{seat.player_id}",
            }
            for seat in scorecard.seats.all()
        ],
    }


def link(scorecard, changes) -> str:
    """«Registrar en BG Stats»: its createPlay page with the play."""
    data = json.dumps(play(scorecard, changes), ensure_ascii=False, separators=(",", ":"))
    return f"{CREATE_PLAY}?data={quote(data, safe='')}"
