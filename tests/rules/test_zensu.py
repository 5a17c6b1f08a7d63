"""Zensū (RULES.md section 4): every rule, perft, notation and record round trips."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import IllegalMoveError, NotationError, RulesetError
from referee.rules import find_game, load_ruleset
from referee.rules.core import Color, Match, Termination, generic_perft
from referee.rules.records import format_record, parse_record, read_record, replay
from referee.rules.ruleset import packaged_toml
from referee.rules.zensu import PASS, Move, Position, ZensuRules, zensu_from_toml
from tests import DATA, ROOT

RECORDS = DATA / "records"
GAME = find_game("zensu")
assert isinstance(GAME, ZensuRules)
T, R = Color.FIRST, Color.SECOND


def sq(name: str) -> int:
    return GAME.geometry.parse_square(name)


def position(pieces: dict[str, int], turn: Color = T) -> Position:
    """A board from {square: signed number}: +n Turquoise, -n Red."""
    board = [0] * GAME.geometry.size
    for name, value in pieces.items():
        board[sq(name)] = value
    return Position(tuple(board), turn)


def targets(pos: Position, frm: str) -> set[str]:
    return {GAME.geometry.square_name(m.to_square) for m in GAME.legal_moves(pos)
            if m.from_square == sq(frm)}


def ruleset(**changes: dict[str, object]) -> dict[str, object]:
    data = packaged_toml("zensu.toml")
    for table, values in changes.items():
        data[table] = {**data[table], **values}
    return data


# --- setup and pieces ---------------------------------------------------------------------


def test_setup_puts_twos_on_the_back_line_and_ones_in_front() -> None:
    start = GAME.start()
    assert start.turn is T
    for file in "abcdef":
        piece = start.piece_at(sq(f"{file}1"))
        assert piece is not None and piece.color is T and piece.kind == "2"
        one = start.piece_at(sq(f"{file}2"))
        assert one is not None and one.color is T and one.kind == "1"
        red_two, red_one = start.piece_at(sq(f"{file}9")), start.piece_at(sq(f"{file}8"))
        assert red_two is not None and red_two.color is R and red_two.number == 2
        assert red_one is not None and red_one.color is R and red_one.number == 1
    assert start.count(T) == start.count(R) == 12
    assert all(start.piece_at(sq(f"{f}{r}")) is None for f in "abcdef" for r in range(3, 8))


def test_home_territories() -> None:
    assert GAME.is_home(sq("c1"), T) and not GAME.is_home(sq("c2"), T)
    assert GAME.is_home(sq("c9"), R) and not GAME.is_home(sq("c8"), R)


# --- movement -----------------------------------------------------------------------------


def test_turquoise_pieces_move_exactly_their_edge_numbers() -> None:
    # "1": forward 1, left 2, right 3, back 4; "2": forward 2, left 1, right 3, back 4
    assert targets(position({"c5": 1, "a9": -1}), "c5") == {"c6", "a5", "f5", "c1"}
    assert targets(position({"c5": 2, "a9": -1}), "c5") == {"c7", "b5", "f5", "c1"}


def test_red_pieces_are_turned_round() -> None:
    # Red faces Turquoise: forward is down the board and Red's left is toward file f.
    assert targets(position({"c5": -1, "a1": 1}, R), "c5") == {"c4", "e5", "c9"}
    assert targets(position({"d5": -2, "a1": 1}, R), "d5") == {"d3", "e5", "a5", "d9"}


def test_a_move_never_stops_short_at_the_board_edge() -> None:
    # a "1" on b8: forward 1 to b9, left 2 off the board, right 3 to e8, back 4 to b4
    assert targets(position({"b8": 1, "f1": -2}), "b8") == {"b9", "e8", "b4"}
    # a "2" on f2: forward 2 f4, left 1 e2, right 3 off, back 4 off
    assert targets(position({"f2": 2, "a9": -1}), "f2") == {"f4", "e2"}


def test_a_piece_may_jump_its_own_pieces_but_not_land_on_them() -> None:
    pos = position({"c1": 2, "c2": 1, "c3": 1, "a9": -1})
    assert "c3" not in targets(pos, "c1")  # own piece on the landing square
    pos = position({"c1": 2, "c2": 1, "a9": -1})
    assert "c3" in targets(pos, "c1")  # jumps its own piece on c2
    after = GAME.play(pos, Move(sq("c1"), sq("c3")))
    assert after.piece_at(sq("c2")) == pos.piece_at(sq("c2"))  # the jumped piece stays


def test_start_moves_are_the_twelve_forward_ones() -> None:
    start = GAME.start()
    texts = sorted(GAME.move_text(start, m) for m in GAME.legal_moves(start))
    assert texts == sorted([f"1 {f}2 - {f}3" for f in "abcdef"]
                           + [f"2 {f}1 - {f}3" for f in "abcdef"])


# --- captures -----------------------------------------------------------------------------


def test_landing_on_an_opponent_captures_it() -> None:
    pos = position({"c5": 1, "c6": -1, "a9": -2})
    after = GAME.play(pos, Move(sq("c5"), sq("c6")))
    piece = after.piece_at(sq("c6"))
    assert piece is not None and piece.color is T and after.count(R) == 1


def test_every_opponent_passed_over_is_captured_and_own_pieces_are_not() -> None:
    pos = position({"a5": 1, "b5": -1, "c5": 2, "d5": -2, "a9": -1})
    move = Move(sq("a5"), sq("d5"))  # right 3 over b5 (Red), c5 (own), onto d5 (Red)
    assert GAME.captures(pos, move) == (sq("b5"), sq("d5"))
    after = GAME.play(pos, move)
    assert after.piece_at(sq("b5")) is None and after.count(R) == 1
    assert after.piece_at(sq("c5")) == pos.piece_at(sq("c5"))
    assert GAME.move_text(pos, move) == "1 a5 x d5"


def test_four_pieces_captured_by_one_backward_move() -> None:
    pos = position({"c7": 2, "c6": -1, "c5": -2, "c4": -1, "c3": -2, "f9": -1})
    move = Move(sq("c7"), sq("c3"))  # back 4
    assert len(GAME.captures(pos, move)) == 4
    after = GAME.play(pos, move)
    assert after.count(R) == 1 and GAME.outcome(after, 1) is None
    assert GAME.move_text(pos, move, compact=True) == "2c7xc3"


def test_red_captures_too() -> None:
    pos = position({"d5": -1, "e5": 1, "f5": 1, "a1": 2}, R)
    move = Move(sq("d5"), sq("f5"))  # Red's left 2, toward file f
    assert GAME.captures(pos, move) == (sq("e5"), sq("f5"))
    assert GAME.play(pos, move).count(T) == 1


# --- winning ------------------------------------------------------------------------------


def test_entering_the_opponent_home_territory_wins_at_once() -> None:
    pos = position({"c8": 1, "a9": -2, "f8": -1})
    after = GAME.play(pos, Move(sq("c8"), sq("c9")))
    outcome = GAME.outcome(after, 1)
    assert outcome is not None and outcome.termination is Termination.HOME_REACHED
    assert outcome.winner is T
    red = position({"e2": -1, "a1": 2, "b2": 1}, R)
    outcome = GAME.outcome(GAME.play(red, Move(sq("e2"), sq("e1"))), 1)
    assert outcome is not None and outcome.winner is R
    # retreating into one's own home territory wins nothing
    back = position({"c5": 1, "a9": -2}, T)
    assert GAME.outcome(GAME.play(back, Move(sq("c5"), sq("c1"))), 1) is None


def test_capturing_every_opponent_piece_wins() -> None:
    pos = position({"c4": 1, "c5": -1, "a1": 2})
    outcome = GAME.outcome(GAME.play(pos, Move(sq("c4"), sq("c5"))), 1)
    assert outcome is not None and outcome.termination is Termination.ALL_CAPTURED
    assert outcome.winner is T


def test_no_legal_move_loses_or_passes_as_the_ruleset_says() -> None:
    # Truly stuck: Red's pieces fill a full rank and each can only move onto the other.
    edges = ((1, (2, 1, 1, 2)),)
    lose = ZensuRules(files=2, ranks=3, home_ranks=1, setup=(("b1", 1),), edges=edges)
    g = lose.geometry
    board = [0] * 6
    for name, value in {"a2": -1, "b2": -1, "b1": 1}.items():
        board[g.parse_square(name)] = value
    # Red a2: fwd 2 off, left b2 own, right off, back 2 off; b2 likewise onto a2.
    stuck = Position(tuple(board), R)
    assert lose.legal_moves(stuck) == []
    outcome = lose.outcome(stuck, 1)
    assert outcome is not None and outcome.termination is Termination.NO_MOVES
    assert outcome.winner is T
    passing = ZensuRules(files=2, ranks=3, home_ranks=1, setup=(("b1", 1),), edges=edges,
                         no_legal_move="pass")
    assert passing.legal_moves(stuck) == [PASS]
    assert passing.outcome(stuck, 1) is None
    assert passing.parse_move(stuck, "pass") == PASS
    assert passing.play(stuck, PASS) == Position(stuck.board, T)


def test_the_game_is_never_drawn_by_repetition() -> None:
    pos = position({"c5": 1, "a9": -1})
    assert GAME.outcome(pos, 3) is None and GAME.outcome(pos, 10) is None


# --- notation -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1 b2 - b3", "1b2-b3", "b2b3", "b2 - b3", "1 B2 - B3"])
def test_notations_are_read(text: str) -> None:
    assert GAME.parse_move(GAME.start(), text) == Move(sq("b2"), sq("b3"))


@pytest.mark.parametrize(("text", "error"), [
    ("2 b2 - b3", IllegalMoveError),  # b2 holds a 1
    ("b8 - b7", IllegalMoveError),  # Red's piece, Turquoise to move
    ("b3 - b4", IllegalMoveError),  # no piece
    ("b2 - b4", IllegalMoveError),  # not a step of a 1
    ("b1 - c1", IllegalMoveError),  # own piece there
    ("b2 x b3", IllegalMoveError),  # marks a capture that is not one
    ("b2 to b3", NotationError),
    ("z2 - b3", NotationError),
])
def test_bad_moves_are_refused_with_a_reason(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        GAME.parse_move(GAME.start(), text)


def test_a_capture_written_with_a_dash_is_refused() -> None:
    pos = position({"c5": 1, "c6": -1, "a9": -2})
    with pytest.raises(IllegalMoveError, match="write x"):
        GAME.parse_move(pos, "1 c5 - c6")
    assert GAME.parse_move(pos, "1 c5 x c6") == Move(sq("c5"), sq("c6"))


# --- perft --------------------------------------------------------------------------------


def reference_moves(pos: Position) -> set[tuple[int, int]]:
    """An independent move generator from the rules' text, by coordinates."""
    g = GAME.geometry
    sign = 1 if pos.turn is T else -1
    forward = sign
    edges = {1: (1, 2, 3, 4), 2: (2, 1, 3, 4)}
    moves = set()
    for square, value in enumerate(pos.board):
        if value * sign <= 0:
            continue
        f, r = g.file_of(square), g.rank_of(square)
        for (df, dr), n in zip(((0, forward), (-forward, 0), (forward, 0), (0, -forward)),
                               edges[abs(value)], strict=True):
            nf, nr = f + df * n, r + dr * n
            if 0 <= nf < 6 and 0 <= nr < 9 and pos.board[g.square(nf, nr)] * sign <= 0:
                moves.add((square, g.square(nf, nr)))
    return moves


