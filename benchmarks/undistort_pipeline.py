"""Undistortion in the referee's pipeline: what it costs per 1280x720 frame, and what it buys
on renders through a strongly distorting lens.

    PYTHONPATH=. python benchmarks/undistort_pipeline.py --frames 12 --cache /tmp/cal-bench

Frames: Rinne's start position (dice) rendered by referee_lab.synth through a lens of 70 degrees
across with k1 = -0.32, k2 = 0.10 (strong barrel distortion; the renderer's own lenses draw
k1 from -0.22 to 0.06), tilt 20-35 degrees, random looks. The camera file is the renderer's
own truth (K and distortion), as `referee calibrate camera` would measure it.

For each frame, without the file (the raw frame, as before) and with it (`FrameLens`:
undistorted before the board finder; crops with the known intrinsics):

- corner error: the largest distance of the found grid's corners from the true ones (mapped
  back through the lens where undistorted), as a share of the grid's diagonal;
- crop error: the mean distance of every square's crop corners (`top_face_quads`, as
  `BoardReader.read` cuts them) from where the true camera shows that square at a die's
  height, in squares.

Cost: one core (`cv2.setNumThreads(1)`), the minimum and median CPU time of 200 runs (the
machine is shared; `--costs-only` skips the accuracy part): the whole frame
remapped, the board's neighbourhood only (`Undistorter.region` around the found pose), a
camera without distortion (the Pi defaults: nothing), and a tracked frame's reading (the
lines tracked, the stillness view cut) on the neighbourhood undistorted and through the lens
(`LensImage`, what the pipeline does).
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from referee.app.calibrated import BOX_MARGIN, Calibration, FrameLens, board_box
from referee.calibration.defaults import pi_camera_module_3
from referee.calibration.files import CameraCalibration
from referee.calibration.undistort import LensImage
from referee.rules.rinne import RINNE
from referee.vision.board_finder import find_board
from referee.vision.board_tracker import track
from referee.vision.pose import BoardPose
from referee.vision.warp import warp_board
from referee_lab.pose_truth import errors
from referee_lab.synth import RenderOptions, render_frame
from referee_lab.synth.camera import Lens
from referee_lab.synth.truth import FrameTruth

SIZE = (1280, 720)
K1, K2, HFOV = -0.32, 0.10, 70.0


def strong_lens() -> Lens:
    w, h = SIZE
    fx = (w / 2) / np.tan(np.radians(HFOV) / 2)
    return Lens(w, h, fx, fx, (w - 1) / 2, (h - 1) / 2, (K1, K2, 0.0, 0.0, 0.0))


def rendered(seed: int, cache: Path | None) -> tuple[np.ndarray, FrameTruth]:
    path = None if cache is None else cache / f"strong-{seed}.pkl"
    if path is not None and path.exists():
        frame, truth = pickle.loads(path.read_bytes())
        return frame, truth
    options = RenderOptions(tilt=(20.0, 35.0), pieces="dice", lens=strong_lens())
    frame, truth = render_frame("rinne", RINNE.start(), seed, options)
    if path is not None:
        path.write_bytes(pickle.dumps((frame, truth)))
    return frame, truth


def camera_file(truth: FrameTruth) -> CameraCalibration:
    cam = truth.camera
    k = tuple(tuple(float(v) for v in row) for row in cam.K)
    return CameraCalibration((cam.width, cam.height), k, tuple(cam.dist), None, "render truth")


def timed(fn: Callable[[], object], repeats: int = 200) -> str:
    """'min / median' CPU time of this process in ms (the machine is shared: wall time would
    measure the queue)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return f"{min(times) * 1000:.2f} / {statistics.median(times) * 1000:.2f}"


