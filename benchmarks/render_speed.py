"""How fast the renderer makes training frames and footage, on one core.

Single frames: each frame is a new scene (new seed: new style, board, camera, pieces), as
when making training data. Footage: frames of one scene with a hand moving pieces.

    nice /work/venv/bin/python benchmarks/render_speed.py [--frames N] [--threads T]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2

from referee_lab.synth import RenderOptions, render_frame
from referee_lab.synth.footage import FootageOptions, render_footage
from referee_lab.synth.textures import warm_up


def single_frames(width: int, height: int, count: int, game: str) -> float:
    options = RenderOptions(width=width, height=height)
    for seed in range(10_000, 10_004):  # warm the noise bank for this size
        render_frame(game, seed=seed, options=options)
    start = time.perf_counter()
    for seed in range(count):
        render_frame(game, seed=seed, options=options)
    return count / (time.perf_counter() - start)


def footage(width: int, height: int, plies: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "bench.mp4"
        start = time.perf_counter()
        truth = render_footage("tensei", out, 1, options=RenderOptions(width=width, height=height),
                               footage=FootageOptions(plies=plies))
        return len(truth.frames), len(truth.frames) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1, help="OpenCV threads (default 1)")
    parser.add_argument("--plies", type=int, default=2)
    args = parser.parse_args()
    cv2.setNumThreads(args.threads)
    print(f"OpenCV {cv2.__version__}, {args.threads} thread(s)")
    start = time.perf_counter()
    warm_up()
    print(f"grain bank, once per process: {time.perf_counter() - start:.1f} s")
    for width, height in ((1280, 720), (640, 480)):
        for game in ("rinne", "renaissance"):
            fps = single_frames(width, height, args.frames, game)
            print(f"single frames {width}x{height} {game}: {fps:.1f} frames/s")
    for width, height in ((1280, 720), (640, 360)):
        frames, fps = footage(width, height, args.plies)
        print(f"footage {width}x{height} tensei, {frames} frames: {fps:.1f} frames/s")


if __name__ == "__main__":
    main()
