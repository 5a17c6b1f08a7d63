"""The `referee-lab` command: the verbs that make and measure the referee's models (render,
train, train-corners, eval, quantize). Errors a user can cause end with one line on stderr
and exit status 1, never a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from referee import __version__
from referee.app.commands import VerbAdder, command_parser, run_command

if TYPE_CHECKING:
    from referee_lab.synth.camera import Lens


# --- render (referee_lab/synth) ---------------------------------------------------------------


def _render(args: argparse.Namespace) -> int:
    from referee_lab.synth.command import run

    return run(args, lens=None if args.calibration is None else _render_lens(args.calibration))


def _render_lens(path: str) -> Lens:
    """A camera file as the renderer's lens (the renderer draws k1 k2 p1 p2 k3)."""
    from referee.calibration.files import load_camera
    from referee.errors import CalibrationError
    from referee_lab.synth.camera import Lens

    camera = load_camera(path)
    (fx, skew, cx), (_, fy, cy), _ = camera.camera_matrix
    dist = camera.dist_coeffs + (0.0,) * (5 - len(camera.dist_coeffs))
    if any(dist[5:]) or skew:
        raise CalibrationError(f"{path}: the renderer draws k1 k2 p1 p2 k3 without skew; "
                               "this camera has more terms")
    k1, k2, p1, p2, k3 = dist[:5]
    return Lens(*camera.image_size, fx, fy, cx, cy, (k1, k2, p1, p2, k3))


def _add_render(verb: VerbAdder) -> None:
    from referee_lab.synth.command import add_arguments

    add_arguments(verb("render", _render, "render a frame or footage of a game, with its "
                       "ground truth"))


# --- end render -------------------------------------------------------------------------


# --- train, eval, quantize (logic in referee_lab/tasks.py) -------------------------------


def _train(args: argparse.Namespace) -> int:
    from referee_lab.tasks import train_pieces

    train_pieces(
        args.pieces,
        out=args.out,
        data=args.data,
        steps=args.steps,
        seed=args.seed,
        extra=args.extra or (),
        hard=args.hard or (),
        init=args.init,
        settings=args.set or (),
        frames=args.frames,
        only=args.only,
    )
    return 0


def _train_corners(args: argparse.Namespace) -> int:
    from referee_lab.tasks import train_corners_model

    path = train_corners_model(model=args.model, frames=args.frames, steps=args.steps, seed=args.seed,
                               data=args.data, out=args.out, jobs=args.jobs, threads=args.threads,
                               progress=lambda line: print(line, flush=True))
    print(f"wrote {path} and its card")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from referee.app.pipeline import PipelineSettings
    from referee.tracking.tile_pieces import read_whole_pieces
    from referee_lab.tasks import evaluate_pieces

    # also read as the referee reads them: a second look (dice too), tiles as whole pieces
    print(evaluate_pieces(args.pieces, data=args.data, model=args.model, turns=args.turns,
                          frames=args.frames, look=PipelineSettings().second_look,
                          pieces_reader=read_whole_pieces, cuts=args.cut or (), shown=args.shown,
                          split=args.split))
    return 0


def _quantize(args: argparse.Namespace) -> int:
    from referee_lab.tasks import quantize_pieces

    quantize_pieces(args.pieces, model=args.model, frames=args.frames,
                    eval_frames=args.eval_frames, data=args.data)
    return 0


