from __future__ import annotations

import pytest

from referee.errors import IllegalMoveError, NotationError
from referee.rules import Color, Match, Termination, find_game
from referee.rules.records import read_record, replay
from referee.rules.rinne import FLIPFLOP_3X3, RINNE, RINNE_5X5, TENSEI, Move, State
from tests import DATA

RECORDS = DATA / "records"


def names(game, squares):
    return sorted(game.geometry.square_name(sq) for sq in squares)


def test_designer_sample_game_ends_with_white_winning_by_the_goal_rule_after_ply_31():
    record = read_record(RECORDS / "rinne-sample.txt")
    game = record.game()
    assert game is RINNE
    match: Match = Match(game)
    for index, ply in enumerate(record.plies):
        assert match.outcome is None, f"game over before ply {index + 1}"
        match.push_text(ply.text)
    assert len(match.moves) == 31
    assert match.outcome is not None
    assert match.outcome.winner is Color.FIRST
    assert match.outcome.termination is Termination.GOAL_REACHED


def test_flipflop_sample_replays_legally_and_is_unfinished():
    match, plies = replay(read_record(RECORDS / "flipflop-3x3-sample.txt"))
    assert match.game is FLIPFLOP_3X3
    assert len(plies) == 14
    assert match.outcome is None
    assert plies[0].text == "Rook b1 x b3 = Bishop"


def test_setups():
    assert RINNE.diagram(RINNE.start()).splitlines()[:6] == [
        " 6 . . k . .",
        " 5 k . . . k",
        " 4 . k . k .",
        " 3 . K . K .",
        " 2 K . . . K",
        " 1 . . K . .",
    ]
    five = RINNE_5X5.start()
    assert RINNE_5X5.diagram(five).splitlines()[:5] == [
        " 5 k k k k k", " 4 + . . . .".replace("+", "."), " 3 . . . . .", " 2 . . . . .",
        " 1 K K K K K",
    ]
    assert RINNE_5X5.geometry.square_name(RINNE_5X5.goal(Color.FIRST)) == "c5"
    assert RINNE_5X5.geometry.square_name(RINNE_5X5.goal(Color.SECOND)) == "c1"
    flip = FLIPFLOP_3X3.start()
    assert FLIPFLOP_3X3.diagram(flip).splitlines()[:3] == [" 3 r r r", " 2 . . .", " 1 R R R"]
    ff5 = find_game("flipflop-5x5")
    assert {p.state for _, p in [(sq, ff5.start().piece_at(sq)) for sq in range(25)] if p} == {
        State.ROOK
    }


def test_knight_jumps_over_pieces_and_sliders_are_blocked():
    pos = RINNE.from_placement({"c3": "N", "c4": "K", "b4": "K", "d4": "K", "a1": "R", "a3": "K",
                                "e6": "k"})
    knight_targets = {m.to_square for m in RINNE.legal_moves(pos)
                      if m.from_square == RINNE.geometry.parse_square("c3")}
    assert names(RINNE, knight_targets) == ["a2", "a4", "b1", "b5", "d1", "d5", "e2", "e4"]
    rook_targets = {m.to_square for m in RINNE.legal_moves(pos)
                    if m.from_square == RINNE.geometry.parse_square("a1")}
    assert names(RINNE, rook_targets) == ["a2", "b1", "c1", "d1", "e1"]


def test_captures_only_on_goal_squares():
    # A black piece on d5 blocks; a black piece on c6 (White's goal) can be taken.
    pos = RINNE.from_placement({"d4": "K", "d5": "k", "c6": "k", "a6": "k"})
    targets = {m.to_square for m in RINNE.legal_moves(pos)}
    assert "d5" not in names(RINNE, targets)
    assert "c5" in names(RINNE, targets)
    pos = RINNE.from_placement({"c5": "R", "c6": "k", "a6": "k"})
    assert "c6" in names(RINNE, {m.to_square for m in RINNE.legal_moves(pos)})
    # Never onto an own piece, goal or not.
    pos = RINNE.from_placement({"c5": "R", "c6": "K", "a6": "k"})
    assert "c6" not in names(RINNE, {m.to_square for m in RINNE.legal_moves(pos)})


def test_promotion_cycle_and_illegal_promotion():
    match: Match = Match(RINNE)
    match.push_text("King e2 - e3 = Knight")
    with pytest.raises(IllegalMoveError, match="becomes Knight"):
        match.push_text("King e5 - d5 = Queen")
    cycle = [RINNE.promotions(s)[0] for s in State]
    assert cycle == [State.KNIGHT, State.BISHOP, State.ROOK, State.QUEEN, State.KING]
    assert FLIPFLOP_3X3.promotions(State.ROOK) == (State.BISHOP,)
    assert FLIPFLOP_3X3.promotions(State.BISHOP) == (State.ROOK,)