def test_perft_from_the_start() -> None:
    start = GAME.start()
    assert [GAME.perft(start, d) for d in range(5)] == [1, 12, 144, 1944, 26244]
    assert [generic_perft(GAME, start, d) for d in range(4)] == [1, 12, 144, 1944]


def test_perft_from_a_middle_game_agrees_with_the_reference() -> None:
    pos = position({"a1": 2, "c3": 1, "d4": 1, "e6": 2, "c5": -1, "d7": -2, "f8": -1,
                    "b9": -2})

    def walk(p: Position, depth: int) -> int:
        if depth == 0:
            return 1
        total = 0
        for frm, to in reference_moves(p):
            child = GAME.play(p, Move(frm, to))
            total += 1 if depth == 1 else (
                0 if GAME.outcome(child, 1) else walk(child, depth - 1))
        return total

    assert GAME.perft(pos, 3) == walk(pos, 3) == generic_perft(GAME, pos, 3)


# --- property tests -----------------------------------------------------------------------


@st.composite
def games(draw: st.DrawFn) -> Match[Position, Move]:
    match: Match[Position, Move] = Match(GAME)
    for _ in range(draw(st.integers(0, 60))):
        moves = match.legal_moves()
        if not moves:
            break
        match.push(moves[draw(st.integers(0, len(moves) - 1))])
    return match


