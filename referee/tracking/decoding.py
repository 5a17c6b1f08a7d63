"""Decoding a reading in context, for every game: the candidate explanations of what the
board shows (nothing changed, a take-back, each legal ply, the players' usual slips) are
scored against the classifier's probabilities and the owners' colours; the best wins only if
it beats the runner-up clearly and the board agrees with it. Otherwise the verdict says why
the board cannot be read. A game's decoder says how its positions look (`appearance`) and
which explanations there are (`candidates`, and `under_way` for those built from the reading
itself): `inference.MoveInferer` for the Rinne family, `zensu.ZensuDecoder` for Zensū,
`renaissance.RenaissanceDecoder` for Renaissance."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from referee.tracking.reading import ColorModel, Reading


class Verdict(enum.Enum):
    NO_CHANGE = "no change"
    MOVE = "move"
    TAKE_BACK = "take back"  # with a move: taken back and that move played instead
    PROMOTE = "promote the piece"  # the piece moved but still shows its old state
    ROLL_PENDING = "roll pending"  # Tensei: the moved die shows 6
    INCOMPLETE = "capture under way"  # the ply is under way: captured pieces still to take off
    TWO_MOVES = "two moves"  # a ply went by unread (its board was never steady and clear)
    ILLEGAL = "illegal"
    UNREADABLE = "unreadable"


@dataclass(frozen=True)
class InferenceSettings:
    """Thresholds, in nats of log-likelihood; overridable from a config file."""

    min_square_confidence: float = 0.55  # below this a square is unreadable
    max_disagreement: float = 6.0  # beyond this the board shows something no candidate explains
    max_square_disagreement: float = 4.0  # ... or one square does (a die knocked to another face)
    min_margin: float = 3.0  # the best explanation must beat the runner-up by this much
    min_expected_probability: float = 0.2  # an unsure square must still favour what is expected
    # a square whose likeliest label is below `lost_below` leans to no content: where the image
    # shows it unchanged and its old content keeps `min_held_probability`, it holds that
    lost_below: float = 0.4
    min_held_probability: float = 0.1


@dataclass(frozen=True)
class Inference:
    verdict: Verdict
    move: Any = None
    margin: float = 0.0  # log-likelihood lead over the runner-up
    second: Any = None  # with TWO_MOVES: the reply that followed `move`
    second_pending: bool = False  # Tensei: the reply's die still shows 6, its roll to come
    squares: tuple[int, ...] = ()  # squares unsure, changed illegally, or (INCOMPLETE) to clear


@dataclass(frozen=True, eq=False)
class Candidate:
    verdict: Verdict
    move: Any
    labels: np.ndarray  # label index per square
    owners: np.ndarray  # 0 first player, 1 second, -1 empty
    squares: tuple[int, ...] = ()  # INCOMPLETE: the squares whose pieces are still to go


@dataclass(frozen=True, eq=False)
class Explanations:
    """Candidate explanations, their looks stacked to be scored at once."""

    candidates: tuple[Candidate, ...]
    labels: np.ndarray  # (candidates, squares)
    owners: np.ndarray

    @classmethod
    def of(cls, candidates: Iterable[Candidate]) -> Explanations:
        found = tuple(candidates)
        if not found:
            return cls(found, np.empty((0, 0), dtype=np.intp), np.empty((0, 0), dtype=np.intp))
        return cls(found, np.array([c.labels for c in found]), np.array([c.owners for c in found]))

    def scores(self, label_logp: np.ndarray, owner_logp: np.ndarray) -> np.ndarray:
        """Each candidate's log-likelihood (a row's sum is the same pairwise sum as one
        candidate's alone: the figures are those of scoring them one by one)."""
        if not self.candidates:
            return np.empty(0)
        rows = np.arange(self.labels.shape[1])
        return np.asarray(label_logp[rows, self.labels].sum(axis=1)
                          + owner_logp[rows, self.owners].sum(axis=1))


