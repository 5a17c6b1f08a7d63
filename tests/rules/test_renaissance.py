"""Renaissance (RULES.md section 5): shapes, preparation, phase 1, phase 2, every hand and
the score, notation and record round trips, and the board's symmetry."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import IllegalMoveError, NotationError, RulesetError
from referee.rules import find_game
from referee.rules.core import Color, Match, Termination
from referee.rules.polyomino import (
    SHAPES,
    TRANSFORMS,
    can_pack,
    identify,
    orientations,
    placements,
    symmetries,
    transform,
)
from referee.rules.records import format_record, parse_record, read_record, replay
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import (
    BLOCKED,
    EMPTY,
    MONOMINO,
    NOBODY,
    NOT_TAKEN,
    Cover,
    Move,
    MoveMarker,
    Phase,
    PlaceMarker,
    PlaceMonomino,
    PlaceTile,
    Position,
)
from referee.rules.renaissance_ruleset import (
    DEFAULT_TILES,
    RenaissanceSettings,
    default_settings,
    renaissance_from_toml,
)
from referee.rules.ruleset import packaged_toml
from tests import DATA

RECORDS = DATA / "records"
GAME = find_game("renaissance")
assert isinstance(GAME, RenaissanceRules)
G, S = Color.FIRST, Color.SECOND
SIZE = 7
# tile ids of the default set
I4, O4, T4, S4, L4, V3A, V3B, I3A, I3B, I2A, I2B, I2C, I2D = range(13)


def sq(name: str) -> int:
    return GAME.geometry.parse_square(name)


def sqs(text: str) -> tuple[int, ...]:
    return tuple(sorted(sq(name) for name in text.split()))


def rules(**changes: object) -> RenaissanceRules:
    return RenaissanceRules(replace(default_settings(), **changes))  # type: ignore[arg-type]


def phase1(tiles: dict[int, str], markers: dict[str, Color] | None = None, turn: Color = G,
           *, game: RenaissanceRules = GAME) -> Position:
    """A phase 1 position: the listed tiles on their squares, every other square a monomino,
    the tiles not listed out of the game."""
    cover = [MONOMINO] * (SIZE * SIZE)
    cover[sq("d4")] = BLOCKED
    taken = [NOBODY] * len(game.settings.tiles)
    for tile, squares in tiles.items():
        for square in sqs(squares):
            cover[square] = tile
        taken[tile] = NOT_TAKEN
    return Position(Phase.PHASE1, turn, tuple(cover), _markers(markers), tuple(taken),
                    game.settings.tiles)


def phase2(hands: dict[int, Color], markers: dict[str, Color] | None = None, turn: Color = G,
           *, placed: dict[int, str] | None = None, phase: Phase = Phase.PLACE2,
           monominoes: str = "") -> Position:
    cover = [EMPTY] * (SIZE * SIZE)
    cover[sq("d4")] = BLOCKED
    for tile, squares in (placed or {}).items():
        for square in sqs(squares):
            cover[square] = tile
    for square in sqs(monominoes):
        cover[square] = MONOMINO
    taken = [NOBODY] * 13
    for tile, color in hands.items():
        taken[tile] = color
    return Position(phase, turn, tuple(cover), _markers(markers), tuple(taken), DEFAULT_TILES)


def _markers(markers: dict[str, Color] | None) -> tuple[int, ...]:
    values = [0] * (SIZE * SIZE)
    for name, color in (markers or {}).items():
        values[sq(name)] = color + 1
    return tuple(values)


def marker_squares(pos: Position, game: RenaissanceRules = GAME) -> set[str]:
    return {game.geometry.square_name(m.square) for m in game.legal_moves(pos)
            if isinstance(m, PlaceMarker)}


def play(pos: Position, *texts: str, game: RenaissanceRules = GAME) -> Position:
    for text in texts:
        pos = game.play(pos, game.parse_move(pos, text))
    return pos


def markers_of(pos: Position) -> dict[str, str]:
    return {GAME.geometry.square_name(s): "gs"[v - 1] for s, v in enumerate(pos.markers) if v}


# --- shapes and the board ------------------------------------------------------------------


def test_every_shape_is_identified_under_rotation_reflection_and_translation() -> None:
    for code, cells in SHAPES.items():
        for matrix in TRANSFORMS:
            moved = [transform(matrix, x, y) for x, y in cells]
            assert identify((x + 5, y - 3) for x, y in moved) == code
    counts = {code: len(orientations(cells)) for code, cells in SHAPES.items()}
    assert counts == {"I2": 2, "I3": 2, "V3": 4, "I4": 2, "O4": 1, "T4": 4, "S4": 4, "L4": 8}


@pytest.mark.parametrize("cells", [
    [(0, 0)], [(0, 0), (2, 0)], [(0, 0), (1, 1)], [(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)],
    [(0, 0), (0, 0), (1, 0)], [(0, 0), (1, 0), (0, 1), (1, 1), (2, 2)],
])
def test_cells_that_form_no_tile_are_not_identified(cells: list[tuple[int, int]]) -> None:
    assert identify(cells) is None


def test_the_board_has_48_squares_around_a_blocked_centre() -> None:
    start = GAME.start()
    kinds = [start.contents(s).cover for s in range(SIZE * SIZE)]
    assert kinds.count(Cover.EMPTY) == 48 and start.contents(sq("d4")).cover is Cover.BLOCKED
    for code in SHAPES:
        assert all(sq("d4") not in squares for squares in placements(SIZE, code))
    assert all(m[sq("d4")] == sq("d4") for m in symmetries(SIZE))
    assert len({m for m in symmetries(SIZE)}) == 8


def test_the_default_tile_set() -> None:
    assert sorted(DEFAULT_TILES) == sorted(["I2"] * 4 + ["I3", "V3"] * 2
                                           + ["I4", "O4", "T4", "S4", "L4"])
    assert sum(len(SHAPES[c]) for c in DEFAULT_TILES) == 40


# --- preparation ---------------------------------------------------------------------------


def test_silver_places_first_then_the_players_alternate() -> None:
    start = GAME.start()
    assert start.phase is Phase.PREPARATION and start.turn is S
    after = play(start, "I2 a1 b1")
    assert after.turn is G and after.contents(sq("a1")).tile == I2A
    after = play(after, "c1 d1")  # the shape code may be left out
    assert after.turn is S and after.contents(sq("d1")) .tile == I2B
    assert after.contents(sq("c1")).shape == "I2"


def test_a_tile_must_fit_on_empty_squares_and_match_its_code() -> None:
    pos = play(GAME.start(), "L4 a1 b1 c1 a2")
    with pytest.raises(IllegalMoveError, match="a1 is not empty"):
        GAME.parse_move(pos, "I4 a1 a2 a3 a4")
    with pytest.raises(IllegalMoveError, match="centre"):
        GAME.parse_move(pos, "I4 a4 b4 c4 d4")
    with pytest.raises(IllegalMoveError, match=r"form a I-triomino .* not a domino"):
        GAME.parse_move(pos, "I2 c3 c4 c5")
    with pytest.raises(IllegalMoveError, match="do not form the shape of any tile"):
        GAME.parse_move(pos, "c3 c5")
    with pytest.raises(IllegalMoveError, match="no L-tetromino"):
        GAME.parse_move(pos, "L4 e1 f1 g1 e2")
    with pytest.raises(NotationError, match="write a tile"):
        GAME.parse_move(pos, "put it there")


def test_forbid_refuses_a_placement_after_which_the_rest_cannot_fit() -> None:
    game = rules(tiles=("I4", "I2"))
    start = game.start()
    cover = [MONOMINO if s >= SIZE else c for s, c in enumerate(start.cover)]  # only rank 1
    pos = replace(start, cover=tuple(cover))
    assert game.is_legal(pos, PlaceTile(1, sqs("a1 b1")))
    assert not game.is_legal(pos, PlaceTile(1, sqs("c1 d1")))  # a1 b1 + e1 f1 g1: no I4
    with pytest.raises(IllegalMoveError, match="could not all fit"):
        game.parse_move(pos, "I2 c1 d1")
    allow = rules(tiles=("I4", "I2"), dead_end="allow")
    after = allow.play(pos, allow.parse_move(pos, "I2 c1 d1"))
    # neither player can place the I4: it leaves the game and phase 1 starts
    assert after.phase is Phase.PHASE1 and after.turn is G and after.taken[0] == NOBODY


def test_preparation_ends_with_monominoes_on_the_leftover_squares() -> None:
    match = Match(GAME)
    while match.position.phase is Phase.PREPARATION:
        match.push(GAME.legal_moves(match.position)[-1])
    pos = match.position
    assert len(match.moves) == 13 and pos.phase is Phase.PHASE1 and pos.turn is G
    kinds = [pos.contents(s).cover for s in range(SIZE * SIZE)]
    assert kinds.count(Cover.MONOMINO) == 8 and kinds.count(Cover.TILE) == 40
    assert pos.tiles_on_board() == set(range(13))


def test_can_pack() -> None:
    free = sum(1 << s for s in range(SIZE * SIZE)) & ~(1 << sq("d4"))
    assert can_pack(SIZE, free, DEFAULT_TILES)
    assert not can_pack(SIZE, free, ("O4",) * 13)  # 13 squares of 2x2 need 52 squares
    assert can_pack(SIZE, free, ("O4",) * 8)
    line = sum(1 << sq(n) for n in ["a1", "b1", "c1", "e1", "f1", "g1"])
    assert not can_pack(SIZE, line, ("I4",)) and can_pack(SIZE, line, ("I3", "I3"))


# --- phase 1: where a marker may go ---------------------------------------------------------

TILES = {I2A: "e6 f6", V3A: "f2 g2 f3"}


def test_gold_places_first_never_on_a_marker_or_the_centre() -> None:
    pos = phase1(TILES, {"c3": S, "a1": S})
    squares = marker_squares(pos)
    assert "c3" not in squares and "d4" not in squares
    with pytest.raises(IllegalMoveError, match="centre"):
        GAME.parse_move(pos, "d4")
    with pytest.raises(IllegalMoveError, match="holds a marker"):
        GAME.parse_move(pos, "c3")


def test_the_eight_squares_around_the_centre_and_the_outer_ring_are_always_open() -> None:
    squares = marker_squares(phase1(TILES))
    ring = {f"{f}{r}" for f in "abcdefg" for r in "1234567" if f in "ag" or r in "17"}
    around = {"c3", "d3", "e3", "c4", "e4", "c5", "d5", "e5"}
    assert squares == ring | around  # nothing else without a marker of one's own


def test_diagonal_to_an_own_marker_only() -> None:
    pos = phase1(TILES, {"a1": G, "a3": G, "g7": S})
    squares = marker_squares(pos)
    assert "b2" in squares  # diagonal to a1
    assert "b4" in squares  # diagonal to a3
    assert "b3" not in squares  # only orthogonal to a3
    assert "f6" not in squares  # diagonal to Silver's g7, not Gold's
    assert "f6" in marker_squares(replace(pos, turn=S))
    with pytest.raises(IllegalMoveError, match="diagonally next"):
        GAME.parse_move(pos, "b3")


@pytest.mark.parametrize(("option", "lost"), [
    ("around_centre", "c3"), ("outer_ring", "a2"), ("diagonal_to_own", "b3"),
])
def test_each_placement_rule_is_a_ruleset_option(option: str, lost: str) -> None:
    pos = phase1(TILES, {"a4": G})
    assert lost in marker_squares(pos)
    game = rules(**{option: False})
    assert lost not in marker_squares(pos, game)


def test_a_player_without_markers_in_hand_is_skipped() -> None:
    game = rules(markers=2)
    pos = phase1({I2A: "b2 c2", I2B: "e6 f6"}, {"a1": G}, game=game)
    pos = play(pos, "g1", game=game)  # Gold's second and last marker
    assert pos.turn is S
    pos = play(pos, "a7", game=game)
    assert pos.turn is S  # Gold has none left: Silver again
    assert not marker_squares(replace(pos, turn=G), game)
    pos = play(pos, "g7", game=game)  # Silver's last: neither can place, phase 1 ends
    assert pos.phase is Phase.SETUP2


# --- phase 1: push-in ---------------------------------------------------------------------


def test_a_marker_on_an_occupied_outer_square_pushes_its_line_toward_the_centre() -> None:
    pos = phase1(TILES, {"a2": S, "b2": G})
    after = play(pos, "a2>")
    assert markers_of(after) == {"a2": "g", "b2": "s", "c2": "g"}
    assert GAME.move_text(pos, GAME.parse_move(pos, "a2")) == "a2>"  # the > may be left out
    bottom = play(phase1(TILES, {"c1": S}), "c1")
    assert markers_of(bottom) == {"c1": "g", "c2": "s"}


def test_no_push_when_the_line_is_full_up_to_the_centre() -> None:
    pos = phase1(TILES, {"a2": S, "b2": G, "c2": S})
    assert "a2" not in marker_squares(pos)
    with pytest.raises(IllegalMoveError, match="cannot be pushed"):
        GAME.parse_move(pos, "a2")
    # the middle line stops at the blocked centre: a4 b4 c4
    assert "a4" not in marker_squares(phase1(TILES, {"a4": S, "b4": G, "c4": S}))
    assert "a4" in marker_squares(phase1(TILES, {"a4": S, "b4": G, "d3": S}))
    with pytest.raises(IllegalMoveError, match="holds no marker"):
        GAME.parse_move(pos, "g3>")


def test_push_reach_full_runs_to_the_far_edge_but_stops_at_the_centre() -> None:
    game = rules(push_reach="full")
    pos = phase1(TILES, {"a2": S, "b2": G, "c2": S}, game=game)
    after = play(pos, "a2", game=game)
    assert markers_of(after) == {"a2": "g", "b2": "s", "c2": "g", "d2": "s"}
    middle = phase1(TILES, {"a4": S, "b4": G, "c4": S}, game=game)
    assert "a4" not in marker_squares(middle, game)


@pytest.mark.parametrize(("corner_push", "pushed_to"), [
    ("diagonal", "b2"), ("rank", "b1"), ("file", "a2"), ("none", None),
])
def test_corner_push_is_a_ruleset_option(corner_push: str, pushed_to: str | None) -> None:
    game = rules(corner_push=corner_push)
    pos = phase1(TILES, {"a1": S}, game=game)
    if pushed_to is None:
        assert "a1" not in marker_squares(pos, game)
        return
    assert markers_of(play(pos, "a1", game=game)) == {"a1": "g", pushed_to: "s"}


def test_push_may_be_switched_off() -> None:
    game = rules(push=False)
    assert "a2" not in marker_squares(phase1(TILES, {"a2": S}, game=game), game)


# --- phase 1: acquisition -----------------------------------------------------------------


def test_a_full_polyomino_goes_to_the_majority_and_monominoes_fill_it() -> None:
    pos = phase1({V3A: "a6 a7 b7", I2A: "e2 f2"}, {"a6": S, "a7": S}, G)
    after = play(pos, "b7")  # Gold completes it, but Silver holds 2 of 3
    assert after.taken[V3A] == S
    assert all(after.contents(s).cover is Cover.MONOMINO for s in sqs("a6 a7 b7"))
    assert markers_of(after) == {}  # the markers went back to their owners
    assert after.markers_on_board(S) == 0 and after.turn is S


@pytest.mark.parametrize(("tie", "taker"), [("mover", G), ("opponent", S)])
def test_a_tie_goes_to_the_player_who_placed_last_or_as_the_ruleset_says(
        tie: str, taker: Color) -> None:
    game = rules(acquisition_tie=tie)
    pos = phase1({I2A: "a3 a4", I2B: "e2 f2"}, {"a4": S}, G, game=game)
    after = play(pos, "a3", game=game)
    assert after.taken[I2A] == taker


def test_one_push_takes_several_polyominoes() -> None:
    tiles = {I2A: "a2 a3", I2B: "b1 b2", I2C: "c1 c2", I4: "g1 g2 g3 g4"}
    pos = phase1(tiles, {"a3": G, "c1": G, "b1": S, "a2": S, "b2": S})
    acquired = GAME.acquisitions(pos, PlaceMarker(sq("a2")))
    # a2 Gold, b2 Silver (pushed from a2), c2 Silver (pushed from b2)
    assert dict(acquired) == {I2A: G, I2B: S, I2C: G}  # I2C: 1-1, the mover takes it
    after = play(pos, "a2>")
    assert [after.taken[t] for t in (I2A, I2B, I2C, I4)] == [G, S, G, NOT_TAKEN]
    assert markers_of(after) == {}


def test_phase1_ends_when_every_polyomino_is_taken() -> None:
    pos = phase1({I2A: "a1 b1"}, {"a1": S}, G)
    after = play(pos, "b1")
    assert after.taken[I2A] == G  # 1-1 tie, Gold placed last
    assert after.phase is Phase.SETUP2 and after.turn is G
    assert all(after.contents(s).cover in (Cover.EMPTY, Cover.BLOCKED)
               for s in range(SIZE * SIZE))
    assert markers_of(after) == {} and after.monominoes_left == (1, 1)


@pytest.mark.parametrize(("untaken", "holder"), [("majority", S), ("nobody", NOBODY)])
def test_when_neither_player_can_place_the_rest_is_settled(untaken: str, holder: int) -> None:
    game = rules(markers=1, untaken=untaken)
    pos = phase1({I3A: "a1 b1 c1", I2A: "e5 e6"}, {"a1": S}, G, game=game)
    after = play(pos, "e5", game=game)  # Gold's only marker; Silver has none left
    assert after.phase is Phase.SETUP2
    assert after.taken[I3A] == holder  # Silver 1, Gold 0 on the I3
    assert after.taken[I2A] == (G if untaken == "majority" else NOBODY)


# --- phase 2 -------------------------------------------------------------------------------


def test_phase2_setup_gold_first_one_monomino_and_three_markers_each() -> None:
    pos = phase2({I2A: G, I3A: S}, phase=Phase.SETUP2, turn=G)
    pos = replace(pos, monominoes_left=(1, 1))
    pos = play(pos, "M a1")
    assert pos.turn is S and pos.contents(sq("a1")).cover is Cover.MONOMINO
    with pytest.raises(IllegalMoveError, match="not empty"):
        GAME.parse_move(pos, "a1")
    pos = play(pos, "M b1", "c1")
    assert pos.turn is S
    with pytest.raises(IllegalMoveError, match="no monomino left"):
        GAME.parse_move(pos, "M e7")
    pos = play(pos, "e7", "c3", "f7", "c4", "g7")
    assert pos.phase is Phase.PLACE2 and pos.turn is G
    assert pos.markers_on_board(G) == 3 and pos.markers_on_board(S) == 3


def test_a_polyomino_must_touch_a_square_next_to_its_owners_marker() -> None:
    pos = phase2({I2A: G, I3A: S}, {"c2": G, "f6": S})
    squares = {m.squares for m in GAME.legal_moves(pos) if isinstance(m, PlaceTile)}
    assert sqs("c1 b1") in squares and sqs("a1 b1") not in squares
    assert sqs("e6 e7") not in squares  # next to Silver's marker, not Gold's
    assert sqs("b2 b3") in squares and sqs("d2 d3") in squares
    with pytest.raises(IllegalMoveError, match="must touch"):
        GAME.parse_move(pos, "a1 b1")
    with pytest.raises(IllegalMoveError, match="no I-triomino"):
        GAME.parse_move(pos, "I3 c3 c4 c5")
    anywhere = rules(contact="any")
    diagonal = {m.squares for m in anywhere.legal_moves(pos) if isinstance(m, PlaceTile)}
    assert sqs("d1 e1") in diagonal and sqs("d1 e1") not in squares
    assert sqs("a7 b7") in {m.squares for m in rules(contact="none").legal_moves(pos)
                            if isinstance(m, PlaceTile)}


def test_a_turn_is_a_placement_then_a_marker_move_by_the_same_player() -> None:
    pos = phase2({I2A: G, I2B: G, I3A: S}, {"c2": G, "f6": S})
    pos = play(pos, "I2 c1 b1")
    assert pos.phase is Phase.RELOCATE2 and pos.turn is G
    with pytest.raises(IllegalMoveError, match="not empty"):
        GAME.parse_move(pos, "c2 - b1")  # onto a polyomino
    pos = play(pos, "f6 - e6")  # any colour may be moved
    assert markers_of(pos) == {"c2": "g", "e6": "s"}
    assert pos.phase is Phase.PLACE2 and pos.turn is S
    pos = play(pos, "I3 e5 f5 g5")
    with pytest.raises(IllegalMoveError, match="straight back"):
        GAME.parse_move(pos, "e6 - f6")
    assert not GAME.is_legal(pos, MoveMarker(sq("e6"), sq("f6")))
    pos = play(pos, "e6 - e7")
    assert pos.phase is Phase.PLACE2 and pos.turn is G


def test_a_player_who_cannot_place_only_moves_a_marker_and_the_game_ends_when_neither_can() -> None:
    # Silver has no marker near any room: Silver skips the placement
    pos = phase2({I2A: G, I2B: G, I4: S}, {"a1": G, "g7": S}, G,
                 monominoes="f7 g6 f6")  # Silver's g7 is walled in
    pos = play(pos, "I2 a2 a3")
    pos = play(pos, "a1 - b1")
    assert pos.phase is Phase.RELOCATE2 and pos.turn is S  # Silver cannot place
    pos = play(pos, "b1 - d3")  # Silver moves Gold's marker away
    assert pos.phase is Phase.PLACE2 and pos.turn is G
    pos = play(pos, "I2 d2 e2", "d3 - c7")
    # Gold has nothing left, Silver's I4 still has no room next to g7: the game is over
    assert pos.phase is Phase.OVER
    scores = GAME.scores(pos)
    assert scores.penalty == (0, 4)
    outcome = GAME.outcome(pos, 1)
    assert outcome is not None and outcome.termination is Termination.SCORE


# --- scores --------------------------------------------------------------------------------

HANDS = [
    (["I2"] * 4, {"Dominoes"}, 4 + 4),
    (["I3"] * 2, {"Tri-I"}, 2 + 2),
    (["V3"] * 2, {"Tri-V"}, 2 + 2),
    (["I3", "I3", "V3", "V3"], {"Tri-I", "Tri-V", "Triominoes"}, 4 + 2 + 2 + 4),
    (["I4", "O4", "T4", "S4", "L4"], {"Tetrominoes"}, 5 + 15),
    (["I2", "I3", "I4"], {"Triple I"}, 3 + 1),
    (["I2", "I3", "V3", "O4"], set(), 4),
    (list(DEFAULT_TILES), {"Dominoes", "Tri-I", "Tri-V", "Triominoes", "Tetrominoes",
                           "Triple I"}, 13 + 4 + 2 + 2 + 4 + 15 + 1),
    (["I2"] * 4 + ["I3", "I4"], {"Dominoes", "Triple I"}, 6 + 4 + 1),
]


@pytest.mark.parametrize(("shapes", "hands", "points"), HANDS)
def test_every_hand_and_several_at_once(shapes: list[str], hands: set[str], points: int) -> None:
    settings_ = GAME.settings
    assert {hand.name for hand in settings_.hands_made(shapes)} == hands
    assert settings_.phase1_points(shapes) == points


def test_the_game_score_is_phase1_points_less_the_unplaced_squares() -> None:
    gold = {I2A: G, I2B: G, I2C: G, I2D: G, O4: G}  # 5 tiles + Dominoes 4 = 9
    silver = {I3A: S, I3B: S, I4: S}  # 3 tiles + Tri-I 2 = 5
    over = phase2({**gold, **silver}, phase=Phase.OVER,
                  placed={I2A: "a1 b1", I3A: "a3 b3 c3"})
    scores = GAME.scores(over)
    # unplaced: Gold three dominoes and the O4 (2+2+2+4), Silver an I3 and the I4 (3+4)
    assert scores.phase1 == (9, 5) and scores.penalty == (10, 7) and scores.total == (-1, -2)
    outcome = GAME.outcome(over, 1)
    assert outcome is not None and outcome.winner is G
    assert outcome.termination is Termination.SCORE
    # before phase 2 nothing is unplaced yet
    assert GAME.scores(replace(over, phase=Phase.PHASE1)).penalty == (0, 0)


def test_equal_scores_are_a_draw_or_go_to_phase1_points() -> None:
    # Gold: 3 dominoes, one unplaced: 3 - 2 = 1. Silver: an I3, placed: 1 - 0 = 1.
    pos = phase2({I2A: G, I2B: G, I2C: G, I3A: S}, phase=Phase.OVER,
                 placed={I2A: "a1 b1", I2B: "a3 b3", I3A: "c1 d1 e1"})
    assert GAME.scores(pos).total == (1, 1) and GAME.scores(pos).phase1 == (3, 1)
    draw = GAME.outcome(pos, 1)
    assert draw is not None and draw.winner is None and draw.result() == "Draw"
    by_phase1 = rules(tie="phase1").outcome(pos, 1)
    assert by_phase1 is not None and by_phase1.winner is G
    level = phase2({I2A: G, I2B: S}, phase=Phase.OVER)
    assert GAME.scores(level).total == (-1, -1) and GAME.scores(level).phase1 == (1, 1)
    still = rules(tie="phase1").outcome(level, 1)
    assert still is not None and still.winner is None


# --- notation, records, properties ----------------------------------------------------------


def random_match(seed: int, plies: int | None = None) -> Match[Position, Move]:
    rng = random.Random(seed)
    match: Match[Position, Move] = Match(GAME)
    while not match.is_over() and (plies is None or len(match.moves) < plies):
        moves = GAME.legal_moves(match.position)
        # prefer marker placements that take a tile, so phase 1 ends sooner
        taking = [m for m in moves if GAME.acquisitions(match.position, m)]
        match.push(rng.choice(taking if taking and rng.random() < 0.5 else moves))
    return match


def test_notation_texts() -> None:
    pos = GAME.start()
    move = GAME.parse_move(pos, "L4 a1 b1 c1 a2")
    assert GAME.move_text(pos, move) == "L4 a1 b1 c1 a2"
    assert GAME.move_text(pos, move, compact=True) == "L4a1b1c1a2"
    assert GAME.parse_move(pos, "L4a1b1c1a2") == GAME.parse_move(pos, "a2, a1, b1, c1") == move
    setup = replace(phase2({}, phase=Phase.SETUP2), monominoes_left=(1, 1))
    monomino = PlaceMonomino(sq("c3"))
    assert GAME.parse_move(setup, "Mc3") == GAME.parse_move(setup, "M c3") == monomino
    assert GAME.move_text(setup, PlaceMonomino(sq("c3"))) == "M c3"
    assert GAME.parse_move(setup, "c3") == PlaceMarker(sq("c3"))
    relocate = phase2({}, {"c5": G}, phase=Phase.RELOCATE2)
    assert GAME.parse_move(relocate, "c5 - c6") == MoveMarker(sq("c5"), sq("c6"))
    assert GAME.move_text(relocate, MoveMarker(sq("c5"), sq("c6")), compact=True) == "c5-c6"
    with pytest.raises(NotationError, match="two squares"):
        GAME.parse_move(relocate, "c5")


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 160))
def test_notation_and_record_round_trip(seed: int, plies: int) -> None:
    match = random_match(seed, plies)
    for before, move in zip(match.positions, match.moves, strict=False):
        for compact in (False, True):
            assert GAME.parse_move(before, GAME.move_text(before, move, compact=compact)) == move
    text = format_record(match, {"Gold": "A", "Silver": "B"})
    again, _ = replay(parse_record(text))
    assert again.moves == match.moves and again.outcome == match.outcome
    assert again.position == match.position


def _check_move(pos: Position, move: Move) -> None:
    """The rules' text, checked independently of the generator."""
    name = GAME.geometry.square_name
    if isinstance(move, PlaceTile):
        assert pos.phase in (Phase.PREPARATION, Phase.PLACE2)
        assert identify((s % SIZE, s // SIZE) for s in move.squares) == pos.inventory[move.tile]
        assert all(pos.is_free(s) for s in move.squares)
        if pos.phase is Phase.PLACE2:
            assert pos.taken[move.tile] == pos.turn and move.tile in pos.tiles_in_hand(pos.turn)
            near = {s + d for s in move.squares for d in (1, -1, SIZE, -SIZE)
                    if 0 <= s + d < SIZE * SIZE and abs((s + d) % SIZE - s % SIZE) <= 1}
            assert any(pos.markers[n] == pos.turn + 1 for n in near)
    elif isinstance(move, PlaceMarker) and pos.phase is Phase.PHASE1:
        square = name(move.square)
        assert pos.markers_on_board(pos.turn) < GAME.settings.markers and square != "d4"
        f, r = move.square % SIZE, move.square // SIZE
        outer = f in (0, 6) or r in (0, 6)
        if pos.markers[move.square]:
            assert outer
        else:
            diag = any(pos.markers[(r + dr) * SIZE + f + df] == pos.turn + 1
                       for df in (1, -1) for dr in (1, -1) if 0 <= f + df < 7 and 0 <= r + dr < 7)
            assert outer or diag or (abs(f - 3) <= 1 and abs(r - 3) <= 1)
    elif isinstance(move, PlaceMarker | PlaceMonomino):
        assert pos.phase is Phase.SETUP2 and pos.is_free(move.square)
    else:
        assert pos.phase is Phase.RELOCATE2
        assert pos.markers[move.from_square] and pos.is_free(move.to_square)
        assert (move.to_square, move.from_square) != pos.last_relocation


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_no_illegal_move_is_generated(seed: int) -> None:
    match = random_match(seed)
    rng = random.Random(seed)
    for pos in match.positions[::3]:
        moves = GAME.legal_moves(pos)
        for move in moves:
            _check_move(pos, move)
        # is_legal agrees with the generator, on legal moves and on nearby illegal ones
        legal = set(moves)
        for move in rng.sample(moves, min(5, len(moves))):
            assert GAME.is_legal(pos, move)
        for square in rng.sample(range(SIZE * SIZE), 6):
            for candidate in (PlaceMarker(square), PlaceTile(I2A, (square, square + 1))):
                assert GAME.is_legal(pos, candidate) == (candidate in legal)
    assert match.is_over() and GAME.legal_moves(match.position) == []


def _mapped(move: Move, mapping: tuple[int, ...]) -> Move:
    if isinstance(move, PlaceTile):
        return PlaceTile(move.tile, tuple(sorted(mapping[s] for s in move.squares)))
    if isinstance(move, PlaceMarker):
        return PlaceMarker(mapping[move.square])
    if isinstance(move, PlaceMonomino):
        return PlaceMonomino(mapping[move.square])
    return MoveMarker(mapping[move.from_square], mapping[move.to_square])


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 7))
def test_scores_never_change_when_the_layout_is_rotated_or_mirrored(seed: int, which: int) -> None:
    match = random_match(seed)
    mapping = symmetries(SIZE)[which]
    mirrored: Match[Position, Move] = Match(GAME)
    for move in match.moves:
        mirrored.push(_mapped(move, mapping))  # validated: the mirrored game is legal
        assert GAME.scores(mirrored.position) == GAME.scores(
            match.positions[len(mirrored.moves)])
    assert mirrored.outcome == match.outcome


