"""Move generation speed: perft nodes per second for every game of the Rinne family.

Run: python benchmarks/perft_speed.py [--seconds 3]
Results are recorded in benchmarks/perft_speed.md."""

from __future__ import annotations

import argparse
import platform
import time

from referee.rules import find_game

DEPTHS = {"rinne": 5, "rinne-5x5": 5, "tensei": 3, "tensei-5x5": 4, "flipflop-3x3": 9,
          "flipflop-5x5": 5}


def measure(name: str, depth: int) -> tuple[int, float]:
    game = find_game(name)
    start = time.perf_counter()
    nodes = game.perft(game.start(), depth)
    return nodes, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args()
    print(f"Python {platform.python_version()} on {platform.machine()}, one core\n")
    print("| game | depth | nodes | seconds | nodes/s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, depth in DEPTHS.items():
        nodes, seconds = measure(name, depth)
        print(f"| {name} | {depth} | {nodes:,} | {seconds:.2f} | {nodes / seconds:,.0f} |")


if __name__ == "__main__":
    main()
