"""Core value types shared by every game: colours, board geometry and squares, outcomes,
the `Game` protocol every ruleset implements, and `Match`, a game in progress."""

from __future__ import annotations

import enum
import string
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from referee.errors import IllegalMoveError, NotationError


class Color(enum.IntEnum):
    """The two sides. The first player (White, Turquoise, Gold…) is `FIRST`."""

    FIRST = 0
    SECOND = 1

    @property
    def other(self) -> Color:
        return Color(1 - self)


class Termination(enum.Enum):
    """Why a game ended."""

    GOAL_HELD = "goal held"  # Rinne rule 1: a goal kept through a whole opponent turn
    GOAL_REACHED = "goal reached"  # Rinne rule 2: goal reached and the opponent cannot capture
    NO_MOVES = "no legal move"  # the side to move cannot move and loses
    REPETITION = "threefold repetition"
    HOME_REACHED = "home territory reached"  # Zensū
    ALL_CAPTURED = "all pieces captured"  # Zensū
    SCORE = "score"  # Renaissance


@dataclass(frozen=True)
class Outcome:
    """How a game ended: `winner` is None for a draw."""

    termination: Termination
    winner: Color | None

    def result(self, names: tuple[str, str] = ("White", "Black")) -> str:
        """The record's `Result:` line, e.g. `White wins` or `Draw`."""
        return "Draw" if self.winner is None else f"{names[self.winner]} wins"


@dataclass(frozen=True)
class Geometry:
    """A rectangular board of `files` x `ranks`; square index = rank * files + file.

    Squares are named as in chess: files a, b, … from the first player's left, ranks 1, 2, …
    from the first player's side."""

    files: int
    ranks: int

    @property
    def size(self) -> int:
        return self.files * self.ranks

    def square(self, file: int, rank: int) -> int:
        return rank * self.files + file

    def file_of(self, square: int) -> int:
        return square % self.files

    def rank_of(self, square: int) -> int:
        return square // self.files

    def contains(self, file: int, rank: int) -> bool:
        return 0 <= file < self.files and 0 <= rank < self.ranks

    def square_name(self, square: int) -> str:
        return f"{string.ascii_lowercase[self.file_of(square)]}{self.rank_of(square) + 1}"

    def parse_square(self, text: str) -> int:
        """`square_name`'s inverse; raises NotationError for a name off this board."""
        name = text.strip().lower()
        if len(name) >= 2 and name[0] in string.ascii_lowercase and name[1:].isdigit():
            file, rank = ord(name[0]) - ord("a"), int(name[1:]) - 1
            if self.contains(file, rank):
                return self.square(file, rank)
        raise NotationError(f"{text!r} is not a square of a {self.files}x{self.ranks} board")

    def squares(self) -> range:
        return range(self.size)


P = TypeVar("P", bound=Hashable)
M = TypeVar("M", bound=Hashable)


class Game(Protocol[P, M]):
    """What every ruleset offers. Positions and moves are immutable, hashable values."""

    @property
    def name(self) -> str:
        """The registry name, e.g. `rinne-5x5`."""
        ...

    @property
    def title(self) -> str:
        """The record's `Game:` header, e.g. `Rinne`."""
        ...

    @property
    def variant(self) -> str:
        """The record's `Variant:` header, e.g. `5x5`."""
        ...

    @property
    def player_names(self) -> tuple[str, str]: ...

    def start(self) -> P: ...

    def legal_moves(self, position: P) -> list[M]: ...

    def play(self, position: P, move: M) -> P:
        """The position after `move`, which must be legal (not checked here)."""
        ...

    def outcome(self, position: P, repetitions: int) -> Outcome | None:
        """The outcome, if the game is over in `position`, reached for the
        `repetitions`-th time."""
        ...

    def parse_move(self, position: P, text: str) -> M:
        """A move from text in any of the game's notations; raises NotationError or
        IllegalMoveError with a reason."""
        ...

    def move_text(self, position: P, move: M, *, compact: bool = False) -> str:
        """The move in the designer's notation (or the compact one), without a number."""
        ...

    def diagram(self, position: P) -> str:
        """A plain-text board diagram, first player at the bottom."""
        ...

    def perft(self, position: P, depth: int) -> int:
        """The number of move sequences of `depth` plies from `position`."""
        ...


def generic_perft(game: Game[P, M], position: P, depth: int) -> int:
    """Perft through the public protocol: the reference that fast versions are checked
    against. Repetition is counted along the path from `position`."""
    seen: Counter[P] = Counter({position: 1})

    def walk(pos: P, left: int) -> int:
        if left == 0:
            return 1
        total = 0
        for move in game.legal_moves(pos):
            child = game.play(pos, move)
            seen[child] += 1
            if left == 1:
                total += 1
            elif game.outcome(child, seen[child]) is None:
                total += walk(child, left - 1)
            seen[child] -= 1
        return total

    if game.outcome(position, 1) is not None:
        return 0 if depth else 1
    return walk(position, depth)


class Match(Generic[P, M]):
    """A game in progress: its positions and moves so far, and its outcome once over.

    Every move is validated before it is pushed."""

    def __init__(self, game: Game[P, M], start: P | None = None) -> None:
        self.game = game
        self.positions: list[P] = [game.start() if start is None else start]
        self.moves: list[M] = []
        self._seen: Counter[P] = Counter(self.positions)
        self.outcome: Outcome | None = game.outcome(self.positions[0], 1)

    @property
    def position(self) -> P:
        return self.positions[-1]

    def is_over(self) -> bool:
        return self.outcome is not None

    def legal_moves(self) -> list[M]:
        return [] if self.is_over() else self.game.legal_moves(self.position)

    def push(self, move: M) -> None:
        if self.outcome is not None:
            raise IllegalMoveError(f"the game is over ({self.outcome.result(self.game.player_names)})")
        # A game may offer a faster `is_legal(position, move)` (Renaissance: generating every
        # preparation move needs a packing test each).
        is_legal = getattr(self.game, "is_legal", None)
        legal = (is_legal(self.position, move) if is_legal is not None
                 else move in self.game.legal_moves(self.position))
        if not legal:
            raise IllegalMoveError(f"{move} is not legal here")
        child = self.game.play(self.position, move)
        self._seen[child] += 1
        self.positions.append(child)
        self.moves.append(move)
        self.outcome = self.game.outcome(child, self._seen[child])

    def push_text(self, text: str) -> M:
        """Parse `text` in the current position and push it; returns the move."""
        if self.outcome is not None:
            raise IllegalMoveError(f"the game is over ({self.outcome.result(self.game.player_names)})")
        move = self.game.parse_move(self.position, text)
        self.push(move)
        return move

    def pop(self) -> M:
        """Take back the last move."""
        if not self.moves:
            raise IllegalMoveError("there is no move to take back")
        child = self.positions.pop()
        self._seen[child] -= 1
        self.outcome = None
        return self.moves.pop()

    def ply_texts(self, *, compact: bool = False) -> Iterator[str]:
        """Each ply in notation, without move numbers."""
        for before, move in zip(self.positions, self.moves, strict=False):
            yield self.game.move_text(before, move, compact=compact)


def move_number(ply_index: int) -> int:
    """Both players' plies carry the same number: plies 0 and 1 are move 1."""
    return ply_index // 2 + 1


def numbered(texts: Sequence[str]) -> list[str]:
    return [f"{move_number(i)}. {text}" for i, text in enumerate(texts)]
