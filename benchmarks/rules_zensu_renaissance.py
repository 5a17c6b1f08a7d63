"""Speed of the Zensū and Renaissance rules: perft from the start, and whole random games
(what the referee asks of the rules per ply: legal moves, play, outcome).

    python benchmarks/rules_zensu_renaissance.py > benchmarks/rules_zensu_renaissance.md
"""

from __future__ import annotations

import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.rules import find_game
from referee.rules.core import Match


def perft_row(game_name: str, depth: int) -> str:
    game = find_game(game_name)
    start = time.perf_counter()
    count = game.perft(game.start(), depth)
    seconds = time.perf_counter() - start
    return f"| `referee perft --game {game_name} --depth {depth}` | {count} | {seconds:.3f} |"


def games_row(game_name: str, games: int) -> str:
    game = find_game(game_name)
    plies = 0
    start = time.perf_counter()
    for seed in range(games):
        rng = random.Random(seed)
        match: Match[Any, Any] = Match(game)
        while not match.is_over():
            match.push(rng.choice(match.legal_moves()))
        plies += len(match.moves)
    seconds = time.perf_counter() - start
    return (f"| {game_name}: {games} random games | {plies} plies | {seconds:.2f} s, "
            f"{1000 * seconds / plies:.2f} ms a ply |")


def main() -> None:
    print("# Zensū and Renaissance rules speed\n")
    print(f"Python {platform.python_version()} on {platform.machine()}, one core, `nice`.")
    print("Command: `nice python benchmarks/rules_zensu_renaissance.py`\n")
    print("| perft | count | seconds |\n| --- | ---: | ---: |")
    for depth in range(1, 6):
        print(perft_row("zensu", depth))
    for depth in (1, 2):
        print(perft_row("renaissance", depth))
    print("\n| random play | plies | time |\n| --- | ---: | ---: |")
    print(games_row("zensu", 50))
    print(games_row("renaissance", 20))


if __name__ == "__main__":
    main()