def costs(frame: np.ndarray, truth: FrameTruth) -> list[tuple[str, str]]:
    lens = FrameLens(Calibration(camera_file(truth)))
    undistorter = lens.at(*SIZE)
    assert undistorter is not None
    pose = find_board(lens.undistort(frame, None), truth.files, truth.ranks)
    box = board_box(pose, BOX_MARGIN)
    assert box is not None
    step = 32  # as Undistorter.region widens it
    x0, y0 = max(box[0] // step * step, 0), max(box[1] // step * step, 0)
    x1, y1 = min(-(-box[2] // step) * step, SIZE[0]), min(-(-box[3] // step) * step, SIZE[1])
    share = (x1 - x0) * (y1 - y0) / (SIZE[0] * SIZE[1])
    flat = FrameLens(Calibration(pi_camera_module_3(*SIZE)))
    return [
        ("make the maps (once per frame size)", timed(lambda: FrameLens(
            Calibration(camera_file(truth))).at(*SIZE), repeats=20)),
        ("whole frame (while searching)", timed(lambda: lens.undistort(frame, None))),
        (f"board's neighbourhood, {share:.0%} of the frame (while tracking)",
         timed(lambda: lens.undistort(frame, pose))),
        ("camera without distortion (Pi defaults)", timed(lambda: flat.undistort(frame, pose))),
        ("a tracked frame: the neighbourhood undistorted, the lines tracked, the stillness view cut",
         timed(lambda: _tracked(lens.undistort(frame, pose), pose))),
        ("the same frame read through the lens (`LensImage`: no undistortion)",
         timed(lambda: _tracked(LensImage.of(frame, undistorter), pose))),
    ]


def _tracked(seen: np.ndarray | LensImage, pose: BoardPose) -> None:
    """What the pipeline reads of a frame it tracks the board in (`GameLoop.feed`)."""
    tracked = track(seen, pose)
    assert tracked is not None
    warp_board(seen, tracked, 12, margin=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, help="keep the renders here between runs")
    parser.add_argument("--costs-only", action="store_true", help="only the cost table")
    parser.add_argument("--alpha", type=float, help="the undistorted view (make_undistorter's "
                        "alpha, 0..1; default: the pipeline's, the camera's own matrix)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    if args.cache is not None:
        args.cache.mkdir(parents=True, exist_ok=True)
    print(f"OpenCV {cv2.__version__}, one thread; lens k1 {K1} k2 {K2}, {HFOV:g} deg across; "
          f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}\n")
    if not args.costs_only:
        accuracy(args.seed, args.frames, args.cache, args.alpha)
    frame, truth = rendered(args.seed, args.cache)
    print("\n| undistortion per 1280x720 BGR frame | ms, min / median |\n| --- | ---: |")
    for name, figure in costs(frame, truth):
        print(f"| {name} | {figure} |")


def accuracy(first: int, count: int, cache: Path | None, alpha: float | None) -> None:
    print("| frame | tilt | corners, raw | corners, undistorted | crops, raw | crops, undistorted |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    rows: list[tuple[tuple[float, float] | None, tuple[float, float] | None]] = []
    for seed in range(first, first + count):
        frame, truth = rendered(seed, cache)
        raw = errors(frame, truth, None)
        flat = errors(frame, truth, FrameLens(Calibration(camera_file(truth)), alpha=alpha))
        rows.append((raw, flat))
        print(f"| {seed} | {_tilt(truth):.0f} | {_pct(raw, 0)} | {_pct(flat, 0)} | "
              f"{_sq(raw)} | {_sq(flat)} |", flush=True)
    for name, pick in (("raw", 0), ("undistorted", 1)):
        found = [r[pick] for r in rows if r[pick] is not None]
        corner = [f[0] for f in found]
        crop = [f[1] for f in found]
        print(f"\n{name}: board found in {len(found)}/{len(rows)}; corner error median "
              f"{np.median(corner):.2%}, worst {max(corner):.2%}; crop error median "
              f"{np.median(crop):.3f}, worst {max(crop):.3f} squares")


def _tilt(truth: FrameTruth) -> float:
    rotation, _ = cv2.Rodrigues(np.array(truth.camera.rvec, np.float64))
    return float(np.degrees(np.arccos(abs(rotation[2, 2]))))


def _pct(result: tuple[float, float] | None, index: int) -> str:
    return "not found" if result is None else f"{result[index]:.2%}"


def _sq(result: tuple[float, float] | None) -> str:
    return "-" if result is None else f"{result[1]:.3f}"


if __name__ == "__main__":
    main()
