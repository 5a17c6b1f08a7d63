"""Zensū (RULES.md section 4): wooden pieces that move orthogonally by exactly the number on
the edge facing the direction of travel, jump their own pieces, capture every opponent piece
they pass over or land on, and win by entering the opponent's home territory or by capturing
every opponent piece.

A position stores the board as a tuple of signed ints: 0 is empty, +n a Turquoise piece with
the large number n, -n a Red one. Every setting RULES.md marks as an assumption (board size,
home ranks, setup, edge numbers, what a player with no move does) comes from a ruleset file
(`rulesets/zensu.toml` by default), so a user with the real box corrects it without code."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from referee.errors import IllegalMoveError, NotationError, RulesetError
from referee.rules.core import Color, Geometry, Outcome, Termination
from referee.rules.ruleset import Table, packaged_toml, read_toml, root_table

EDGE_NAMES = ("forward", "left", "right", "back")
NO_MOVE_CHOICES = ("lose", "pass")


@dataclass(frozen=True)
class Piece:
    """What stands on a square: its owner and its large number ("1" or "2" piece)."""

    color: Color
    number: int

    @property
    def kind(self) -> str:
        return str(self.number)


@dataclass(frozen=True)
class Move:
    """A ply: the piece on `from_square` goes to `to_square`. PASS (-1, -1) exists only when
    the ruleset lets a player without a move pass."""

    from_square: int
    to_square: int

    @property
    def is_pass(self) -> bool:
        return self.from_square < 0


PASS = Move(-1, -1)


@dataclass(frozen=True)
class Position:
    board: tuple[int, ...]
    turn: Color

    def piece_at(self, square: int) -> Piece | None:
        value = self.board[square]
        if value == 0:
            return None
        return Piece(Color.FIRST if value > 0 else Color.SECOND, abs(value))

    def pieces(self, color: Color) -> Iterator[tuple[int, int]]:
        """(square, number) of every piece of `color`."""
        sign = _sign(color)
        for square, value in enumerate(self.board):
            if value * sign > 0:
                yield square, abs(value)

    def count(self, color: Color) -> int:
        return sum(1 for _ in self.pieces(color))


def _sign(color: Color) -> int:
    return 1 if color is Color.FIRST else -1


# A step: (destination, squares passed over and landed on, in order).
Step = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class ZensuRules:
    """One Zensū ruleset as plain data; `load_zensu(path)` reads one from a TOML file."""

    files: int = 6
    ranks: int = 9
    home_ranks: int = 1
    # Turquoise's setup as (square, number); Red's mirrors it across the middle rank.
    setup: tuple[tuple[str, int], ...] = ()
    # number -> (forward, left, right, back), seen from the piece's owner
    edges: tuple[tuple[int, tuple[int, int, int, int]], ...] = ()
    no_legal_move: str = "lose"
    name: str = "zensu"
    title: str = "Zensū"
    variant: str = "6x9 standard"
    player_names: tuple[str, str] = ("Turquoise", "Red")
    help_text: ClassVar[str] = ("Type a move (e.g. '1 b2 - b3', '2 d1 x d3' or 'b2b3'), 'moves', "
                                "'undo', 'record' or 'quit'.")
    _steps: tuple[tuple[dict[int, tuple[Step, ...]], ...], ...] = field(
        init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_steps", self._build_steps())

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.files, self.ranks)

    def _build_steps(self) -> tuple[tuple[dict[int, tuple[Step, ...]], ...], ...]:
        """steps[color][square][number]: every on-board step of that piece from that square."""
        geometry = self.geometry
        table = []
        for color in Color:
            forward = 1 if color is Color.FIRST else -1
            # left seen from the owner: Turquoise's left is file a, Red (facing it) has f
            vectors = ((0, forward), (-forward, 0), (forward, 0), (0, -forward))
            per_square = []
            for square in geometry.squares():
                f0, r0 = geometry.file_of(square), geometry.rank_of(square)
                per_number: dict[int, tuple[Step, ...]] = {}
                for number, distances in self.edges:
                    steps = []
                    for (df, dr), distance in zip(vectors, distances, strict=True):
                        path = tuple(geometry.square(f0 + df * k, r0 + dr * k)
                                     for k in range(1, distance + 1)
                                     if geometry.contains(f0 + df * k, r0 + dr * k))
                        if len(path) == distance:
                            steps.append((path[-1], path))
                    per_number[number] = tuple(steps)
                per_square.append(per_number)
            table.append(tuple(per_square))
        return tuple(table)

    # --- facts ------------------------------------------------------------------------

    def is_home(self, square: int, color: Color) -> bool:
        """Whether `square` lies in `color`'s home territory."""
        rank = self.geometry.rank_of(square)
        if color is Color.FIRST:
            return rank < self.home_ranks
        return rank >= self.ranks - self.home_ranks

    def captures(self, position: Position, move: Move) -> tuple[int, ...]:
        """The squares of the opponent pieces `move` captures (passed over or landed on)."""
        if move.is_pass:
            return ()
        sign = _sign(position.turn)
        for to, path in self._steps[position.turn][move.from_square][
                abs(position.board[move.from_square])]:
            if to == move.to_square:
                return tuple(sq for sq in path if position.board[sq] * sign < 0)
        raise IllegalMoveError(f"{self._move_squares(move)} is not a step of that piece")

    # --- the Game protocol ------------------------------------------------------------

    def start(self) -> Position:
        geometry = self.geometry
        board = [0] * geometry.size
        for name, number in self.setup:
            square = geometry.parse_square(name)
            board[square] = number
            mirror = geometry.square(geometry.file_of(square),
                                     self.ranks - 1 - geometry.rank_of(square))
            board[mirror] = -number
        return Position(tuple(board), Color.FIRST)

    def _raw_moves(self, board: tuple[int, ...], color: Color) -> list[tuple[int, int]]:
        sign = _sign(color)
        steps = self._steps[color]
        moves = []
        for frm, value in enumerate(board):
            if value * sign > 0:
                for to, _path in steps[frm][value * sign]:
                    if board[to] * sign <= 0:
                        moves.append((frm, to))
        return moves

    def legal_moves(self, position: Position) -> list[Move]:
        moves = [Move(f, t) for f, t in self._raw_moves(position.board, position.turn)]
        if not moves and self.no_legal_move == "pass":
            return [PASS]
        return moves

    def play(self, position: Position, move: Move) -> Position:
        if move.is_pass:
            return Position(position.board, position.turn.other)
        board = list(position.board)
        for square in self.captures(position, move):
            board[square] = 0
        board[move.to_square] = board[move.from_square]
        board[move.from_square] = 0
        return Position(tuple(board), position.turn.other)

    def outcome(self, position: Position, repetitions: int) -> Outcome | None:
        """After a move by P (the side not to move), O to move. The game cannot be drawn:
        repetitions do not end it."""
        mover, other = position.turn.other, position.turn
        sign = _sign(mover)
        if any(v * sign > 0 and self.is_home(sq, other) for sq, v in enumerate(position.board)):
            return Outcome(Termination.HOME_REACHED, mover)
        if not any(v * sign < 0 for v in position.board):
            return Outcome(Termination.ALL_CAPTURED, mover)
        # "pass": a player without a move passes; if neither can move, the side to move loses
        if not self._raw_moves(position.board, other) and (
                self.no_legal_move == "lose" or not self._raw_moves(position.board, mover)):
            return Outcome(Termination.NO_MOVES, mover)
        return None

    def parse_move(self, position: Position, text: str) -> Move:
        stripped = text.strip()
        if stripped.lower() == "pass":
            if self.legal_moves(position) != [PASS]:
                raise IllegalMoveError(f"{self.player_names[position.turn]} has a move and "
                                       "may not pass")
            return PASS
        match = _MOVE.match(stripped)
        if match is None:
            raise NotationError(f"{stripped!r} is not a Zensū move: write e.g. '1 b2 - b3' or "
                                "'2 d1 x d3'")
        number_text, from_text, sep, to_text = match.groups()
        geometry = self.geometry
        frm, to = geometry.parse_square(from_text), geometry.parse_square(to_text)
        piece = position.piece_at(frm)
        names = self.player_names
        if piece is None:
            raise IllegalMoveError(f"there is no piece on {from_text}")
        if piece.color is not position.turn:
            raise IllegalMoveError(f"the piece on {from_text} is {names[piece.color]}'s, but "
                                   f"{names[position.turn]} is to move")
        if number_text is not None and int(number_text) != piece.number:
            raise IllegalMoveError(f"{from_text} holds a {piece.number}, not a {number_text}")
        move = Move(frm, to)
        if move not in self.legal_moves(position):
            raise IllegalMoveError(self._why_not(position, move, piece))
        takes = bool(self.captures(position, move))
        if sep.lower() == "x" and not takes:
            raise IllegalMoveError(f"{from_text} x {to_text} marks a capture, but it captures "
                                   "nothing")
        if sep == "-" and takes:
            raise IllegalMoveError(f"{from_text} - {to_text} captures: write x, not -")
        return move

    def _why_not(self, position: Position, move: Move, piece: Piece) -> str:
        name = self.geometry.square_name
        frm, to = name(move.from_square), name(move.to_square)
        if not any(t == move.to_square for t, _p in
                   self._steps[position.turn][move.from_square][piece.number]):
            distances = "/".join(map(str, dict(self.edges)[piece.number]))
            return (f"a {piece.number} on {frm} moves exactly {distances} squares "
                    f"(forward/left/right/back), not to {to}")
        return f"{to} holds a piece of {self.player_names[piece.color]}'s own"

    def _move_squares(self, move: Move) -> str:
        name = self.geometry.square_name
        return f"{name(move.from_square)}-{name(move.to_square)}"

    def move_text(self, position: Position, move: Move, *, compact: bool = False) -> str:
        if move.is_pass:
            return "pass"
        piece = position.piece_at(move.from_square)
        if piece is None:
            raise IllegalMoveError("there is no piece on "
                                   f"{self.geometry.square_name(move.from_square)}")
        frm = self.geometry.square_name(move.from_square)
        to = self.geometry.square_name(move.to_square)
        sep = "x" if self.captures(position, move) else "-"
        if compact:
            return f"{piece.number}{frm}{sep}{to}"
        return f"{piece.number} {frm} {sep} {to}"

    def diagram(self, position: Position) -> str:
        """Turquoise pieces as digits, Red ones as letters (1 = a, 2 = b, …)."""
        geometry = self.geometry
        lines = []
        for rank in reversed(range(self.ranks)):
            cells = []
            for file in range(self.files):
                piece = position.piece_at(geometry.square(file, rank))
                if piece is None:
                    cells.append(".")
                elif piece.color is Color.FIRST:
                    cells.append(str(piece.number))
                else:
                    cells.append("abcdefghi"[piece.number - 1])
            square = geometry.square(0, rank)
            home = " home" if self.is_home(square, Color.FIRST) or self.is_home(
                square, Color.SECOND) else ""
            lines.append(f"{rank + 1:>2} " + " ".join(cells) + home)
        lines.append("   " + " ".join("abcdefghijklmnopqrstuvwxyz"[: self.files]))
        return "\n".join(lines) + "\n(Turquoise: 1 2, Red: a b)"

    def perft(self, position: Position, depth: int) -> int:
        if depth == 0:
            return 1
        if self.outcome(position, 1) is not None:
            return 0
        return self._perft(position, depth)

    def _perft(self, position: Position, depth: int) -> int:
        moves = self.legal_moves(position)
        if depth == 1:
            return len(moves)
        total = 0
        for move in moves:
            child = self.play(position, move)
            if self.outcome(child, 1) is None:
                total += self._perft(child, depth - 1)
        return total


