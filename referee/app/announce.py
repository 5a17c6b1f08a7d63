"""Which cues (lights and sounds) tell the players about each referee event."""

from __future__ import annotations

from typing import Any

from referee.app.events import Event, EventKind
from referee.hardware.cues import Cue
from referee.rules.core import Color, Match

_SIMPLE = {
    EventKind.SET_UP: Cue.SET_UP,
    EventKind.ILLEGAL: Cue.ILLEGAL,
    EventKind.RESTORED: Cue.RESTORED,
    EventKind.UNREADABLE: Cue.UNREADABLE,
    EventKind.NO_BOARD: Cue.UNREADABLE,
    EventKind.PROMOTE: Cue.PROMOTE,
    EventKind.ROLL_PENDING: Cue.ROLL_PENDING,
    EventKind.INCOMPLETE: Cue.MOVE_INCOMPLETE,
}


def cues_for(event: Event, match: Match[Any, Any]) -> list[tuple[Cue, Color | None]]:
    """The cues for `event`, given the match as it stands after it."""
    if event.kind in _SIMPLE:
        return [(_SIMPLE[event.kind], None)]
    if event.kind is EventKind.GAME_OVER:
        assert match.outcome is not None
        winner = match.outcome.winner
        return [(Cue.DRAW, None)] if winner is None else [(Cue.WIN, winner)]
    # Whose turn it is after this event: the position after its ply count says (two plies
    # read at once give two events after both were played; turns need not alternate:
    # Renaissance's phase 2 turn is two plies, and a player who cannot act is skipped).
    positions = match.positions
    turn = positions[min(event.ply, len(positions) - 1)].turn
    over = match.is_over() and event.ply == len(match.moves)
    if event.kind is EventKind.STARTED:
        return [(Cue.TURN, turn)]
    if event.kind is EventKind.ACCEPTED:
        return [(Cue.ACCEPTED, None)] + ([] if over else [(Cue.TURN, turn)])
    if event.kind is EventKind.TAKE_BACK:
        return [(Cue.TAKEN_BACK, None), (Cue.TURN, turn)]
    return []
