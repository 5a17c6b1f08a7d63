"""Renaissance's notation, written by hand on paper, one action a line:

- a tile placed (preparation, phase 2): its shape code and its squares, `L4 a1 b1 c1 a2`
  (compact `L4a1b1c1a2`); the code may be left out, the squares say the shape;
- a marker placed (phase 1, phase 2 setup): its square, `c3`; `a2>` when it pushes the
  markers of an occupied outer square in (the `>` may be left out);
- a monomino placed (phase 2 setup): `M c3` (compact `Mc3`);
- a marker moved (phase 2): `c5 - c6` (compact `c5-c6`).

A tile placed is the lowest-numbered tile of its shape still to place (tiles of a shape are
alike); `diagram` letters tiles A, B, … by number."""

from __future__ import annotations

import re
import string
from typing import Protocol

from referee.errors import IllegalMoveError, NotationError
from referee.rules.core import Color, Geometry
from referee.rules.polyomino import SHAPE_NAMES, SHAPES, identify_squares, placements
from referee.rules.renaissance_position import (
    BLOCKED,
    EMPTY,
    MONOMINO,
    NOBODY,
    NOT_TAKEN,
    Move,
    MoveMarker,
    Phase,
    PlaceMarker,
    PlaceMonomino,
    PlaceTile,
    Position,
    Scores,
)
from referee.rules.renaissance_ruleset import RenaissanceSettings


class NotatedRules(Protocol):
    """What the notation asks of the rules (`RenaissanceRules` has it): the notation is built
    by the rules, so it names them only through this."""

    @property
    def settings(self) -> RenaissanceSettings: ...

    @property
    def player_names(self) -> tuple[str, str]: ...

    @property
    def geometry(self) -> Geometry: ...

    def is_legal(self, position: Position, move: Move) -> bool: ...

    def scores(self, position: Position) -> Scores: ...

_SQUARE = r"[A-Za-z]\d+"
_SEPARATORS = re.compile(rf"^(?:{_SQUARE}|[\s,;\-])*$")
_MONOMINO = re.compile(r"^(?:M|monomino)\s*(?=[a-z]\d)", re.IGNORECASE)
_PUSH = re.compile(r"\s*(?:>|\bpush)\s*$", re.IGNORECASE)
EXAMPLES = {
    Phase.PREPARATION: "a tile and its squares, e.g. 'L4 a1 b1 c1 a2' or 'I2 c3 c4'",
    Phase.PHASE1: "a marker's square, e.g. 'c3' (or 'a2>' for a push-in)",
    Phase.SETUP2: "a marker's square 'c3' or a monomino 'M c3'",
    Phase.PLACE2: "a tile from your hand and its squares, e.g. 'T4 b2 c2 d2 c3'",
    Phase.RELOCATE2: "a marker moved, e.g. 'c5 - c6'",
    Phase.OVER: "nothing: the game is over",
}


