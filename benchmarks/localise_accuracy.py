"""Board localisation accuracy: corner error as a share of the board's diagonal, and how
often no board is found, on rendered frames (referee_lab.synth: every game, tilts 0-40 degrees,
any turn, random looks, light and clutter, a hand reaching over the board in a third of each
game's frames) or on the tests' own OpenCV drawings.

    PYTHONPATH=. python benchmarks/localise_accuracy.py --frames 240 --distortion 1
    PYTHONPATH=. python benchmarks/localise_accuracy.py --frames 240 --distortion 0
    PYTHONPATH=. python benchmarks/localise_accuracy.py --source drawn --frames 200

The error of a frame is the largest of the four corner distances, over the orientations of
the board (which side is White's is settled later, from the start position), divided by
the longer diagonal of the true grid. With --overlays DIR, the found grid is drawn on a few
frames (the first ones and the worst) and written there as PNGs."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import NoBoardError
from referee.vision.board_finder import find_board
from referee.vision.pose import BoardPose, corner_error
from referee_lab.finder_sets import RINNE_FAMILY_GAMES

DEFAULT_GAMES = RINNE_FAMILY_GAMES


@dataclass(frozen=True)
class Sample:
    frame: NDArray[np.uint8]
    corners: NDArray[np.float64]
    files: int
    ranks: int
    game: str
    tilt: float
    hand: bool

    @property
    def diagonal(self) -> float:
        c = self.corners
        return float(max(np.linalg.norm(c[2] - c[0]), np.linalg.norm(c[3] - c[1])))


def with_hand(i: int, games: int, legacy: bool) -> bool:
    """Whether frame `i` gets a hand: in a third of each game's frames. (The oldest sets put one
    over every third frame, which with the six Rinne-family games in turn put a hand over
    every Rinne and Tensei frame and over no other board: `legacy` renders those sets.)"""
    return (i if legacy else i + i // games) % 3 == 0


def rendered(count: int, seed: int, distortion: float, games: tuple[str, ...],
             cache: Path | None, legacy_hands: bool = False) -> Iterator[Sample]:
    """Rendered frames; with `cache`, each frame and its truth are kept there (PNG + JSON) and
    read back on later runs, so that a run times the finder, not the renderer."""
    for i in range(count):
        yield rendered_frame(i, seed, distortion, games, cache, legacy_hands)


def rendered_frame(i: int, seed: int, distortion: float, games: tuple[str, ...],
                   cache: Path | None, legacy_hands: bool = False) -> Sample:
    """Frame `i` of the set `rendered` gives, from the cache where it is kept there."""
    from benchmarks.rendered import render

    game = games[i % len(games)]
    name = f"rendered-{seed}-{distortion:g}" + ("" if legacy_hands else "-hands")
    stem = None if cache is None else cache / name / f"{i:04d}-{game}"
    if stem is not None and stem.with_suffix(".json").exists():
        meta = json.loads(stem.with_suffix(".json").read_text())
        frame = np.asarray(cv2.imread(str(stem.with_suffix(".png")), cv2.IMREAD_COLOR), dtype=np.uint8)
        return Sample(frame, np.array(meta["corners"], dtype=np.float64), meta["files"], meta["ranks"],
                      game, meta["tilt"], meta["hand"])
    r = render(seed + i, game, hand=with_hand(i, len(games), legacy_hands), distortion=distortion)
    if stem is not None:
        stem.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(stem.with_suffix(".png")), r.frame)
        meta = {"corners": r.corners.tolist(), "files": r.truth.files, "ranks": r.truth.ranks,
                "tilt": r.tilt, "hand": r.hand, "truth": r.truth.to_json()}
        stem.with_suffix(".json").write_text(json.dumps(meta))
    return Sample(r.frame, r.corners, r.truth.files, r.truth.ranks, r.game, r.tilt, r.hand)


def drawn(count: int, seed: int) -> Iterator[Sample]:
    from tests.vision.scenes import make_scene

    sizes = [(5, 6), (5, 5), (3, 3), (6, 9), (7, 7)]
    rng = np.random.default_rng(seed)
    for i in range(count):
        files, ranks = sizes[i % len(sizes)]
        tilt = float(rng.uniform(0, 40))
        s = make_scene(rng, files, ranks, tilt_deg=tilt, hand=i % 3 == 0)
        yield Sample(s.frame, s.corners, files, ranks, f"{files}x{ranks}/{s.style}", tilt, i % 3 == 0)


def overlay(sample: Sample, pose: BoardPose | None, note: str) -> NDArray[np.uint8]:
    img = sample.frame.copy()
    cv2.polylines(img, [sample.corners.astype(np.int32).reshape(-1, 1, 2)], True, (0, 255, 0), 1,
                  cv2.LINE_AA)
    if pose is not None:
        for i in range(pose.files + 1):
            a, b = pose.to_image(np.array([[i, 0.0], [i, pose.ranks]]))
            cv2.line(img, tuple(a.astype(int)), tuple(b.astype(int)), (0, 0, 255), 1, cv2.LINE_AA)
        for j in range(pose.ranks + 1):
            a, b = pose.to_image(np.array([[0.0, j], [pose.files, j]]))
            cv2.line(img, tuple(a.astype(int)), tuple(b.astype(int)), (0, 0, 255), 1, cv2.LINE_AA)
        cv2.circle(img, tuple(pose.corners_array[0].astype(int)), 6, (0, 0, 255), -1)
    cv2.putText(img, note, (12, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 255), 2, cv2.LINE_AA)
    return img


def table(rows: list[tuple[str, list[float | None]]]) -> str:
    out = ["| frames | n | within 1% | median error | 95th pct error | no board |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, errs in rows:
        found = np.array([e for e in errs if e is not None])
        n = len(errs)
        if n == 0:
            continue
        within = float(np.sum(found < 1.0)) / n if n else 0.0
        med = f"{np.median(found):.2f}%" if len(found) else "-"
        p95 = f"{np.percentile(found, 95):.2f}%" if len(found) else "-"
        out.append(f"| {name} | {n} | {within:.1%} | {med} | {p95} | {(n - len(found)) / n:.1%} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", choices=["rendered", "drawn"], default="rendered")
    parser.add_argument("--frames", type=int, default=240)
    parser.add_argument("--seed", type=int, default=20000)
    parser.add_argument("--distortion", type=float, default=1.0, help="lens distortion scale (rendered)")
    parser.add_argument("--games", default=",".join(DEFAULT_GAMES),
                        help="comma-separated games, in turn (rendered)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep rendered frames here and reuse them on later runs")
    parser.add_argument("--overlays", type=Path, default=None)
    parser.add_argument("--failures", type=Path, default=None,
                        help="write an overlay of every frame not within 1%% here")
    parser.add_argument("--results", type=Path, default=None, help="per-frame results (JSON lines)")
    parser.add_argument("--legacy-hands", action="store_true",
                        help="a hand over every third frame, as the oldest sets have it (with the six games "
                        "in turn: over every Rinne and Tensei frame, no other)")
    parser.add_argument("--only", default="", help="comma-separated frame numbers to run (a quick look)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    games = tuple(g.strip() for g in args.games.split(",") if g.strip())
    samples = (rendered(args.frames, args.seed, args.distortion, games, args.cache, args.legacy_hands)
               if args.source == "rendered" else drawn(args.frames, args.seed))
    results: list[tuple[Sample, float | None, str]] = []
    kept: list[tuple[float, int, NDArray[np.uint8]]] = []
    finder_s = 0.0
    started = time.perf_counter()
    indices: list[int] = []
    only = {int(x) for x in args.only.split(",") if x.strip()}
    for i, sample in enumerate(samples):
        if only and i not in only:
            continue
        t0 = time.process_time()
        try:
            pose: BoardPose | None = find_board(sample.frame, sample.files, sample.ranks)
            err: float | None = 100 * corner_error(pose, sample.corners) / sample.diagonal  # type: ignore[arg-type]
            note = f"{sample.game} tilt {sample.tilt:.0f} error {err:.2f}%"
        except NoBoardError as exc:
            pose, err, note = None, None, f"{sample.game} tilt {sample.tilt:.0f}: {exc}"
        finder_s += time.process_time() - t0
        results.append((sample, err, note))
        indices.append(i)
        if args.failures is not None and (err is None or err >= 1.0):
            args.failures.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(args.failures / f"{i:04d}-{sample.game}.png"), overlay(sample, pose, note))
        if args.overlays is not None and (i < 4 or err is None or err >= 1.0):
            kept.append((999.0 if err is None else err, i, overlay(sample, pose, note)))
    elapsed = time.perf_counter() - started
    errs = [e for _, e, _ in results]
    rows: list[tuple[str, list[float | None]]] = [("all", errs)]
    for name in sorted({s.game for s, _, _ in results}):
        rows.append((name, [e for s, e, _ in results if s.game == name]))
    for lo, hi in ((0, 10), (10, 20), (20, 30), (30, 40.1)):
        rows.append((f"tilt {lo}-{min(hi, 40):.0f}", [e for s, e, _ in results if lo <= s.tilt < hi]))
    rows.append(("with a hand", [e for s, e, _ in results if s.hand]))
    rows.append(("no hand", [e for s, e, _ in results if not s.hand]))
    print(f"source: {args.source}, frames {len(results)}, seed {args.seed}, distortion {args.distortion}")
    print(f"wall time {elapsed:.0f} s including rendering; find_board CPU time "
          f"{1000 * finder_s / max(len(results), 1):.0f} ms a frame")
    print(table(rows))
    if args.results is not None:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        with args.results.open("w") as out:
            for i, (sample, err, note) in zip(indices, results, strict=True):
                out.write(json.dumps({"i": i, "game": sample.game, "tilt": round(sample.tilt, 1),
                                      "hand": sample.hand, "error": err, "note": note}) + "\n")
    if args.overlays is not None:
        args.overlays.mkdir(parents=True, exist_ok=True)
        first = [k for k in kept if k[1] < 4]
        worst = sorted((k for k in kept if k[1] >= 4), key=lambda k: -k[0])[:4]
        for err, i, img in first + worst:
            tag = "nob" if err >= 999 else f"{err:.1f}"
            cv2.imwrite(str(args.overlays / f"localise-{args.source}-{i:03d}-{tag}.png"),
                        cv2.resize(img, (960, 540), interpolation=cv2.INTER_AREA))


if __name__ == "__main__":
    main()
