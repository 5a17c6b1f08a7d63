"""Decoding readings of Renaissance: each square shows its cover (blocked, empty, a
polyomino's square or a monomino) and any marker on it (gold or silver), as the `tiles` model
reads it. Markers belong to whoever's colour they are, so no colours are learnt.

One ply is one action (a tile laid, a marker placed or moved, a monomino laid), but the rules
then change the board further, and the players make those changes by hand, in steps:
- the last tile of the preparation: a monomino on every square left free;
- a phase 1 marker that completes polyominoes: each is taken, lifted off with its markers,
  and a monomino laid on each of its squares;
- the end of phase 1: the board cleared for phase 2.
Until the board shows the rules' position, the ply is under way (`Verdict.INCOMPLETE`, with
the squares still to change); a square may be caught at any step of its own change (as the
player's action left it, with its marker lifted, cleared, or done), so the best such board
is built square by square from the reading."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import takewhile

import numpy as np

from referee.rules.polyomino import SHAPE_NAMES
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import (
    BLOCKED,
    EMPTY,
    MONOMINO,
    Move,
    MoveMarker,
    Phase,
    PlaceMarker,
    PlaceMonomino,
    PlaceTile,
    Position,
)
from referee.tracking.decoding import (
    Candidate,
    Decoder,
    Explanations,
    Inference,
    InferenceSettings,
    Verdict,
    differ,
    lead,
    rivals,
)
from referee.tracking.reading import ColorModel, Reading
from referee.vision.seams import seam_pairs

SURE = 1e-4  # a seam's probability is clipped to [SURE, 1 - SURE] before its logarithm
# Where the hand rested tells apart plies that leave the same board (`by_hand`): the first rest
# within `HAND_NEAR` squares of where one of them is made, nearer to it than to every other's
# by `HAND_MARGIN` squares.
HAND_NEAR = 1.2
HAND_MARGIN = 0.3

COVERS = ("blocked", "empty", "monomino", "tile")  # a square's cover, as the labels name it
MARKS = ("", "+gold", "+silver")  # by `Position.markers` value: none, Gold, Silver
_NO_STEPS = np.empty((0, 4), dtype=np.intp)  # a ply that changes nothing after the action
_NO_SQUARES = np.empty(0, dtype=np.intp)


@dataclass(frozen=True, eq=False)
class _Ply:
    """A legal ply and the board it leaves: `acted`, as the player's own action leaves it,
    and `settled`, the rules' position after it (label index a square)."""

    move: Move
    acted: np.ndarray
    settled: np.ndarray
    steps: np.ndarray  # (squares to change, options): the labels each may show meanwhile
    changing: np.ndarray  # the squares `steps` is for


