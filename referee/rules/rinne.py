"""Rinne and its family: Tensei, Rinne 5x5 and FlipFlop (RULES.md sections 1–3).

A position stores the board as a tuple of signed ints: 0 is empty, +s a first-player
(White) piece in state s, -s a second-player (Black) piece. The state of a piece is its
die face: 1 King, 2 Knight, 3 Bishop, 4 Rook, 5 Queen. Pieces move as the chess pieces of
their state; a move may end on an opponent's piece only on a goal square (a capture); after
every move the moved piece changes state, along a fixed cycle (Rinne, FlipFlop) or by a
die roll to any state (Tensei)."""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from referee.errors import IllegalMoveError, NotationError
from referee.rules.core import Color, Geometry, Outcome, Termination


class State(enum.IntEnum):
    """A piece's state, numbered as the die face that shows it."""

    KING = 1
    KNIGHT = 2
    BISHOP = 3
    ROOK = 4
    QUEEN = 5

    @property
    def title(self) -> str:
        return self.name.capitalize()

    @property
    def letter(self) -> str:
        return "N" if self is State.KNIGHT else self.name[0]

    @classmethod
    def from_text(cls, text: str) -> State:
        """A state from its name (`Knight`) or letter (`N`), any case."""
        word = text.strip().upper()
        for state in cls:
            if word in (state.name, state.letter):
                return state
        raise NotationError(f"{text!r} is not a piece (King, Knight, Bishop, Rook, Queen)")


_KING_STEPS = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
_KNIGHT_JUMPS = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
_DIAGONALS = ((1, 1), (-1, 1), (-1, -1), (1, -1))
_ORTHOGONALS = ((1, 0), (0, 1), (-1, 0), (0, -1))
_MOVEMENT: dict[State, tuple[tuple[tuple[int, int], ...], bool]] = {
    # state: (directions, slides)
    State.KING: (_KING_STEPS, False),
    State.KNIGHT: (_KNIGHT_JUMPS, False),
    State.BISHOP: (_DIAGONALS, True),
    State.ROOK: (_ORTHOGONALS, True),
    State.QUEEN: (_DIAGONALS + _ORTHOGONALS, True),
}

Rays = tuple[tuple[int, ...], ...]


def _rays(geometry: Geometry, state: State, square: int) -> Rays:
    """The squares a piece in `state` on `square` reaches, one tuple per direction, nearest
    first; a move along a ray stops at the first occupied square."""
    directions, slides = _MOVEMENT[state]
    file, rank = geometry.file_of(square), geometry.rank_of(square)
    rays = []
    for df, dr in directions:
        ray = []
        f, r = file + df, rank + dr
        while geometry.contains(f, r):
            ray.append(geometry.square(f, r))
            if not slides:
                break
            f, r = f + df, r + dr
        if ray:
            rays.append(tuple(ray))
    return tuple(rays)


@dataclass(frozen=True)
class Piece:
    color: Color
    state: State


@dataclass(frozen=True)
class Move:
    """A ply: the piece on `from_square` goes to `to_square` and becomes `new_state`."""

    from_square: int
    to_square: int
    new_state: State


@dataclass(frozen=True)
class Position:
    """The placement (signed state per square) and the side to move."""

    board: tuple[int, ...]
    turn: Color

    def piece_at(self, square: int) -> Piece | None:
        value = self.board[square]
        if value == 0:
            return None
        return Piece(Color.FIRST if value > 0 else Color.SECOND, State(abs(value)))

    def pieces(self, color: Color) -> Iterator[tuple[int, State]]:
        sign = 1 if color is Color.FIRST else -1
        for square, value in enumerate(self.board):
            if value * sign > 0:
                yield square, State(abs(value))


def _signed(color: Color, state: int) -> int:
    return state if color is Color.FIRST else -state


