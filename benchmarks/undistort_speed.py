"""Per-frame cost of undistortion at 1280x720 on one core: the referee's precomputed
fixed-point maps (cv2.remap) against float maps and against cv2.undistort, which rebuilds
its maps on every call.

    PYTHONPATH=. /work/venv/bin/python benchmarks/undistort_speed.py

The camera is OpenCV's sample calibration (strong barrel distortion) scaled to 1280x720.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from referee.calibration.files import CameraCalibration
from referee.calibration.intrinsics import Chessboard, calibrate_folder
from referee.calibration.undistort import make_undistorter, warp_maps

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "data" / "calibration" / "opencv-left"
SIZE = (1280, 720)
REPEATS = 200


def median_ms(fn: Callable[[], object], repeats: int = REPEATS) -> str:
    """'min / median' in ms: on a shared machine the minimum is the cleaner figure."""
    fn()  # warm caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return f"{min(times) * 1000:.2f} / {statistics.median(times) * 1000:.2f}"


def main() -> None:
    cv2.setNumThreads(1)  # the budgets are per core
    result = calibrate_folder(SAMPLES, Chessboard(9, 6, 25.0))
    # 640x480 → 1280x720 is not the same aspect: use a 1280x960 calibration and the
    # 1280x720 window of it, the cost of remapping is the same.
    base = CameraCalibration(
        result.image_size,
        tuple(tuple(float(v) for v in row) for row in result.camera_matrix),
        tuple(float(c) for c in result.dist_coeffs),
        result.rms_px,
        "OpenCV samples",
    ).scaled_to(1280, 960)
    k = base.K.copy()
    k[1, 2] -= 120  # crop 120 rows top and bottom
    calibration = CameraCalibration(SIZE, tuple(map(tuple, k.tolist())), base.dist_coeffs,
                                    base.rms_px, "benchmark")  # fmt: skip
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, (SIZE[1], SIZE[0], 3), dtype=np.uint8)

    build_ms = median_ms(lambda: make_undistorter(calibration), repeats=20)
    undistort = make_undistorter(calibration)
    fixed_ms = median_ms(lambda: undistort(frame))
    new_k = undistort.camera_matrix
    m1, m2 = cv2.initUndistortRectifyMap(calibration.K, calibration.dist, None, new_k, SIZE,
                                         cv2.CV_32FC1)  # fmt: skip
    float_ms = median_ms(lambda: cv2.remap(frame, m1, m2, cv2.INTER_LINEAR))
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    gray_ms = median_ms(lambda: undistort.__call__(gray))
    full_ms = median_ms(
        lambda: cv2.undistort(frame, calibration.K, calibration.dist, None, new_k), repeats=50
    )
    # The board warp with the lens folded in: raw frame → 600x720 top-down board.
    board_size = (600, 720)
    corners = np.array([[380, 110], [900, 110], [960, 650], [320, 650]], np.float64)
    target = np.array([[0, 0], [600, 0], [600, 720], [0, 720]], np.float64)
    homography = cv2.getPerspectiveTransform(corners.astype(np.float32), target.astype(np.float32))
    warp_build_ms = median_ms(lambda: warp_maps(calibration, homography, board_size), repeats=10)
    warp = warp_maps(calibration, homography, board_size)
    warp_ms = median_ms(lambda: warp(frame))
    plain_ms = median_ms(lambda: cv2.warpPerspective(frame, homography, board_size))
    print(f"OpenCV {cv2.__version__}, one thread, {SIZE[0]}x{SIZE[1]}, {REPEATS} runs")
    print("| what | ms, min / median |")
    print("|---|---|")
    print(f"| build the maps once (make_undistorter) | {build_ms} |")
    print(f"| per BGR frame: remap, CV_16SC2 maps (the referee's) | {fixed_ms} |")
    print(f"| per BGR frame: remap, CV_32FC1 maps | {float_ms} |")
    print(f"| per grey frame: remap, CV_16SC2 maps | {gray_ms} |")
    print(f"| per BGR frame: cv2.undistort (maps rebuilt each call) | {full_ms} |")
    print(f"| build lens+warp maps to a 600x720 board (warp_maps) | {warp_build_ms} |")
    print(f"| per BGR frame: lens+warp remap to 600x720 | {warp_ms} |")
    print(f"| per BGR frame: warpPerspective alone to 600x720 (no lens) | {plain_ms} |")


if __name__ == "__main__":
    main()