@settings(max_examples=40, deadline=None)
@given(games())
def test_generated_moves_are_exactly_the_legal_ones(match: Match[Position, Move]) -> None:
    pos = match.position
    if match.is_over():
        return
    generated = {(m.from_square, m.to_square) for m in GAME.legal_moves(pos)}
    assert generated == reference_moves(pos)
    for move in GAME.legal_moves(pos):
        after = GAME.play(pos, move)
        # never onto an own piece, exactly the pieces passed over are gone
        assert after.count(pos.turn) == pos.count(pos.turn)
        assert after.count(pos.turn.other) == pos.count(pos.turn.other) - len(
            GAME.captures(pos, move))


@settings(max_examples=40, deadline=None)
@given(games())
def test_notation_and_record_round_trip(match: Match[Position, Move]) -> None:
    for before, move in zip(match.positions, match.moves, strict=False):
        for compact in (False, True):
            assert GAME.parse_move(before, GAME.move_text(before, move, compact=compact)) == move
    for compact in (False, True):
        text = format_record(match, {"Turquoise": "A", "Red": "B"}, compact=compact)
        again, _ = replay(parse_record(text))
        assert again.moves == match.moves and again.outcome == match.outcome


# --- records and rulesets -----------------------------------------------------------------


def test_sample_record_replays_to_its_result() -> None:
    record = read_record(RECORDS / "zensu-sample.txt")
    match, plies = replay(record)
    assert match.outcome is not None
    assert match.outcome.result(GAME.player_names) == record.headers["Result"]
    assert any(" x " in ply.text for ply in plies)


