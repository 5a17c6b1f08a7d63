"""What the renderer needs to know about each game: board size, goal and blocked squares,
which pieces it uses, and square contents for its positions.

Footage of every game comes from its rules positions (`contents_from_position`). Single
frames of Zensū and Renaissance without a position use simple per-square contents made here
(RULES.md §4, §5): the setup, or a random Renaissance board in phase 1."""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from referee.errors import RenderError, UnknownGameError
from referee.rules import find_game, game_names
from referee_lab.synth.truth import BLOCKED, EMPTY, Contents, SquareContent

LOCAL_GAMES = ("zensu", "renaissance")
# Renaissance's 13 polyominoes (RULES.md §5): cells as (file, rank) offsets.
POLYOMINOES: tuple[tuple[tuple[int, int], ...], ...] = (
    ((0, 0), (1, 0)), ((0, 0), (1, 0)), ((0, 0), (1, 0)), ((0, 0), (1, 0)),  # dominoes
    ((0, 0), (1, 0), (2, 0)), ((0, 0), (1, 0), (2, 0)),  # I-triominoes
    ((0, 0), (1, 0), (0, 1)), ((0, 0), (1, 0), (0, 1)),  # V-triominoes
    ((0, 0), (1, 0), (2, 0), (3, 0)),  # I
    ((0, 0), (1, 0), (0, 1), (1, 1)),  # O
    ((0, 0), (1, 0), (2, 0), (1, 1)),  # T
    ((0, 0), (1, 0), (1, 1), (2, 1)),  # S
    ((0, 0), (1, 0), (2, 0), (0, 1)),  # L
)


@dataclass(frozen=True)
class GameSpec:
    name: str
    files: int
    ranks: int
    family: str  # "rinne", "zensu" or "renaissance"
    goals: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()


def known_games() -> list[str]:
    return sorted({*game_names(), *LOCAL_GAMES})


def game_spec(name: str) -> GameSpec:
    key = name.strip().lower().replace("ū", "u").replace(" ", "-")
    if key == "zensu":
        return GameSpec("zensu", 6, 9, "zensu")
    if key == "renaissance":
        return GameSpec("renaissance", 7, 7, "renaissance", blocked=("d4",))
    try:
        game = find_game(key)
    except UnknownGameError:
        known = ", ".join(known_games())
        raise RenderError(f"unknown game {name!r}; known games: {known}") from None
    files, ranks = int(getattr(game, "files", 0)), int(getattr(game, "ranks", 0))
    if not files or not hasattr(game, "goals"):
        raise RenderError(f"the renderer does not know the board of {name!r}")
    return GameSpec(game.name, files, ranks, "rinne", goals=tuple(game.goals))


def rules_game(spec: GameSpec) -> Any:
    return find_game(spec.name)


def square_names(files: int, ranks: int) -> list[str]:
    return [f"{string.ascii_lowercase[f]}{r + 1}" for r in range(ranks) for f in range(files)]


def contents_from_position(spec: GameSpec, position: Any, pieces: str) -> Contents:
    """Square contents of a rules position: Rinne family (`Position.piece_at`) as dice or
    Penta-pieces, Zensū blocks (`piece_at` → number), Renaissance (`Position.contents`)
    tiles (ids 1..13), monominoes and markers."""
    names = square_names(spec.files, spec.ranks)
    if spec.family == "renaissance":
        return {name: _renaissance_square(position.contents(index))
                for index, name in enumerate(names)}
    kind = {"rinne": "die" if pieces == "dice" else "penta", "zensu": "zensu"}[spec.family]
    out: Contents = {}
    for index, name in enumerate(names):
        piece = position.piece_at(index)
        value = 0 if piece is None else int(piece.number if kind == "zensu" else piece.state)
        out[name] = EMPTY if piece is None else SquareContent(kind, int(piece.color), value)
    return out


def _renaissance_square(square: Any) -> SquareContent:
    """A rules `SquareContents` (cover, tile id from 0, marker colour) as a SquareContent."""
    marker = None if square.marker is None else ("gold", "silver")[int(square.marker)]
    cover = square.cover.value  # "blocked", "empty", "tile", "monomino"
    if cover == "tile":
        return SquareContent("tile", None, int(square.tile) + 1, marker)
    return SquareContent(cover, None, 0, marker)


