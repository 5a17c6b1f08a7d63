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


# --- hardware: bench checks for the camera and the signals (referee/hardware/check.py) ---
def _camera(args: argparse.Namespace) -> int:
    from referee.hardware.check import check_camera

    print(check_camera(args.camera, frames=args.frames, snapshot=args.snapshot).line())
    return 0


def _signals(args: argparse.Namespace) -> int:
    from referee.hardware.check import parse_cues, play_cues
    from referee.hardware.signals import open_signals

    cues = parse_cues(args.cue)
    with open_signals(args.pins, require_gpio=args.gpio) as signals:
        play_cues(signals, cues, seconds=args.seconds)
    return 0


def _hardware_verbs(verb: Callable[[str, Handler, str], argparse.ArgumentParser]) -> None:
    camera = verb("camera", _camera, "read a few frames from a camera or footage and report "
                  "size, frame rate and brightness")
    camera.add_argument("--camera", default="pi", help="pi, pi:N, a camera index (0), a video "
                        "file or a folder of images (default: pi)")
    camera.add_argument("--frames", type=int, default=30, help="how many frames to read")
    camera.add_argument("--snapshot", help="write the last frame here (PNG) to check colours by eye")
    signals = verb("signals", _signals, "show every cue (or the named ones) on the LEDs and "
                   "buzzer, or in the terminal where there is no GPIO")
    signals.add_argument("cue", nargs="*", help="cue names, e.g. accepted illegal roll-pending")
    signals.add_argument("--pins", help="pin map (default: the wiring of hardware/pins.toml)")
    signals.add_argument("--seconds", type=float, default=2.0, help="how long each cue shows")
    signals.add_argument("--gpio", action="store_true", help="fail if there is no GPIO")
# --- end hardware ---


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
    _hardware_verbs(verb)
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
