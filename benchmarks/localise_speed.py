"""Speed of board finding, tracking (and the image's shift the board reader measures with it,
`vision/motion.py`), and the warp and crops, on one core, 1280x720 frames.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/localise_speed.py

Frames are rendered (referee_lab.synth) for three games. Tracking is timed on the frame the board
was found in (the common case: the board has not moved) and on frames shifted by a few
pixels (a nudge, followed by the full band schedule). Crops: 64x64, every square."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import platform
import time
from collections.abc import Callable

import cv2
import numpy as np

from benchmarks.rendered import render
from referee.vision.board_finder import find_board
from referee.vision.board_tracker import track
from referee.vision.motion import anchor, shift_since
from referee.vision.warp import square_crops, warp_board


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median and 90th percentile CPU time of this process (ms): on a machine shared with
    other jobs, wall time measures the queue, CPU time the work."""
    times = []
    for _ in range(repeats):
        t = time.process_time()
        fn()
        times.append((time.process_time() - t) * 1000)
    return float(np.median(times)), float(np.percentile(times, 90))


def main() -> None:
    cv2.setNumThreads(1)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {platform.python_version()} on {platform.machine()}, OpenCV {cv2.__version__}, "
          f"one thread, CPU time of this process; load average at start: {load}")
    print()
    print("| game | find_board ms | track, still ms | track, nudged 6 px ms | image shift ms "
          "| warp_board 48 px/sq ms | square_crops 64x64 ms | warp + crops ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for seed, game in ((31, "rinne"), (32, "rinne-5x5"), (33, "flipflop-3x3")):
        r = render(seed, game, hand=False)
        files, ranks = r.truth.files, r.truth.ranks
        pose = find_board(r.frame, files, ranks)
        find = timed(lambda: find_board(r.frame, files, ranks), 5)  # noqa: B023
        still = timed(lambda: track(r.frame, pose), 100)  # noqa: B023
        nudge = np.array([[1, 0, 6], [0, 1, -3]], dtype=np.float32)
        nudged_frame: np.ndarray = cv2.warpAffine(r.frame, nudge, (1280, 720))
        nudged = timed(lambda: track(nudged_frame, pose), 100)  # noqa: B023
        since = anchor(r.frame, pose)
        assert since is not None
        shift = timed(lambda: shift_since(since, nudged_frame), 100)  # noqa: B023
        warp = timed(lambda: warp_board(r.frame, pose, 48), 100)  # noqa: B023
        crops = timed(lambda: square_crops(r.frame, pose, files, ranks), 100)  # noqa: B023
        both = timed(lambda: (warp_board(r.frame, pose, 48),  # noqa: B023
                              square_crops(r.frame, pose, files, ranks)), 100)  # noqa: B023
        print(f"| {game} | {find[0]:.0f} | {still[0]:.1f} (p90 {still[1]:.1f}) | {nudged[0]:.1f} "
              f"(p90 {nudged[1]:.1f}) | {shift[0]:.1f} (p90 {shift[1]:.1f}) "
              f"| {warp[0]:.2f} | {crops[0]:.2f} | {both[0]:.2f} (p90 {both[1]:.2f}) |")


if __name__ == "__main__":
    main()
