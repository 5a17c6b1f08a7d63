"""The finder's figures on the named sets of rendered frames that `localise_accuracy.md`
quotes, in one command, and the frames that changed between two runs.

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/localise_sets.py run held-out \\
        --cache /tmp/lf --out /tmp/lf-results/main
    PYTHONPATH=. python benchmarks/localise_sets.py compare /tmp/lf-results/main /tmp/lf-results/new

`run` renders each frame once (kept under `--cache`), finds the board on every frame of the
sets named (or on their 3x3 frames, or the others, with `--boards`) with `--jobs` processes,
and writes one JSON-lines file a set into `--out`, as `localise_accuracy.py --results`
does (and with `--failures DIR` an overlay of each frame not within 1%). `compare` prints,
set by set, the frames within 1% of the diagonal, refused (no board) and answered wrong, and
every frame whose verdict changed.

Sets (distortion 0; 240 frames of the six Rinne-family games in turn, or 120 of 3x3 only;
a hand in a third of each game's frames, every third frame for the `legacy` ones):
- `held-out`: the five all-games sets the headline figure counts, 90000+ 100000+ 170000+
  190000+ 200000+;
- `development`: 20000+ 40000+ 60000+ (legacy hands) and 80000+, where the finder's rules
  were read off;
- `x3-held-out`: 3x3-only sets 100000+ to 160000+ and 190000+;
- `x3-development`: 3x3-only sets 230000+ 240000+ 250000+;
- `development-2`: all-games sets 400000+ 410000+ 420000+, rendered in session 17 to read
  the bigger boards' corner-network rule off more frames than `development`'s seven misses;
- `fresh`: all-games sets 500000+ to 540000+, rendered in session 23 to settle what the
  development frames leave open without reading it off `held-out`, and to check the headline
  on frames no rule has seen."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2

from benchmarks.localise_accuracy import DEFAULT_GAMES, overlay, rendered_frame
from referee.errors import NoBoardError
from referee.vision.localise import find_board
from referee.vision.pose import BoardPose, corner_error


@dataclass(frozen=True)
class FrameSet:
    name: str
    seed: int
    frames: int
    games: tuple[str, ...]
    legacy_hands: bool = False

    @property
    def cache_folder(self) -> str:
        """Cache subfolder: `localise_accuracy.py` names a set by seed alone, so sets of the
        same seed but other games or hands are kept apart here."""
        kind = "x3" if self.games == ("flipflop-3x3",) else "all"
        return kind + ("-legacy" if self.legacy_hands else "")


def _all(seed: int, legacy: bool = False) -> FrameSet:
    return FrameSet(f"a{seed}" if not legacy else f"l{seed}", seed, 240, DEFAULT_GAMES, legacy)


def _x3(seed: int) -> FrameSet:
    return FrameSet(f"x{seed}", seed, 120, ("flipflop-3x3",))


SETS: dict[str, tuple[FrameSet, ...]] = {
    "held-out": tuple(_all(s) for s in (90000, 100000, 170000, 190000, 200000)),
    "development": (_all(20000, True), _all(40000, True), _all(60000, True), _all(80000)),
    "x3-held-out": tuple(_x3(s) for s in (100000, 110000, 120000, 130000, 140000, 150000, 160000, 190000)),
    "x3-development": tuple(_x3(s) for s in (230000, 240000, 250000)),
    "development-2": tuple(_all(s) for s in (400000, 410000, 420000)),
    "fresh": tuple(_all(s) for s in (500000, 510000, 520000, 530000, 540000)),
}

WITHIN = 1.0  # per cent of the diagonal


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


def load(folder: Path) -> dict[str, dict[int, dict[str, object]]]:
    return {p.stem: {int(r["i"]): r for r in map(json.loads, p.read_text().splitlines())}
            for p in sorted(folder.glob("*.jsonl"))}


def verdict(row: dict[str, object]) -> str:
    error = row["error"]
    if error is None:
        return "refused"
    return "within" if float(error) < WITHIN else "wrong"  # type: ignore[arg-type]


def _counts(rows: dict[int, dict[str, object]]) -> tuple[int, int, int, int]:
    verdicts = [verdict(r) for r in rows.values()]
    return len(verdicts), verdicts.count("within"), verdicts.count("refused"), verdicts.count("wrong")


def summary(results: dict[str, dict[int, dict[str, object]]]) -> str:
    lines = ["| set | frames | within 1% | refused | wrong | ms a frame |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    total = [0, 0, 0, 0]
    for name, rows in results.items():
        counts = _counts(rows)
        ms = sum(float(str(r.get("ms", 0.0))) for r in rows.values()) / max(len(rows), 1)
        lines.append(f"| {name} | {counts[0]} | {counts[1]} ({counts[1] / counts[0]:.1%}) | {counts[2]} | "
                     f"{counts[3]} | {ms:.0f} |")
        total = [a + b for a, b in zip(total, counts, strict=True)]
    if total[0]:
        lines.append(f"| all | {total[0]} | {total[1]} ({total[1] / total[0]:.2%}) | {total[2]} | "
                     f"{total[3]} | |")
    return "\n".join(lines)


def _error_text(row: dict[str, object]) -> str:
    return "refused" if row["error"] is None else f"{float(row['error']):.2f}%"  # type: ignore[arg-type]


def compare(before: Path, after: Path) -> str:
    old, new = load(before), load(after)
    # the frames both runs read, set by set (a run may have read only the 3x3 boards)
    both = {n: sorted(set(old[n]) & set(new[n])) for n in sorted(set(old) & set(new))}
    lines = [f"before: {before}", summary({n: {i: old[n][i] for i in both[n]} for n in both}), "",
             f"after: {after}", summary({n: {i: new[n][i] for i in both[n]} for n in both}), "", "changed:"]
    for name, frames in both.items():
        for i in frames:
            a, b = old[name][i], new[name][i]
            if verdict(a) != verdict(b) or (verdict(a) == "wrong" and a["error"] != b["error"]):
                hand = " hand" if b["hand"] else ""
                lines.append(f"  {name} {i} {b['game']}{hand}: {_error_text(a)} -> {_error_text(b)}")
    return "\n".join(lines)


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
