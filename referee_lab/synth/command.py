"""`referee-lab render`: a single frame (.png, .jpg) or footage (.mp4, .avi) of a game, with
its ground truth beside it (`OUT` with suffix .json)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import cv2

from referee.errors import OutputError, RenderError
from referee_lab.synth import render_frame
from referee_lab.synth.camera import Lens
from referee_lab.synth.footage import FAULTS, FootageOptions, render_footage
from referee_lab.synth.games import game_spec, known_games
from referee_lab.synth.scene import RenderOptions
from referee_lab.synth.style import DIE_SIZE, STYLES
from referee_lab.synth.video import VIDEO_SUFFIXES

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", required=True, help=f"one of: {', '.join(known_games())}")
    parser.add_argument("--record", help="a game record to play (default: the start position "
                        "for a frame, a random legal game for footage)")
    parser.add_argument("--seed", type=int, default=0, help="the same seed gives the same bytes")
    parser.add_argument("--out", required=True,
                        help="a .png/.jpg frame or .mp4/.avi footage; the truth goes to OUT.json")
    parser.add_argument("--size", help="WIDTHxHEIGHT (default 1280x720, or the camera file's)")
    parser.add_argument("--calibration", metavar="FILE",
                        help="a camera file (referee calibrate camera): render through that "
                        "camera's intrinsics and distortion instead of a drawn lens")
    parser.add_argument("--tilt", default="0-40",
                        help="camera angle from vertical, degrees: N or LO-HI (default 0-40)")
    parser.add_argument("--style", default="random", help=f"one of: {', '.join(STYLES)}")
    parser.add_argument("--die-size", default="-".join(map(str, DIE_SIZE)),
                        help="dice this share of a square wide: N or LO-HI (default "
                        f"{DIE_SIZE[0]}-{DIE_SIZE[1]}, the sizes the models learnt)")
    parser.add_argument("--pieces", choices=("dice", "penta"),
                        help="Rinne family: dice or Penta-pieces (default: drawn)")
    parser.add_argument("--faults", default="",
                        help=f"footage faults, comma-separated: {', '.join(FAULTS)}")
    parser.add_argument("--plies", type=int, default=8, help="length of a random game (footage)")
    parser.add_argument("--ply", type=int,
                        help="a frame of the position after this many plies of the record "
                        "(default: the last)")
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--noise", type=float, default=0.5,
                        help="footage: temporal sensor noise as a share of the style's "
                        "(default 0.5: a camera at normal table light)")
    parser.add_argument("--setup", action="store_true",
                        help="footage starts from an empty board: the pieces are set out")
    parser.add_argument("--hand", action="store_true",
                        help="a frame with a hand reaching over the board")
    parser.add_argument("--crf", type=int, default=30,
                        help="H.264 quality of .mp4 footage, 0..51: lower is better and bigger "
                        "(default 30)")
    parser.add_argument("--clean", action="store_true",
                        help="no sensor effects (noise, blur, JPEG): for exact checks")


def _size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match:
        raise RenderError(f"--size {text!r} is not WIDTHxHEIGHT, e.g. 1280x720")
    return int(match.group(1)), int(match.group(2))


def _tilt(text: str) -> tuple[float, float]:
    return _range(text, "--tilt", "in degrees, e.g. 0-40")


def _range(text: str, flag: str, example: str) -> tuple[float, float]:
    match = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(?:-\s*(\d+(?:\.\d*)?))?\s*", text)
    if not match:
        raise RenderError(f"{flag} {text!r} is not N or LO-HI {example}")
    lo = float(match.group(1))
    hi = float(match.group(2)) if match.group(2) else lo
    return lo, hi


def _match(path: str, game: str) -> tuple[Any, str]:
    from referee.rules.records import read_record, replay

    record = read_record(path)
    match, _ = replay(record)
    if match.game.name != game_spec(game).name:
        raise RenderError(f"{path}: the record is a game of {match.game.name}, not {game}")
    return match, Path(path).read_text(encoding="utf-8")


def run(args: argparse.Namespace, *, lens: Lens | None = None) -> int:
    """`lens`: the camera file's lens (read by the caller: synth reads no calibration
    files, see DESIGN.md's import rules)."""
    if args.size is not None:
        width, height = _size(args.size)
    else:
        width, height = (lens.width, lens.height) if lens is not None else (1280, 720)
    options = RenderOptions(width=width, height=height, tilt=_tilt(args.tilt), style=args.style,
                            pieces=args.pieces, effects=not args.clean,
                            die_size=_range(args.die_size, "--die-size", "of a square, e.g. 0.8-0.9"),
                            hands=1.0 if args.hand else 0.0,
                            lens=None if lens is None else lens.scaled_to(width, height))
    options.validate()
    game_spec(args.game)  # an unknown game is refused before anything else
    out = Path(args.out)
    suffix = out.suffix.lower()
    faults = tuple(f.strip() for f in args.faults.split(",") if f.strip())
    if suffix not in IMAGE_SUFFIXES and suffix not in VIDEO_SUFFIXES:
        raise RenderError(f"{out}: write a frame (.png, .jpg) or footage (.mp4, .avi)")
    if not out.parent.is_dir():
        raise OutputError(f"{out}: its folder does not exist")
    if args.style not in STYLES:
        raise RenderError(f"unknown style {args.style!r}; known styles: {', '.join(STYLES)}")
    match, record_text = (None, "")
    if args.record:
        match, record_text = _match(args.record, args.game)
    if suffix in VIDEO_SUFFIXES:
        footage = FootageOptions(fps=args.fps, plies=args.plies, faults=faults,
                                 setup=args.setup, noise=args.noise, crf=args.crf)
        video = render_footage(args.game, out, args.seed, record_text=record_text, match=match,
                               options=options, footage=footage)
        print(f"{out}: {len(video.frames)} frames, {len(video.plies)} acts, "
              f"style {video.style}; truth in {out.with_suffix('.json')}")
        return 0
    if faults:
        raise RenderError("--faults apply to footage (.mp4, .avi), not to a single frame")
    position = None
    if match is not None:
        ply = len(match.moves) if args.ply is None else args.ply
        if not 0 <= ply <= len(match.moves):
            raise RenderError(f"--ply {ply}: the record has {len(match.moves)} plies")
        position = match.positions[ply]
    elif args.ply is not None:
        raise RenderError("--ply needs --record")
    frame, truth = render_frame(args.game, position, args.seed, options)
    try:
        ok = cv2.imwrite(str(out), frame)
    except cv2.error:
        ok = False
    if not ok:
        raise OutputError(f"{out}: cannot be written")
    sidecar = out.with_suffix(".json")
    try:
        sidecar.write_text(json.dumps(truth.to_json()))
    except OSError as error:
        raise OutputError(f"{sidecar}: cannot be written ({error.strerror})") from None
    print(f"{out}: {width}x{height}; truth in {sidecar}")
    return 0
