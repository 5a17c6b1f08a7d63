"""Polyomino geometry for Renaissance: the free shapes up to four squares, identified under
rotation and reflection, their placements on a square board with a blocked centre, the
board's eight symmetries, and a packing test (do these tiles still fit?)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache, lru_cache

Cell = tuple[int, int]  # (file, rank)

# The free polyominoes a tile may be, by code: letter + number of squares. The shapes of
# the hands table: the I-domino, the I- and V-triominoes and the five free tetrominoes.
SHAPES: dict[str, tuple[Cell, ...]] = {
    "I2": ((0, 0), (1, 0)),
    "I3": ((0, 0), (1, 0), (2, 0)),
    "V3": ((0, 0), (1, 0), (0, 1)),
    "I4": ((0, 0), (1, 0), (2, 0), (3, 0)),
    "O4": ((0, 0), (1, 0), (0, 1), (1, 1)),
    "T4": ((0, 0), (1, 0), (2, 0), (1, 1)),
    "S4": ((0, 0), (1, 0), (1, 1), (2, 1)),
    "L4": ((0, 0), (1, 0), (2, 0), (0, 1)),
}
SHAPE_NAMES = {
    "I2": "domino", "I3": "I-triomino", "V3": "V-triomino", "I4": "I-tetromino",
    "O4": "O-tetromino", "T4": "T-tetromino", "S4": "S-tetromino", "L4": "L-tetromino",
}
# Larger shapes first: the order tiles are numbered in and the packing test places them in.
SHAPE_ORDER = ("I4", "O4", "T4", "S4", "L4", "V3", "I3", "I2")

# The eight symmetries of the square as matrices: (x, y) -> (a x + b y, c x + d y).
TRANSFORMS = (
    (1, 0, 0, 1), (0, -1, 1, 0), (-1, 0, 0, -1), (0, 1, -1, 0),
    (-1, 0, 0, 1), (0, 1, 1, 0), (1, 0, 0, -1), (0, -1, -1, 0),
)


def transform(matrix: tuple[int, int, int, int], x: int, y: int) -> Cell:
    a, b, c, d = matrix
    return a * x + b * y, c * x + d * y


def normalise(cells: Iterable[Cell]) -> tuple[Cell, ...]:
    """The cells moved so that the smallest file and rank are 0, sorted."""
    cells = list(cells)
    fx = min(x for x, _ in cells)
    fy = min(y for _, y in cells)
    return tuple(sorted((x - fx, y - fy) for x, y in cells))


def orientations(cells: Iterable[Cell]) -> tuple[tuple[Cell, ...], ...]:
    """The distinct fixed shapes a tile takes when rotated and flipped."""
    cells = tuple(cells)
    return tuple(sorted({normalise(transform(t, x, y) for x, y in cells) for t in TRANSFORMS}))


def canonical(cells: Iterable[Cell]) -> tuple[Cell, ...]:
    return orientations(cells)[0]


_CANONICAL = {canonical(cells): code for code, cells in SHAPES.items()}


def identify(cells: Iterable[Cell]) -> str | None:
    """The code of the free polyomino these cells form (any rotation or reflection), or
    None when they form no known tile shape (not connected, too big, a monomino…)."""
    cells = tuple(cells)
    if len(set(cells)) != len(cells) or not cells:
        return None
    return _CANONICAL.get(canonical(cells))


def shape_size(code: str) -> int:
    return len(SHAPES[code])


# --- a square board of odd size with its centre blocked ------------------------------------


def centre(size: int) -> int:
    return (size // 2) * size + size // 2


@cache
def placements(size: int, code: str) -> tuple[tuple[int, ...], ...]:
    """Every placement of the shape on the board as sorted square indices, avoiding the
    blocked centre; square = rank * size + file."""
    blocked = centre(size)
    found = []
    for shape in orientations(SHAPES[code]):
        width = max(x for x, _ in shape) + 1
        height = max(y for _, y in shape) + 1
        for rank in range(size - height + 1):
            for file in range(size - width + 1):
                squares = tuple(sorted((rank + y) * size + file + x for x, y in shape))
                if blocked not in squares:
                    found.append(squares)
    return tuple(sorted(found))


@cache
def placement_masks(size: int, code: str) -> tuple[int, ...]:
    return tuple(sum(1 << sq for sq in squares) for squares in placements(size, code))


def identify_squares(size: int, squares: Iterable[int]) -> str | None:
    return identify((sq % size, sq // size) for sq in squares)


def symmetries(size: int) -> tuple[tuple[int, ...], ...]:
    """The eight symmetries of the (odd-sized) square board as square maps; each fixes the
    centre."""
    c = size // 2
    maps = []
    for t in TRANSFORMS:
        mapping = []
        for square in range(size * size):
            nx, ny = transform(t, square % size - c, square // size - c)
            mapping.append((ny + c) * size + nx + c)
        maps.append(tuple(mapping))
    return tuple(maps)


def can_pack(size: int, free: int, shapes: tuple[str, ...]) -> bool:
    """Whether tiles of `shapes` can all be placed without overlap on the squares of the
    bitmask `free`. Shapes are tried largest first; equal tiles in increasing placement
    order, so that no arrangement is searched twice."""
    ordered = tuple(sorted(shapes, key=SHAPE_ORDER.index))
    return _pack(size, free, ordered, 0)


@lru_cache(maxsize=200_000)
def _pack(size: int, free: int, shapes: tuple[str, ...], first: int) -> bool:
    if not shapes:
        return True
    if free.bit_count() < sum(shape_size(code) for code in shapes):
        return False
    code, rest = shapes[0], shapes[1:]
    masks = placement_masks(size, code)
    for index in range(first, len(masks)):
        mask = masks[index]
        if mask & free == mask:
            nxt = index + 1 if rest and rest[0] == code else 0
            if _pack(size, free & ~mask, rest, nxt):
                return True
    return False
