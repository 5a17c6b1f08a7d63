"""Renaissance tiles read as whole pieces.

The square model reads each square alone and the seam model each seam alone
(`vision.seams`). A Renaissance board holds only the game's polyominoes, each at most as
often as the set has it: every group of squares joined by seams must be one of those shapes,
with every seam inside it joined. A read that breaks this is wrong somewhere (a polyomino
read joined to its neighbour, a monomino read as a lone polyomino square, a square of a
tetromino read as a monomino, leaving a third V-triomino...). There the squares and seams
around the break are read again together: the most probable way to cut them into allowed
pieces and squares that are no polyomino's, each square and seam scored by its own model's
probability. Groups that break nothing are left as read."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from numpy.typing import NDArray

from referee.rules.polyomino import identify, normalise, placement_masks
from referee.rules.renaissance_ruleset import DEFAULT_TILES
from referee.vision.seams import JOINED, POLYOMINO_PREFIX, seam_pairs, seams_given_squares

SURE = 1e-4  # probabilities are clipped to [SURE, 1 - SURE] before their logarithms


@dataclass(frozen=True)
class PieceRules:
    """How far a broken group is read again. `reach`: a neighbouring square read as no
    polyomino's joins the region when its probability of being one is at least this;
    `largest`: regions of more squares are cut back to the broken group alone, and a group
    larger still is left as read (the search grows fast with the region: a board of noise
    reads as one group of 48); `steps`: the search's budget, after which it answers the
    best cut found so far."""

    reach: float = 0.2
    largest: int = 16
    steps: int = 3_000


@dataclass(frozen=True, eq=False)
class PieceRead:
    squares: NDArray[np.int64]  # label index a square, rules order
    joined: NDArray[np.bool_]  # a seam, `seam_pairs` order
    mended: tuple[frozenset[int], ...]  # the squares read again, a region each: less sure
    left: tuple[frozenset[int], ...]  # groups still no piece of the set: not to be trusted


@dataclass(frozen=True, eq=False)
class _Scores:
    """Log-probabilities of the choices the cut makes: a square as a polyomino's (its best
    `tile*` label) or not (its best other label), a seam joined or apart."""

    tile_label: NDArray[np.int64]
    other_label: NDArray[np.int64]
    tile: NDArray[np.float64]
    other: NDArray[np.float64]
    joined: NDArray[np.float64]
    apart: NDArray[np.float64]


def read_whole_pieces(square_probabilities: NDArray[np.floating], square_labels: Sequence[str],
                      seam_probabilities: NDArray[np.floating], seam_labels: Sequence[str],
                      size: int, tiles: Sequence[str] = DEFAULT_TILES,
                      rules: PieceRules = PieceRules()) -> PieceRead:
    """A whole `size` x `size` board's squares (one row a square) and seams (one row a seam
    of `seam_pairs(size, size)`, the seam model's own probabilities) read as pieces of the
    set `tiles` (a shape code a tile)."""
    pairs = seam_pairs(size, size)
    given = seams_given_squares(seam_probabilities, seam_labels, square_probabilities,
                                square_labels, pairs)
    squares = np.asarray(square_probabilities, np.float64).argmax(axis=1).astype(np.int64)
    joined = given.argmax(axis=1) == list(seam_labels).index(JOINED)
    polyomino = np.array([label.startswith(POLYOMINO_PREFIX) for label in square_labels])
    board = _Board(size, pairs, Counter(tiles),
                   _scores(square_probabilities, polyomino, seam_probabilities, seam_labels),
                   rules)
    mended = []
    for _ in range(size * size):  # each pass mends one break; a safe bound on passes
        region = board.mend(squares, joined, polyomino[squares])
        if region is None:
            break
        mended.append(region)
    left = board.breaks(board.groups(polyomino[squares], joined), joined)
    return PieceRead(squares, joined, tuple(mended), tuple(g for b in left for g in b))


def _scores(square_probabilities: NDArray[np.floating], polyomino: NDArray[np.bool_],
            seam_probabilities: NDArray[np.floating], seam_labels: Sequence[str]) -> _Scores:
    """`polyomino`: which square labels are a polyomino's."""
    logs = np.log(np.clip(np.asarray(square_probabilities, np.float64), SURE, 1.0))
    tile_columns, other_columns = np.flatnonzero(polyomino), np.flatnonzero(~polyomino)
    tile_label = tile_columns[logs[:, tile_columns].argmax(axis=1)]
    other_label = other_columns[logs[:, other_columns].argmax(axis=1)]
    rows = np.arange(len(logs))
    seams = np.asarray(seam_probabilities, np.float64)
    joined = np.clip(seams[:, list(seam_labels).index(JOINED)] / seams.sum(axis=1).clip(1e-12),
                     SURE, 1 - SURE)
    return _Scores(tile_label, other_label, logs[rows, tile_label], logs[rows, other_label],
                   np.log(joined), np.log1p(-joined))


