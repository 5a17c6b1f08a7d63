"""The `referee` command and its verbs. Errors a user can cause end with one line on stderr
and exit status 1, never a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from referee import __version__
from referee.errors import RefereeError
from referee.rules import find_game, game_names
from referee.rules.records import check_result, read_record, replay, result_text

Handler = Callable[[argparse.Namespace], int]


def _check(args: argparse.Namespace) -> int:
    record = read_record(args.record)
    match, plies = replay(record)
    for ply in plies:
        print(f"{ply.number}. {ply.text}")
    print(result_text(match) + (f" ({match.outcome.termination.value})" if match.outcome else ""))
    check_result(record, match)
    return 0


def _perft(args: argparse.Namespace) -> int:
    if args.depth < 0:
        raise RefereeError("--depth must be 0 or more")
    game = find_game(args.game)
    start = game.start()
    if args.divide:
        for move in game.legal_moves(start):
            child = game.play(start, move)
            count = 1 if args.depth <= 1 else game.perft(child, args.depth - 1)
            if args.depth > 1 and game.outcome(child, 1) is not None:
                count = 0
            print(f"{game.move_text(start, move, compact=True)}: {count}")
    print(game.perft(start, args.depth))
    return 0


def _play(args: argparse.Namespace) -> int:
    from referee.play import play_in_terminal

    return play_in_terminal(find_game(args.game), input_fn=input, output_fn=print)


# --- render (referee/synth) ---------------------------------------------------------------


def _render(args: argparse.Namespace) -> int:
    from referee.synth.command import run

    return run(args)


def _add_render(verb: Callable[[str, Handler, str], argparse.ArgumentParser]) -> None:
    from referee.synth.command import add_arguments

    add_arguments(verb("render", _render, "render a frame or footage of a game, with its "
                       "ground truth"))


# --- end render -------------------------------------------------------------------------


# --- board (referee/vision/aruco) -------------------------------------------------------


def _board(args: argparse.Namespace) -> int:
    from referee.rules.core import Geometry
    from referee.vision.aruco import write_printable_board

    geometry = getattr(find_game(args.game), "geometry", None)
    if not isinstance(geometry, Geometry):
        raise RefereeError(f"{args.game} has no rectangular board to print")
    if not 5.0 <= args.square_mm <= 200.0:
        raise RefereeError(f"--square-mm {args.square_mm} is out of range 5..200")
    path = write_printable_board(geometry.files, geometry.ranks, args.square_mm, args.out)
    print(f"wrote {path}: {geometry.files}x{geometry.ranks} squares of {args.square_mm:g} mm "
          "with ArUco markers at the corners; print at 100% scale")
    return 0


def _add_board(verb: Callable[[str, Handler, str], argparse.ArgumentParser]) -> None:
    board = verb("board", _board, "write a printable board with ArUco corner markers, at true "
                 "size (SVG or PDF)")
    board.add_argument("--game", required=True, help="the game whose board to print")
    board.add_argument("--square-mm", type=float, default=40.0, help="square side in mm (40)")
    board.add_argument("--out", required=True, help="output file, .svg or .pdf")


# --- end board --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="referee", description="A camera referee for Rinne, Tensei and their family."
    )
    parser.add_argument("--version", action="version", version=f"referee {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help, description=help)
        sub.set_defaults(handler=handler)
        return sub

    games = ", ".join(game_names())
    check = verb("check", _check, "validate a game record; print each ply and the outcome")
    check.add_argument("record", help="a record file")

    perft = verb("perft", _perft, "count the move sequences of a given depth (rules testing)")
    perft.add_argument("--game", required=True, help=f"one of: {games}")
    perft.add_argument("--depth", type=int, required=True)
    perft.add_argument("--divide", action="store_true", help="also print the count per first move")

    play = verb("play", _play, "two people play a game in the terminal")
    play.add_argument("--game", required=True, help=f"one of: {games}")

    _add_render(verb)
    _add_board(verb)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Any = args.handler
    try:
        return int(handler(args))
    except RefereeError as error:
        print(f"referee: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("referee: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
