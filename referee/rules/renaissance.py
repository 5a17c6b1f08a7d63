"""Renaissance (RULES.md section 5): polyomino tiles placed on a 7x7 board with a blocked
centre, gold and silver markers that take them in phase 1, and a phase 2 where each player
places the tiles taken. Settings (and every assumption) come from `renaissance_ruleset`.

One ply is one action, so that each ply changes what a camera sees once:
- preparation: a tile placed (`PlaceTile`), Silver first;
- phase 1: a marker placed (`PlaceMarker`, pushing a line in on an occupied outer square),
  Gold first;
- phase 2 setup: a monomino (`PlaceMonomino`) or a marker placed, Gold first;
- phase 2: a turn is two plies by the same player: a tile placed, then a marker moved
  (`MoveMarker`).
A player who cannot act is skipped (no ply is written); a phase ends by itself."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import ClassVar

from referee.rules.core import Color, Geometry, Outcome, Termination
from referee.rules.polyomino import can_pack, centre, placement_masks, placements
from referee.rules.renaissance_notation import RenaissanceNotation
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
from referee.rules.renaissance_ruleset import RenaissanceSettings, default_settings


@dataclass(frozen=True)
class _Board:
    """Precomputed neighbourhoods and push lines of a size x size board."""

    size: int
    centre: int
    around_centre: frozenset[int]
    outer: frozenset[int]
    diagonal: tuple[tuple[int, ...], ...]
    orthogonal: tuple[tuple[int, ...], ...]
    king: tuple[tuple[int, ...], ...]
    push_lines: dict[int, tuple[int, ...]]  # outer square -> the line it pushes, itself first

    @classmethod
    def build(cls, settings: RenaissanceSettings) -> _Board:
        n = settings.size
        geometry = Geometry(n, n)

        def neighbours(square: int, steps: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
            f, r = geometry.file_of(square), geometry.rank_of(square)
            return tuple(geometry.square(f + df, r + dr) for df, dr in steps
                         if geometry.contains(f + df, r + dr))

        diagonal_steps = ((1, 1), (1, -1), (-1, 1), (-1, -1))
        orthogonal_steps = ((1, 0), (-1, 0), (0, 1), (0, -1))
        squares = geometry.squares()
        blocked = centre(n)
        outer = frozenset(sq for sq in squares
                          if {geometry.file_of(sq), geometry.rank_of(sq)} & {0, n - 1})
        push_lines = {}
        for square in outer:
            line = _push_line(geometry, square, settings)
            if len(line) > 1:
                push_lines[square] = line
        return cls(
            n, blocked, frozenset(neighbours(blocked, diagonal_steps + orthogonal_steps)),
            outer,
            tuple(neighbours(sq, diagonal_steps) for sq in squares),
            tuple(neighbours(sq, orthogonal_steps) for sq in squares),
            tuple(neighbours(sq, diagonal_steps + orthogonal_steps) for sq in squares),
            push_lines,
        )


def _push_line(geometry: Geometry, square: int, settings: RenaissanceSettings) -> tuple[int, ...]:
    """The squares a marker placed on the outer `square` pushes along, itself first: toward
    the centre, stopping before the middle line ("half") or at the far edge ("full"), and
    always before the blocked centre."""
    n, mid = geometry.files, geometry.files // 2
    f, r = geometry.file_of(square), geometry.rank_of(square)

    def toward(value: int) -> int:
        return (mid > value) - (mid < value)

    on_side, on_end = f in (0, n - 1), r in (0, n - 1)
    if on_side and on_end:
        df, dr = {"diagonal": (toward(f), toward(r)), "rank": (toward(f), 0),
                  "file": (0, toward(r)), "none": (0, 0)}[settings.corner_push]
    else:
        df, dr = (toward(f), 0) if on_side else (0, toward(r))
    line = [square]
    while (df or dr) and geometry.contains(f + df, r + dr):
        f, r = f + df, r + dr
        if settings.push_reach == "half" and ((df and f == mid) or (dr and r == mid)):
            break
        if geometry.square(f, r) == centre(n):
            break
        line.append(geometry.square(f, r))
    return tuple(line)


@dataclass(frozen=True)
class RenaissanceRules:
    settings: RenaissanceSettings = field(default_factory=default_settings)
    name: str = "renaissance"
    title: str = "Renaissance"
    player_names: tuple[str, str] = ("Gold", "Silver")
    help_text: ClassVar[str] = (
        "Type a tile and its squares ('L4 a1 b1 c1 a2'), a marker's square ('c3', 'a2>' for a "
        "push-in), a monomino ('M c3') or a marker move ('c5 - c6'); or 'moves', 'undo', "
        "'record', 'quit'.")
    _board: _Board = field(init=False, repr=False, compare=False)
    _notation: RenaissanceNotation = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_board", _Board.build(self.settings))
        object.__setattr__(self, "_notation", RenaissanceNotation(self))

    @property
    def variant(self) -> str:
        return self.settings.variant

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.settings.size, self.settings.size)

    # --- the Game protocol -------------------------------------------------------------

    def start(self) -> Position:
        size = self.settings.size
        cover = [EMPTY] * (size * size)
        cover[self._board.centre] = BLOCKED
        return Position(Phase.PREPARATION, Color.SECOND, tuple(cover), (0,) * (size * size),
                        (NOT_TAKEN,) * len(self.settings.tiles), self.settings.tiles)

    def legal_moves(self, position: Position) -> list[Move]:
        phase = position.phase
        if phase is Phase.PREPARATION:
            return list(self._tile_placements(position, self._unplaced(position)))
        if phase is Phase.PHASE1:
            return [PlaceMarker(sq) for sq in self._marker_squares(position, position.turn)]
        if phase is Phase.SETUP2:
            return self._setup2_moves(position)
        if phase is Phase.PLACE2:
            return list(self._tile_placements(position, position.tiles_in_hand(position.turn)))
        if phase is Phase.RELOCATE2:
            return list(self._relocations(position))
        return []

    def moves_to_look_for(self, position: Position) -> list[Move]:
        """`legal_moves`, but in the preparation every tile laid on free squares, the
        packing test of "forbid" left out (it costs most of the generation): a superset of
        the legal moves for a camera to look for, the one seen then checked by `is_legal`."""
        if position.phase is Phase.PREPARATION:
            return list(self._tile_placements(position, self._unplaced(position),
                                              packing=False))
        return self.legal_moves(position)

    def acts_only(self, position: Position) -> bool:
        """Whether every ply from `position` leaves the board (cover and markers) as the
        player's action leaves it, and so no two plies the same board: true but in phase 1
        (tiles taken, the board cleared at its end) and at the preparation's last tile (a
        monomino on every free square), and under "allow" at any of its tiles (the rest may
        fit nowhere and end it). A camera needs no ply played out to know its board."""
        if position.phase is Phase.PREPARATION:
            return self.settings.dead_end == "forbid" and len(self._unplaced(position)) > 1
        return position.phase is not Phase.PHASE1

    def is_legal(self, position: Position, move: Move) -> bool:
        """`move in legal_moves(position)`, without generating them all (preparation moves
        need a packing test each)."""
        phase = position.phase
        if isinstance(move, PlaceTile) and phase in (Phase.PREPARATION, Phase.PLACE2):
            tiles = (self._unplaced(position) if phase is Phase.PREPARATION
                     else position.tiles_in_hand(position.turn))
            if move.tile not in self._first_of_each_shape(position, tiles):
                return False
            code = position.inventory[move.tile]
            return (move.squares in placements(self.settings.size, code)
                    and self._may_place_tile(position, tiles, move))
        if isinstance(move, PlaceMarker) and phase is Phase.PHASE1:
            return move.square in self._marker_squares(position, position.turn)
        return move in self.legal_moves(position)

    def play(self, position: Position, move: Move) -> Position:
        mover = position.turn
        if isinstance(move, PlaceTile):
            cover = list(position.cover)
            for square in move.squares:
                cover[square] = move.tile
            after = replace(position, cover=tuple(cover))
            if position.phase is Phase.PREPARATION:
                return self._after_preparation(after, mover)
            return self._after_placement2(after, mover)
        if isinstance(move, PlaceMarker) and position.phase is Phase.PHASE1:
            return self._after_phase1(self._place_marker1(position, move.square), mover)
        if isinstance(move, MoveMarker):
            markers = list(position.markers)
            markers[move.to_square], markers[move.from_square] = markers[move.from_square], 0
            after = replace(position, markers=tuple(markers),
                            last_relocation=(move.from_square, move.to_square))
            return self._begin_turn2(after, mover.other)
        # phase 2 setup
        if isinstance(move, PlaceMonomino):
            cover = list(position.cover)
            cover[move.square] = MONOMINO
            left = list(position.monominoes_left)
            left[mover] -= 1
            after = replace(position, cover=tuple(cover), monominoes_left=(left[0], left[1]))
        else:
            markers = list(position.markers)
            markers[move.square] = mover + 1
            after = replace(position, markers=tuple(markers))
        return self._after_setup2(after, mover)

    def outcome(self, position: Position, repetitions: int) -> Outcome | None:
        """Only the score ends the game (no phase can repeat a position forever)."""
        if position.phase is not Phase.OVER:
            return None
        scores = self.scores(position)
        gold, silver = scores.total
        if gold == silver and self.settings.tie == "phase1":
            gold, silver = scores.phase1
        if gold == silver:
            return Outcome(Termination.SCORE, None)
        return Outcome(Termination.SCORE, Color.FIRST if gold > silver else Color.SECOND)

    def parse_move(self, position: Position, text: str) -> Move:
        return self._notation.parse(position, text)

    def move_text(self, position: Position, move: Move, *, compact: bool = False) -> str:
        return self._notation.text(position, move, compact=compact)

    def diagram(self, position: Position) -> str:
        return self._notation.diagram(position)

    def perft(self, position: Position, depth: int) -> int:
        if depth == 0:
            return 1
        if self.outcome(position, 1) is not None:
            return 0
        moves = self.legal_moves(position)
        if depth == 1:
            return len(moves)
        return sum(self.perft(self.play(position, move), depth - 1) for move in moves)

    # --- scoring ----------------------------------------------------------------------

    def scores(self, position: Position) -> Scores:
        """Phase 1 points (polyominoes taken plus hands) and, from phase 2 on, the penalty for
        the tiles still in hand; `total` is the game score."""
        settings = self.settings
        in_phase2 = position.phase in (Phase.PLACE2, Phase.RELOCATE2, Phase.OVER)
        phase1 = []
        penalty = []
        for color in Color:
            phase1.append(settings.phase1_points(
                position.inventory[t] for t in position.taken_by(color)))
            unplaced = position.tiles_in_hand(color) if in_phase2 else ()
            penalty.append(settings.penalty(position.inventory[t] for t in unplaced))
        return Scores((phase1[0], phase1[1]), (penalty[0], penalty[1]))

    # --- preparation ------------------------------------------------------------------

    def _unplaced(self, position: Position) -> tuple[int, ...]:
        on_board = position.tiles_on_board()
        return tuple(t for t, holder in enumerate(position.taken)
                     if holder == NOT_TAKEN and t not in on_board)

    @staticmethod
    def _first_of_each_shape(position: Position, tiles: tuple[int, ...]) -> dict[int, str]:
        """Tiles of one shape are alike: a placement always uses the lowest id."""
        firsts: dict[str, int] = {}
        for tile in tiles:
            firsts.setdefault(position.inventory[tile], tile)
        return {tile: code for code, tile in firsts.items()}

    def _free_mask(self, position: Position) -> int:
        return sum(1 << sq for sq in range(len(position.cover)) if position.is_free(sq))

    def _tile_placements(self, position: Position, tiles: tuple[int, ...], *,
                         first_only: bool = False, packing: bool = True) -> list[PlaceTile]:
        moves = []
        free = self._free_mask(position)
        size = self.settings.size
        for tile, code in self._first_of_each_shape(position, tiles).items():
            for squares, mask in zip(placements(size, code), placement_masks(size, code),
                                     strict=True):
                if mask & free == mask:
                    move = PlaceTile(tile, squares)
                    if not packing or self._may_place_tile(position, tiles, move, free):
                        moves.append(move)
                        if first_only:
                            return moves
        return moves

    def _may_place_tile(self, position: Position, tiles: tuple[int, ...], move: PlaceTile,
                        free: int | None = None) -> bool:
        """The squares are free; in preparation ("forbid") the other tiles still fit
        afterwards; in phase 2 the tile touches its owner's marker."""
        free = self._free_mask(position) if free is None else free
        mask = sum(1 << sq for sq in move.squares)
        if mask & free != mask:
            return False
        if position.phase is Phase.PREPARATION:
            if self.settings.dead_end == "allow":
                return True
            rest = list(tiles)
            rest.remove(move.tile)
            return can_pack(self.settings.size, free & ~mask,
                            tuple(position.inventory[t] for t in rest))
        return self._touches_own_marker(position, move.squares)

    def _touches_own_marker(self, position: Position, squares: tuple[int, ...]) -> bool:
        contact = self.settings.contact
        if contact == "none":
            return True
        near = self._board.orthogonal if contact == "orthogonal" else self._board.king
        own = position.turn + 1
        return any(position.markers[n] == own for sq in squares for n in near[sq])

    def _can_place_tile(self, position: Position, color: Color, tiles: tuple[int, ...]) -> bool:
        probe = replace(position, turn=color)
        return bool(tiles) and bool(self._tile_placements(probe, tiles, first_only=True))

    def _after_preparation(self, position: Position, mover: Color) -> Position:
        unplaced = self._unplaced(position)
        # Under "forbid" every placement leaves room for the rest, so the next player can
        # always place; only "allow" needs the (cheap, packing-free) test.
        if unplaced and self.settings.dead_end == "forbid":
            return replace(position, turn=mover.other)
        for player in (mover.other, mover):
            if unplaced and self._can_place_tile(position, player, unplaced):
                return replace(position, turn=player)
        # every tile placed (or, under "allow", the rest fits nowhere and leaves the game)
        taken = tuple(NOBODY if t in unplaced else holder
                      for t, holder in enumerate(position.taken))
        cover = tuple(MONOMINO if value == EMPTY else value for value in position.cover)
        phase1 = replace(position, phase=Phase.PHASE1, turn=Color.FIRST, cover=cover,
                         taken=taken)
        return self._after_phase1(phase1, Color.SECOND)

    # --- phase 1 ----------------------------------------------------------------------

    def _marker_squares(self, position: Position, color: Color) -> list[int]:
        """Where `color` may place a marker: an empty square around the centre, on the outer
        ring or diagonally next to an own marker; or an occupied outer square whose line can
        be pushed in."""
        return list(self._each_marker_square(position, color))

    def _can_place_marker(self, position: Position, color: Color) -> bool:
        """`_marker_squares` is not empty (the first found is enough: every ply asks)."""
        return next(self._each_marker_square(position, color), None) is not None

    def _each_marker_square(self, position: Position, color: Color) -> Iterator[int]:
        if position.markers_on_board(color) >= self.settings.markers:
            return
        board = self._board
        settings = self.settings
        markers = position.markers
        own = color + 1
        for square, value in enumerate(markers):
            if square == board.centre:
                continue
            if value == 0:
                if ((settings.around_centre and square in board.around_centre)
                        or (settings.outer_ring and square in board.outer)
                        or (settings.diagonal_to_own
                            and any(markers[d] == own for d in board.diagonal[square]))):
                    yield square
            elif self._can_push(position, square):
                yield square

    def _can_push(self, position: Position, square: int) -> bool:
        line = self._board.push_lines.get(square)
        return (self.settings.push and line is not None
                and any(position.markers[sq] == 0 for sq in line[1:]))

    def placed_markers(self, position: Position, square: int) -> tuple[int, ...]:
        """Phase 1: the markers once the player to move has placed one on `square` (pushing
        its line in if the square holds one), before any tile it completes is taken: what
        the board shows the moment the hand leaves it."""
        markers = list(position.markers)
        line = self.pushed_line(position, square)
        for i in range(len(line) - 1, 0, -1):
            markers[line[i]] = markers[line[i - 1]]
        markers[square] = position.turn + 1
        return tuple(markers)

    def pushed_line(self, position: Position, square: int) -> tuple[int, ...]:
        """Phase 1: the squares whose markers a marker placed on `square` pushes one square
        along, `square` first, up to the empty square the last one moves onto; none when the
        square is empty (a plain placement)."""
        if not position.markers[square]:
            return ()
        line = self._board.push_lines[square]
        gap = next(i for i in range(1, len(line)) if position.markers[line[i]] == 0)
        return line[:gap + 1]

    def _place_marker1(self, position: Position, square: int) -> Position:
        """Place (pushing the line in if the square holds a marker), then take every tile
        now fully covered."""
        markers = list(self.placed_markers(position, square))
        mover = position.turn
        cover = list(position.cover)
        taken = list(position.taken)
        for tile, squares in sorted(position.squares_by_tile().items()):
            if not all(markers[sq] for sq in squares):
                continue
            gold = sum(1 for sq in squares if markers[sq] == Color.FIRST + 1)
            silver = len(squares) - gold
            if gold != silver:
                taken[tile] = Color.FIRST if gold > silver else Color.SECOND
            else:
                taken[tile] = mover if self.settings.acquisition_tie == "mover" else mover.other
            for sq in squares:  # the markers go home, monominoes fill the squares
                markers[sq] = 0
                cover[sq] = MONOMINO
        return replace(position, markers=tuple(markers), cover=tuple(cover), taken=tuple(taken))

    def acquisitions(self, position: Position, move: Move) -> tuple[tuple[int, Color], ...]:
        """The tiles `move` (a phase 1 marker) takes, with who takes each."""
        if position.phase is not Phase.PHASE1 or not isinstance(move, PlaceMarker):
            return ()
        after = self._place_marker1(position, move.square)
        return tuple((t, Color(after.taken[t])) for t, before in enumerate(position.taken)
                     if before == NOT_TAKEN and after.taken[t] != NOT_TAKEN)

    def _after_phase1(self, position: Position, mover: Color) -> Position:
        if NOT_TAKEN in position.taken:
            for player in (mover.other, mover):
                if self._can_place_marker(position, player):
                    return replace(position, turn=player)
            position = self._resolve_untaken(position)
        size = self.settings.size
        cover = [EMPTY] * (size * size)
        cover[self._board.centre] = BLOCKED
        monos = self.settings.phase2_monominoes
        setup = replace(position, phase=Phase.SETUP2, turn=Color.FIRST, cover=tuple(cover),
                        markers=(0,) * (size * size), monominoes_left=(monos, monos))
        if not self._setup2_moves(setup):
            return self._begin_turn2(setup, Color.FIRST)
        return setup

    def _resolve_untaken(self, position: Position) -> Position:
        """Neither player can place a marker: tiles not taken go to the majority on them
        ("majority"), or to nobody."""
        taken = list(position.taken)
        for tile, holder in enumerate(position.taken):
            if holder != NOT_TAKEN:
                continue
            taken[tile] = NOBODY
            if self.settings.untaken == "majority":
                on = [position.markers[sq] for sq in position.tile_squares(tile)]
                gold, silver = on.count(Color.FIRST + 1), on.count(Color.SECOND + 1)
                if gold != silver:
                    taken[tile] = Color.FIRST if gold > silver else Color.SECOND
        return replace(position, taken=tuple(taken))

    # --- phase 2 ----------------------------------------------------------------------

    def _setup2_moves(self, position: Position) -> list[Move]:
        color = position.turn
        free = [sq for sq in range(len(position.cover)) if position.is_free(sq)]
        moves: list[Move] = []
        if position.monominoes_left[color] > 0:
            moves.extend(PlaceMonomino(sq) for sq in free)
        if position.markers_on_board(color) < self.settings.phase2_markers:
            moves.extend(PlaceMarker(sq) for sq in free)
        return moves

    def _after_setup2(self, position: Position, mover: Color) -> Position:
        for player in (mover.other, mover):
            probe = replace(position, turn=player)
            if self._setup2_moves(probe):
                return probe
        return self._begin_turn2(position, Color.FIRST)

    def _relocations(self, position: Position) -> list[MoveMarker]:
        free = [sq for sq in range(len(position.cover)) if position.is_free(sq)]
        back = (position.last_relocation[1], position.last_relocation[0])
        return [MoveMarker(frm, to) for frm, value in enumerate(position.markers) if value
                for to in free if (frm, to) != back]

    def _begin_turn2(self, position: Position, player: Color) -> Position:
        """`player`'s turn: place a tile if they can, else move a marker; the game ends when
        neither player can place a tile."""
        can = [self._can_place_tile(position, c, position.tiles_in_hand(c)) for c in Color]
        if not any(can):
            return replace(position, phase=Phase.OVER, turn=player)
        if can[player]:
            return replace(position, phase=Phase.PLACE2, turn=player)
        relocate = replace(position, phase=Phase.RELOCATE2, turn=player)
        if self._relocations(relocate):
            return relocate
        return replace(position, phase=Phase.PLACE2, turn=player.other)

    def _after_placement2(self, position: Position, mover: Color) -> Position:
        relocate = replace(position, phase=Phase.RELOCATE2, turn=mover)
        if self._relocations(relocate):
            return relocate
        return self._begin_turn2(position, mover.other)
