"""Which plane does the board finder fit on a Renaissance board full of tiles?

For each cached 7x7 (and, to compare, 6x9) frame of `localise_accuracy.py --cache`: the
area of the grid found over the true grid's (over 1: nearer the camera, that is above the
board), and the corner error once the found grid is lowered by `--lower` squares onto the
board plane (each grid point moved along its ray from the camera, `warp.camera_over_board`).

Run: PYTHONPATH=. python benchmarks/tile_plane.py /tmp/loc-frames/rendered-50000-0 [--lower 0.1]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np

from referee.errors import NoBoardError
from referee.vision.board_finder import find_board
from referee.vision.images import read_image
from referee.vision.pose import BoardPose, corner_error
from referee.vision.warp import camera_over_board


def grid_points(files: int, ranks: int) -> np.ndarray:
    return np.array([[f, r] for r in range(ranks + 1) for f in range(files + 1)], float)


def lowered(pose: BoardPose, image_size: tuple[int, int], height: float) -> BoardPose:
    """`pose` taken as the plane `height` squares above the board, moved down onto it."""
    camera = camera_over_board(pose, image_size)
    foot, grid = np.array(camera.foot), grid_points(pose.files, pose.ranks)
    on_top = foot + (grid - foot) * camera.height / (camera.height + height)
    h, _ = cv2.findHomography(grid, pose.to_image(on_top))
    return BoardPose.from_homography(np.asarray(h, np.float64), pose.files, pose.ranks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--lower", type=float, default=0.1,
                        help="squares to lower the found grid by (tiles: 0.1)")
    args = parser.parse_args()
    print("| game | frames | area found / true, median (10-90%) | within 1% | median error "
          f"| lowered {args.lower:g}: within 1% | median error |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for game in ("renaissance", "zensu"):
        ratios, errors, lowered_errors = [], [], []
        for path in sorted(args.folder.glob(f"*-{game}.png")):
            meta = json.loads(path.with_suffix(".json").read_text())
            files, ranks, frame = meta["files"], meta["ranks"], read_image(path)
            h, _ = cv2.findHomography(grid_points(files, ranks), np.array(meta["truth"]["grid"]))
            diagonal = BoardPose.from_homography(np.asarray(h, np.float64), files, ranks).diagonal
            truth = np.array(meta["corners"], float)
            try:
                pose = find_board(frame, files, ranks)
            except NoBoardError:
                errors.append(np.inf)
                lowered_errors.append(np.inf)
                continue
            found = pose.corners_array.astype(np.float32)
            ratios.append(cv2.contourArea(found) / cv2.contourArea(truth.astype(np.float32)))
            errors.append(100 * corner_error(pose, truth) / diagonal)
            down = lowered(pose, (frame.shape[1], frame.shape[0]), args.lower)
            lowered_errors.append(100 * corner_error(down, truth) / diagonal)
        if not errors:
            continue
        near = np.array([r for r in ratios if 0.95 < r < 1.05])
        low, mid, high = np.percentile(near, [10, 50, 90])
        e, d = np.array(errors), np.array(lowered_errors)
        print(f"| {game} | {len(e)} | {mid:.4f} ({low:.4f}-{high:.4f}) | {np.mean(e < 1):.1%} "
              f"| {np.median(e):.2f}% | {np.mean(d < 1):.1%} | {np.median(d):.2f}% |")


if __name__ == "__main__":
    main()
