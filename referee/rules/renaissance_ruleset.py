"""Renaissance's settings (RULES.md section 5) as plain data, read from a ruleset file
(`rulesets/renaissance.toml` by default). Every **[assumption]** of RULES.md is an option
here; the hands table and the tile set are data too, so a user with the real box (or the
designer's full text) corrects them without touching code."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import RulesetError
from referee.rules.polyomino import SHAPE_ORDER, SHAPES, can_pack, centre, shape_size
from referee.rules.ruleset import Table, packaged_toml, read_toml, root_table

DEAD_END = ("forbid", "allow")
PUSH_REACH = ("half", "full")
CORNER_PUSH = ("diagonal", "rank", "file", "none")
ACQUISITION_TIE = ("mover", "opponent")
UNTAKEN = ("majority", "nobody")
CONTACT = ("orthogonal", "any", "none")
SCORE_TIE = ("draw", "phase1")


@dataclass(frozen=True)
class Hand:
    """A scoring hand of phase 1: holding at least `needs` tiles of each shape scores
    `points` (once); hands add up."""

    name: str
    needs: tuple[tuple[str, int], ...]
    points: int

    def is_made(self, shapes: Counter[str]) -> bool:
        return all(shapes[code] >= count for code, count in self.needs)


DEFAULT_HANDS = (
    Hand("Dominoes", (("I2", 4),), 4),
    Hand("Tri-I", (("I3", 2),), 2),
    Hand("Tri-V", (("V3", 2),), 2),
    Hand("Triominoes", (("I3", 2), ("V3", 2)), 4),
    Hand("Tetrominoes", (("I4", 1), ("O4", 1), ("T4", 1), ("S4", 1), ("L4", 1)), 15),
    Hand("Triple I", (("I2", 1), ("I3", 1), ("I4", 1)), 1),
)
DEFAULT_TILES = ("I4", "O4", "T4", "S4", "L4", "V3", "V3", "I3", "I3", "I2", "I2", "I2", "I2")


@dataclass(frozen=True)
class RenaissanceSettings:
    size: int = 7
    tiles: tuple[str, ...] = DEFAULT_TILES  # shape code per tile id, in SHAPE_ORDER
    dead_end: str = "forbid"  # preparation: forbid a placement after which the rest can't fit
    markers: int = 24
    around_centre: bool = True  # a marker may go on the 8 squares around the centre
    diagonal_to_own: bool = True  # …on a square diagonally next to an own marker
    outer_ring: bool = True  # …on the outer ring
    push: bool = True
    push_reach: str = "half"
    corner_push: str = "diagonal"
    acquisition_tie: str = "mover"
    untaken: str = "majority"
    polyomino_point: int = 1
    hands: tuple[Hand, ...] = DEFAULT_HANDS
    phase2_monominoes: int = 1
    phase2_markers: int = 3
    contact: str = "orthogonal"
    penalty_per_square: int = 1
    tie: str = "draw"
    variant: str = "7x7 standard"

    # --- scoring ----------------------------------------------------------------------

    def hands_made(self, shapes: Iterable[str]) -> tuple[Hand, ...]:
        counts = Counter(shapes)
        return tuple(hand for hand in self.hands if hand.is_made(counts))

    def phase1_points(self, shapes: Iterable[str]) -> int:
        """1 point per polyomino taken, plus every hand made."""
        shapes = list(shapes)
        return (self.polyomino_point * len(shapes)
                + sum(hand.points for hand in self.hands_made(shapes)))

    def penalty(self, unplaced: Iterable[str]) -> int:
        """Phase 2: points lost per square of every tile left unplaced."""
        return self.penalty_per_square * sum(shape_size(code) for code in unplaced)


def renaissance_from_toml(data: dict[str, Any], origin: str) -> RenaissanceSettings:
    root = root_table(data, origin, "renaissance")
    root.done(("game", "variant", "board", "tiles", "preparation", "phase1", "hands",
               "phase2", "score"))
    board = root.table("board")
    size = board.integer("size", 7, low=3, high=25)
    if size % 2 == 0:
        raise board.fail("size", f"is {size}: the board needs a centre square, so an odd size")
    board.done(("size",))
    tiles = _read_tiles(root.table("tiles"), size)
    prep = root.table("preparation", required=False)
    dead_end = prep.choice("dead_end", DEAD_END, "forbid")
    prep.done(("dead_end",))
    one = root.table("phase1", required=False)
    settings = dict(
        markers=one.integer("markers", 24, low=1, high=size * size),
        around_centre=one.boolean("around_centre", True),
        diagonal_to_own=one.boolean("diagonal_to_own", True),
        outer_ring=one.boolean("outer_ring", True),
        push=one.boolean("push", True),
        push_reach=one.choice("push_reach", PUSH_REACH, "half"),
        corner_push=one.choice("corner_push", CORNER_PUSH, "diagonal"),
        acquisition_tie=one.choice("acquisition_tie", ACQUISITION_TIE, "mover"),
        untaken=one.choice("untaken", UNTAKEN, "majority"),
        polyomino_point=one.integer("polyomino_point", 1, low=0),
    )
    one.done(("markers", "around_centre", "diagonal_to_own", "outer_ring", "push",
              "push_reach", "corner_push", "acquisition_tie", "untaken", "polyomino_point"))
    hands = tuple(_read_hand(table) for table in root.tables("hands"))
    two = root.table("phase2", required=False)
    phase2 = dict(
        phase2_monominoes=two.integer("monominoes", 1, low=0, high=size),
        phase2_markers=two.integer("markers", 3, low=0, high=size * 2),
        contact=two.choice("contact", CONTACT, "orthogonal"),
        penalty_per_square=two.integer("penalty_per_square", 1, low=0),
    )
    two.done(("monominoes", "markers", "contact", "penalty_per_square"))
    score = root.table("score", required=False)
    tie = score.choice("tie", SCORE_TIE, "draw")
    score.done(("tie",))
    return RenaissanceSettings(
        size=size, tiles=tiles, dead_end=dead_end, hands=hands, tie=tie,
        variant=root.string("variant", f"{size}x{size}"),
        **settings, **phase2,  # type: ignore[arg-type]
    )


def _check_shape(table: Table, key: str, code: str) -> str:
    if code not in SHAPES:
        known = ", ".join(SHAPE_ORDER)
        raise table.fail(key, f"names an unknown tile shape {code!r} (known: {known})")
    return code


def _read_tiles(table: Table, size: int) -> tuple[str, ...]:
    tiles: list[str] = []
    for code in table.data:
        _check_shape(table, code, code)
        tiles.extend([code] * table.integer(code, low=0, high=size * size))
    if not tiles:
        raise table.fail("", "must hold at least one tile")
    tiles.sort(key=SHAPE_ORDER.index)
    free = sum(1 << sq for sq in range(size * size)) & ~(1 << centre(size))
    if not can_pack(size, free, tuple(tiles)):
        raise table.fail("", f"holds tiles that cannot all fit on a {size}x{size} board")
    return tuple(tiles)


def _read_hand(table: Table) -> Hand:
    name = table.string("name")
    needs_table = table.table("needs")
    needs_table = Table(table.origin, f"{table.path} needs", needs_table.data)
    needs = []
    for code in needs_table.data:
        _check_shape(needs_table, code, code)
        needs.append((code, needs_table.integer(code, low=1)))
    if not needs:
        raise table.fail("needs", "must name at least one tile shape")
    points = table.integer("points")
    table.done(("name", "needs", "points"))
    return Hand(name, tuple(needs), points)


def load_renaissance_settings(path: str | Path) -> RenaissanceSettings:
    return renaissance_from_toml(read_toml(path), str(path))


def default_settings() -> RenaissanceSettings:
    try:
        return renaissance_from_toml(packaged_toml("renaissance.toml"), "renaissance.toml")
    except RulesetError as error:  # a broken packaged file is a bug, not a user error
        raise RuntimeError(str(error)) from error
