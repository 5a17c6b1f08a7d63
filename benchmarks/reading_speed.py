"""How long one reading of a board takes as the referee makes it while refereeing footage:
the squares cut and classified (with the second look and, for Renaissance, the monomino
model: `BoardReader.read`), the reading decoded against the rules (`Referee.on_reading`), and
the whole reading (`GameLoop._judge`), for every reading of a whole replay. Times are the
thread's CPU time (`time.thread_time`), so a busy machine slows the replay but not the figures
much; onnxruntime and OpenCV run on one thread, as on a Pi core.

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/reading_speed.py \
        [--footage GAME=FILE ...]

Prints a Markdown table a game: readings, and the median, 90th percentile and largest time
of the cut and classify step, the decode step and both; and the most cuts of the board one
reading made (a start that looks the same from several sides is cut once and renamed; one
read unclearly from the first side is cut from each)."""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.app.pipeline import BoardReader, GameLoop
from referee.app.replay import replay_footage
from referee.app.state_machine import Referee

ROOT = Path(__file__).resolve().parent.parent
FOOTAGE = {"renaissance": ROOT / "tests/data/footage/renaissance-opening.mp4",
           "zensu": ROOT / "tests/data/footage/zensu-whole.mp4"}
BUDGET_MS = {"renaissance": 25.0, "zensu": 15.0}


def timed(method: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return method(*args, **kwargs)
        finally:
            spent.append(1000 * (time.thread_time() - start))
    return wrapper


def measure(game: str, footage: Path) -> dict[str, Any]:
    spent: dict[str, list[float]] = {"read": [], "decode": [], "both": []}
    cuts: list[int] = []  # per reading: how many times the board was cut and classified
    methods = ((BoardReader, "read", "read"), (Referee, "on_reading", "decode"),
               (GameLoop, "_judge", "both"))
    originals = [getattr(owner, name) for owner, name, _ in methods]
    for owner, name, key in methods:
        setattr(owner, name, timed(getattr(owner, name), spent[key]))
    judge = GameLoop._judge

    def counted(*args: Any, **kwargs: Any) -> Any:
        before = len(spent["read"])
        try:
            return judge(*args, **kwargs)
        finally:
            cuts.append(len(spent["read"]) - before)

    GameLoop._judge = counted  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as out:
            result = replay_footage(footage, game, out=out)
    finally:
        for (owner, name, _), original in zip(methods, originals, strict=True):
            setattr(owner, name, original)
    return {"game": game, "footage": footage.name, "plies": len(result.match.moves),
            "readings": len(spent["both"]), "cuts": max(cuts), **spent}


def row(figures: dict[str, Any]) -> str:
    def spread(values: list[float]) -> str:
        a = np.asarray(values)
        return f"{np.median(a):.1f} / {np.percentile(a, 90):.1f} / {a.max():.1f}"

    return (f"| {figures['game']} | `{figures['footage']}` | {figures['plies']} | "
            f"{figures['readings']} | {spread(figures['read'])} | {spread(figures['decode'])} | "
            f"{spread(figures['both'])} | {figures['cuts']} | "
            f"{BUDGET_MS[figures['game']]:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--footage", nargs="*", default=[], metavar="GAME=FILE")
    args = parser.parse_args()
    footage = dict(FOOTAGE)
    footage.update(dict(item.split("=", 1) for item in args.footage))  # type: ignore[arg-type]
    cv2.setNumThreads(1)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=ROOT).stdout.strip()
    print(f"Measured at {head} (working tree), {platform.python_version()}, "
          f"OpenCV {cv2.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}.\n")
    print("| game | footage | plies | readings | cut and classify, ms (median / p90 / max) | "
          "decode, ms | reading, ms | cuts a reading, max | budget, ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for game, path in footage.items():
        print(row(measure(game, Path(path))), flush=True)


if __name__ == "__main__":
    main()
