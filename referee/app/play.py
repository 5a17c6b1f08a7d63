"""`referee play`: two people play a game in the terminal, typing moves in any of the
game's notations. Also the way to try the rules without a camera."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from referee.errors import RefereeError
from referee.rules.core import Game, Match, move_number
from referee.rules.records import format_record

HELP = "Type a move (e.g. 'Knight e5 - d3 = Bishop' or 'Ne5d3=B'), 'moves', 'undo', " \
       "'record' or 'quit'."


def play_in_terminal(game: Game[Any, Any], *, input_fn: Callable[[str], str],
                     output_fn: Callable[[str], None]) -> int:
    match: Match[Any, Any] = Match(game)
    names = game.player_names
    help_text = getattr(game, "help_text", HELP)
    output_fn(f"{game.title} ({game.variant}). {help_text}")
    while True:
        output_fn("")
        output_fn(game.diagram(match.position))
        if match.outcome is not None:
            output_fn(f"Game over: {match.outcome.result(names)} ({match.outcome.termination.value}).")
            output_fn(format_record(match))
            return 0
        turn = match.position.turn
        try:
            line = input_fn(f"{move_number(len(match.moves))}. {names[turn]} to move> ").strip()
        except EOFError:
            output_fn("")
            output_fn(format_record(match))
            return 0
        if line in ("quit", "exit"):
            output_fn(format_record(match))
            return 0
        if line in ("", "help", "?"):
            output_fn(help_text)
        elif line == "moves":
            output_fn("  ".join(game.move_text(match.position, m, compact=True)
                                for m in match.legal_moves()))
        elif line == "undo":
            _try(lambda: match.pop(), output_fn)
        elif line == "record":
            output_fn(format_record(match))
        else:
            before = match.position
            move = _try(functools.partial(match.push_text, line), output_fn)
            if move is not None:
                output_fn(f"  {game.move_text(before, move)}")


def _try(action: Callable[[], Any], output_fn: Callable[[str], None]) -> Any:
    try:
        return action()
    except RefereeError as error:
        output_fn(f"  not accepted: {error}")
        return None
