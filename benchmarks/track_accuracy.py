"""How well tracking follows a board through rendered footage, against the renderer's truth.

For each footage file (with its sidecar `.json`, as `referee_lab.synth` writes it), the board is
found in the first frame, then tracked frame by frame as the referee does: where tracking
gives up, the last pose stands and the board is searched for again at most once a second.
Each frame's error is the largest corner distance as a share of the board's diagonal
(`corner_error`). Printed per file: the frames within 1% and 3%, the worst error and the
frames where tracking gave up, split by whether a hand was in view.

    PYTHONPATH=. python benchmarks/track_accuracy.py FOOTAGE.mp4 ... [--frames N]

The footage used for benchmarks/track_accuracy.md is rendered by benchmarks/replay_games.py
and tests/data/footage/make_footage.py (their sidecars are kept beside the .mp4); the demo's
footage can be given too: its `.expected.json` holds its true corners."""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path

import numpy as np

from referee.app.pipeline import camera_game
from referee.errors import NoBoardError
from referee.hardware.sources import open_source
from referee.vision.board_finder import find_board
from referee.vision.board_tracker import track
from referee.vision.pose import BoardPose, corner_error

REFIND_EVERY_S = 1.0


def truth(path: Path) -> list[dict]:
    """Per frame: true corners, files, ranks and whether a hand is in view, from the renderer's
    sidecar, or from a bundled footage's `.expected.json` (the demo's)."""
    sidecar = path.with_suffix(".json")
    if sidecar.exists():
        return list(json.loads(sidecar.read_text())["frames"])
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    geometry = camera_game(expected["game"]).geometry
    hands = {i for first, last in expected["hand_frames"] for i in range(first, last + 1)}
    return [{"corners": c, "files": geometry.files, "ranks": geometry.ranks, "hand": i in hands}
            for i, c in enumerate(expected["corners"])]


def follow(path: Path, limit: int) -> list[tuple[float, bool, bool]]:
    """(error, hand in view, tracking confirmed) per frame after the first find."""
    frames = truth(path)
    rows: list[tuple[float, bool, bool]] = []
    pose: BoardPose | None = None
    last_search = -np.inf
    with open_source(str(path)) as source:
        for frame in source:
            if frame.index >= min(limit, len(frames)):
                break
            known = frames[frame.index]
            confirmed = False
            if pose is not None:
                tracked = track(frame.frame_bgr, pose)
                confirmed = tracked is not None
                pose = tracked or pose
            if not confirmed and frame.timestamp_s - last_search >= REFIND_EVERY_S:
                last_search = frame.timestamp_s
                with contextlib.suppress(NoBoardError):
                    pose, confirmed = find_board(frame.frame_bgr, known["files"], known["ranks"]), True
            if pose is not None:
                corners = np.array(known["corners"])
                diagonal = max(np.linalg.norm(corners[2] - corners[0]),
                               np.linalg.norm(corners[3] - corners[1]))
                error = corner_error(pose, corners) / diagonal
                rows.append((error, bool(known["hand"]), confirmed))
    return rows


def summary(rows: list[tuple[float, bool, bool]]) -> str:
    if not rows:
        return "0 | - | - | - | -"
    err = np.array([r[0] for r in rows])
    lost = sum(not r[2] for r in rows)
    return (f"{len(rows)} | {np.mean(err < 0.01):.1%} | {np.mean(err < 0.03):.1%} | "
            f"{err.max():.2%} | {lost}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("footage", nargs="+", type=Path)
    parser.add_argument("--frames", type=int, default=100000)
    args = parser.parse_args()
    print("| footage | hand | frames | within 1% | within 3% | worst | not confirmed |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    every: list[tuple[float, bool, bool]] = []
    for path in args.footage:
        rows = follow(path, args.frames)
        every += rows
        for hand in (False, True):
            part = [r for r in rows if r[1] == hand]
            print(f"| {path.stem} | {'yes' if hand else 'no'} | {summary(part)} |", flush=True)
    for hand in (False, True):
        part = [r for r in every if r[1] == hand]
        print(f"| all | {'yes' if hand else 'no'} | {summary(part)} |")


if __name__ == "__main__":
    main()
