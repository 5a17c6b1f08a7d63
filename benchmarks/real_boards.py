"""The board finder on real photographs (`tests/vision/real_boards.py`: OpenCV's sample photos
of a printed 10x7 chessboard and the cases made from them): within 1% and 3% of the
diagonal, wrong (3% or more off), refused with the reasons, and the CPU time a photo.

    PYTHONPATH=. python benchmarks/real_boards.py                 # the table (real_boards.md)
    PYTHONPATH=. python benchmarks/real_boards.py --groups "cut off" --list
    PYTHONPATH=. python benchmarks/real_boards.py truth           # rebuild truth.json

A board in view is scored by its corner error (the largest of the four corner distances over
the board's two orientations, as a share of the diagonal); a board out of view (a corner more
than half a square beyond the frame) should be refused, naming a side it runs out on. Through
a lens (`as taken`, `strong lens`) the error is to the true corners; `flat` is the error of
the homography nearest the inner corners, the best a grid of straight lines can do there."""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from referee.calibration.intrinsics import Chessboard, calibrate, detect_all
from referee.errors import NoBoardError
from referee.vision.board_finder import find_board
from referee.vision.pose import BoardPose, corner_error
from tests import DATA
from tests.vision import real_boards
from tests.vision.real_boards import FILES, GROUPS, PATTERN, RANKS, TRUTH, Case

PHOTOS = {"left": DATA / "calibration" / "opencv-left", "right": real_boards.FOLDER}


@dataclass(frozen=True)
class Outcome:
    case: str
    group: str
    error: float | None     # % of the diagonal; None where refused
    reason: str             # the refusal's text, "" where answered
    out_sides: tuple[str, ...]
    flat: float | None      # through a lens: the best homography's error (%)
    ms: float

    @property
    def verdict(self) -> str:
        if self.out_sides:
            if self.error is not None:
                return "answered out of view"
            named = any(f"on the {side}" in self.reason or f"at the {side}" in self.reason
                        for side in self.out_sides)
            return "refused, side named" if named else "refused, other reason"
        if self.error is None:
            return "refused"
        return "within 1%" if self.error < 1 else "within 3%" if self.error < 3 else "wrong"


def measure(case: Case) -> Outcome:
    started = time.thread_time()
    try:
        pose: BoardPose | None = find_board(case.frame, FILES, RANKS)
        reason = ""
    except NoBoardError as exc:
        pose, reason = None, str(exc)
    ms = 1000 * (time.thread_time() - started)
    error = None if pose is None else 100 * corner_error(pose, case.corners) / case.diagonal
    flat = None if case.flat is None else float(
        100 * np.max(np.linalg.norm(case.flat - case.corners, axis=1)) / case.diagonal)
    return Outcome(case.name, case.group, error, reason, case.out_sides, flat, ms)


def table(outcomes: list[Outcome]) -> str:
    rows = ["| cases | n | in view | within 1% | within 3% | wrong | refused | out of view: refused, side "
            "named / other reason / answered | ms a photo (median) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for group in [*dict.fromkeys(o.group for o in outcomes), "all"]:
        part = [o for o in outcomes if group in ("all", o.group)]
        count = Counter(o.verdict for o in part)
        shown = sum(not o.out_sides for o in part)
        within = count["within 1%"]
        share = f" ({within / shown:.0%})" if shown else ""
        rows.append(f"| {group} | {len(part)} | {shown} | {within}{share} | {within + count['within 3%']} | "
                    f"{count['wrong']} | {count['refused']} | {count['refused, side named']} / "
                    f"{count['refused, other reason']} / {count['answered out of view']} | "
                    f"{np.median([o.ms for o in part]):.0f} |")
    return "\n".join(rows)


def reasons(outcomes: list[Outcome]) -> str:
    said = Counter((o.group, o.reason) for o in outcomes if o.reason)
    return "\n".join(f"- {group}, {n}: {reason}" for (group, reason), n in sorted(said.items()))


def listing(outcomes: list[Outcome]) -> str:
    lines = []
    for o in outcomes:
        error = "-" if o.error is None else f"{o.error:.2f}%"
        flat = "" if o.flat is None else f" (flat {o.flat:.2f}%)"
        out = f" out {'/'.join(o.out_sides)}" if o.out_sides else ""
        lines.append(f"{o.case:28s} {o.verdict:22s} {error:>7s}{flat}{out} {o.ms:5.0f} ms {o.reason}")
    return "\n".join(lines)


def make_truth() -> None:
    """truth.json from the photos: the inner corners found in each (`find_chessboard`), and
    each camera calibrated from its own photos (aspect ratio fixed, as OpenCV's sample)."""
    pattern = Chessboard(*PATTERN, 25.0)
    photos: dict[str, object] = {}
    cameras: dict[str, object] = {}
    for side, folder in PHOTOS.items():
        found, refused = detect_all(sorted(folder.glob(f"{side}[0-9][0-9].jpg")), pattern)
        assert not refused, refused
        result = calibrate(found, fix_aspect_ratio=True)
        cameras[side] = {"K": np.round(result.camera_matrix, 6).tolist(),
                         "dist": np.round(result.dist_coeffs, 8).tolist(), "rms_px": round(result.rms_px, 4)}
        for view in found:
            photos[Path(view.name).stem] = {
                "file": str((folder / view.name).relative_to(DATA)), "camera": side,
                "inner": np.round(view.image_points.reshape(-1, 2).astype(np.float64), 3).tolist()}
    truth = {"board": [FILES, RANKS], "cameras": cameras, "photos": photos}
    TRUTH.write_text(compact(truth), encoding="utf-8")
    print(f"wrote {TRUTH}: {len(photos)} photos")


def compact(data: dict[str, object]) -> str:
    """JSON with one line a camera and a photo."""
    def block(part: object) -> str:
        if not isinstance(part, dict):
            return json.dumps(part)
        return "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in part.items()) + "\n }"
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {block(v)}" for k, v in data.items()) + "\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["run", "truth"], default="run")
    parser.add_argument("--groups", default=",".join(GROUPS), help="comma-separated case groups")
    parser.add_argument("--photos", default="", help="comma-separated photo names (left01, right07, ...)")
    parser.add_argument("--list", action="store_true", help="one line a case")
    parser.add_argument("--results", type=Path, default=None, help="one JSON line a case")
    args = parser.parse_args()
    if args.command == "truth":
        make_truth()
        return
    cv2.setNumThreads(1)
    groups = tuple(g.strip() for g in args.groups.split(",") if g.strip())
    names = tuple(n.strip() for n in args.photos.split(",") if n.strip())
    outcomes = [measure(case) for case in real_boards.cases(groups, names)]
    if args.list:
        print(listing(outcomes))
    print(table(outcomes))
    print(reasons(outcomes))
    if args.results is not None:
        args.results.write_text("".join(json.dumps(o.__dict__) + "\n" for o in outcomes), encoding="utf-8")


if __name__ == "__main__":
    main()