def test_a_corrected_ruleset_changes_the_game(tmp_path: Path) -> None:
    data = ruleset(board={"files": 8, "ranks": 10, "home_ranks": 2},
                   setup={"2": ["a1", "h1"], "1": ["c3", "d3"]},
                   rules={"no_legal_move": "pass"})
    data["edges"] = {**data["edges"], "1": {"forward": 1, "left": 3, "right": 2, "back": 4}}
    game = zensu_from_toml(data, "mine.toml")
    start = game.start()
    assert start.count(T) == 4 and game.is_home(game.geometry.parse_square("c9"), R)
    piece = start.piece_at(game.geometry.parse_square("h10"))
    assert piece is not None and piece.color is R and piece.number == 2
    assert game.no_legal_move == "pass"
    moves = {game.move_text(start, m) for m in game.legal_moves(start)}
    assert "1 c3 - c4" in moves and "1 c3 - e3" in moves and "1 d3 - a3" in moves
    path = tmp_path / "zensu.toml"
    path.write_text((ROOT / "referee" / "rules" / "rulesets"
                     / "zensu.toml").read_text().replace("files = 6", "files = 7"))
    assert load_ruleset(path).geometry.files == 7  # type: ignore[attr-defined]


@pytest.mark.parametrize(("changes", "message"), [
    ({"board": {"files": 1}}, r"\[board\] files must be 2..26, not 1"),
    ({"board": {"ranks": "nine"}}, r"ranks must be a whole number"),
    ({"board": {"home_ranks": 5}}, r"home_ranks must be 1..4"),
    ({"board": {"colour": 2}}, r"colour is not a known setting"),
    ({"setup": {"1": ["a2", "z9"]}}, r"'z9' is not a square"),
    ({"setup": {"1": ["a1"]}}, r"second piece on a1"),
    ({"setup": {"3": ["a3"]}}, r"\[setup\] 3 is not a piece"),
    ({"setup": {"1": ["a5"]}}, r"Red's half"),
    ({"rules": {"no_legal_move": "draw"}}, r"no_legal_move must be one of"),
])
def test_bad_rulesets_are_refused_in_one_line(changes: dict[str, dict[str, object]],
                                             message: str) -> None:
    with pytest.raises(RulesetError, match=message) as error:
        zensu_from_toml(ruleset(**changes), "mine.toml")
    assert "\n" not in str(error.value) and str(error.value).startswith("mine.toml: ")


@pytest.mark.parametrize(("edges", "message"), [
    ({"forward": 1, "left": 6, "right": 3, "back": 4}, r"left is 6: a piece could never"),
    ({"forward": 1, "left": 2, "right": 3, "back": 9}, r"back is 9: .*at most 8"),
    ({"forward": 2, "left": 2, "right": 3, "back": 4}, r"forward is 2, .* must be 1"),
    ({"forward": 1, "left": 0, "right": 3, "back": 4}, r"left must be at least 1"),
    ({"forward": 1, "left": 2, "right": 3}, r"back is missing"),
])
def test_edge_numbers_off_the_board_are_refused(edges: dict[str, int], message: str) -> None:
    data = packaged_toml("zensu.toml")
    data["edges"] = {**data["edges"], "1": edges}
    with pytest.raises(RulesetError, match=message):
        zensu_from_toml(data, "mine.toml")


def test_a_ruleset_for_another_game_is_refused() -> None:
    data = packaged_toml("zensu.toml")
    data["game"] = "renaissance"
    with pytest.raises(RulesetError, match="ruleset for 'zensu'"):
        zensu_from_toml(data, "mine.toml")
