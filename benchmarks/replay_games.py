"""Whole rendered games refereed through the real pipeline: every ply read right, every
result right, no move recorded while a hand was in view, and the replay speed.

Each game is played to its end from a seed by a player who wins when a move wins and moves
at random otherwise (games that would run past `--max-plies` are skipped, seed by seed, so
the set is fixed); its look (board, dice or Penta-piece colours, light, camera) is drawn
from the seed, far from the training crops' seeds. Games alternate Rinne and Tensei and,
per pair, dice and Penta-pieces. Each game is rendered as footage, then replayed by
`referee replay` in a process of its own on one thread, as a user runs it: its record is
read from its log, and its wall time, CPU time and peak memory are the process's.

Run: PYTHONPATH=. python benchmarks/replay_games.py [--games 20] [--jobs 2] [--size 1280x720]
[--footage DIR] (keep the footage in DIR and reuse it: rendering is most of the time;
`--render-only` fills DIR without replaying) [--kinds GAME:PIECES,...] [--first-seed S]
(other games, such as `flipflop-3x3:dice,flipflop-3x3:penta`, from another first seed)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2

from referee.app.events import EventKind
from referee.app.record import GameLog, load_log, match_from_log
from referee.rules.core import Match
from referee_lab.footage_check import Expected, accepted_plies, moves_during_hands
from referee_lab.synth import RenderOptions
from referee_lab.synth.footage import FootageOptions, ended_match, render_footage

FIRST_SEED = 700_000
KINDS = (("rinne", "dice"), ("tensei", "dice"), ("rinne", "penta"), ("tensei", "penta"))


@dataclass(frozen=True)
class Row:
    seed: int
    game: str
    pieces: str
    plies: int
    result: str
    read_right: bool
    result_right: bool
    plies_read: int
    hand_moves: int
    speed: float  # x real time
    cpu_speed: float  # x real time by the replay's CPU time: what one free core would do
    why: str = ""
    look_alikes: int = 0  # plies read as another that leaves the same position (Renaissance)
    peak_mb: float = 0.0  # the replaying process's peak memory (resident), one process a game

    def line(self) -> str:
        ok = "yes" if self.read_right and self.result_right else f"NO {self.why}".strip()
        if self.look_alikes and self.result_right:
            ok = f"positions: {self.look_alikes} push-in(s) read as their look-alike placement"
        return (f"| {self.seed} | {self.game} | {self.pieces} | {self.plies} | {self.result} | "
                f"{ok} | {self.plies_read} | {self.hand_moves} | {self.speed:.1f} | {self.cpu_speed:.1f} | "
                f"{self.peak_mb:.0f} MB |")


def planned(games: int, max_plies: int, kinds: tuple[tuple[str, str], ...] = KINDS,
            first_seed: int = FIRST_SEED) -> list[tuple[int, str, str, Match[Any, Any]]]:
    plan: list[tuple[int, str, str, Match[Any, Any]]] = []
    seed = first_seed
    while len(plan) < games:
        game, pieces = kinds[len(plan) % len(kinds)]
        match = ended_match(game, seed, max_plies)
        if match is not None and len(match.moves) >= 4:
            plan.append((seed, game, pieces, match))
        seed += 1
    return plan


def rendered(seed: int, game: str, pieces: str, match: Match[Any, Any], size: str,
             folder: str) -> Path:
    width, height = (int(v) for v in size.split("x"))
    video = Path(folder) / f"{game}-{pieces}-{seed}-{size}.mp4"
    if not video.with_suffix(".json").exists():
        render_footage(game, video, seed, match=match,
                       options=RenderOptions(width=width, height=height, pieces=pieces or None),
                       footage=FootageOptions())
    return video


def referee_one(seed: int, game: str, pieces: str, match: Match[Any, Any], size: str,
                folder: str, replays: str) -> Row:
    video = rendered(seed, game, pieces, match, size, folder)
    assert match.outcome is not None
    result = match.outcome.result(match.game.player_names)
    replay = replayed(video, game, pieces, Path(replays) / f"out-{seed}")
    expected = Expected.from_sidecar(video.with_suffix(".json"))
    if replay.log is None:
        return Row(seed, game, pieces, len(expected.plies), result, False, False, 0, 0, 0.0, 0.0,
                   f"({replay.error})", peak_mb=replay.peak_mb)
    events, replayed_match = list(replay.log.events), match_from_log(replay.log)
    read = accepted_plies(events)
    over = [e for e in events if e.kind is EventKind.GAME_OVER]
    said = replayed_match.outcome.result(match.game.player_names) if replayed_match.outcome else "*"
    why = ""
    if read != list(expected.plies):
        first = next((i for i, (a, b) in enumerate(zip(read, expected.plies, strict=False))
                      if a != b), min(len(read), len(expected.plies)))
        why = f"(ply {first + 1}: read {read[first] if first < len(read) else 'nothing'})"
    footage_s = footage_seconds(video)
    return Row(seed, game, pieces, len(expected.plies), result, read == list(expected.plies),
               bool(over) and said == result, len(read), len(moves_during_hands(events, expected)),
               footage_s / replay.wall_s, footage_s / replay.cpu_s, why,
               look_alikes(read, list(expected.plies), replayed_match, match), replay.peak_mb)


@dataclass(frozen=True)
class Replay:
    log: GameLog | None  # None: the replay failed (`error`)
    wall_s: float
    cpu_s: float
    peak_mb: float
    error: str = ""


# Runs the command after it and prints its CPU seconds and peak memory (MB). A process forked
# from this one's large parent would count the parent's pages in its peak (a forked child's
# memory before exec counts in its ru_maxrss), so the replay is forked from this small one.
MEASURED = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(used.ru_utime + used.ru_stime, used.ru_maxrss / 1024)
sys.exit(code)
"""


