"""Constructed Renaissance games for the demo and the tests: random legal play that prefers
plies taking a polyomino (so every phase is lived through, acquisitions included), and never
a push-in that leaves the board as a plain placement would (`g1>` along the mover's own
markers and `f2` put the same markers on the same squares: no camera can tell them apart, so
a game meant to be read to its exact record plays the placement).

Run: PYTHONPATH=. python -m referee_lab.synth.constructed --seed S --out RECORD.txt
(`--search N`: of seeds S..S+N-1, the shortest whole game with a push-in)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from referee.rules import find_game
from referee.rules.core import Match
from referee.rules.records import format_record
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import Move, PlaceMarker, Position


def _looks_like_another(game: RenaissanceRules, position: Position, move: Move,
                        moves: list[Move]) -> bool:
    """A push-in whose board is a plain placement's."""
    if not isinstance(move, PlaceMarker) or not position.markers[move.square]:
        return False
    after = game.play(position, move)
    return any(other != move and isinstance(other, PlaceMarker)
               and not position.markers[other.square] and game.play(position, other) == after
               for other in moves)


def constructed_game(seed: int, max_plies: int = 300) -> Match[Position, Move] | None:
    """A whole game from `seed` (None if it runs past `max_plies`)."""
    game = find_game("renaissance")
    assert isinstance(game, RenaissanceRules)
    rng = np.random.default_rng([seed, 34])
    match: Match[Position, Move] = Match(game)
    while not match.is_over() and len(match.moves) < max_plies:
        position = match.position
        moves = [m for m in match.legal_moves()
                 if not _looks_like_another(game, position, m, match.legal_moves())]
        taking = [m for m in moves if game.play(position, m).taken != position.taken]
        choice = taking or moves
        match.push(choice[int(rng.integers(len(choice)))])
    return match if match.is_over() else None


def pushes(match: Match[Position, Move]) -> int:
    return sum(1 for position, move in zip(match.positions, match.moves, strict=False)
               if isinstance(move, PlaceMarker) and position.markers[move.square])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    found = [(len(m.moves), seed, m) for seed in range(args.seed, args.seed + args.search)
             if (m := constructed_game(seed)) is not None and pushes(m)]
    if not found:
        parser.error("no seed gives a whole game with a push-in")
    plies, seed, match = min(found, key=lambda f: f[:2])
    headers = {"Gold": "constructed", "Silver": "constructed",
               "Source": f"constructed: random legal play (seed {seed}), preferring plies that "
                         "take a polyomino, no push-in that looks like a placement"}
    text = format_record(match, headers)
    assert match.outcome is not None
    print(f"seed {seed}: {plies} plies, {pushes(match)} push-ins, "
          f"{match.outcome.result(match.game.player_names)}")
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