class RenaissanceNotation:
    def __init__(self, rules: NotatedRules) -> None:
        self.rules = rules
        self.geometry = rules.geometry

    # --- text -------------------------------------------------------------------------

    def text(self, position: Position, move: Move, *, compact: bool = False) -> str:
        name = self.geometry.square_name
        if isinstance(move, PlaceTile):
            code = position.inventory[move.tile]
            squares = [name(sq) for sq in move.squares]
            return f"{code}{''.join(squares)}" if compact else f"{code} {' '.join(squares)}"
        if isinstance(move, PlaceMonomino):
            return f"M{name(move.square)}" if compact else f"M {name(move.square)}"
        if isinstance(move, MoveMarker):
            sep = "-" if compact else " - "
            return f"{name(move.from_square)}{sep}{name(move.to_square)}"
        push = position.phase is Phase.PHASE1 and position.markers[move.square] != 0
        return name(move.square) + (">" if push else "")

    # --- parsing ----------------------------------------------------------------------

    def parse(self, position: Position, text: str) -> Move:
        stripped = text.strip()
        phase = position.phase
        if phase is Phase.OVER:
            raise IllegalMoveError("the game is over")
        try:
            if phase in (Phase.PREPARATION, Phase.PLACE2):
                move: Move = self._parse_tile(position, stripped)
            elif phase is Phase.RELOCATE2:
                move = self._parse_relocation(position, stripped)
            else:
                move = self._parse_placement(position, stripped)
        except NotationError as error:
            raise NotationError(f"{error}; in the {phase.value} write {EXAMPLES[phase]}") from None
        if not self.rules.is_legal(position, move):
            raise IllegalMoveError(self._why_not(position, move))
        return move

    def _squares(self, text: str) -> list[int]:
        if not _SEPARATORS.match(text):
            raise NotationError(f"{text!r} is not a move")
        return [self.geometry.parse_square(token) for token in re.findall(_SQUARE, text)]

    def _parse_tile(self, position: Position, text: str) -> PlaceTile:
        code = None
        head = re.match(r"^([A-Z]\d)(?=[\s,:a-z]|$)", text)
        if head and head.group(1) in SHAPES:
            code, text = head.group(1), text[2:].lstrip(" :")
        squares = self._squares(text)
        if not squares:
            raise NotationError(f"{text!r} names no square")
        if len(set(squares)) != len(squares):
            raise NotationError(f"{text!r} names a square twice")
        found = identify_squares(self.geometry.files, squares)
        if found is None:
            raise IllegalMoveError(f"{' '.join(map(self.geometry.square_name, squares))} do not "
                                   "form the shape of any tile")
        if code is not None and code != found:
            raise IllegalMoveError(f"those squares form a {SHAPE_NAMES[found]} ({found}), not "
                                   f"a {SHAPE_NAMES[code]} ({code})")
        tile = self._tile_to_place(position, found)
        return PlaceTile(tile, tuple(sorted(squares)))

    def _tile_to_place(self, position: Position, code: str) -> int:
        if position.phase is Phase.PREPARATION:
            on_board = position.tiles_on_board()
            tiles = [t for t, held in enumerate(position.taken)
                     if held == NOT_TAKEN and t not in on_board]
            where = "left to place"
        else:
            tiles = list(position.tiles_in_hand(position.turn))
            where = f"in {self.rules.player_names[position.turn]}'s hand"
        for tile in tiles:
            if position.inventory[tile] == code:
                return tile
        raise IllegalMoveError(f"there is no {SHAPE_NAMES[code]} ({code}) {where}")

    def _parse_placement(self, position: Position, text: str) -> Move:
        monomino = _MONOMINO.match(text)
        if monomino:
            if position.phase is not Phase.SETUP2:
                raise IllegalMoveError(f"no monomino is placed in the {position.phase.value}")
            squares = self._squares(text[monomino.end():])
            if len(squares) != 1:
                raise NotationError(f"{text!r} must name one square")
            return PlaceMonomino(squares[0])
        push = _PUSH.search(text)
        body = text[: push.start()] if push else text
        squares = self._squares(body)
        if len(squares) != 1:
            raise NotationError(f"{text!r} must name one square")
        square = squares[0]
        occupied = position.markers[square] != 0
        if push and not occupied:
            raise IllegalMoveError(f"{text!r} marks a push-in, but "
                                   f"{self.geometry.square_name(square)} holds no marker")
        return PlaceMarker(square)

    def _parse_relocation(self, position: Position, text: str) -> MoveMarker:
        squares = self._squares(text)
        if len(squares) != 2:
            raise NotationError(f"{text!r} must name two squares, from and to")
        return MoveMarker(squares[0], squares[1])

    # --- reasons ----------------------------------------------------------------------

    def _why_not(self, position: Position, move: Move) -> str:
        name = self.geometry.square_name
        player = self.rules.player_names[position.turn]
        if isinstance(move, PlaceTile):
            return self._why_not_tile(position, move)
        if isinstance(move, MoveMarker):
            if position.markers[move.from_square] == 0:
                return f"there is no marker on {name(move.from_square)}"
            if not position.is_free(move.to_square):
                return f"{name(move.to_square)} is not empty"
            return "a marker may not go straight back to the square it just left"
        square = move.square
        where = name(square)
        if position.cover[square] == BLOCKED:
            return "nothing may be placed on the centre"
        if position.phase is Phase.SETUP2:
            if isinstance(move, PlaceMonomino) and position.monominoes_left[position.turn] == 0:
                return f"{player} has no monomino left to place"
            if isinstance(move, PlaceMarker) and not position.is_free(square):
                return f"{where} is not empty"
            if isinstance(move, PlaceMarker):
                return f"{player} has no marker left to place"
            return f"{where} is not empty"
        if position.markers_on_board(position.turn) >= self.rules.settings.markers:
            return f"{player} has no marker left in hand"
        if position.markers[square]:
            return (f"{where} holds a marker and its line cannot be pushed in (not an outer "
                    "square, or full up to the centre)")
        return (f"{where} is not around the centre, on the outer ring, or diagonally next to "
                f"a marker of {player}'s")

    def _why_not_tile(self, position: Position, move: PlaceTile) -> str:
        name = self.geometry.square_name
        code = position.inventory[move.tile]
        if move.squares not in placements(self.geometry.files, code):
            return "a tile may not cover the centre"
        for square in move.squares:
            if position.cover[square] == BLOCKED:
                return "a tile may not cover the centre"
            if not position.is_free(square):
                return f"{name(square)} is not empty"
        if position.phase is Phase.PREPARATION:
            return ("after that placement the tiles still to place could not all fit "
                    "(dead_end = \"forbid\")")
        return (f"the {SHAPE_NAMES[code]} must touch a square next to a marker of "
                f"{self.rules.player_names[position.turn]}'s (contact = "
                f"\"{self.rules.settings.contact}\")")

    # --- diagram ----------------------------------------------------------------------

    def diagram(self, position: Position) -> str:
        """Tiles as letters A, B, … (by tile number), `+` a monomino, `#` the centre, `.` an
        empty square; a marker follows its square as `g` (Gold) or `s` (Silver)."""
        size = self.geometry.files
        lines = []
        for rank in reversed(range(size)):
            cells = []
            for file in range(size):
                square = rank * size + file
                value = position.cover[square]
                cover = {EMPTY: ".", MONOMINO: "+", BLOCKED: "#"}.get(
                    value, string.ascii_uppercase[value % 26])
                marker = {0: " ", 1: "g", 2: "s"}[position.markers[square]]
                cells.append(cover + marker)
            lines.append(f"{rank + 1:>2} " + " ".join(cells))
        lines.append("   " + "  ".join(string.ascii_lowercase[:size]))
        lines.append(self._status(position))
        return "\n".join(lines)

    def _status(self, position: Position) -> str:
        names = self.rules.player_names
        letters = string.ascii_uppercase
        tiles = " ".join(f"{letters[t % 26]}={code}" for t, code in enumerate(position.inventory))
        parts = [f"Tiles: {tiles}"]
        scores = self.rules.scores(position)
        for color in Color:
            taken = " ".join(position.inventory[t] for t in position.taken_by(color)) or "-"
            line = f"{names[color]}: took {taken}; score {scores.total[color]}"
            if position.phase is Phase.PHASE1:
                left = self.rules.settings.markers - position.markers_on_board(color)
                line += f"; {left} markers in hand"
            if position.phase in (Phase.PLACE2, Phase.RELOCATE2):
                hand = " ".join(position.inventory[t] for t in position.tiles_in_hand(color))
                line += f"; in hand {hand or '-'}"
            parts.append(line)
        out = [t for t, held in enumerate(position.taken) if held == NOBODY]
        if out:
            parts.append("Out of the game: " + " ".join(position.inventory[t] for t in out))
        parts.append(f"Phase: {position.phase.value}; {names[position.turn]} to move"
                     if position.phase is not Phase.OVER else "Phase: game over")
        return "\n".join(parts)