def test_sample_record_replays_to_its_result() -> None:
    record = read_record(RECORDS / "renaissance-sample.txt")
    match, plies = replay(record)
    assert match.outcome is not None
    assert match.outcome.result(GAME.player_names) == record.headers["Result"]
    gold, silver = GAME.scores(match.position).total
    assert record.headers["Score"].startswith(f"Gold {gold}, Silver {silver} ")
    texts = [ply.text for ply in plies]
    assert any(">" in t for t in texts) and any(t.startswith("M ") for t in texts)
    assert any(" - " in t for t in texts)


# --- ruleset files -------------------------------------------------------------------------


def test_the_packaged_ruleset_holds_the_defaults() -> None:
    assert renaissance_from_toml(packaged_toml("renaissance.toml"), "x") == RenaissanceSettings()


@pytest.mark.parametrize(("table", "values", "message"), [
    ("board", {"size": 8}, r"\[board\] size is 8: .* odd size"),
    ("board", {"size": 1}, r"size must be 3..25"),
    ("tiles", {"X5": 1}, r"\[tiles\] X5 names an unknown tile shape 'X5'"),
    ("tiles", {"I4": 20}, r"cannot all fit on a 7x7 board"),
    ("tiles", {"I2": "four"}, r"I2 must be a whole number"),
    ("phase1", {"corner_push": "sideways"}, r"corner_push must be one of"),
    ("phase1", {"push": 1}, r"push must be true or false"),
    ("phase1", {"makers": 3}, r"makers is not a known setting"),
    ("phase2", {"contact": "near"}, r"contact must be one of"),
    ("score", {"tie": "coin"}, r"tie must be one of"),
])
def test_bad_rulesets_are_refused_in_one_line(table: str, values: dict[str, object],
                                             message: str) -> None:
    data = packaged_toml("renaissance.toml")
    data[table] = {**data[table], **values}
    with pytest.raises(RulesetError, match=message) as error:
        renaissance_from_toml(data, "mine.toml")
    assert "\n" not in str(error.value)


def test_a_hand_with_an_unknown_shape_is_refused() -> None:
    data = packaged_toml("renaissance.toml")
    data["hands"] = [*data["hands"], {"name": "Pentas", "needs": {"P5": 1}, "points": 3}]
    with pytest.raises(RulesetError, match=r"\[\[hands\]\] #7 needs P5 names an unknown"):
        renaissance_from_toml(data, "mine.toml")


def test_a_corrected_ruleset_changes_the_game() -> None:
    data = packaged_toml("renaissance.toml")
    data["hands"][5]["points"] = 3  # Triple I
    data["phase1"]["markers"] = 20
    data["score"]["tie"] = "phase1"
    custom = renaissance_from_toml(data, "mine.toml")
    assert custom.phase1_points(["I2", "I3", "I4"]) == 6
    assert custom.markers == 20 and custom.tie == "phase1"