def _add_model_verbs(verb: VerbAdder) -> None:
    data_help = (
        "the real dice photographs (default: $REFEREE_REAL_DICE or the lab's "
        "data/real-dice-byler)"
    )
    train = verb("train", _train, "rebuild a classifier (needs the lab extra)")
    train.add_argument("--pieces", required=True, help="piece set: dice, penta, zensu, tiles")
    train.add_argument("--out", help="output folder (default: the shipped models, referee/data/models/)")
    train.add_argument("--data", help=data_help + "; other sets: a folder of rendered crops "
                       "(default: $REFEREE_RENDER_CROPS or /tmp/referee-crops, rendered if empty)")
    train.add_argument("--steps", type=int, help="training steps (default: the recipe's)")
    train.add_argument("--seed", type=int, help="random seed (default: the recipe's)")
    train.add_argument("--extra", action="append", metavar="DIR",
                       help="a folder of more labelled crops (labels.csv: file,label); repeatable")
    train.add_argument("--hard", action="append", metavar="DIR",
                       help="a folder of hard examples (same layout; renders.write_hard_crop_folder), "
                       "drawn as their own share of a batch (p_hard); repeatable")
    train.add_argument("--init", metavar="MODEL",
                       help="fine-tune from this model's weights instead of from scratch")
    train.add_argument("--set", action="append", metavar="KEY=VALUE",
                       help="a recipe setting (a field of training.TrainConfig or, other sets, "
                       "render_training.RenderRecipe, e.g. lr=0.001); repeatable")
    train.add_argument("--frames", type=int,
                       help="penta, zensu, tiles: train on the first N rendered frames, rendering "
                       "those missing from --data (default: the set's TRAIN_FRAMES)")
    train.add_argument("--only", metavar="MODEL",
                       help="tiles: train only this model of the set (tiles, tiles-seam or "
                       "tiles-monomino)")
    corners = verb("train-corners", _train_corners, "rebuild a board-corner network from its recipe "
                   "(corners.onnx, corners-big.onnx, corners-refine.onnx or corners-grid.onnx; "
                   "needs the lab extra) from rendered frames")
    corners.add_argument("--model", default="corners",
                         help="corners (3x3 boards; 4,000 frames, 5,000 steps), corners-big (5x5 and 5x6 "
                         "boards; 8,000 frames of every Rinne-family size, 7,000 steps) or corners-refine "
                         "(3x3 boards' refiner; 6,800 frames, three views each, 8,000 steps) or corners-grid "
                         "(3x3 boards' grid reader; the refiner's views of 10,200 frames, 8,000 steps); "
                         "default corners")
    corners.add_argument("--frames", type=int,
                         help="rendered frames to train on (default: the recipe's)")
    corners.add_argument("--steps", type=int, help="training steps (default: the recipe's)")
    corners.add_argument("--seed", type=int, help="random seed (default: the recipe's)")
    corners.add_argument("--data", help="folder of rendered frames, rendered where missing "
                         "(default: $REFEREE_RENDER_CROPS/MODEL)")
    corners.add_argument("--out", help="output folder (default: the shipped models, referee/data/models/)")
    corners.add_argument("--jobs", type=int, default=2, help="rendering processes (default 2)")
    corners.add_argument("--threads", type=int, default=1,
                         help="torch threads for training (default 1; the card records it)")
    evaluate = verb("eval", _eval, "print a classifier's accuracy tables (dice: real photos; "
                    "other sets: held-out renders), also as the referee reads them")
    evaluate.add_argument("--pieces", required=True, help="piece set: dice, penta, zensu, tiles")
    evaluate.add_argument("--frames", type=int, default=100,
                          help="held-out frames to render (not dice; default 100)")
    evaluate.add_argument("--data", help=data_help)
    evaluate.add_argument("--model", help="a model path instead of referee/data/models/<pieces>.onnx")
    evaluate.add_argument("--turns", type=int, choices=(1, 2, 4), default=1,
                          help="test-time augmentation: 1, 2 or 4 turns")
    evaluate.add_argument("--cut", action="append", type=float, metavar="X",
                          help="dice: also cut each die's square X times its labelled box (1.8: "
                          "a die 0.56 of its square wide; the model's own cut is 1.4), one table "
                          "a cut; repeatable")
    evaluate.add_argument("--shown", type=int, default=0, metavar="N",
                          help="dice: crops that follow the dice's size, as `referee calibrate "
                          "pieces` measures it when shown N train-split dice a face (default 0: "
                          "the model's own crops)")
    evaluate.add_argument("--split", choices=("test", "val"), default="test",
                          help="dice: the photos read: the test split (default) or those the model "
                          "held out for validation (its card's recipe.photos_val), to choose on")
    quantize = verb("quantize", _quantize, "replace a trained float classifier by its int8 "
                    "version, calibrated on rendered squares (about 2x faster on one core)")
    quantize.add_argument("--pieces", required=True,
                          help="piece set: dice, penta, zensu, tiles (with tiles-seam and "
                          "tiles-monomino)")
    quantize.add_argument("--model", help="a model path instead of referee/data/models/<pieces>.onnx")
    quantize.add_argument("--frames", type=int, default=30,
                          help="rendered training frames to calibrate on (default 30)")
    quantize.add_argument("--eval-frames", type=int, default=200,
                          help="held-out frames to measure it on after (not dice; default 200)")
    quantize.add_argument("--data", help=data_help)
    expose = verb("expose-features", _expose_features, "add the 'features' output (the final "
                  "layer's input) to a classifier and its card's sha256, for `referee calibrate pieces`")
    expose.add_argument("--model", required=True, action="append",
                        help="a model name (referee/data/models/) or path; repeatable")


def _expose_features(args: argparse.Namespace) -> int:
    from referee_lab.features import expose_features

    for name in args.model:
        done = expose_features(name)
        print(f"{done.onnx_path}: {'added' if done.changed else 'already had'} features "
              f"({done.width} a crop), sha256 {done.sha256[:12]}")
    return 0


# --- end of model verbs --------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser, verb = command_parser(
        "referee-lab", "Render games, train and measure the referee's models (needs the lab extra).",
        __version__)

    _add_render(verb)
    _add_model_verbs(verb)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_command(build_parser(), argv, prog="referee-lab")


if __name__ == "__main__":
    sys.exit(main())
