"""Move inference: which legal move explains the reading best.

A reading is never taken alone: every legal move's resulting position is scored against the
classifier's probabilities (and the owners' colours), together with "nothing changed", a
take-back, and the players' usual slips (a forgotten promotion, a pending Tensei roll). The
best explanation wins only if it beats the runner-up clearly and the board agrees with it;
otherwise the verdict says why it cannot be read."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from referee.rules.rinne import Move, Position, RinneRules, State
from referee.tracking.reading import EMPTY, ColorModel, Reading


class Verdict(enum.Enum):
    NO_CHANGE = "no change"
    MOVE = "move"
    TAKE_BACK = "take back"  # with a move: taken back and that move played instead
    PROMOTE = "promote the piece"  # the piece moved but still shows its old state
    ROLL_PENDING = "roll pending"  # Tensei: the moved die shows 6
    INCOMPLETE = "capture under way"  # the captured piece is off, the capturer not yet moved
    TWO_MOVES = "two moves"  # a ply went by unread (its board was never steady and clear)
    ILLEGAL = "illegal"
    UNREADABLE = "unreadable"


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


@dataclass(frozen=True)
class InferenceSettings:
    """Thresholds, in nats of log-likelihood; overridable from a config file."""

    min_square_confidence: float = 0.55  # below this a square is unreadable
    max_disagreement: float = 6.0  # beyond this the board shows something no candidate explains
    max_square_disagreement: float = 4.0  # ... or one square does (a die knocked to another face)
    min_margin: float = 3.0  # the best explanation must beat the runner-up by this much
    min_expected_probability: float = 0.2  # an unsure square must still favour what is expected


@dataclass(frozen=True)
class Inference:
    verdict: Verdict
    move: Move | None = None
    margin: float = 0.0  # log-likelihood lead over the runner-up
    second: Move | None = None  # with TWO_MOVES: the reply that followed `move`
    second_pending: bool = False  # Tensei: the reply's die still shows 6, its roll to come
    squares: tuple[int, ...] = ()  # squares that are unsure or changed illegally


@dataclass(frozen=True, eq=False)
class _Candidate:
    verdict: Verdict
    move: Move | None
    labels: np.ndarray  # label index per square
    owners: np.ndarray  # 0 first player, 1 second, -1 empty


class MoveInferer:
    """Scores candidate explanations of a reading for one game of the Rinne family."""

    def __init__(self, game: RinneRules, piece_set: PieceSet, labels: tuple[str, ...],
                 settings: InferenceSettings | None = None) -> None:
        missing = {EMPTY, *piece_set.state_labels} - set(labels)
        if missing:
            raise ValueError(f"the classifier lacks the labels {sorted(missing)}")
        self.game = game
        self.piece_set = piece_set
        self.labels = labels
        self.settings = settings or InferenceSettings()
        self._index = {label: i for i, label in enumerate(labels)}

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

    def infer(self, reading: Reading, position: Position, colors: ColorModel,
              previous: Position | None = None) -> Inference:
        if reading.squares != len(position.board):
            raise ValueError("the reading and the position have different numbers of squares")
        unsure = reading.confidence() < self.settings.min_square_confidence
        label_logp = np.log(np.clip(reading.probabilities, 1e-9, 1.0))
        p_first = np.clip(colors.first_owner_probability(reading.colors), 1e-9, 1 - 1e-9)
        owner_logp = np.stack([np.log(p_first), np.log(1 - p_first), np.zeros_like(p_first)], 1)
        rows = np.arange(reading.squares)

        def score(candidate: _Candidate) -> float:
            return float(label_logp[rows, candidate.labels].sum()
                         + owner_logp[rows, candidate.owners].sum())

        scored = sorted(((score(c), i, c) for i, c in enumerate(
            self._candidates(position, previous))), key=lambda t: (-t[0], t[1]))
        best_score, _, best = scored[0]
        piece_best = label_logp[:, 1:].max(axis=1) + owner_logp[:, :2].max(axis=1)
        free = float(np.maximum(label_logp[:, 0], piece_best).sum())
        if unsure.any() and (free - best_score > self.settings.max_disagreement
                             or self._doubtful(reading, position, best, unsure)):
            return Inference(Verdict.UNREADABLE, squares=tuple(int(s) for s in np.flatnonzero(unsure)))
        if self._contradicted(label_logp, best, free, best_score):
            pair = self._two_moves(position, label_logp, owner_logp, free)
            if pair is not None:
                return pair
            return Inference(Verdict.ILLEGAL, squares=self._changed(reading, position, colors))
        runner_up, rival = next(((s, c) for s, _, c in scored[1:] if not _same(c, best)),
                                (-np.inf, None))
        margin = best_score - runner_up
        if margin < self.settings.min_margin:
            # The squares the two explanations disagree on: what the players should show.
            assert rival is not None
            return Inference(Verdict.UNREADABLE, margin=margin, squares=_differ(best, rival))
        return Inference(best.verdict, best.move, margin)

    def _contradicted(self, label_logp: np.ndarray, best: _Candidate, free: float,
                      best_score: float) -> bool:
        """Whether the board shows what the best explanation cannot: in all, or clearly on
        one square."""
        rows = np.arange(len(best.labels))
        square = label_logp.max(axis=1) - label_logp[rows, best.labels]
        return bool(free - best_score > self.settings.max_disagreement
                    or square.max() > self.settings.max_square_disagreement)

    def _doubtful(self, reading: Reading, position: Position, best: _Candidate,
                  unsure: np.ndarray) -> bool:
        """Whether an unsure square matters: it changes under the best explanation, or the
        content that explanation expects there is itself unlikely. An unsure square far from
        the move (a goal mark, a glare) does not hold the game up."""
        labels, owners = self.appearance(position)
        changes = (best.labels != labels) | (best.owners != owners)
        expected = reading.probabilities[np.arange(reading.squares), best.labels]
        unlikely = expected < self.settings.min_expected_probability
        return bool((unsure & (changes | unlikely)).any())

    def _two_moves(self, position: Position, label_logp: np.ndarray, owner_logp: np.ndarray,
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
            if not _same(rival, best):
                return Inference(Verdict.UNREADABLE, margin=best_score - score,
                                 squares=_differ(best, rival))
        return Inference(Verdict.TWO_MOVES, first, margin, second=second,
                         second_pending=pending_roll)

    def _pair(self, position: Position, first: Move, second: Move, pending: bool) -> _Candidate:
        """How the board looks after `first` and `second` (its die still on 6: `pending`)."""
        after = self.game.play(self.game.play(position, first), second)
        label = self.piece_set.pending_label
        shown = {second.to_square: label} if pending and label is not None else None
        return _Candidate(Verdict.TWO_MOVES, first, *self.appearance(after, shown))

    def _candidates(self, position: Position, previous: Position | None) -> Iterator[_Candidate]:
        game, pieces = self.game, self.piece_set
        yield _Candidate(Verdict.NO_CHANGE, None, *self.appearance(position))
        if previous is not None:
            yield _Candidate(Verdict.TAKE_BACK, None, *self.appearance(previous))
            # The last move taken back and another played in its place, unread between.
            for move in game.legal_moves(previous):
                yield _Candidate(Verdict.TAKE_BACK, move, *self.appearance(
                    game.play(previous, move)))
        slips: set[tuple[int, int]] = set()
        for move in game.legal_moves(position):
            after = game.play(position, move)
            yield _Candidate(Verdict.MOVE, move, *self.appearance(after))
            if (move.from_square, move.to_square) in slips:
                continue
            slips.add((move.from_square, move.to_square))
            piece = position.piece_at(move.from_square)
            assert piece is not None
            if piece.state not in game.promotions(piece.state):
                yield _Candidate(Verdict.PROMOTE, move, *self.appearance(
                    after, {move.to_square: pieces.label(piece.state)}))
            if position.board[move.to_square] != 0:
                yield _Candidate(Verdict.INCOMPLETE, move, *self._without(position, move.to_square))
            if game.chance and pieces.pending_label is not None:
                yield _Candidate(Verdict.ROLL_PENDING, move, *self.appearance(
                    after, {move.to_square: pieces.pending_label}))

    def _without(self, position: Position, square: int) -> tuple[np.ndarray, np.ndarray]:
        labels, owners = self.appearance(position)
        labels[square], owners[square] = self._index[EMPTY], -1
        return labels, owners

    def _changed(self, reading: Reading, position: Position, colors: ColorModel
                 ) -> tuple[int, ...]:
        """Squares whose most likely content differs from the position's."""
        expected, owners = self.appearance(position)
        seen = np.argmax(reading.probabilities, axis=1)
        p_first = colors.first_owner_probability(reading.colors)
        seen_owner = np.where(seen == 0, -1, np.where(p_first >= 0.5, 0, 1))
        return tuple(int(s) for s in np.flatnonzero((seen != expected) | (seen_owner != owners)))


def _differ(a: _Candidate, b: _Candidate) -> tuple[int, ...]:
    """The squares on which two explanations expect different things."""
    differ = (a.labels != b.labels) | (a.owners != b.owners)
    return tuple(int(square) for square in np.flatnonzero(differ))


def _same(a: _Candidate, b: _Candidate) -> bool:
    """Two candidates that look identical on the board are one explanation, not rivals."""
    return bool(np.array_equal(a.labels, b.labels) and np.array_equal(a.owners, b.owners))
