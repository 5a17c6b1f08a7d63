"""Renaissance tiles read as whole pieces: breaks of the game's tile set are read again."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from referee.rules.polyomino import identify_squares
from referee.tracking.tile_pieces import PieceRead, read_whole_pieces
from referee.vision.seams import seam_pairs

SIZE = 7
LABELS = ("blocked", "empty", "empty+gold", "empty+silver", "tile", "tile+gold", "tile+silver",
          "monomino", "monomino+gold", "monomino+silver")
SEAM_LABELS = ("apart", "joined")
PAIRS = seam_pairs(SIZE, SIZE)


def square(name: str) -> int:
    return (int(name[1:]) - 1) * SIZE + "abcdefg".index(name[0])


class Board:
    """A board's truth (pieces, other squares) and the models' probabilities of it: sure
    reads (0.95) until a test makes one less sure or wrong."""

    def __init__(self, pieces: list[str], others: dict[str, str]) -> None:
        self.labels = ["monomino"] * SIZE * SIZE
        self.labels[square("d4")] = "blocked"
        self.piece = [-1] * SIZE * SIZE
        for number, piece in enumerate(pieces):
            for name in piece.split():
                self.labels[square(name)], self.piece[square(name)] = "tile", number
        for name, label in others.items():
            self.labels[square(name)] = label
        self.squares = np.full((SIZE * SIZE, len(LABELS)), 0.05 / (len(LABELS) - 1))
        for index, label in enumerate(self.labels):
            self.squares[index, LABELS.index(label)] = 0.95
        self.truth_joined = np.array([self.piece[a] >= 0 and self.piece[a] == self.piece[b]
                                      for a, b in PAIRS])
        self.seams = np.where(self.truth_joined[:, None], [0.05, 0.95], [0.95, 0.05])

    def read_square(self, name: str, **chances: float) -> None:
        """The square model reads `name` with these label chances, the rest spread."""
        row = np.full(len(LABELS), (1 - sum(chances.values())) / (len(LABELS) - len(chances)))
        for label, chance in chances.items():
            row[LABELS.index(label.replace("_", "+"))] = chance
        self.squares[square(name)] = row

    def read_seam(self, a: str, b: str, joined: float) -> None:
        seam = next(k for k, pair in enumerate(PAIRS) if set(pair) == {square(a), square(b)})
        self.seams[seam] = (1 - joined, joined)

    def truth_squares(self) -> NDArray[np.int64]:
        return np.array([LABELS.index(label) for label in self.labels])


def read(board: Board) -> PieceRead:
    return read_whole_pieces(board.squares, LABELS, board.seams, SEAM_LABELS, SIZE)


def pieces_of(squares: NDArray[np.int64], joined: NDArray[np.bool_]) -> Counter[str | None]:
    """The shape of every group of polyomino squares joined by seams."""
    tile = [LABELS[k].startswith("tile") for k in squares]
    groups: dict[int, set[int]] = {q: {q} for q in range(SIZE * SIZE) if tile[q]}
    for (a, b), is_joined in zip(PAIRS, joined, strict=True):
        if is_joined and tile[a] and tile[b] and groups[a] is not groups[b]:
            merged = groups[a] | groups[b]
            for q in merged:
                groups[q] = merged
    unique = {id(g): g for g in groups.values()}.values()
    inside_joined = all(joined[k] for k, (a, b) in enumerate(PAIRS)
                        if tile[a] and tile[b] and groups[a] is groups[b])
    assert inside_joined
    return Counter(identify_squares(SIZE, g) for g in unique)


ALLOWED = Counter({"I2": 4, "I3": 2, "V3": 2, "I4": 1, "O4": 1, "T4": 1, "S4": 1, "L4": 1})
SET = ["a1 b1", "a3 a4 a5", "c6 c7 d7", "f1 f2 f3 g2", "e5 f5 e6 f6"]  # I2 I3 V3 T4 O4


def test_a_board_of_whole_pieces_is_read_as_it_is() -> None:
    board = Board(SET, {"c1": "empty", "g7": "monomino+gold", "b6": "empty+silver"})
    result = read(board)
    assert np.array_equal(result.squares, board.truth_squares())
    assert np.array_equal(result.joined, board.truth_joined)
    assert result.mended == ()


def test_two_pieces_read_joined_are_cut_apart() -> None:
    """A domino beside a V-triomino, the seam between them read joined: five squares are no
    piece; the likeliest cut is the two pieces, the doubtful seam apart."""
    board = Board(["a1 b1", "c1 d1 c2"], {})
    board.read_seam("b1", "c1", joined=0.8)
    result = read(board)
    assert np.array_equal(result.joined, board.truth_joined)
    assert np.array_equal(result.squares, board.truth_squares())
    assert result.mended == (frozenset(square(n) for n in ["a1", "b1", "c1", "d1", "c2"]),)


def test_a_lone_polyomino_square_is_a_monomino() -> None:
    board = Board(SET, {})
    board.read_square("c3", tile=0.6, monomino=0.35)
    result = read(board)
    assert LABELS[result.squares[square("c3")]] == "monomino"
    assert np.array_equal(result.squares, board.truth_squares())
    assert len(result.mended) == 1


def test_a_tetromino_square_read_as_a_monomino_is_found_by_the_count() -> None:
    """A T-tetromino with one square read a monomino (just) leaves a V-triomino, but the set
    has only two and both lie elsewhere: the third is read again, as the T-tetromino."""
    board = Board(["a1 b1 c1 b2", "a6 a7 b7", "f6 g6 g7", "e1 f1"], {})
    board.read_square("a1", monomino=0.55, tile=0.4)
    first = read(board)
    assert LABELS[first.squares[square("a1")]] == "tile"
    assert np.array_equal(first.joined, board.truth_joined)
    assert len(first.mended) == 1
    board.read_square("a1", monomino=0.8, tile=0.15)  # beyond reach: the cut keeps it out
    again = read(board)
    assert LABELS[again.squares[square("a1")]] == "monomino"
    assert pieces_of(again.squares, again.joined)["V3"] <= 2


def test_a_mended_board_holds_no_more_of_a_shape_than_the_set() -> None:
    """Three dominoes read where the set (here) has two: the least sure is read again as
    squares that are no polyomino's."""
    board = Board(["a1 b1", "a3 b3", "a5 b5"], {})
    board.read_square("a5", tile=0.5, monomino=0.45)
    result = read_whole_pieces(board.squares, LABELS, board.seams, SEAM_LABELS, SIZE,
                               tiles=("I2", "I2"))
    assert pieces_of(result.squares, result.joined) == Counter({"I2": 2})
    assert LABELS[result.squares[square("a5")]] == "monomino"


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.5, 3.0))
def test_any_read_comes_out_as_whole_pieces_of_the_set(seed: int, sharpness: float) -> None:
    """Whatever the models say, every group read is one of the set's shapes, all its seams
    joined, no shape more often than the set has it."""
    rng = np.random.default_rng(seed)
    squares = rng.dirichlet(np.full(len(LABELS), 1 / sharpness), SIZE * SIZE)
    joined = rng.beta(1 / sharpness, 1 / sharpness, len(PAIRS))
    seams = np.stack([1 - joined, joined], axis=1)
    result = read_whole_pieces(squares, LABELS, seams, SEAM_LABELS, SIZE)
    shapes = pieces_of(result.squares, result.joined)
    assert None not in shapes
    assert all(count <= ALLOWED[str(code)] for code, count in shapes.items())