def replayed(video: Path, game: str, pieces: str, out: Path) -> Replay:
    """`referee replay` run on `video` as a user runs it, in a process of its own on one
    thread (OpenCV's and onnxruntime's): its log, its wall and CPU time and its peak memory
    (`MEASURED`: its own, not the harness's)."""
    command = [sys.executable, "-c", MEASURED, sys.executable, "-m", "referee", "replay", str(video),
               "--game", game, "--out", str(out), *(["--pieces", pieces] if pieces else [])]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENCV_FOR_THREADS_NUM": "1"}
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall_s = time.monotonic() - start
    cpu_s, peak_mb = (float(v) for v in done.stdout.split())
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        return Replay(None, wall_s, cpu_s, peak_mb, said[-1] if said else f"exit {done.returncode}")
    return Replay(load_log(out / "game.jsonl"), wall_s, cpu_s, peak_mb)


def footage_seconds(video: Path) -> float:
    capture = cv2.VideoCapture(str(video))
    try:
        return float(capture.get(cv2.CAP_PROP_FRAME_COUNT) / capture.get(cv2.CAP_PROP_FPS))
    finally:
        capture.release()


def look_alikes(read: list[str], truth: list[str], replayed: Match[Any, Any],
                played: Match[Any, Any]) -> int:
    """Plies read otherwise than played where every position is still the played one: a
    Renaissance push-in along the mover's own markers and the placement that leaves the same
    board, which no still frame tells apart. 0 where any position differs."""
    if len(read) != len(truth) or replayed.positions != played.positions:
        return 0
    return sum(a != b for a, b in zip(read, truth, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--max-plies", type=int, default=16)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--footage", help="keep the rendered footage here, and reuse it")
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--kinds", help="GAME[:PIECES],... in turn (default: Rinne and Tensei, dice and "
                        "Penta-pieces), e.g. flipflop-3x3:dice,flipflop-3x3:penta or zensu (its own "
                        "pieces)")
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED)
    args = parser.parse_args()
    kinds = KINDS if not args.kinds else tuple(
        (kind.partition(":")[0], kind.partition(":")[2]) for kind in args.kinds.split(","))
    plan = planned(args.games, args.max_plies, kinds, args.first_seed)
    with tempfile.TemporaryDirectory() as scratch:
        footage = args.footage or scratch
        Path(footage).mkdir(parents=True, exist_ok=True)
        if args.render_only:
            with ProcessPoolExecutor(args.jobs) as pool:
                for video in pool.map(rendered, *zip(*plan, strict=True),
                                      [args.size] * len(plan), [footage] * len(plan)):
                    print(video, flush=True)
            return
        report(plan, args.size, footage, scratch, args.jobs)


def report(plan: list[tuple[int, str, str, Match[Any, Any]]], size: str, footage: str,
           replays: str, jobs: int) -> None:
    print("| seed | game | pieces | plies | result | read right | plies read | hand moves "
          "| replay x real time | x real time (CPU) | peak memory |")
    print("| ---: | --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |", flush=True)
    rows: list[Row] = []
    with ProcessPoolExecutor(jobs, max_tasks_per_child=1) as pool:  # (a game's own peak memory)
        futures = [pool.submit(referee_one, seed, game, pieces, match, size, footage, replays)
                   for seed, game, pieces, match in plan]
        for future in futures:
            rows.append(future.result())
            print(rows[-1].line(), flush=True)
    right = sum(r.read_right and r.result_right for r in rows)
    plies = sum(r.plies for r in rows)
    alike = [r for r in rows if r.look_alikes and r.result_right]
    print(f"\n{right} of {len(rows)} games read without an error ({plies} plies); "
          f"{sum(r.hand_moves for r in rows)} moves recorded while a hand was in view")
    if alike:
        print(f"{len(alike)} more with every position and the result right, "
              f"{sum(r.look_alikes for r in alike)} push-ins read as their look-alike placement")


if __name__ == "__main__":
    main()