@dataclass(frozen=True)
class RinneRules:
    """One game of the family, as plain data. Every choice RULES.md marks as an assumption
    is a field here, so a variant is a new instance, not new code."""

    name: str
    title: str
    variant: str
    files: int
    ranks: int
    setup: tuple[str, ...]  # the first player's squares; the second player's mirror them
    start_state: State = State.KING
    goals: tuple[str, str] = ("c6", "c1")  # (first player's goal, second player's goal)
    cycle: tuple[State, ...] = tuple(State)  # promotion order; wraps around
    chance: bool = False  # Tensei: the moved piece takes any state of `cycle` (a die roll)
    player_names: tuple[str, str] = ("White", "Black")
    _tables: _Tables = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_tables", _Tables.build(self))

    # --- the Game protocol -------------------------------------------------------------

    @property
    def geometry(self) -> Geometry:
        return self._tables.geometry

    def start(self) -> Position:
        board = [0] * self.geometry.size
        for name in self.setup:
            square = self.geometry.parse_square(name)
            board[square] = _signed(Color.FIRST, self.start_state)
            board[self._tables.mirror[square]] = _signed(Color.SECOND, self.start_state)
        return Position(tuple(board), Color.FIRST)

    def legal_moves(self, position: Position) -> list[Move]:
        return [
            Move(f, t, State(abs(v)))
            for f, t, v in self._tables.raw_moves(position.board, position.turn)
        ]

    def play(self, position: Position, move: Move) -> Position:
        board = list(position.board)
        board[move.from_square] = 0
        board[move.to_square] = _signed(position.turn, move.new_state)
        return Position(tuple(board), position.turn.other)

    def outcome(self, position: Position, repetitions: int) -> Outcome | None:
        """RULES.md's end-of-game checks, in their order, after a move by P (the side not
        to move), with O the side to move."""
        tables = self._tables
        board, mover, other = position.board, position.turn.other, position.turn
        if board[tables.goal[other]] * _sign(other) > 0:
            return Outcome(Termination.GOAL_HELD, other)
        goal = tables.goal[mover]
        if board[goal] * _sign(mover) > 0 and not tables.attacks(board, other, goal):
            return Outcome(Termination.GOAL_REACHED, mover)
        if not tables.raw_moves(board, other):
            return Outcome(Termination.NO_MOVES, mover)
        if repetitions >= 3:
            return Outcome(Termination.REPETITION, None)
        return None

    def parse_move(self, position: Position, text: str) -> Move:
        parsed = _parse(text)
        if parsed is None:
            raise NotationError(
                f"{text.strip()!r} is not a move: write e.g. 'Knight e5 x c6 = Bishop' or 'Ne5xc6=B'"
            )
        piece_text, from_text, capture_text, to_text, new_text = parsed
        geometry = self.geometry
        frm, to = geometry.parse_square(from_text), geometry.parse_square(to_text)
        piece = position.piece_at(frm)
        names = self.player_names
        if piece is None:
            raise IllegalMoveError(f"there is no piece on {from_text}")
        if piece.color is not position.turn:
            raise IllegalMoveError(
                f"the piece on {from_text} is {names[piece.color]}'s, "
                f"but {names[position.turn]} is to move"
            )
        if piece_text is not None and State.from_text(piece_text) is not piece.state:
            raise IllegalMoveError(
                f"{from_text} holds a {piece.state.title}, not a {State.from_text(piece_text).title}"
            )
        reachable = {t for _f, t, _v in self._tables.raw_moves(position.board, position.turn)
                     if _f == frm}
        if to not in reachable:
            raise IllegalMoveError(f"a {piece.state.title} on {from_text} cannot move to {to_text}")
        is_capture = position.board[to] != 0
        if capture_text == "x" and not is_capture:
            raise IllegalMoveError(f"{from_text} x {to_text} marks a capture, but {to_text} is empty")
        if capture_text == "-" and is_capture:
            raise IllegalMoveError(f"the move to {to_text} captures: write x, not -")
        choices = self.promotions(piece.state)
        if new_text is None:
            if len(choices) > 1:
                raise NotationError(f"{text.strip()!r} must give the new state (= …)")
            new_state = choices[0]
        else:
            new_state = State.from_text(new_text)
        if new_state not in choices:
            allowed = " or ".join(s.title for s in choices)
            raise IllegalMoveError(
                f"a {piece.state.title} becomes {allowed} after its move, not a {new_state.title}"
            )
        return Move(frm, to, new_state)

    def move_text(self, position: Position, move: Move, *, compact: bool = False) -> str:
        piece = position.piece_at(move.from_square)
        if piece is None:
            raise IllegalMoveError(f"there is no piece on {self.geometry.square_name(move.from_square)}")
        frm = self.geometry.square_name(move.from_square)
        to = self.geometry.square_name(move.to_square)
        sep = "x" if position.board[move.to_square] else "-"
        if compact:
            return f"{piece.state.letter}{frm}{sep}{to}={move.new_state.letter}"
        return f"{piece.state.title} {frm} {sep} {to} = {move.new_state.title}"

    def diagram(self, position: Position) -> str:
        geometry = self.geometry
        goals = set(self._tables.goal)
        lines = []
        for rank in reversed(range(geometry.ranks)):
            cells = []
            for file in range(geometry.files):
                square = geometry.square(file, rank)
                piece = position.piece_at(square)
                if piece is None:
                    cells.append("+" if square in goals else ".")
                else:
                    letter = piece.state.letter
                    cells.append(letter if piece.color is Color.FIRST else letter.lower())
            lines.append(f"{rank + 1:>2} " + " ".join(cells))
        lines.append("   " + " ".join("abcdefghijklmnopqrstuvwxyz"[: geometry.files]))
        return "\n".join(lines)

    def perft(self, position: Position, depth: int) -> int:
        if depth == 0:
            return 1
        if self.outcome(position, 1) is not None:
            return 0
        seen = Counter({(position.board, position.turn): 1})
        return self._tables.perft(position.board, position.turn, depth, seen)

    # --- helpers ----------------------------------------------------------------------

    def from_placement(self, placement: Mapping[str, str], turn: Color = Color.FIRST) -> Position:
        """A position from `{square: letter}`, uppercase for the first player's pieces and
        lowercase for the second's, as in the diagram: `{"c6": "Q", "c1": "k"}`."""
        board = [0] * self.geometry.size
        for name, letter in placement.items():
            color = Color.FIRST if letter.isupper() else Color.SECOND
            board[self.geometry.parse_square(name)] = _signed(color, State.from_text(letter))
        return Position(tuple(board), turn)

    def promotions(self, state: State) -> tuple[State, ...]:
        """The states a piece in `state` may take after its move."""
        if self.chance:
            return self.cycle
        if state not in self.cycle:
            return ()
        return (self.cycle[(self.cycle.index(state) + 1) % len(self.cycle)],)

    def goal(self, color: Color) -> int:
        return self._tables.goal[color]

    def is_goal(self, square: int) -> bool:
        return square in self._tables.goal