class Decoder(ABC):
    """Scores the candidate explanations of a reading for one game."""

    # Owners are told by the colours learnt at the start (the Rinne family, Zensū); a game
    # whose labels name the owner (Renaissance's markers) learns none.
    uses_colours = True
    # Plies that leave the same board are told apart by where the hands rested
    # (`Reading.hand_rests`): the pipeline watches them only for a game that does.
    reads_hands = False

    def __init__(self, game: Any, labels: tuple[str, ...],
                 settings: InferenceSettings | None = None) -> None:
        self.game = game
        self.labels = labels
        self.settings = settings or InferenceSettings()
        self._index = {label: i for i, label in enumerate(labels)}
        # The candidates depend only on the position (and the one before): a board is read
        # again and again between plies, so the last two kept, stacked, are scored at once.
        self._explained: dict[tuple[Any, Any], Explanations] = {}

    @abstractmethod
    def appearance(self, position: Any, shown: dict[int, str] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        """Expected label index and owner per square; `shown` overrides a square's label."""

    @abstractmethod
    def candidates(self, position: Any, previous: Any | None) -> Iterator[Candidate]:
        """Every explanation of a board read after `position` (`previous`: the one before)."""

    def under_way(self, position: Any, label_logp: np.ndarray) -> Iterator[Candidate]:
        """Explanations built from the reading itself (`label_logp`: log-probability per
        square and label): plies caught part way through changes too many to list (a game
        that has none yields nothing)."""
        del position, label_logp
        return iter(())

    def incomplete_detail(self, position: Any, move: Any, squares: str) -> str:
        """What the players are told while `move` is under way (`squares`: those still to
        change, named)."""
        del position, move
        return f"finish the move: {squares}"

    def forced_move(self, position: Any) -> Any | None:
        """A ply the player to move must make that shows nothing on the board (Zensū's
        pass), for the referee to play itself; None in most games."""
        del position
        return None

    def two_moves(self, position: Any, label_logp: np.ndarray, owner_logp: np.ndarray,
                  free: float) -> Inference | None:
        """Two plies in a row that explain the board clearly, or None (a game that does not
        look for them)."""
        del position, label_logp, owner_logp, free
        return None

    def fit(self, reading: Reading, position: Any, colors: ColorModel | None) -> float:
        """How well `reading` shows `position`: its log-likelihood."""
        labels, owners = self.appearance(position)
        candidate = Candidate(Verdict.NO_CHANGE, None, labels, owners)
        scores = Explanations.of([candidate]).scores(reading.log_probabilities(),
                                                     _owner_logp(reading, colors))
        return float(scores[0])

    def plies_shown(self, reading: Reading, position: Any, colors: ColorModel | None, *,
                    most: int = 3, beam: int = 64) -> tuple[tuple[Any, ...], float] | str:
        """The legal plies from `position`, up to `most` in a row, whose board `reading`
        shows, and their lead: for a board the players vouch for (the button's confirm) as
        the board their plies left, where the referee read none clearly. Where none does
        clearly, why: the best board must lead every other one that plies reach by the margin
        (the position as it stands is no rival: the players say it is gone), no square may
        contradict it, and no other row as short may leave it (the record would be a guess)."""
        label_logp, owner_logp = reading.log_probabilities(), _owner_logp(reading, colors)
        reached = self._rows(position, label_logp, owner_logp, most, beam)
        ranked = sorted((row for row in reached.values() if row.plies), key=lambda row: -row.score)
        if not ranked:
            return "no legal plies explain the board"
        best, next_score = ranked[0], ranked[1].score if len(ranked) > 1 else -np.inf
        if best.score - next_score < self.settings.min_margin or self._contradicted(
                label_logp, best.candidate, _free(label_logp, owner_logp), best.score):
            return "no legal plies explain the board"
        if best.other_way:
            return "more than one way of playing leaves this board"
        return best.plies, best.score - next_score

    def _rows(self, position: Any, label_logp: np.ndarray, owner_logp: np.ndarray, most: int,
              beam: int) -> dict[bytes, _Row]:
        """Each board reached by up to `most` plies in a row, by its look. Rows grow a ply at
        a time from the `beam` likeliest boards; a row leaving a board already reached is
        that board's shorter row, or another as short."""
        reached: dict[bytes, _Row] = {}
        frontier = [_Row(Candidate(Verdict.NO_CHANGE, None, *self.appearance(position)), (), (position,))]
        for length in range(most + 1):
            rows: dict[bytes, _Row] = {}
            for row in frontier:
                look = row.look()
                if look in reached:
                    continue
                kept = rows.setdefault(look, row)
                if kept.boards != row.boards:
                    rows[look] = replace(kept, other_way=True)
            scores = Explanations.of(row.candidate for row in rows.values()).scores(label_logp, owner_logp)
            scored = [replace(row, score=score)
                      for row, score in zip(rows.values(), scores.tolist(), strict=True)]
            reached.update(zip(rows, scored, strict=True))
            if length < most:
                frontier = [self._grown(row, move) for row in sorted(scored, key=lambda r: -r.score)[:beam]
                            if self.game.outcome(row.boards[-1], 1) is None
                            for move in self.game.legal_moves(row.boards[-1])]
        return reached

    def _grown(self, row: _Row, move: Any) -> _Row:
        after = self.game.play(row.boards[-1], move)
        return _Row(Candidate(Verdict.MOVE, None, *self.appearance(after)), (*row.plies, move),
                    (*row.boards, after))

    def closer_look(self, reading: Reading, position: Any, candidates: tuple[Candidate, ...],
                    scores: np.ndarray, order: np.ndarray) -> Inference | None:
        """Explanations about as likely as the best, told apart by evidence a game asks for
        only then (Renaissance: the seams between squares); None in most games."""
        del reading, position, candidates, scores, order
        return None

    def infer(self, reading: Reading, position: Any, colors: ColorModel | None,
              previous: Any | None = None) -> Inference:
        geometry = self.game.geometry
        if reading.squares != geometry.files * geometry.ranks:
            raise ValueError("the reading and the position have different numbers of squares")
        reading = self._held_as_shown(reading, position)
        unsure = reading.confidence() < self.settings.min_square_confidence
        label_logp = reading.log_probabilities()
        owner_logp = _owner_logp(reading, colors)
        listed = self._explanations(position, previous)
        built = Explanations.of(self.under_way(position, label_logp))
        candidates = listed.candidates + built.candidates
        scores = np.concatenate([listed.scores(label_logp, owner_logp),
                                 built.scores(label_logp, owner_logp)])
        order = np.argsort(-scores, kind="stable")  # best first; a tie to the first listed
        best_score, best = float(scores[order[0]]), candidates[order[0]]
        free = _free(label_logp, owner_logp)
        if unsure.any() and (free - best_score > self.settings.max_disagreement
                             or self._doubtful(reading, position, best, unsure)):
            return Inference(Verdict.UNREADABLE, squares=tuple(int(s) for s in np.flatnonzero(unsure)))
        if self._contradicted(label_logp, best, free, best_score):
            pair = self.two_moves(position, label_logp, owner_logp, free)
            if pair is not None:
                return pair
            return Inference(Verdict.ILLEGAL, squares=self._changed(reading, position, colors))
        margin, rival = lead(candidates, scores, order)
        if margin < self.settings.min_margin:
            kept = self._image_decides(reading, position, candidates, scores, order)
            if kept is None:
                kept = self.closer_look(reading, position, candidates, scores, order)
            if kept is not None:
                return kept
            # The squares the two explanations disagree on: what the players should show.
            assert rival is not None
            return Inference(Verdict.UNREADABLE, margin=margin, squares=differ(best, rival))
        return Inference(best.verdict, best.move, margin, squares=best.squares)

    def _held_as_shown(self, reading: Reading, position: Any) -> Reading:
        """The reading with each square the classifier leans to no content on (`lost_below`),
        its content in the position not ruled out (`min_held_probability`), that the image
        shows unchanged since the board showed `position` read as holding that content: an
        empty square walled in by tall tiles, dark and half hidden, is read so from the moment
        it is walled in (0.14-0.36 for any label), and would hold the game up for good. A
        piece laid there changes the image (a cream tile on cream squares changed them by 9
        grey levels or more, `square_changes.md`) or is read as a piece; where the classifier
        leans to another content, the image alone decides nothing."""
        if reading.unchanged is None:
            return reading
        labels, _owners = self.appearance(position)
        rows = np.arange(reading.squares)
        held = reading.unchanged & (reading.confidence() < self.settings.lost_below) & (
            reading.probabilities[rows, labels] >= self.settings.min_held_probability)
        if not held.any():
            return reading
        probabilities = reading.probabilities.copy()
        probabilities[held] = 0.0
        probabilities[held, labels[held]] = 1.0
        return replace(reading, probabilities=probabilities)

    def _image_decides(self, reading: Reading, position: Any, candidates: tuple[Candidate, ...],
                       scores: np.ndarray, order: np.ndarray) -> Inference | None:
        """Explanations about as likely as the best, told apart by the squares both signals
        show unchanged since the board showed `position` (the image, where a cream tile laid
        on a cream square barely changes it, and the classifier's best label), or both show
        changed (a marker of the other colour, read at 0.8 only). One that changes a square
        shown unchanged, or leaves one shown changed, is ruled out. The best is taken if it
        is not and leads every rival not ruled out (look-alikes aside) by the margin; else
        None."""
        labels, owners = self.appearance(position)
        old = np.argmax(reading.probabilities, axis=1) == labels
        unknown = np.zeros(len(labels), bool)
        still = (unknown if reading.unchanged is None else reading.unchanged) & old
        moved = (unknown if reading.changed is None else reading.changed) & ~old
        if not (still.any() or moved.any()):
            return None

        def contradicts_the_image(candidate: Candidate) -> bool:
            kept = (candidate.labels == labels) & (candidate.owners == owners)
            return bool((still & ~kept).any() or (moved & kept).any())

        best = candidates[order[0]]
        if contradicts_the_image(best):
            return None
        margin, _rival = lead(candidates, scores, order, ruled_out=contradicts_the_image)
        if margin < self.settings.min_margin:
            return None
        return Inference(best.verdict, best.move, margin, squares=best.squares)

    def _explanations(self, position: Any, previous: Any | None) -> Explanations:
        key = (position, previous)
        if key not in self._explained:
            kept = list(self._explained.items())[-1:]
            self._explained = {**dict(kept), key: Explanations.of(self.candidates(position, previous))}
        return self._explained[key]

    def _contradicted(self, label_logp: np.ndarray, best: Candidate, free: float,
                      best_score: float) -> bool:
        """Whether the board shows what the best explanation cannot: in all, or clearly on
        one square."""
        rows = np.arange(len(best.labels))
        square = label_logp.max(axis=1) - label_logp[rows, best.labels]
        return bool(free - best_score > self.settings.max_disagreement
                    or square.max() > self.settings.max_square_disagreement)

    def _doubtful(self, reading: Reading, position: Any, best: Candidate,
                  unsure: np.ndarray) -> bool:
        """Whether an unsure square matters: it changes under the best explanation and may
        still hold what it held, or the content that explanation expects there is itself
        unlikely. An unsure square far from the move (a goal mark, a glare) does not hold the
        game up, nor one surely changed, in doubt only between the best explanation's content
        and another no rival explains (a marker laid, the board or a tile under it): the
        margin over the rivals tells those."""
        labels, owners = self.appearance(position)
        rows = np.arange(reading.squares)
        changes = (best.labels != labels) | (best.owners != owners)
        unchanged = reading.probabilities[rows, labels] >= self.settings.min_expected_probability
        expected = reading.probabilities[rows, best.labels]
        unlikely = expected < self.settings.min_expected_probability
        return bool((unsure & ((changes & unchanged) | unlikely)).any())

    def _changed(self, reading: Reading, position: Any, colors: ColorModel | None
                 ) -> tuple[int, ...]:
        """Squares whose most likely content differs from the position's."""
        expected, owners = self.appearance(position)
        seen = np.argmax(reading.probabilities, axis=1)
        if colors is None:
            seen_owner = np.full(len(seen), -1)
        else:
            p_first = colors.first_owner_probability(reading.colors)
            seen_owner = np.where(seen == 0, -1, np.where(p_first >= 0.5, 0, 1))
        return tuple(int(s) for s in np.flatnonzero((seen != expected) | (seen_owner != owners)))


def _owner_logp(reading: Reading, colors: ColorModel | None) -> np.ndarray:
    """Log-probability per square of each owner (first, second, nobody) by its colour; all
    alike where owners are not told by colour."""
    if colors is None:
        return np.zeros((reading.squares, 3))
    p_first = np.clip(colors.first_owner_probability(reading.colors), 1e-9, 1 - 1e-9)
    return np.stack([np.log(p_first), np.log(1 - p_first), np.zeros_like(p_first)], 1)


@dataclass(frozen=True)
class _Row:
    """Plies in a row from a position, the positions they pass through, and what the last
    one looks like."""

    candidate: Candidate  # the look of the last position
    plies: tuple[Any, ...]
    boards: tuple[Any, ...]  # the positions, the first and the last included
    score: float = 0.0  # the reading's log-likelihood of the look
    other_way: bool = False  # another row as short leaves the same look

    def look(self) -> bytes:
        return _look(self.candidate)


def _free(label_logp: np.ndarray, owner_logp: np.ndarray) -> float:
    """The log-likelihood of the likeliest board, whatever the rules say."""
    piece_best = label_logp[:, 1:].max(axis=1) + owner_logp[:, :2].max(axis=1)
    return float(np.maximum(label_logp[:, 0], piece_best).sum())


def _look(candidate: Candidate) -> bytes:
    """What a candidate shows, as a key: candidates that look alike share it."""
    return candidate.labels.tobytes() + candidate.owners.tobytes()


def lead(candidates: Sequence[Candidate], scores: np.ndarray, order: np.ndarray,
         ruled_out: Callable[[Candidate], bool] | None = None) -> tuple[float, Candidate | None]:
    """How far the best (`order[0]`) leads the best rival, and that rival: a candidate that
    looks otherwise and is not `ruled_out`; inf and None where there is none."""
    for i in rivals(candidates, order, ruled_out):
        return float(scores[order[0]]) - float(scores[i]), candidates[i]
    return np.inf, None


def rivals(candidates: Sequence[Candidate], order: np.ndarray,
           ruled_out: Callable[[Candidate], bool] | None = None) -> Iterator[int]:
    """The best's (`order[0]`) rivals, best first: candidates that look otherwise and are not
    `ruled_out`."""
    best = candidates[order[0]]
    for i in order[1:]:
        rival = candidates[i]
        if not same_look(rival, best) and not (ruled_out and ruled_out(rival)):
            yield int(i)


def differ(a: Candidate, b: Candidate) -> tuple[int, ...]:
    """The squares on which two explanations expect different things."""
    apart = (a.labels != b.labels) | (a.owners != b.owners)
    return tuple(int(square) for square in np.flatnonzero(apart))


def same_look(a: Candidate, b: Candidate) -> bool:
    """Two candidates that look identical on the board are one explanation, not rivals."""
    return bool(np.array_equal(a.labels, b.labels) and np.array_equal(a.owners, b.owners))