class RenaissanceDecoder(Decoder):
    uses_colours = False
    reads_hands = True

    def __init__(self, game: RenaissanceRules, labels: tuple[str, ...],
                 settings: InferenceSettings | None = None) -> None:
        names = [f"{cover}{mark}" for cover in COVERS for mark in MARKS if
                 cover != "blocked" or not mark]
        missing = set(names) - set(labels)
        if missing:
            raise ValueError(f"the classifier lacks the labels {sorted(missing)}")
        super().__init__(game, labels, settings)
        self.game: RenaissanceRules = game
        self._seams = seam_pairs(game.geometry.files, game.geometry.ranks)
        blocked = self._index["blocked"]
        table = {cover: [self._index.get(f"{cover}{mark}", blocked) for mark in MARKS]
                 for cover in COVERS}
        # Label index by cover, BLOCKED MONOMINO EMPTY or a tile id (the value clipped to
        # -3..0, plus 3), and marker.
        assert (BLOCKED, MONOMINO, EMPTY) == (-3, -2, -1)
        self._table = np.array([table["blocked"], table["monomino"], table["empty"],
                                table["tile"]], dtype=np.intp)
        self._plies: dict[Position, tuple[list[_Ply], list[_Ply]]] = {}

    # --- what a position looks like ---------------------------------------------------

    def labels_of(self, cover: Sequence[int] | np.ndarray, markers: Sequence[int] | np.ndarray
                  ) -> np.ndarray:
        """Label index per square for a board of `cover` and `markers` (`Position`'s), or
        for boards of them (one a row)."""
        return np.asarray(self._table[np.minimum(cover, 0) + 3, np.asarray(markers)])

    def appearance(self, position: Position, shown: dict[int, str] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        labels = self.labels_of(position.cover, position.markers)
        for square, label in (shown or {}).items():
            labels[square] = self._index[label]
        return labels, np.full(len(labels), -1, dtype=np.intp)

    # --- the explanations -------------------------------------------------------------

    def candidates(self, position: Position, previous: Position | None) -> Iterator[Candidate]:
        nobody = np.full(len(position.cover), -1, dtype=np.intp)
        yield Candidate(Verdict.NO_CHANGE, None, *self.appearance(position))
        for ply in self._legal_plies(position):
            yield Candidate(Verdict.MOVE, ply.move, ply.settled, nobody)
        if previous is not None:  # the last ply taken back, or put right (a tile shifted)
            yield Candidate(Verdict.TAKE_BACK, None, *self.appearance(previous))
            for ply in self._legal_plies(previous):
                yield Candidate(Verdict.TAKE_BACK, ply.move, ply.settled, nobody)

    def under_way(self, position: Position, label_logp: np.ndarray) -> Iterator[Candidate]:
        """Per ply that the rules carry further than the player's action, the board caught
        part way through those changes that the reading favours, if it is not the end."""
        nobody = np.full(len(position.cover), -1, dtype=np.intp)
        for ply in self._every_ply(position):
            if not ply.changing.size:
                continue
            options = label_logp[ply.changing[:, None], ply.steps]
            shown = ply.steps[np.arange(len(ply.changing)), options.argmax(axis=1)]
            if np.array_equal(shown, ply.settled[ply.changing]):
                continue
            labels = ply.settled.copy()
            labels[ply.changing] = shown
            left = ply.changing[shown != ply.settled[ply.changing]]
            yield Candidate(Verdict.INCOMPLETE, ply.move, labels, nobody,
                            tuple(int(s) for s in left))

    def infer(self, reading: Reading, position: Position, colors: ColorModel | None,
              previous: Position | None = None) -> Inference:
        """As every game's, the preparation's tiles looked for among all that fit on free
        squares: the one seen, if the rules forbid it (it leaves no room for the rest), is
        illegal."""
        inference = super().infer(reading, position, colors, previous)
        move = inference.move
        if move is None:
            return inference
        # (Only a tile can be illegal: the other plies looked for are the legal ones.)
        played_on = previous if inference.verdict is Verdict.TAKE_BACK else position
        if played_on is not None and not self.game.is_legal(played_on, move):
            return Inference(Verdict.ILLEGAL, squares=tuple(move.squares))
        if inference.verdict in (Verdict.MOVE, Verdict.INCOMPLETE) and reading.hand_rests is not None:
            return replace(inference, move=self.by_hand(position, move, reading.hand_rests))
        if inference.verdict is Verdict.TWO_MOVES and reading.hand_rests is not None:
            first, second = self.in_hand_order(position, move, inference.second, reading.hand_rests)
            return replace(inference, move=first, second=second)
        return inference

    def in_hand_order(self, position: Position, first: Move, second: Move, rests: np.ndarray
                      ) -> tuple[Move, Move]:
        """Two tiles read at once, in the order the hands laid them (`rests`, first first):
        laid in either order they leave the same board, but not the same game (who laid
        which). The first rest near one of them, clearly nearer to it than to the other,
        tells; else the order given."""
        if not (isinstance(first, PlaceTile) and isinstance(second, PlaceTile) and len(rests)):
            return first, second
        if not (self.game.is_legal(position, second)
                and self.game.is_legal(self.game.play(position, second), first)):
            return first, second
        told = _told_by_hand([self._middles(move.squares) for move in (first, second)], rests)
        return (second, first) if told == 1 else (first, second)

    def by_hand(self, position: Position, move: Move, rests: np.ndarray) -> Move:
        """Of the plies that leave the same position as `move` (a marker pushed in at the
        end of a line of the mover's own markers, and one placed where the push leaves one),
        the one made where the hand rested (`rests`: in squares from a1's outer corner, first
        first): the first rest near where one of them is made (`_made_at`), if it is clearly
        nearer to one. Else `move`, the plain placement that stands for them all."""
        if not len(rests):  # (nothing to tell them by: the look-alikes are not sought)
            return move
        alike = self._look_alikes(position, move)
        if len(alike) < 2:
            return move
        told = _told_by_hand([self._made_at(position, m) for m in alike], rests)
        return move if told is None else alike[told]

    def _made_at(self, position: Position, move: PlaceMarker) -> np.ndarray:
        """Where the hand makes `move`, in squares from a1's outer corner (one point a row):
        a placement on its square's middle; a push-in beyond the rim, a square out in line,
        where a player lays the marker to slide it in, and on the outer square, where the
        hand lets go of it once slid."""
        middles = self._middles(self.game.pushed_line(position, move.square)[:2] or (move.square,))
        if len(middles) == 1:
            return middles
        edge, inward = middles
        return np.array([2 * edge - inward, edge])

    def _middles(self, squares: Sequence[int]) -> np.ndarray:
        """The squares' middles, in squares from a1's outer corner (one point a row)."""
        files = self.game.geometry.files
        return np.array([(sq % files + 0.5, sq // files + 0.5) for sq in squares])

    def _look_alikes(self, position: Position, move: Move) -> list[PlaceMarker]:
        """The phase 1 markers placed (or pushed in) that leave the same position as `move`."""
        if not isinstance(move, PlaceMarker) or position.phase is not Phase.PHASE1:
            return []
        after = self.game.play(position, move)
        settled = self.labels_of(after.cover, after.markers)
        return [ply.move for ply in self._every_ply(position)
                if isinstance(ply.move, PlaceMarker) and np.array_equal(ply.settled, settled)
                and self.game.play(position, ply.move) == after]

    def two_moves(self, position: Position, label_logp: np.ndarray, owner_logp: np.ndarray,
                  free: float) -> Inference | None:
        """Two plies in a row that explain the board clearly (the reply made before the
        board was still long enough to read the first), or None. The first is one whose
        changes the reading shows (every square it changes read as changed), done (a
        polyomino it takes lifted and filled, the preparation's last tile with its fill; not
        the last ply of phase 1, whose clearing is waited for), the second one that takes
        none, and the pair must beat every pair that leaves another board by the margin.
        Pairs that leave the same board are one board: the first found is taken (two neutral
        tiles laid at once may be recorded in the other order). Two tiles that touch are not
        paired: they look like one bigger tile (an illegal one laid, say)."""
        before = self.appearance(position)[0]
        changed = np.argmax(label_logp, axis=1) != before
        nobody = np.full(len(before), -1, dtype=np.intp)
        # The most squares a ply that takes nothing changes: a line pushed in (a tile covers
        # fewer). A board changed beyond what the first ply and such a reply change is no
        # pair's, and its hundreds of pairs are not looked for (a board far from the position
        # in the preparation cost seconds and 300 MB a reading).
        reply_reach = max(self.game.geometry.files, self.game.geometry.ranks)
        pairs: list[tuple[Move, Candidate]] = []
        for first in self._legal_plies(position):
            moved = first.settled != before
            if not moved.any() or (moved & ~changed).any() \
                    or np.count_nonzero(changed & ~moved) > reply_reach \
                    or not self.game.is_legal(position, first.move):
                continue
            middle = self.game.play(position, first.move)
            # The end of phase 1, its board cleared and the hands counted, is waited for; the
            # preparation's last tile, its fill laid, may be answered at once (890013's first
            # marker came 0.7 s after the fill's last monomino).
            stage_ends = bool(first.changing.size) and middle.phase is not position.phase \
                and position.phase is not Phase.PREPARATION
            if middle.phase is Phase.OVER or stage_ends:
                continue
            moves = [m for m in self.game.moves_to_look_for(middle) if self.game.is_legal(middle, m)]
            plies = (self._acted_plies(middle, moves) if self.game.acts_only(middle)
                     else self._played_plies(middle, moves)[0])
            pairs += [(first.move, Candidate(Verdict.MOVE, ply.move, ply.settled, nobody))
                      for ply in plies if not ply.changing.size
                      and not self._touching(first.move, ply.move)]
        if not pairs:
            return None
        finals = Explanations.of(candidate for _first, candidate in pairs)
        scores = finals.scores(label_logp, owner_logp)
        order = np.argsort(-scores, kind="stable")
        first_move, best = pairs[order[0]]
        if self._contradicted(label_logp, best, free, float(scores[order[0]])):
            return None
        margin, rival = lead(finals.candidates, scores, order)
        if margin < self.settings.min_margin:
            assert rival is not None
            return Inference(Verdict.UNREADABLE, margin=margin, squares=differ(best, rival))
        return Inference(Verdict.TWO_MOVES, first_move, margin, second=best.move)

    def closer_look(self, reading: Reading, position: Position, candidates: tuple[Candidate, ...],
                    scores: np.ndarray, order: np.ndarray) -> Inference | None:
        """Plies about as likely as the best that lay the tiles otherwise (the T4 c6 b7 c7 d7
        and the I3 b7 c7 d7, a tan tile on a light square read 0.74 tile), told apart by the
        seam model on the seams where they differ (c6-c7 joined or apart), asked only here.
        The best is taken if, its seams' log-likelihood added, it leads each such rival by
        the margin; else None."""
        best, top = candidates[order[0]], float(scores[order[0]])
        close = list(takewhile(lambda i: top - float(scores[i]) < self.settings.min_margin,
                               rivals(candidates, order)))
        tied = [best, *(candidates[i] for i in close)]
        if reading.seams is None or not close or any(c.verdict is not Verdict.MOVE for c in tied):
            return None
        joined = np.array([self._joined_seams(position, c.move) for c in tied])
        differ = np.flatnonzero((joined != joined[0]).any(axis=0))
        if not differ.size:
            return None
        p = np.clip(reading.seams.joined[differ], SURE, 1 - SURE)
        seam_logp = np.where(joined[:, differ], np.log(p), np.log1p(-p)).sum(axis=1)
        total = np.array([top, *(float(scores[i]) for i in close)]) + seam_logp
        margin = float(total[0] - total[1:].max())
        if margin < self.settings.min_margin:
            return None
        return Inference(best.verdict, best.move, margin, squares=best.squares)

    def _joined_seams(self, position: Position, move: Move) -> np.ndarray:
        """Per seam (`seam_pairs` order): whether one polyomino lies on both its squares once
        `move` is played."""
        cover = np.array(self.game.play(position, move).cover)
        a, b = cover[self._seams[:, 0]], cover[self._seams[:, 1]]
        return np.asarray((a == b) & (a >= 0))

    def _touching(self, first: Move, second: Move) -> bool:
        """Whether two plies lay tiles side by side (no seam is read between them)."""
        if not (isinstance(first, PlaceTile) and isinstance(second, PlaceTile)):
            return False
        files = self.game.geometry.files
        return any(abs(a // files - b // files) + abs(a % files - b % files) == 1
                   for a in first.squares for b in second.squares)

    def incomplete_detail(self, position: Position, move: Move, squares: str) -> str:
        taken = self.game.acquisitions(position, move)
        names = self.game.player_names
        said = [f"{names[holder]} takes the {SHAPE_NAMES[position.inventory[tile]]} "
                f"({' '.join(map(self.game.geometry.square_name, position.tile_squares(tile)))})"
                for tile, holder in taken]
        after = self.game.play(position, move)
        if position.phase is Phase.PHASE1 and after.phase is not Phase.PHASE1:
            said.append("phase 1 is over: clear the board")
        elif position.phase is Phase.PREPARATION and after.phase is not Phase.PREPARATION:
            said.append("a monomino on every free square")
        elif taken:
            said.append("lift it off with its markers, a monomino on each of its squares")
        return "; ".join([*said, f"still to change: {squares}"])

    def _legal_plies(self, position: Position) -> list[_Ply]:
        """Every legal ply's boards. Plies that leave the same position look the same once
        made (a push-in of a line of the mover's own markers, and a marker placed where the
        push leaves one): the one whose action changes the fewest squares stands for them
        all, the plain placement."""
        return self._plies_of(position)[0]

    def _every_ply(self, position: Position) -> list[_Ply]:
        """Every legal ply, those that leave the same position included (they differ part
        way: as the player's action leaves the board), the plain ones first: a board caught
        part way that two of them explain alike (the markers lifted) is the plain one's."""
        return self._plies_of(position)[1]

    def _plies_of(self, position: Position) -> tuple[list[_Ply], list[_Ply]]:
        """`_legal_plies` and `_every_ply`, kept for the last two positions asked about (the
        position and the one before it are read again and again)."""
        if position not in self._plies:
            moves = self.game.moves_to_look_for(position)
            if self.game.acts_only(position):
                acted = self._acted_plies(position, moves)
                found = (acted, acted)
            else:
                found = self._played_plies(position, moves)
            self._plies = {**dict(list(self._plies.items())[-1:]), position: found}
        return self._plies[position]

    def _acted_plies(self, position: Position, moves: list[Move]) -> list[_Ply]:
        """The plies of a position whose every ply leaves the board as the player's action
        leaves it (`RenaissanceRules.acts_only`: most of the preparation's hundreds of tiles,
        all of phase 2), their boards made at once: none played out, nothing to change after
        the action, no two alike (so none stands for another)."""
        if not moves:
            return []
        hands = [_hand(self.game, position, move) for move in moves]
        boards: list[np.ndarray] = []
        for part, before in enumerate((position.cover, position.markers)):
            board = np.tile(np.asarray(before, dtype=np.intp), (len(moves), 1))
            at = [(ply, square, value) for ply, hand in enumerate(hands)
                  for square, value in hand[part].items()]
            if at:
                plies, squares, values = zip(*at, strict=True)
                board[plies, squares] = values
            boards.append(board)
        looks = self.labels_of(*boards)
        return [_Ply(move, look, look, _NO_STEPS, _NO_SQUARES)
                for move, look in zip(moves, looks, strict=True)]

    def _played_plies(self, position: Position, moves: list[Move]
                      ) -> tuple[list[_Ply], list[_Ply]]:
        """`_legal_plies` and `_every_ply`, each ply played out by the rules."""
        plies = [self._ply(position, move) for move in moves]
        plain: dict[Position, tuple[tuple[int, bool], _Ply]] = {}
        before = self.labels_of(position.cover, position.markers)
        for ply, after in plies:
            # (A push-in along the mover's own markers may touch one square too.)
            push = isinstance(ply.move, PlaceMarker) and position.markers[ply.move.square] > 0
            rank = (int(np.count_nonzero(ply.acted != before)), push)
            if after not in plain or rank < plain[after][0]:
                plain[after] = (rank, ply)
        kept = [ply for _rank, ply in plain.values()]
        ids = {id(ply) for ply in kept}
        return kept, kept + [ply for ply, _after in plies if id(ply) not in ids]

    def _ply(self, position: Position, move: Move) -> tuple[_Ply, Position]:
        acted = self.labels_of(*_acted(self.game, position, move))
        after = self.game.play(position, move)
        settled = self.labels_of(after.cover, after.markers)
        changing = np.flatnonzero(acted != settled)
        steps = np.array([self._steps(int(acted[sq]), int(settled[sq])) for sq in changing],
                         dtype=np.intp).reshape(len(changing), 4)
        return _Ply(move, acted, settled, steps, changing), after

    def _steps(self, acted: int, settled: int) -> tuple[int, int, int, int]:
        """What a square whose look changes after the player's action may show meanwhile: as
        acted, its marker lifted, cleared (its cover lifted with its marker), or settled."""
        bare = self.labels[acted].split("+")[0]
        return acted, self._index[bare], self._index["empty"], settled


def _told_by_hand(spots: list[np.ndarray], rests: np.ndarray) -> int | None:
    """Which of the plies made at `spots` (points in squares, each) the hands made: the first
    rest within `HAND_NEAR` of one, if it is nearer to one than to every other by
    `HAND_MARGIN`; None where that rest is as near to two, or no rest is near any."""
    for rest in rests:
        distances = np.array([np.linalg.norm(at - rest, axis=1).min() for at in spots])
        if distances.min() > HAND_NEAR:
            continue
        nearest, *others = np.argsort(distances)
        if all(distances[i] - distances[nearest] >= HAND_MARGIN for i in others):
            return int(nearest)
        return None
    return None


def _hand(game: RenaissanceRules, position: Position, move: Move
          ) -> tuple[dict[int, int], dict[int, int]]:
    """What the player's hand changes: the new cover and marker values, by square."""
    if isinstance(move, PlaceTile):
        return dict.fromkeys(move.squares, move.tile), {}
    if isinstance(move, PlaceMonomino):
        return {move.square: MONOMINO}, {}
    if isinstance(move, MoveMarker):
        return {}, {move.to_square: position.markers[move.from_square], move.from_square: 0}
    if isinstance(move, PlaceMarker) and position.phase is Phase.PHASE1:
        placed = game.placed_markers(position, move.square)
        return {}, {sq: value for sq, value in enumerate(placed) if value != position.markers[sq]}
    return {}, {move.square: position.turn + 1}


def _acted(game: RenaissanceRules, position: Position, move: Move
           ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The cover and markers the moment the player's hand leaves the board."""
    cover, markers = list(position.cover), list(position.markers)
    cover_at, markers_at = _hand(game, position, move)
    for square, value in cover_at.items():
        cover[square] = value
    for square, value in markers_at.items():
        markers[square] = value
    return tuple(cover), tuple(markers)