_MOVE = re.compile(r"^(?:(\d+)\s*)?([a-z]\d+)\s*([-x]?)\s*([a-z]\d+)$", re.IGNORECASE)


# --- ruleset files ------------------------------------------------------------------------


def zensu_from_toml(data: dict[str, Any], origin: str) -> ZensuRules:
    """A ZensuRules from a ruleset file's tables; every field is checked."""
    root = root_table(data, origin, "zensu")
    root.done(("game", "variant", "board", "setup", "edges", "rules"))
    board = root.table("board")
    files = board.integer("files", low=2, high=26)
    ranks = board.integer("ranks", low=3, high=26)
    home_ranks = board.integer("home_ranks", low=1, high=(ranks - 1) // 2)
    board.done(("files", "ranks", "home_ranks"))
    edges = _read_edges(root.table("edges"), files, ranks)
    setup = _read_setup(root.table("setup"), Geometry(files, ranks), home_ranks,
                        {number for number, _ in edges})
    rules = root.table("rules", required=False)
    no_move = rules.choice("no_legal_move", NO_MOVE_CHOICES, "lose")
    rules.done(("no_legal_move",))
    return ZensuRules(files=files, ranks=ranks, home_ranks=home_ranks, setup=setup,
                      edges=edges, no_legal_move=no_move,
                      variant=root.string("variant", f"{files}x{ranks}"))


Edges = tuple[tuple[int, tuple[int, int, int, int]], ...]


def _read_edges(table: Table, files: int, ranks: int) -> Edges:
    edges = []
    for key in table.data:
        if not key.isdigit() or int(key) < 1:
            raise table.fail(key, "must name a piece by its large number (\"1\", \"2\", …)")
        piece = table.table(key)
        piece = Table(table.origin, f"[edges.\"{key}\"]", piece.data)
        limits = (ranks - 1, files - 1, files - 1, ranks - 1)
        distances = tuple(piece.integer(edge, low=1) for edge in EDGE_NAMES)
        for edge, distance, limit in zip(EDGE_NAMES, distances, limits, strict=True):
            if distance > limit:
                raise piece.fail(edge, f"is {distance}: a piece could never move that far on "
                                       f"a {files}x{ranks} board (at most {limit})")
        if distances[0] != int(key):
            raise piece.fail("forward", f"is {distances[0]}, but the large number faces "
                                        f"forward: it must be {key}")
        piece.done(EDGE_NAMES)
        edges.append((int(key), (distances[0], distances[1], distances[2], distances[3])))
    if not edges:
        raise table.fail("", "must give the edges of at least one piece")
    return tuple(sorted(edges))


def _read_setup(table: Table, geometry: Geometry, home_ranks: int,
                numbers: set[int]) -> tuple[tuple[str, int], ...]:
    setup: list[tuple[str, int]] = []
    taken: dict[int, str] = {}
    for key in table.data:
        if not key.isdigit() or int(key) not in numbers:
            raise table.fail(key, f"is not a piece with edges in [edges] ({sorted(numbers)})")
        for name in table.strings(key):
            try:
                square = geometry.parse_square(name)
            except NotationError as error:
                raise table.fail(key, f"lists {error}") from None
            rank = geometry.rank_of(square)
            if rank >= geometry.ranks - home_ranks:
                raise table.fail(key, f"puts a piece on {name}, inside Red's home territory")
            if 2 * rank + 1 >= geometry.ranks:
                raise table.fail(key, f"puts a piece on {name}, in Red's half (Red's setup "
                                      "mirrors Turquoise's)")
            if square in taken:
                raise table.fail(key, f"puts a second piece on {name}")
            taken[square] = name
            setup.append((geometry.square_name(square), int(key)))
    if not setup:
        raise table.fail("", "must place at least one piece")
    return tuple(setup)


def load_zensu(path: str | Path) -> ZensuRules:
    return zensu_from_toml(read_toml(path), str(path))


def default_zensu() -> ZensuRules:
    try:
        return zensu_from_toml(packaged_toml("zensu.toml"), "zensu.toml")
    except RulesetError as error:  # a broken packaged file is a bug, not a user error
        raise RuntimeError(str(error)) from error
