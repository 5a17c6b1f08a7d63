"""The finder's figures on the named sets of rendered frames (`referee_lab.finder_sets`) that
`localise_accuracy.md` quotes, in one command, and the frames that changed between two runs.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/localise_sets.py run held-out \\
        --cache /tmp/lf --out /tmp/lf-results/main
    PYTHONPATH=. python benchmarks/localise_sets.py compare /tmp/lf-results/main /tmp/lf-results/new

`run` renders each frame once (kept under `--cache`), finds the board on every frame of the
sets named (or on their 3x3 frames, or the others, with `--boards`) with `--jobs` processes,
and writes one JSON-lines file a set into `--out`, as `localise_accuracy.py --results`
does (and with `--failures DIR` an overlay of each frame not within 1%). `compare` prints,
set by set, the frames within 1% of the diagonal, refused (no board) and answered wrong, and
every frame whose verdict changed."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2

from benchmarks.localise_accuracy import overlay, rendered_frame
from referee.errors import NoBoardError
from referee.vision.board_finder import find_board
from referee.vision.pose import BoardPose, corner_error
from referee_lab.finder_sets import SETS, WITHIN, FrameSet, compare, load, summary


def _wanted(frame_set: FrameSet, i: int, boards: str) -> bool:
    is_3x3 = frame_set.games[i % len(frame_set.games)] == "flipflop-3x3"
    return boards == "all" or (boards == "3x3") == is_3x3


@dataclass(frozen=True)
class Task:
    frame_set: FrameSet
    i: int
    cache: Path
    failures: Path | None


def _tasks(names: list[str], boards: str, cache: Path, failures: Path | None) -> Iterator[Task]:
    for name in names:
        for frame_set in SETS[name]:
            for i in range(frame_set.frames):
                if _wanted(frame_set, i, boards):
                    yield Task(frame_set, i, cache / frame_set.cache_folder, failures)


def _find(task: Task) -> tuple[str, dict[str, object]]:
    frame_set, i = task.frame_set, task.i
    sample = rendered_frame(i, frame_set.seed, 0.0, frame_set.games, task.cache, frame_set.legacy_hands)
    t0 = time.process_time()
    pose: BoardPose | None = None
    try:
        pose = find_board(sample.frame, sample.files, sample.ranks)
        error: float | None = 100 * corner_error(pose, sample.corners) / sample.diagonal
        note = f"{sample.game} tilt {sample.tilt:.0f} error {error:.2f}%"
    except NoBoardError as exc:
        error, note = None, f"{sample.game} tilt {sample.tilt:.0f}: {exc}"
    ms = 1000 * (time.process_time() - t0)
    if task.failures is not None and (error is None or error >= WITHIN):
        task.failures.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(task.failures / f"{frame_set.name}-{i:04d}.png"), overlay(sample, pose, note))
    return frame_set.name, {"i": i, "game": sample.game, "tilt": round(sample.tilt, 1), "hand": sample.hand,
                            "error": error, "note": note, "ms": round(ms, 1)}


def _init_worker() -> None:
    cv2.setNumThreads(1)


def run(names: list[str], boards: str, cache: Path, out: Path, jobs: int, failures: Path | None) -> None:
    rows: dict[str, list[dict[str, object]]] = {}
    tasks = list(_tasks(names, boards, cache, failures))
    with multiprocessing.Pool(jobs, initializer=_init_worker) as pool:
        for set_name, row in pool.imap_unordered(_find, tasks, chunksize=4):
            rows.setdefault(set_name, []).append(row)
    out.mkdir(parents=True, exist_ok=True)
    for set_name, set_rows in rows.items():
        set_rows.sort(key=lambda r: int(r["i"]))  # type: ignore[call-overload]
        with (out / f"{set_name}.jsonl").open("w") as f:
            f.writelines(json.dumps(r) + "\n" for r in set_rows)
    print(summary(load(out)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    run_parser = verbs.add_parser("run", help="find the board on the named sets")
    run_parser.add_argument("sets", nargs="+", choices=sorted(SETS))
    run_parser.add_argument("--boards", choices=["all", "3x3", "bigger"], default="all")
    run_parser.add_argument("--cache", type=Path, required=True, help="rendered frames are kept here")
    run_parser.add_argument("--out", type=Path, required=True,
                            help="one JSON-lines file a set is written here")
    run_parser.add_argument("--jobs", type=int, default=2)
    run_parser.add_argument("--failures", type=Path, default=None,
                            help="an overlay of every frame not within 1%% is written here")
    compare_parser = verbs.add_parser("compare", help="the frames whose verdict changed between two runs")
    compare_parser.add_argument("before", type=Path)
    compare_parser.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.verb == "run":
        run(args.sets, args.boards, args.cache, args.out, args.jobs, args.failures)
    else:
        print(compare(args.before, args.after))


if __name__ == "__main__":
    main()
