"""Boards with ArUco markers: how near the pose comes to the render's truth, against the
markerless finder on the same frames, and what finding and following the markers costs.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/aruco.py [FOOTAGE.mp4 ...] [--every N]

Footage: the rendered marker footage (default: tests/data/footage/*-aruco.mp4, its truth in
the `.expected.json` beside it); footage of boards without markers shows what looking for
them costs there. Corner error: the largest of the four corner distances from the truth as a
share of the board's diagonal (%); for a pose named by the markers with a1 where the truth
has it, else in whichever naming of the corners is nearest (which corner is a1 is settled
later there, from the pieces). Rows:

- `reader, markers`: the referee's board reader (`BoardReader.locate`) frame by frame, as the
  live loop runs it: a search (the markers over the whole frame) until found, then the
  markers followed in small regions round where they were (the line tracker where fewer
  than two show), the pose standing while the image round the board is unchanged.
- `reader, no markers`: the same reader with `[aruco] search = false`: the line search and
  tracker alone, as on a board without markers.
- `search_aruco`: the markers looked for over each whole frame, no history.
- `find_board`: the markerless finder on every Nth frame (it costs 100 ms or more a frame).

Times are this thread's CPU time per call (ms), median and worst: on a machine shared with
other jobs, wall time measures the queue."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np

from referee.app.pipeline import BoardReader, board_referee, camera_game
from referee.errors import NoBoardError
from referee.hardware.sources import open_source
from referee.vision.aruco import ArucoLayout, MarkerFix, MarkerSet, search_aruco, track_aruco
from referee.vision.board_finder import find_board
from referee.vision.pose import BoardPose, corner_error
from referee.vision.settings import default_settings
from referee_lab.footage_check import Expected

FOOTAGE = Path(__file__).resolve().parent.parent / "tests" / "data" / "footage"
T = TypeVar("T")


@dataclass
class Row:
    """Per-frame corner errors (%) and call times (ms) of one way of finding the board."""

    errors: list[float] = field(default_factory=list)
    hand: list[bool] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    missing: int = 0

    def add(self, error: float | None, hand: bool) -> None:
        if error is None:
            self.missing += 1
        else:
            self.errors.append(error)
            self.hand.append(hand)

    def line(self, name: str) -> str:
        e, h = np.array(self.errors), np.array(self.hand, bool)
        t = "0 | - | -"
        if self.times:
            t = f"{len(self.times)} | {np.median(self.times):.2f} | {np.max(self.times):.2f}"
        if not len(e):
            return f"| {name} | - | - | - | - | - | - | {t} |"
        hand_worst = f"{e[h].max():.3f}" if h.any() else "-"
        return (f"| {name} | {len(e)} | {self.missing} | {np.median(e):.3f} | {np.percentile(e, 99):.3f} | "
                f"{e.max():.3f} | {hand_worst} | {t} |")


def timed(row: Row, call: Callable[..., T], *args: object) -> T:
    start = time.thread_time()
    out = call(*args)
    row.times.append((time.thread_time() - start) * 1000)
    return out


def miss(pose: BoardPose | None, truth: np.ndarray, *, named: bool) -> float | None:
    if pose is None:
        return None
    return corner_error(pose, truth, any_orientation=not named) / diagonal(truth) * 100


def diagonal(corners: np.ndarray) -> float:
    return float(max(np.linalg.norm(corners[2] - corners[0]), np.linalg.norm(corners[3] - corners[1])))


@dataclass
class Ways:
    """The ways of finding one board measured side by side, frame by frame."""

    reader: BoardReader
    plain: BoardReader  # the same without markers
    markers: MarkerSet
    every: int
    rows: dict[str, Row] = field(default_factory=lambda: {name: Row() for name in (
        "reader, markers", "reader, markers: its searches", "reader, no markers",
        "reader, no markers: its searches", "search_aruco", "track_aruco", "find_board")})
    fix: MarkerFix | None = None

    def frame(self, image: np.ndarray, index: int, now: float, truth: np.ndarray, hand: bool) -> None:
        rows = self.rows
        for name, reader in (("reader, markers", self.reader), ("reader, no markers", self.plain)):
            pose, _ = timed(rows[name], reader.locate, image, now)
            rows[name].add(miss(pose, truth, named=reader.turn_options() == (0,)), hand)
            if reader._last_search_s == now:  # a search, not tracking: timed apart
                rows[f"{name}: its searches"].times.append(rows[name].times.pop())
        searched = timed(rows["search_aruco"], search_aruco, image, self.markers)
        rows["search_aruco"].add(None if searched is None else miss(searched.pose, truth, named=True), hand)
        if self.fix is not None:
            self.fix = timed(rows["track_aruco"], track_aruco, image, self.fix, self.markers)
            found = None if self.fix is None else self.fix.pose
            rows["track_aruco"].add(miss(found, truth, named=True), hand)
        self.fix = self.fix or searched
        if index % self.every == 0:
            found = timed(rows["find_board"], _find, image, self.plain.files, self.plain.ranks)
            rows["find_board"].add(miss(found, truth, named=False), hand)


def measure(video: Path, every: int) -> dict[str, Row]:
    expected = Expected.load(video.with_suffix(".expected.json"))
    game = camera_game(expected.game)
    files, ranks = game.geometry.files, game.geometry.ranks
    vision = default_settings()
    _, reader = board_referee(game, expected.pieces)
    plain = BoardReader(files, ranks, reader.classifier, monomino=reader.monomino,
                        vision=replace(vision, aruco=replace(vision.aruco, search=False)))
    ways = Ways(reader, plain, ArucoLayout.for_board(files, ranks).markers(), every)
    with open_source(video) as source:
        for frame in source:
            truth = np.array(expected.corners[frame.index])
            ways.frame(frame.frame_bgr, frame.index, frame.timestamp_s, truth,
                       expected.hand_in_view(frame.index))
    return ways.rows


def _find(image: np.ndarray, files: int, ranks: int) -> BoardPose | None:
    try:
        return find_board(image, files, ranks)
    except NoBoardError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("footage", nargs="*", type=Path, help="marker footage (default: the tests')")
    parser.add_argument("--every", type=int, default=10, help="find_board on every Nth frame (10)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"Python {platform.python_version()} on {platform.machine()}, OpenCV {cv2.__version__}, "
          f"one thread, thread CPU time; load average at start: {load}")
    for video in args.footage or sorted(FOOTAGE.glob("*-aruco.mp4")):
        rows = measure(video, args.every)
        print(f"\n{video.name}\n")
        print("| way | frames | no pose | median % | 99th % | worst % | worst with a hand % "
              "| calls timed | median ms | worst ms |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name, row in rows.items():
            print(row.line(name))


if __name__ == "__main__":
    main()
