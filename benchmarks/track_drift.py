"""How far tracking drifts on footage of a board that does not move: the board is found in
the first frame, then tracked frame by frame (hands pass over it); prints the largest corner
shift from the first pose every 30 frames, and the frames where tracking gave up.

Run: PYTHONPATH=. python benchmarks/track_drift.py FOOTAGE [--files 5 --ranks 6] [--frames 300]
(the committed footage's boards never move, so any shift is the tracker's error)."""

from __future__ import annotations

import argparse

import numpy as np

from referee.hardware.sources import open_source
from referee.vision.board_finder import find_board
from referee.vision.board_tracker import track


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("footage")
    parser.add_argument("--files", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=6)
    parser.add_argument("--frames", type=int, default=300)
    args = parser.parse_args()
    first = pose = None
    lost, worst = 0, 0.0
    with open_source(args.footage) as source:
        for frame in source:
            if frame.index >= args.frames:
                break
            if pose is None:
                first = pose = find_board(frame.frame_bgr, args.files, args.ranks)
                continue
            tracked = track(frame.frame_bgr, pose)
            if tracked is None:
                lost += 1
                continue
            pose = tracked
            assert first is not None
            drift = float(np.abs(pose.corners_array - first.corners_array).max())
            worst = max(worst, drift)
            if frame.index % 30 == 0:
                print(f"frame {frame.index}: drift {drift:.1f} px, frames lost {lost}")
    print(f"largest drift {worst:.1f} px; tracking gave up on {lost} frames")


if __name__ == "__main__":
    main()
