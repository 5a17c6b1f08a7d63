"""Renaissance's values: positions, moves and what lies on a square (RULES.md section 5).
Positions and moves are frozen, hashable dataclasses; `Position.contents(square)` says what
a camera should see on a square."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from referee.rules.core import Color

EMPTY, MONOMINO, BLOCKED = -1, -2, -3  # cover values besides tile ids
NOT_TAKEN, NOBODY = -1, 2  # taken values besides Color


class Phase(enum.Enum):
    PREPARATION = "preparation"
    PHASE1 = "phase 1"
    SETUP2 = "phase 2 setup"
    PLACE2 = "phase 2 placement"
    RELOCATE2 = "phase 2 marker move"
    OVER = "over"


class Cover(enum.Enum):
    BLOCKED = "blocked"
    EMPTY = "empty"
    TILE = "tile"
    MONOMINO = "monomino"


@dataclass(frozen=True)
class SquareContents:
    """What lies on one square, as a camera would see it."""

    cover: Cover
    tile: int | None = None  # tile id, for Cover.TILE
    shape: str | None = None  # its shape code
    marker: Color | None = None


@dataclass(frozen=True)
class PlaceTile:
    tile: int
    squares: tuple[int, ...]  # sorted


@dataclass(frozen=True)
class PlaceMarker:
    square: int


@dataclass(frozen=True)
class PlaceMonomino:
    square: int


@dataclass(frozen=True)
class MoveMarker:
    from_square: int
    to_square: int


Move = PlaceTile | PlaceMarker | PlaceMonomino | MoveMarker


@dataclass(frozen=True)
class Position:
    phase: Phase
    turn: Color
    cover: tuple[int, ...]  # per square: tile id, EMPTY, MONOMINO or BLOCKED
    markers: tuple[int, ...]  # per square: 0 none, 1 Gold, 2 Silver
    taken: tuple[int, ...]  # per tile: NOT_TAKEN, Color (taken in phase 1) or NOBODY
    inventory: tuple[str, ...]  # shape code per tile id
    monominoes_left: tuple[int, int] = (0, 0)  # phase 2 setup, per player
    last_relocation: tuple[int, int] = (-1, -1)  # phase 2: (from, to) may not be undone

    def marker_at(self, square: int) -> Color | None:
        value = self.markers[square]
        return None if value == 0 else Color(value - 1)

    def contents(self, square: int) -> SquareContents:
        value = self.cover[square]
        marker = self.marker_at(square)
        if value >= 0:
            return SquareContents(Cover.TILE, value, self.inventory[value], marker)
        kind = {EMPTY: Cover.EMPTY, MONOMINO: Cover.MONOMINO, BLOCKED: Cover.BLOCKED}[value]
        return SquareContents(kind, marker=marker)

    def markers_on_board(self, color: Color) -> int:
        return self.markers.count(color + 1)

    def tiles_on_board(self) -> set[int]:
        return {value for value in self.cover if value >= 0}

    def tile_squares(self, tile: int) -> tuple[int, ...]:
        return tuple(sq for sq, value in enumerate(self.cover) if value == tile)

    def squares_by_tile(self) -> dict[int, tuple[int, ...]]:
        """`tile_squares` of every tile on the board, in one pass."""
        found: dict[int, list[int]] = {}
        for square, value in enumerate(self.cover):
            if value >= 0:
                found.setdefault(value, []).append(square)
        return {tile: tuple(squares) for tile, squares in found.items()}

    def taken_by(self, color: Color) -> tuple[int, ...]:
        return tuple(t for t, holder in enumerate(self.taken) if holder == color)

    def tiles_in_hand(self, color: Color) -> tuple[int, ...]:
        """Phase 2: the tiles `color` took in phase 1 and has not placed yet."""
        on_board = self.tiles_on_board()
        return tuple(t for t in self.taken_by(color) if t not in on_board)

    def is_free(self, square: int) -> bool:
        """No tile, monomino, marker, and not the centre."""
        return self.cover[square] == EMPTY and self.markers[square] == 0


@dataclass(frozen=True)
class Scores:
    phase1: tuple[int, int]
    penalty: tuple[int, int]

    @property
    def total(self) -> tuple[int, int]:
        return (self.phase1[0] - self.penalty[0], self.phase1[1] - self.penalty[1])
