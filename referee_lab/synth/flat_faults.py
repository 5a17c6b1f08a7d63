"""Renaissance's faults, staged with tiles and markers as a player makes them (`_flat_acts`
in footage.py hands each ply's act to `FlatFaults.stage`):

- `illegal`: before a ply, its player lays what the rules forbid (in the preparation or phase
  2 a tile where `is_legal` refuses it, else a tile of a shape no longer to be placed; in
  phase 1 a marker on a square `legal_moves` does not allow), leaves it, lifts it off;
- `shifted`: a tile laid one square off its true placement (that placement itself legal),
  left, then slid into its true squares;
- `knocked`: after a phase 1 ply, a marker knocked onto a neighbouring square without one,
  left, then put back;
- `linger`: a hand over the board for 5.5–7 s before a ply;
- `wrongtaken`: at a ply that takes a polyomino, once the marker is down, a neighbouring
  polyomino not taken is lifted off with its markers, left, put back; then the one taken is.

Each fault is staged at one ply, drawn among those where it can be; a fault that no ply
allows is left out (with a warning)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from referee.rules.core import Match
from referee.rules.polyomino import placements
from referee.rules.renaissance_position import (
    BLOCKED,
    NOT_TAKEN,
    Phase,
    PlaceMarker,
    PlaceTile,
    Position,
)
from referee_lab.synth.director import Act, Step
from referee_lab.synth.games import GameSpec, contents_from_position, square_names
from referee_lab.synth.truth import EMPTY, Contents, SquareContent

log = logging.getLogger(__name__)
FLAT_FAULTS = ("illegal", "shifted", "knocked", "linger", "wrongtaken")
HOLD_S = 1.5  # how long the board is left still with a fault on it
COLOURS = ("gold", "silver")  # marker colour by player


@dataclass(frozen=True)
class FlatPly:
    """A ply as `_flat_acts` stages it: index, text, mover, move, the rules' contents before
    and after it, and its act (without faults)."""

    index: int
    text: str
    mover: int
    move: Any
    before: Contents
    after: Contents
    act: Act


Changes = tuple[tuple[str, SquareContent], ...]


class FlatFaults:
    """Which ply each fault asked for is staged at, and the acts that stage it."""

    def __init__(self, spec: GameSpec, match: Match[Any, Any], plies: list[FlatPly],
                 faults: tuple[str, ...], rng: np.random.Generator) -> None:
        self.spec, self.match, self.rng = spec, match, rng
        self.game: Any = match.game
        self.names = square_names(spec.files, spec.ranks)
        self.at: dict[str, int] = {}
        for fault in FLAT_FAULTS:
            if fault not in faults:
                continue
            able = [p.index for p in plies if self._options(fault, p)]
            if able:
                self.at[fault] = able[int(rng.integers(len(able)))]
            else:
                log.warning("fault %r: no ply of this footage allows it; left out", fault)

    def stage(self, ply: FlatPly) -> list[Act]:
        """The acts of `ply` with the faults staged at it."""
        at = {fault for fault, index in self.at.items() if index == ply.index}
        acts: list[Act] = []
        if "linger" in at:
            seconds = float(self.rng.uniform(5.5, 7.0))
            acts.append(Act("a hand over the board", "linger", ply.mover,
                            (Step("hover", self.names[len(self.names) // 2], seconds=seconds),),
                            ply.index, f"before ply {ply.index + 1}"))
        if "illegal" in at:
            acts += self._illegal(ply)
        if "shifted" in at:
            acts += self._shifted(ply)
        elif "wrongtaken" in at:
            acts += self._wrong_taken(ply)
        else:
            acts.append(ply.act)
        if "knocked" in at:
            acts += self._knocked(ply)
        return acts

    def _pick(self, options: list[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def _options(self, fault: str, ply: FlatPly) -> list[Any]:
        if fault == "illegal":
            return self._illegal_options(ply)
        if fault == "shifted":
            return self._shifted_options(ply)
        if fault == "knocked":
            return self._knock_options(ply)
        if fault == "wrongtaken":
            return self._wrong_options(ply)
        return [ply.index]  # linger: any ply

    # --- illegal: something the rules forbid laid, then lifted off -----------------------

    def _illegal_options(self, ply: FlatPly) -> list[tuple[str, Changes]]:
        position: Position = self.match.positions[ply.index]
        if isinstance(ply.move, PlaceTile):
            return self._illegal_tiles(position)
        if isinstance(ply.move, PlaceMarker) and position.phase is Phase.PHASE1:
            legal = {m.square for m in self.game.legal_moves(position)}
            marker = COLOURS[int(position.turn)]
            return [(f"illegal: {name}", ((name, replace(ply.before[name], marker=marker)),))
                    for sq, name in enumerate(self.names)
                    if position.markers[sq] == 0 and position.cover[sq] != BLOCKED
                    and sq not in legal]
        return []

    def _illegal_tiles(self, position: Position) -> list[tuple[str, Changes]]:
        """A tile to place laid on free squares where the rules refuse it; where there is
        none, a tile of a shape that is no longer to be placed (one from outside the set)."""
        size, inventory = self.spec.files, position.inventory
        if position.phase is Phase.PREPARATION:
            on_board = position.tiles_on_board()
            tiles = [t for t, holder in enumerate(position.taken)
                     if holder == NOT_TAKEN and t not in on_board]
        else:
            tiles = list(position.tiles_in_hand(position.turn))
        firsts = {inventory[t]: t for t in reversed(tiles)}  # the lowest id of each shape
        free = [(code, squares) for code in sorted(set(inventory))
                for squares in placements(size, code)
                if all(position.is_free(sq) for sq in squares)]
        refused = [PlaceTile(firsts[code], squares) for code, squares in free
                   if code in firsts
                   and not self.game.is_legal(position, PlaceTile(firsts[code], squares))]
        options = [(f"illegal: {self.game.move_text(position, m)}",
                    self._tile_changes(m.squares, m.tile + 1)) for m in refused]
        if options:
            return options
        spare = len(inventory) + 1  # a tile id no tile of the set has
        return [(f"illegal: {code} {' '.join(self.names[sq] for sq in squares)}",
                 self._tile_changes(squares, spare))
                for code, squares in free if code not in firsts]

    def _tile_changes(self, squares: tuple[int, ...], value: int) -> Changes:
        return tuple((self.names[sq], SquareContent("tile", None, value)) for sq in squares)

    def _illegal(self, ply: FlatPly) -> list[Act]:
        text, changes = self._pick(self._illegal_options(ply))
        cells = tuple(sq for sq, _content in changes)
        back = tuple((sq, ply.before[sq]) for sq in cells)
        return [Act(text, "illegal", ply.mover, (Step("lay", cells[0], changes=changes,
                                                      carry=cells),),
                    ply.index, "illegal ply on the board", hold=HOLD_S),
                Act(f"take back {' '.join(cells)}", "takeback", ply.mover,
                    (Step("lift", cells[0], changes=back, carry=cells),), ply.index,
                    f"before ply {ply.index + 1}")]

    # --- shifted: a tile a square off, slid into place ------------------------------------

    def _shifted_options(self, ply: FlatPly) -> list[PlaceTile]:
        """Legal placements of the ply's tile one square off its own, where the tile laid
        is all that changes (not the preparation's last tile, which the monominoes follow)."""
        move = ply.move
        if not isinstance(move, PlaceTile) or len(ply.act.steps) != 1:
            return []
        position: Position = self.match.positions[ply.index]
        size = self.spec.files
        options = []
        for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            cells = [(sq % size + df, sq // size + dr) for sq in move.squares]
            if not all(0 <= f < size and 0 <= r < size for f, r in cells):
                continue
            squares = tuple(sorted(r * size + f for f, r in cells))
            off = PlaceTile(move.tile, squares)
            if not all(position.is_free(sq) for sq in squares) or not self.game.is_legal(
                    position, off):
                continue
            laid = dict(ply.before)
            laid.update(self._tile_changes(squares, move.tile + 1))
            if contents_from_position(self.spec, self.game.play(position, off), "") == laid:
                options.append(off)
        return options

    def _shifted(self, ply: FlatPly) -> list[Act]:
        off: PlaceTile = self._pick(self._shifted_options(ply))
        position = self.match.positions[ply.index]
        cells = tuple(self.names[sq] for sq in off.squares)
        true = tuple(self.names[sq] for sq in ply.move.squares)
        text = f"{ply.index // 2 + 1}. {self.game.move_text(position, off)}"
        return [Act(text, "shifted", ply.mover,
                    (Step("lay", cells[0], changes=self._tile_changes(off.squares,
                                                                      off.tile + 1),
                          carry=cells),), ply.index, "tile laid a square off", hold=HOLD_S),
                replace(ply.act, steps=(Step("slide", cells[0], true[0], changes=tuple(
                    (sq, ply.after[sq]) for sq in true), carry=cells),))]

    # --- knocked: a marker knocked to the next square, put back --------------------------

    def _knock_options(self, ply: FlatPly) -> list[tuple[str, str]]:
        """(from, to): a marker on the board after a phase 1 ply and a square beside it
        without one, where the board then looks like no ply from there or from before."""
        index = ply.index
        after: Position = self.match.positions[index + 1]
        if self.match.positions[index].phase is not Phase.PHASE1 or after.phase is not Phase.PHASE1:
            return []
        seen = {_look(p.cover, p.markers) for p in (after, self.match.positions[index])}
        for position in (after, self.match.positions[index]):
            for move in self.game.legal_moves(position):
                played = self.game.play(position, move)
                seen.add(_look(played.cover, played.markers))
                seen.add(_look(position.cover, self.game.placed_markers(position, move.square)))
        size = self.spec.files
        options = []
        for sq, value in enumerate(after.markers):
            if not value:
                continue
            f, r = sq % size, sq // size
            for nf, nr in ((f + 1, r), (f - 1, r), (f, r + 1), (f, r - 1)):
                near = nr * size + nf
                if not (0 <= nf < size and 0 <= nr < size) or after.markers[near] or \
                        after.cover[near] == BLOCKED:
                    continue
                markers = list(after.markers)
                markers[near], markers[sq] = value, 0
                if _look(after.cover, tuple(markers)) not in seen:
                    options.append((self.names[sq], self.names[near]))
        return options

    def _knocked(self, ply: FlatPly) -> list[Act]:
        a, b = self._pick(self._knock_options(ply))
        after = ply.after
        mover = int(self.match.positions[ply.index + 1].turn)  # the next player's hand
        knocked = ((a, replace(after[a], marker=None)), (b, replace(after[b],
                                                                    marker=after[a].marker)))
        return [Act(f"knock {a}", "knock", mover, (Step("shift", a, b, changes=knocked),),
                    ply.index, f"marker on {a} knocked to {b}", hold=HOLD_S),
                Act(f"put {a} back", "right", mover,
                    (Step("shift", b, a, changes=((b, after[b]), (a, after[a]))),), ply.index,
                    f"after ply {ply.index + 1}")]

    # --- wrongtaken: a neighbouring polyomino lifted instead, put back --------------------

    def _wrong_options(self, ply: FlatPly) -> list[tuple[str, ...]]:
        """The squares of each polyomino beside one the ply takes, not taken itself, those
        with markers on them first (not at the end of phase 1, whose clearing lifts every
        polyomino)."""
        index = ply.index
        position: Position = self.match.positions[index]
        if self.match.positions[index + 1].phase is not Phase.PHASE1:
            return []
        taken = {t for t, _holder in self.game.acquisitions(position, ply.move)}
        if not taken:
            return []
        size = self.spec.files
        near = {sq + d for t in taken for sq in position.tile_squares(t)
                for d in (1, -1, size, -size)
                if 0 <= sq + d < size * size and (abs(d) == size or (sq + d) // size == sq // size)}
        others = sorted({position.cover[sq] for sq in near if position.cover[sq] >= 0} - taken)
        options = [position.tile_squares(t) for t in others]
        marked = [s for s in options if any(position.markers[sq] for sq in s)]
        return [tuple(self.names[sq] for sq in s) for s in marked or options]

    def _wrong_taken(self, ply: FlatPly) -> list[Act]:
        cells = self._pick(self._wrong_options(ply))
        acted = dict(ply.before)
        acted.update(ply.act.steps[0].changes)
        under_way = f"ply {ply.index + 1} under way"
        gone = tuple((sq, EMPTY) for sq in cells)
        back = tuple((sq, acted[sq]) for sq in cells)
        return [replace(ply.act, steps=ply.act.steps[:1], note=under_way),
                Act(f"lift {' '.join(cells)}", "wrongtaken", ply.mover,
                    (Step("lift", cells[0], changes=gone, carry=cells),), ply.index,
                    "wrong polyomino lifted", hold=HOLD_S),
                Act(f"put back {' '.join(cells)}", "putback", ply.mover,
                    (Step("lay", cells[0], changes=back, carry=cells),), ply.index, under_way),
                replace(ply.act, kind="take", steps=ply.act.steps[1:])]


def _look(cover: tuple[int, ...], markers: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The board as the camera tells it: each square's cover (any tile alike) and marker."""
    return tuple((max(c, 0), m) for c, m in zip(cover, markers, strict=True))
