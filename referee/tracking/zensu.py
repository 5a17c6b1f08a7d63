"""Decoding readings of Zensū: each square shows nothing or a piece's large number ("1" or
"2"), its owner told by colour as in the Rinne family. A ply moves one piece and takes off
every opponent piece it passed over or landed on; the board shows that in steps (the piece
moved, then the captured pieces lifted one by one, or the other way round), so a ply whose
captured pieces are still partly on the board is a capture under way (`Verdict.INCOMPLETE`,
with the squares still to clear), not an illegal change. A pass changes nothing on the board:
the referee plays it itself (`forced_pass`)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations

import numpy as np

from referee.rules.zensu import Move, Position, ZensuRules
from referee.tracking.decoding import Candidate, Decoder, InferenceSettings, Verdict
from referee.tracking.reading import EMPTY

PIECE_LABELS = ("1", "2")  # a piece's large number, as the `zensu` model reads it


class ZensuDecoder(Decoder):
    def __init__(self, game: ZensuRules, labels: tuple[str, ...],
                 settings: InferenceSettings | None = None) -> None:
        missing = {EMPTY, *PIECE_LABELS} - set(labels)
        if missing:
            raise ValueError(f"the classifier lacks the labels {sorted(missing)}")
        super().__init__(game, labels, settings)
        self.game: ZensuRules = game
        # Label index by the number on a square (0: none; a piece's label is its number).
        self._by_number = np.array([self._index[label] for label in (EMPTY, *PIECE_LABELS)],
                                   dtype=np.intp)

    def appearance(self, position: Position, shown: dict[int, str] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        board = np.asarray(position.board, dtype=np.intp)
        labels = self._by_number[np.abs(board)]
        owners = np.where(board > 0, 0, np.where(board < 0, 1, -1))
        for square, label in (shown or {}).items():
            labels[square] = self._index[label]
        return labels, owners

    def candidates(self, position: Position, previous: Position | None) -> Iterator[Candidate]:
        game = self.game
        yield Candidate(Verdict.NO_CHANGE, None, *self.appearance(position))
        if previous is not None:
            yield Candidate(Verdict.TAKE_BACK, None, *self.appearance(previous))
            for move in game.legal_moves(previous):
                if not move.is_pass:
                    yield Candidate(Verdict.TAKE_BACK, move,
                                    *self.appearance(game.play(previous, move)))
        before = self.appearance(position)
        for move in game.legal_moves(position):
            if move.is_pass:
                continue
            after = game.play(position, move)
            yield Candidate(Verdict.MOVE, move, *self.appearance(after))
            yield from self._captures_under_way(position, move, after, before)

    def forced_move(self, position: Position) -> Move | None:
        return forced_pass(self.game, position)

    def incomplete_detail(self, position: Position, move: Move, squares: str) -> str:
        del position, move
        return f"take off the captured {squares}"

    def _captures_under_way(self, position: Position, move: Move, after: Position,
                            before: tuple[np.ndarray, np.ndarray]) -> Iterator[Candidate]:
        """The board part way through a capturing ply: the piece moved with some captured
        pieces still standing, or captured pieces lifted before the piece moved (the one it
        lands on too: then the move itself is still to come, and the players are told
        nothing until the board shows more)."""
        every = self.game.captures(position, move)
        captured = [s for s in every if s != move.to_square]
        before_labels, before_owners = before
        labels, owners = self.appearance(after)
        for count in range(1, len(captured) + 1):
            for standing in combinations(captured, count):
                shown_labels, shown_owners = labels.copy(), owners.copy()
                rows = list(standing)
                shown_labels[rows], shown_owners[rows] = before_labels[rows], before_owners[rows]
                yield Candidate(Verdict.INCOMPLETE, move, shown_labels, shown_owners, standing)
        for count in range(1, len(every) + 1):
            for lifted in combinations(every, count):
                shown_labels, shown_owners = before_labels.copy(), before_owners.copy()
                rows = list(lifted)
                shown_labels[rows], shown_owners[rows] = self._index[EMPTY], -1
                rest = tuple(s for s in captured if s not in lifted)
                yield Candidate(Verdict.INCOMPLETE, move, shown_labels, shown_owners, rest)


def forced_pass(game: ZensuRules, position: Position) -> Move | None:
    """The pass the player to move must make (no piece can move and the ruleset lets them
    pass), else None."""
    moves = game.legal_moves(position)
    return moves[0] if len(moves) == 1 and moves[0].is_pass else None
