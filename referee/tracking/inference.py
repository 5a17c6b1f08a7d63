"""Move inference for the Rinne family: which legal move explains the reading best.

Every legal move's resulting position is a candidate (`decoding.Decoder` scores them),
together with "nothing changed", a take-back, and the players' usual slips: a forgotten
promotion, a pending Tensei roll, a capture whose captured piece is off before the capturer
has moved; and two plies read at once."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from referee.rules.rinne import Move, Position, RinneRules, State
from referee.tracking.decoding import (
    Candidate,
    Decoder,
    Inference,
    InferenceSettings,
    Verdict,
    differ,
    same_look,
)
from referee.tracking.reading import EMPTY


@dataclass(frozen=True)
class PieceSet:
    """How a piece set shows a state to the classifier."""

    name: str
    state_labels: tuple[str, ...]  # label of State 1..5, in order
    pending_label: str | None = None  # the "roll pending" face, dice only
    model: str = ""  # the classifier that reads them on a board (referee/data/models/<model>.onnx)

    def label(self, state: State) -> str:
        return self.state_labels[state - 1]


DICE = PieceSet("dice", ("1", "2", "3", "4", "5"), pending_label="6", model="dice")
PENTA = PieceSet("penta", ("king", "knight", "bishop", "rook", "queen"), model="penta")
PIECE_SETS = {p.name: p for p in (DICE, PENTA)}


class MoveInferer(Decoder):
    """Decodes readings for one game of the Rinne family played with `piece_set`."""

    def __init__(self, game: RinneRules, piece_set: PieceSet, labels: tuple[str, ...],
                 settings: InferenceSettings | None = None) -> None:
        missing = {EMPTY, *piece_set.state_labels} - set(labels)
        if missing:
            raise ValueError(f"the classifier lacks the labels {sorted(missing)}")
        super().__init__(game, labels, settings)
        self.game: RinneRules = game
        self.piece_set = piece_set

    def appearance(self, position: Position, shown: dict[int, str] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        """Expected label index and owner per square; `shown` overrides a square's label."""
        labels = np.zeros(len(position.board), dtype=np.intp)
        owners = np.full(len(position.board), -1, dtype=np.intp)
        for square in range(len(position.board)):
            piece = position.piece_at(square)
            if piece is not None:
                labels[square] = self._index[self.piece_set.label(piece.state)]
                owners[square] = int(piece.color)
        for square, label in (shown or {}).items():
            labels[square] = self._index[label]
        return labels, owners

    def two_moves(self, position: Position, label_logp: np.ndarray, owner_logp: np.ndarray,
                   free: float) -> Inference | None:
        """Two plies in a row that explain the board clearly, or None. Only legal pairs are
        tried, and the pair must beat every other pair by the usual margin; where two pairs
        explain it about as well, the board is unreadable on the squares they differ on (a
        piece's state in doubt), not an illegal change. A reply changes two squares of the
        position between: each pair is scored from that position's score (thousands of
        pairs in Tensei)."""
        game, pending_label = self.game, self.piece_set.pending_label
        rows = np.arange(len(position.board))
        scored: list[tuple[float, Move, Move, bool]] = []
        for first in game.legal_moves(position):
            middle = game.play(position, first)
            if game.outcome(middle, 1) is not None:
                continue
            labels, owners = self.appearance(middle)
            per_square = label_logp[rows, labels] + owner_logp[rows, owners]
            mover, base = int(middle.turn), float(per_square.sum())
            rolling: set[tuple[int, int]] = set()
            for second in game.legal_moves(middle):
                start, end = second.from_square, second.to_square
                # The reply empties `start` and puts the mover's piece on `end`.
                emptied = label_logp[start, self._index[EMPTY]] + owner_logp[start, -1]
                held = base - per_square[start] - per_square[end] + emptied \
                    + owner_logp[end, mover]
                shown = self._index[self.piece_set.label(second.new_state)]
                scored.append((float(held + label_logp[end, shown]), first, second, False))
                if game.chance and pending_label is not None and (start, end) not in rolling:
                    rolling.add((start, end))  # every roll of the reply looks the same: a 6
                    pending = self._index[pending_label]
                    scored.append((float(held + label_logp[end, pending]), first, second, True))
        if not scored:
            return None
        scored.sort(key=lambda t: -t[0])
        best_score, first, second, pending_roll = scored[0]
        if free - best_score > self.settings.max_disagreement:
            return None
        best = self._pair(position, first, second, pending_roll)
        margin = np.inf
        for score, other, reply, rolled in scored[1:]:
            if best_score - score >= self.settings.min_margin:
                margin = best_score - score  # no rival that looks different comes closer
                break
            rival = self._pair(position, other, reply, rolled)
            if not same_look(rival, best):
                return Inference(Verdict.UNREADABLE, margin=best_score - score,
                                 squares=differ(best, rival))
        return Inference(Verdict.TWO_MOVES, first, margin, second=second,
                         second_pending=pending_roll)

    def _pair(self, position: Position, first: Move, second: Move, pending: bool) -> Candidate:
        """How the board looks after `first` and `second` (its die still on 6: `pending`)."""
        after = self.game.play(self.game.play(position, first), second)
        label = self.piece_set.pending_label
        shown = {second.to_square: label} if pending and label is not None else None
        return Candidate(Verdict.TWO_MOVES, first, *self.appearance(after, shown))

    def candidates(self, position: Position, previous: Position | None) -> Iterator[Candidate]:
        game, pieces = self.game, self.piece_set
        yield Candidate(Verdict.NO_CHANGE, None, *self.appearance(position))
        if previous is not None:
            yield Candidate(Verdict.TAKE_BACK, None, *self.appearance(previous))
            # The last move taken back and another played in its place, unread between.
            for move in game.legal_moves(previous):
                yield Candidate(Verdict.TAKE_BACK, move, *self.appearance(
                    game.play(previous, move)))
        slips: set[tuple[int, int]] = set()
        for move in game.legal_moves(position):
            after = game.play(position, move)
            yield Candidate(Verdict.MOVE, move, *self.appearance(after))
            if (move.from_square, move.to_square) in slips:
                continue
            slips.add((move.from_square, move.to_square))
            piece = position.piece_at(move.from_square)
            assert piece is not None
            if piece.state not in game.promotions(piece.state):
                yield Candidate(Verdict.PROMOTE, move, *self.appearance(
                    after, {move.to_square: pieces.label(piece.state)}))
            if position.board[move.to_square] != 0:
                yield Candidate(Verdict.INCOMPLETE, move, *self._without(position, move.to_square))
            if game.chance and pieces.pending_label is not None:
                yield Candidate(Verdict.ROLL_PENDING, move, *self.appearance(
                    after, {move.to_square: pieces.pending_label}))

    def _without(self, position: Position, square: int) -> tuple[np.ndarray, np.ndarray]:
        labels, owners = self.appearance(position)
        labels[square], owners[square] = self._index[EMPTY], -1
        return labels, owners