def test_a_group_too_large_to_search_is_left_as_read_and_said() -> None:
    """A board of noise reads as one group of every square: no cut is searched (it would
    take ages), the read is kept and the group reported as no piece of the set."""
    board = Board([], {})
    board.squares[:] = board.squares[square("a1")][[0, 1, 2, 3, 7, 5, 6, 4, 8, 9]]
    board.seams[:] = (0.1, 0.9)
    result = read(board)
    assert result.mended == ()
    assert result.left == (frozenset(range(SIZE * SIZE)),)
    assert all(LABELS[k] == "tile" for k in result.squares)


def test_a_block_of_joined_squares_is_cut_within_the_search_budget() -> None:
    """Sixteen squares all read joined (no piece has more than four): the search stops at
    its budget with the best cut found, whole pieces of the set."""
    board = Board(["a1 b1 c1 d1", "a2 b2 c2 d2", "a3 b3 c3 d3", "a4 b4 c4"], {"d4": "blocked"})
    for a, b in PAIRS:
        if board.piece[a] >= 0 and board.piece[b] >= 0:
            board.seams[list(map(tuple, PAIRS)).index((a, b))] = (0.1, 0.9)
    result = read(board)
    shapes = pieces_of(result.squares, result.joined)
    assert None not in shapes and sum(shapes.values()) >= 4
    assert all(count <= ALLOWED[str(code)] for code, count in shapes.items())
    assert result.left == () and len(result.mended) == 1
