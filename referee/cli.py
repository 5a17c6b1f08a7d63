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


# --- vision: classify, train, eval (logic in referee/vision/tasks.py) ---------------------


def _classify(args: argparse.Namespace) -> int:
    from referee.vision.tasks import classify_files, to_json_line

    for result in classify_files(args.pieces, args.files, model=args.model, turns=args.turns):
        print(to_json_line(result))
    return 0


def _train(args: argparse.Namespace) -> int:
    from referee.vision.tasks import train_pieces

    train_pieces(
        args.pieces,
        out=args.out,
        data=args.data,
        steps=args.steps,
        seed=args.seed,
        extra=args.extra or (),
    )
    return 0


def _eval(args: argparse.Namespace) -> int:
    from referee.vision.tasks import evaluate_pieces

    print(evaluate_pieces(args.pieces, data=args.data, model=args.model, turns=args.turns))
    return 0


def _add_vision_verbs(verb: Callable[[str, Handler, str], argparse.ArgumentParser]) -> None:
    data_help = (
        "the real dice photographs (default: $REFEREE_REAL_DICE or "
        "../shared/data/real-dice-byler)"
    )
    classify = verb("classify", _classify, "classify single square images; one JSON line each")
    classify.add_argument("--pieces", required=True, help="piece set: dice")
    classify.add_argument("--model", help="a model path instead of models/<pieces>.onnx")
    classify.add_argument("--turns", type=int, choices=(1, 2, 4), default=1,
                          help="average over the image turned 1, 2 or 4 ways")
    classify.add_argument("files", nargs="+", metavar="FILE", help="images of one square each")
    train = verb("train", _train, "rebuild a classifier (needs the train extra)")
    train.add_argument("--pieces", required=True, help="piece set: dice")
    train.add_argument("--out", help="output folder (default: models/)")
    train.add_argument("--data", help=data_help)
    train.add_argument("--steps", type=int, help="training steps (default: the recipe's)")
    train.add_argument("--seed", type=int, help="random seed (default: the recipe's)")
    train.add_argument("--extra", action="append", metavar="DIR",
                       help="a folder of more labelled crops (labels.csv: file,label); repeatable")
    evaluate = verb("eval", _eval, "print a classifier's accuracy tables on real photos")
    evaluate.add_argument("--pieces", required=True, help="piece set: dice")
    evaluate.add_argument("--data", help=data_help)
    evaluate.add_argument("--model", help="a model path instead of models/<pieces>.onnx")
    evaluate.add_argument("--turns", type=int, choices=(1, 2, 4), default=1,
                          help="test-time augmentation: 1, 2 or 4 turns")


# --- end of vision verbs --------------------------------------------------------------------


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

    _add_vision_verbs(verb)
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