def zensu_start(spec: GameSpec) -> Contents:
    """RULES.md §4 setup: "2" pieces on the back line, "1" pieces in front of them."""
    out = dict.fromkeys(square_names(spec.files, spec.ranks), EMPTY)
    for f in string.ascii_lowercase[:spec.files]:
        out[f"{f}1"] = SquareContent("zensu", 0, 2)
        out[f"{f}2"] = SquareContent("zensu", 0, 1)
        out[f"{f}{spec.ranks}"] = SquareContent("zensu", 1, 2)
        out[f"{f}{spec.ranks - 1}"] = SquareContent("zensu", 1, 1)
    return out


@lru_cache(maxsize=32)
def _variants(cells: tuple[tuple[int, int], ...]) -> list[tuple[tuple[int, int], ...]]:
    """Every rotation and reflection of a polyomino, normalised to start at (0, 0)."""
    out = set()
    pts = list(cells)
    for _ in range(4):
        pts = [(y, -x) for x, y in pts]
        for shape in (pts, [(-x, y) for x, y in pts]):
            mx, my = min(x for x, _ in shape), min(y for _, y in shape)
            out.add(tuple(sorted((x - mx, y - my) for x, y in shape)))
    return sorted(out)


def renaissance_position(spec: GameSpec, rng: np.random.Generator, *, taken: int = 0,
                         markers: int = 0) -> Contents:
    """A Renaissance board in phase 1: the 13 polyominoes placed at random (tile ids 1..13),
    the left-over squares covered with monominoes, `taken` polyominoes already taken (their
    squares filled with monominoes), and `markers` gold and silver markers on tiles."""
    names = square_names(spec.files, spec.ranks)
    free = {(f, r) for f in range(spec.files) for r in range(spec.ranks)}
    for b in spec.blocked:
        free.discard((ord(b[0]) - 97, int(b[1:]) - 1))
    for _ in range(200):
        board: dict[tuple[int, int], int] = {}
        if _pack(rng, free, board):
            break
    else:
        raise RenderError("could not lay out the Renaissance tiles")
    ids = np.arange(1, len(POLYOMINOES) + 1)
    gone = {int(i) for i in rng.choice(ids, taken, replace=False)} if taken else set()
    out: Contents = {}
    for name in names:
        cell = (ord(name[0]) - 97, int(name[1:]) - 1)
        if name in spec.blocked:
            out[name] = BLOCKED
        elif cell in board and board[cell] not in gone:
            out[name] = SquareContent("tile", None, board[cell])
        else:
            out[name] = SquareContent("monomino")
    covered = [n for n in names if out[n].kind in ("tile", "monomino")]
    for i, name in enumerate(rng.choice(covered, min(markers, len(covered)), replace=False)):
        old = out[str(name)]
        out[str(name)] = SquareContent(old.kind, old.owner, old.value,
                                       "gold" if i % 2 == 0 else "silver")
    return out


def _pack(rng: np.random.Generator, free: set[tuple[int, int]],
          board: dict[tuple[int, int], int]) -> bool:
    """Place every polyomino at a random fitting spot (greedy with restarts)."""
    order = rng.permutation(len(POLYOMINOES))
    for index in order:
        variants = _variants(POLYOMINOES[index])
        open_cells = free - board.keys()
        spots = [(v, (x, y)) for v in variants for x, y in sorted(open_cells)
                 if all((x + dx, y + dy) in open_cells for dx, dy in v)]
        if not spots:
            return False
        shape, (x, y) = spots[int(rng.integers(len(spots)))]
        for dx, dy in shape:
            board[(x + dx, y + dy)] = int(index) + 1
    return True


def start_contents(spec: GameSpec, rng: np.random.Generator, pieces: str) -> Contents:
    if spec.family == "zensu":
        return zensu_start(spec)
    if spec.family == "renaissance":
        return renaissance_position(spec, rng, taken=int(rng.integers(0, 4)),
                                    markers=int(rng.integers(0, 16)))
    return contents_from_position(spec, rules_game(spec).start(), pieces)


def check_contents(spec: GameSpec, contents: Contents) -> Contents:
    """Every square named once, and only squares of this board; missing ones are empty."""
    names = square_names(spec.files, spec.ranks)
    unknown = sorted(set(contents) - set(names))
    if unknown:
        raise RenderError(f"square {unknown[0]!r} is not on the {spec.files}x{spec.ranks} board")
    out = {name: contents.get(name, EMPTY) for name in names}
    for name in spec.blocked:
        out[name] = BLOCKED
    return out