class _Board:
    """One board's groups, their breaks and their mending."""

    def __init__(self, size: int, pairs: NDArray[np.int64], counts: Counter[str],
                 scores: _Scores, rules: PieceRules) -> None:
        self.size, self.pairs, self.counts = size, pairs, counts
        self.scores, self.rules = scores, rules
        self.neighbours = _neighbours(size)

    def groups(self, polyomino: NDArray[np.bool_], joined: NDArray[np.bool_]
               ) -> list[frozenset[int]]:
        """The polyomino squares in groups linked by joined seams (and lone ones)."""
        seen: set[int] = set()
        out = []
        for start in np.flatnonzero(polyomino):
            if int(start) in seen:
                continue
            group, todo = {int(start)}, [int(start)]
            while todo:
                square = todo.pop()
                for other, seam in self.neighbours[square]:
                    if joined[seam] and polyomino[other] and other not in group:
                        group.add(other)
                        todo.append(other)
            seen |= group
            out.append(frozenset(group))
        return out

    def shape(self, group: frozenset[int], joined: NDArray[np.bool_]) -> str | None:
        """The group's shape code if it is a piece of the set: all seams inside it joined."""
        code = _identify(normalise((q % self.size, q // self.size) for q in group))
        inside = all(joined[seam] for square in group for other, seam in self.neighbours[square]
                     if other in group)
        return code if inside and code in self.counts else None

    def breaks(self, groups: list[frozenset[int]], joined: NDArray[np.bool_]
               ) -> list[list[frozenset[int]]]:
        """Each break with the groups one of which is to be read again to mend it: a group
        that is no piece of the set alone; a shape seen more often than the set has it with
        every group of that shape."""
        shapes = [self.shape(group, joined) for group in groups]
        found = [[group] for group, code in zip(groups, shapes, strict=True) if code is None]
        for code, count in Counter(shapes).items():
            if code is not None and count > self.counts[code]:
                found.append([g for g, c in zip(groups, shapes, strict=True) if c == code])
        return found

    def mend(self, squares: NDArray[np.int64], joined: NDArray[np.bool_],
             polyomino: NDArray[np.bool_]) -> frozenset[int] | None:
        """Read the region around the first break that can be mended again, in place; that
        region, or None when nothing breaks that can be. (A group within `largest` can
        always be: some cut fits, every square no polyomino's.)"""
        groups = self.groups(polyomino, joined)
        for alternatives in self.breaks(groups, joined):
            region = self.mend_one(alternatives, groups, squares, joined, polyomino)
            if region is not None:
                return region
        return None

    def mend_one(self, alternatives: list[frozenset[int]], groups: list[frozenset[int]],
                 squares: NDArray[np.int64], joined: NDArray[np.bool_],
                 polyomino: NDArray[np.bool_]) -> frozenset[int] | None:
        """Read again the region of the alternative whose cut loses least, if any is small
        enough to search."""
        best: tuple[float, frozenset[int], dict[int, int]] | None = None
        for group in alternatives:
            if len(group) > self.rules.largest:
                continue
            region = self.region(group, groups, polyomino)
            score, cut = _Cut(self, region, self.budget(groups, region, joined)).best()
            gain = score - self.score(region, squares, joined)
            if best is None or gain > best[0]:
                best = (gain, region, cut)
        if best is None:
            return None
        self.apply(best[1], best[2], squares, joined)
        return best[1]

    def region(self, group: frozenset[int], groups: list[frozenset[int]],
               polyomino: NDArray[np.bool_]) -> frozenset[int]:
        """The group, the groups beside it, and the squares beside it that may be a
        polyomino's though not read so."""
        tile_chance = np.exp(self.scores.tile)
        region = set(group)
        for square in group:
            for other, _ in self.neighbours[square]:
                if polyomino[other]:
                    region |= next(g for g in groups if other in g)
                elif tile_chance[other] >= self.rules.reach:
                    region.add(other)
        return frozenset(region if len(region) <= self.rules.largest else group)

    def budget(self, groups: list[frozenset[int]], region: frozenset[int],
               joined: NDArray[np.bool_]) -> Counter[str]:
        """How many of each shape the region may hold: the set less the pieces outside it."""
        outside = Counter(self.shape(g, joined) for g in groups if not g & region)
        return Counter({code: count - outside[code] for code, count in self.counts.items()})

    def inner_seams(self, region: frozenset[int]) -> list[int]:
        return [seam for square in region for other, seam in self.neighbours[square]
                if other in region and square < other]

    def score(self, region: frozenset[int], squares: NDArray[np.int64],
              joined: NDArray[np.bool_]) -> float:
        """The log-probability of the region as read now."""
        s = self.scores
        total = sum(s.tile[q] if squares[q] == s.tile_label[q] else s.other[q] for q in region)
        return float(total + sum(s.joined[k] if joined[k] else s.apart[k]
                                 for k in self.inner_seams(region)))

    def apply(self, region: frozenset[int], cut: dict[int, int],
              squares: NDArray[np.int64], joined: NDArray[np.bool_]) -> None:
        s = self.scores
        for square, piece in cut.items():
            squares[square] = s.tile_label[square] if piece >= 0 else s.other_label[square]
        for seam in self.inner_seams(region):
            a, b = self.pairs[seam]
            joined[seam] = cut[int(a)] >= 0 and cut[int(a)] == cut[int(b)]


@cache
def _neighbours(size: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """Each square's neighbours with the seam between them."""
    found: list[list[tuple[int, int]]] = [[] for _ in range(size * size)]
    for seam, (a, b) in enumerate(seam_pairs(size, size)):
        found[a].append((int(b), seam))
        found[b].append((int(a), seam))
    return tuple(tuple(square) for square in found)


@cache
def _identify(cells: tuple[tuple[int, int], ...]) -> str | None:
    return identify(cells)


class _Cut:
    """The search, by branch and bound, for a region's most probable cut into pieces within
    `budget` and squares that are no polyomino's (piece number -1): square by square in index
    order, the lowest square left either is no polyomino's or starts a piece (a placement of
    a shape in the budget whose lowest square it is, lying within what is left)."""

    def __init__(self, board: _Board, region: frozenset[int], budget: Counter[str]) -> None:
        s = board.scores
        self.region = region
        seams = board.inner_seams(region)
        self.gain = {(int(board.pairs[k][0]), int(board.pairs[k][1])): float(s.joined[k] - s.apart[k])
                     for k in seams}
        self.base = float(sum(s.apart[k] for k in seams))
        self.tile = {q: float(s.tile[q]) for q in region}
        self.other = {q: float(s.other[q]) for q in region}
        mask = sum(1 << q for q in region)
        self.starts: dict[int, list[tuple[str, tuple[int, ...], float]]] = {q: [] for q in region}
        for code in budget:
            if budget[code] <= 0:
                continue
            for placement in placement_masks(board.size, code):
                if placement & ~mask == 0:
                    cells = tuple(q for q in region if placement >> q & 1)
                    self.starts[min(cells)].append((code, cells, self.piece_score(cells)))
        self.budget = budget
        self.steps = board.rules.steps
        self.found: tuple[float, dict[int, int]] | None = None

    def piece_score(self, cells: tuple[int, ...]) -> float:
        inside = set(cells)
        return sum(self.tile[q] for q in cells) + sum(
            gain for (a, b), gain in self.gain.items() if a in inside and b in inside)

    def bound(self, left: frozenset[int]) -> float:
        """No cut of the squares left scores more than each at its likelier read, with every
        seam between them at its likelier read."""
        return sum(max(self.tile[q], self.other[q]) for q in left) + sum(
            max(gain, 0.0) for (a, b), gain in self.gain.items() if a in left and b in left)

    def best(self) -> tuple[float, dict[int, int]]:
        """The best cut's log-probability and its piece number a square. The first cut
        searched, every square no polyomino's, always fits."""
        self.search(self.region, {}, Counter(), 0.0)
        assert self.found is not None
        return self.base + self.found[0], self.found[1]

    def search(self, left: frozenset[int], cut: dict[int, int], used: Counter[str],
               score: float) -> None:
        self.steps -= 1
        if self.found is not None and (self.steps < 0
                                       or score + self.bound(left) <= self.found[0]):
            return
        if not left:
            self.found = (score, dict(cut))
            return
        square = min(left)
        cut[square] = -1
        self.search(left - {square}, cut, used, score + self.other[square])
        del cut[square]
        number = len(set(cut.values()) - {-1})
        for code, cells, value in self.starts[square]:
            if used[code] >= self.budget[code] or not left.issuperset(cells):
                continue
            used[code] += 1
            cut.update(dict.fromkeys(cells, number))
            self.search(left - set(cells), cut, used, score + value)
            for q in cells:
                del cut[q]
            used[code] -= 1