def _sign(color: Color) -> int:
    return 1 if color is Color.FIRST else -1


@dataclass(frozen=True)
class _Tables:
    """Precomputed movement tables: the hot path of move generation and perft."""

    geometry: Geometry
    rays: tuple[tuple[Rays, ...], ...]  # rays[state][square]
    between: tuple[tuple[dict[int, tuple[int, ...]], ...], ...]  # [state][square][target]
    goal: tuple[int, int]
    mirror: tuple[int, ...]
    new_values: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]  # [color][state]

    @classmethod
    def build(cls, rules: RinneRules) -> _Tables:
        geometry = Geometry(rules.files, rules.ranks)
        rays = tuple(
            tuple(_rays(geometry, State(s), sq) for sq in geometry.squares()) if s else ()
            for s in range(6)
        )
        between = tuple(
            tuple(
                {t: ray[:i] for ray in rays[s][sq] for i, t in enumerate(ray)}
                for sq in geometry.squares()
            ) if s else ()
            for s in range(6)
        )
        goal = (geometry.parse_square(rules.goals[0]), geometry.parse_square(rules.goals[1]))
        mirror = tuple(
            geometry.square(geometry.file_of(sq), geometry.ranks - 1 - geometry.rank_of(sq))
            for sq in geometry.squares()
        )
        new_values = tuple(
            tuple(
                tuple(_signed(color, n) for n in rules.promotions(State(s))) if s else ()
                for s in range(6)
            )
            for color in Color
        )
        return cls(geometry, rays, between, goal, mirror, new_values)  # type: ignore[arg-type]

    def raw_moves(self, board: Sequence[int], color: Color) -> list[tuple[int, int, int]]:
        """Every legal move as (from, to, new signed value)."""
        sign = 1 if color is Color.FIRST else -1
        goals = self.goal
        rays = self.rays
        new_values = self.new_values[color]
        moves = []
        for frm, value in enumerate(board):
            if value * sign <= 0:
                continue
            state = value * sign
            news = new_values[state]
            for ray in rays[state][frm]:
                for to in ray:
                    target = board[to]
                    if target == 0:
                        for v in news:
                            moves.append((frm, to, v))
                        continue
                    if target * sign < 0 and to in goals:
                        for v in news:
                            moves.append((frm, to, v))
                    break
        return moves

    def attacks(self, board: Sequence[int], color: Color, target: int) -> bool:
        """Whether a piece of `color` can move to `target` (which holds an opponent piece)."""
        sign = 1 if color is Color.FIRST else -1
        between = self.between
        for frm, value in enumerate(board):
            if value * sign > 0:
                path = between[value * sign][frm].get(target)
                if path is not None and all(board[sq] == 0 for sq in path):
                    return True
        return False

    def perft(self, board: tuple[int, ...], color: Color, depth: int,
              seen: Counter[tuple[tuple[int, ...], Color]]) -> int:
        moves = self.raw_moves(board, color)
        if depth == 1:
            return len(moves)
        other = color.other
        my_goal, their_goal = self.goal[color], self.goal[other]
        sign = 1 if color is Color.FIRST else -1
        total = 0
        for frm, to, value in moves:
            child_list = list(board)
            child_list[frm] = 0
            child_list[to] = value
            child = tuple(child_list)
            # Terminal children have no moves to count. Rule 3 (no legal move) needs no
            # test: such a child counts nothing anyway.
            if child[their_goal] * sign < 0:
                continue
            if child[my_goal] * sign > 0 and not self.attacks(child, other, my_goal):
                continue
            key = (child, other)
            seen[key] += 1
            if seen[key] < 3:
                total += self.perft(child, other, depth - 1, seen)
            seen[key] -= 1
        return total