def test_tensei_accepts_any_state_for_the_moved_piece_and_needs_it_written():
    start = TENSEI.start()
    moves = [m for m in TENSEI.legal_moves(start)
             if names(TENSEI, [m.from_square, m.to_square]) == ["e2", "e3"]]
    assert sorted(m.new_state for m in moves) == list(State)  # its old state (King) included
    assert len(TENSEI.legal_moves(start)) == 5 * len(RINNE.legal_moves(RINNE.start()))
    match: Match = Match(TENSEI)
    match.push_text("King e2 - e3 = King")
    match.push_text("Ke5-d5=Q")
    with pytest.raises(NotationError, match="new state"):
        match.push_text("Ke3-e4")


def test_rule_2_goal_reached_and_not_capturable_wins_at_once():
    pos = RINNE.from_placement({"c5": "R", "a1": "k", "e1": "k"})
    match: Match = Match(RINNE, pos)
    match.push_text("Rc5-c6=Q")
    assert match.outcome is not None
    assert (match.outcome.termination, match.outcome.winner) == (Termination.GOAL_REACHED, Color.FIRST)


def test_goal_reached_but_capturable_goes_on_then_rule_1_goal_held():
    pos = RINNE.from_placement({"c5": "R", "a6": "r", "e1": "k", "a1": "K"})
    match: Match = Match(RINNE, pos)
    match.push_text("Rc5-c6=Q")
    assert match.outcome is None  # the black rook on a6 could take c6
    match.push_text("Ke1-e2=N")  # Black does not take
    assert match.outcome is not None
    assert (match.outcome.termination, match.outcome.winner) == (Termination.GOAL_HELD, Color.FIRST)


def test_rule_1_is_checked_before_rule_2():
    # Black holds c1 (its goal) after White's move, and White's move reaches c6 uncapturably:
    # rule 1 gives Black the game first.
    pos = RINNE.from_placement({"c1": "q", "c5": "R", "e6": "k"}, turn=Color.FIRST)
    match: Match = Match(RINNE, pos)
    match.push_text("Rc5-c6=Q")
    assert match.outcome is not None
    assert (match.outcome.termination, match.outcome.winner) == (Termination.GOAL_HELD, Color.SECOND)


def test_rule_2_is_checked_before_rule_3():
    # After White reaches c6, Black has no move at all: rule 2 decides, not rule 3.
    pos = RINNE.from_placement({"c5": "R", "a6": "k", "a5": "K", "b5": "K", "b6": "K"})
    match: Match = Match(RINNE, pos)
    assert RINNE.legal_moves(RINNE.play(pos, Move(22, 27, State.QUEEN))) == []
    match.push_text("Rc5-c6=Q")
    assert match.outcome is not None
    assert match.outcome.termination is Termination.GOAL_REACHED


def test_rule_3_no_legal_move_loses():
    # The black king on a6 has only b6 left; the white knight takes that square away.
    pos = RINNE.from_placement({"a5": "K", "b5": "K", "d5": "N", "a6": "k"})
    match: Match = Match(RINNE, pos)
    match.push_text("Nd5-b6=B")
    assert match.outcome is not None
    assert (match.outcome.termination, match.outcome.winner) == (Termination.NO_MOVES, Color.FIRST)


def test_threefold_repetition_draws_on_the_third_occurrence():
    # Each piece walks a five-move loop (King, Knight, Bishop, Rook, Queen, King again) and
    # comes home in its old state: the start position recurs after plies 10 and 20.
    pos = RINNE.from_placement({"a1": "K", "a6": "k", "e3": "K", "e4": "k"})
    white = ["Ka1-b1=N", "Nb1-c3=B", "Bc3-d4=R", "Rd4-d1=Q", "Qd1-a1=K"]
    black = ["Ka6-b6=N", "Nb6-c4=B", "Bc4-d5=R", "Rd5-d6=Q", "Qd6-a6=K"]
    match: Match = Match(RINNE, pos)
    for _ in range(2):
        for w, b in zip(white, black, strict=True):
            assert match.outcome is None
            match.push_text(w)
            assert match.outcome is None
            match.push_text(b)
        assert match.position == pos
    assert match.outcome is not None
    assert (match.outcome.termination, match.outcome.winner) == (Termination.REPETITION, None)
    match.pop()  # a take-back forgets the third occurrence
    assert match.outcome is None


def test_moves_after_the_end_are_refused():
    pos = RINNE.from_placement({"c5": "R", "a1": "k", "e1": "k"})
    match: Match = Match(RINNE, pos)
    match.push_text("Rc5-c6=Q")
    with pytest.raises(IllegalMoveError, match="game is over"):
        match.push_text("Ka1-a2=N")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("Kingg e2 - e3 = Knight", "not a move"),
        ("King e4 - e5 = Knight", "no piece on e4"),
        ("King e5 - e4 = Knight", "Black's, but White is to move"),
        ("Queen e2 - e3 = Knight", "holds a King, not a Queen"),
        ("King e2 - e4 = Knight", "cannot move to e4"),
        ("King e2 x e3 = Knight", "marks a capture"),
        ("King e2 - e3 = Rook", "becomes Knight"),
        ("King e2 - z9 = Knight", "not a square"),
    ],
)
def test_bad_moves_are_refused_with_a_reason(text, error):
    with pytest.raises((IllegalMoveError, NotationError), match=error):
        RINNE.parse_move(RINNE.start(), text)