_PIECE_WORD = r"(king|knight|bishop|rook|queen)"
_DESIGNER = re.compile(
    rf"^(?:\d+\s*\.\s*)?{_PIECE_WORD}\s+([a-z]\d+)\s*([-x])\s*([a-z]\d+)\s*=\s*{_PIECE_WORD}$",
    re.IGNORECASE,
)
_COMPACT = re.compile(
    r"^(?:\d+\s*\.\s*)?([KNBRQ])?([a-z]\d+)([-x]?)([a-z]\d+)(?:=([KNBRQ]))?$", re.IGNORECASE
)


def _parse(text: str) -> tuple[str | None, str, str, str, str | None] | None:
    """(piece, from, '-' | 'x' | '', to, new state) from either notation, or None."""
    text = text.strip()
    match = _DESIGNER.match(text)
    if match:
        piece, frm, sep, to, new = match.groups()
        return piece, frm, sep.lower(), to, new
    match = _COMPACT.match(text.replace(" ", ""))
    if match:
        piece, frm, sep, to, new = match.groups()
        return piece, frm, sep.lower(), to, new
    return None


RINNE = RinneRules(
    name="rinne", title="Rinne", variant="5x6 standard", files=5, ranks=6,
    setup=("c1", "a2", "b3", "d3", "e2"),
)
TENSEI = RinneRules(
    name="tensei", title="Tensei", variant="5x6 standard", files=5, ranks=6,
    setup=RINNE.setup, chance=True,
)
RINNE_5X5 = RinneRules(
    name="rinne-5x5", title="Rinne", variant="5x5", files=5, ranks=5,
    setup=("a1", "b1", "c1", "d1", "e1"), goals=("c5", "c1"),
)
TENSEI_5X5 = RinneRules(
    name="tensei-5x5", title="Tensei", variant="5x5", files=5, ranks=5,
    setup=RINNE_5X5.setup, goals=RINNE_5X5.goals, chance=True,
)
FLIPFLOP_3X3 = RinneRules(
    name="flipflop-3x3", title="FlipFlop", variant="3x3", files=3, ranks=3,
    setup=("a1", "b1", "c1"), start_state=State.ROOK, goals=("b3", "b1"),
    cycle=(State.ROOK, State.BISHOP),
)
FLIPFLOP_5X5 = RinneRules(
    name="flipflop-5x5", title="FlipFlop", variant="5x5", files=5, ranks=5,
    setup=("a1", "b1", "c1", "d1", "e1"), start_state=State.ROOK, goals=("c5", "c1"),
    cycle=(State.ROOK, State.BISHOP),
)
GAMES = (RINNE, TENSEI, RINNE_5X5, TENSEI_5X5, FLIPFLOP_3X3, FLIPFLOP_5X5)
