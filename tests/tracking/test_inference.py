from __future__ import annotations

import numpy as np
import pytest

from referee.rules.rinne import RINNE, TENSEI, Move, State
from referee.tracking.decoding import Candidate, Explanations, Verdict
from referee.tracking.inference import DICE, MoveInferer
from referee.tracking.reading import ColorModel
from tests.tracking.fakes import DICE_LABELS, reading_of


def sq(name: str) -> int:
    return RINNE.geometry.parse_square(name)


@pytest.fixture
def rinne() -> MoveInferer:
    return MoveInferer(RINNE, DICE, DICE_LABELS)


@pytest.fixture
def tensei() -> MoveInferer:
    return MoveInferer(TENSEI, DICE, DICE_LABELS)


# A rolled die read "2" at 0.80 and "3" at 0.12: under the 3-nat margin.
TWO_OR_THREE = [0.01, 0.02, 0.80, 0.12, 0.02, 0.02, 0.01]


def learn(inferer: MoveInferer, position) -> ColorModel:
    _, owners = inferer.appearance(position)
    reading = reading_of(inferer, position, seed=99)
    return ColorModel.learn(reading, {s: int(o) for s, o in enumerate(owners) if o >= 0})


def test_colour_model_tells_the_players_apart(rinne):
    colors = learn(rinne, RINNE.start())
    assert colors.separation > 5
    p = colors.first_owner_probability(np.array([[90.0, 1.0, 5.0], [46.0, 50.0, 30.0]]))
    assert p[0] > 0.99 and p[1] < 0.01


def test_every_legal_move_is_inferred_exactly(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    for i, move in enumerate(RINNE.legal_moves(start)):
        after = RINNE.play(start, move)
        result = rinne.infer(reading_of(rinne, after, seed=i), start, colors)
        assert (result.verdict, result.move) == (Verdict.MOVE, move)
        assert result.margin > 3


def test_no_change_and_take_back(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    assert rinne.infer(reading_of(rinne, start), start, colors).verdict is Verdict.NO_CHANGE
    after = RINNE.play(start, RINNE.legal_moves(start)[0])
    result = rinne.infer(reading_of(rinne, start), after, colors, previous=start)
    assert result.verdict is Verdict.TAKE_BACK


def test_forgotten_promotion(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    moved_but_still_king = RINNE.play(start, Move(sq("e2"), sq("e3"), State.KING))
    result = rinne.infer(reading_of(rinne, moved_but_still_king), start, colors)
    assert result.verdict is Verdict.PROMOTE
    assert result.move == Move(sq("e2"), sq("e3"), State.KNIGHT)


def test_tensei_roll_pending_then_any_rolled_face(tensei):
    start = TENSEI.start()
    colors = learn(tensei, start)
    after = TENSEI.play(start, Move(sq("e2"), sq("e3"), State.KING))
    pending = reading_of(tensei, after, shown={sq("e3"): "6"})
    result = tensei.infer(pending, start, colors)
    assert result.verdict is Verdict.ROLL_PENDING
    for state in State:
        rolled = TENSEI.play(start, Move(sq("e2"), sq("e3"), state))
        assert tensei.infer(reading_of(tensei, rolled), start, colors).move == Move(
            sq("e2"), sq("e3"), state)


def test_illegal_change_names_the_squares(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    # A king jumps from c1 to c3: not a legal move.
    wrong = RINNE.play(start, Move(sq("c1"), sq("c3"), State.KNIGHT))
    result = rinne.infer(reading_of(rinne, wrong), start, colors)
    assert result.verdict is Verdict.ILLEGAL
    assert sorted(RINNE.geometry.square_name(s) for s in result.squares) == ["c1", "c3"]


def test_a_piece_of_the_wrong_colour_is_illegal(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    # White's e2 king walks to e3, but the reading shows a *black* die arriving there.
    reading = reading_of(rinne, RINNE.play(start, Move(sq("e2"), sq("e3"), State.KNIGHT)))
    reading.colors[sq("e3")] = [45.0, 55.0, 35.0]
    assert rinne.infer(reading, start, colors).verdict is Verdict.ILLEGAL


def test_an_unsure_square_is_unreadable_not_guessed(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    after = RINNE.play(start, Move(sq("e2"), sq("e3"), State.KNIGHT))
    result = rinne.infer(reading_of(rinne, after, unsure={sq("e3"): 0.4}), start, colors)
    assert result.verdict is Verdict.UNREADABLE
    assert result.squares == (sq("e3"),)


def test_a_ply_that_went_by_unread_is_recovered_with_its_reply(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    first = Move(sq("e2"), sq("e3"), State.KNIGHT)
    reply = Move(sq("e5"), sq("d5"), State.KNIGHT)
    both = RINNE.play(RINNE.play(start, first), reply)
    result = rinne.infer(reading_of(rinne, both), start, colors)
    assert (result.verdict, result.move, result.second) == (Verdict.TWO_MOVES, first, reply)


def test_a_tensei_ply_read_with_the_next_ones_pending_roll(tensei):
    start = TENSEI.start()
    colors = learn(tensei, start)
    first = Move(sq("e2"), sq("e3"), State.ROOK)
    middle = TENSEI.play(start, first)
    reply = Move(sq("e5"), sq("d5"), State.KING)
    shown = {sq("d5"): "6"}
    result = tensei.infer(reading_of(tensei, TENSEI.play(middle, reply), shown=shown), start,
                          colors)
    assert (result.verdict, result.move, result.second_pending) == (Verdict.TWO_MOVES, first,
                                                                    True)
    assert (result.second.from_square, result.second.to_square) == (sq("e5"), sq("d5"))
    rolled = tensei.infer(reading_of(tensei, TENSEI.play(middle, reply)), start, colors)
    assert (rolled.verdict, rolled.second, rolled.second_pending) == (Verdict.TWO_MOVES, reply,
                                                                      False)


def test_a_ply_whose_rolled_state_is_in_doubt_under_its_reply_is_unreadable_not_illegal(
        tensei):
    """Two legal plies explain the board, but the first one's rolled face is in doubt: the
    players are told which square to show, not that they broke a rule."""
    start = TENSEI.start()
    colors = learn(tensei, start)
    first = Move(sq("e2"), sq("e3"), State.KNIGHT)
    reply = Move(sq("e5"), sq("d5"), State.KING)
    reading = reading_of(tensei, TENSEI.play(TENSEI.play(start, first), reply))
    reading.probabilities[sq("e3")] = TWO_OR_THREE
    result = tensei.infer(reading, start, colors)
    assert (result.verdict, result.squares) == (Verdict.UNREADABLE, (sq("e3"),))
    reading.probabilities[sq("e3")] = [0.01, 0.01, 0.95, 0.01, 0.01, 0.005, 0.005]
    clear = tensei.infer(reading, start, colors)
    assert (clear.verdict, clear.move, clear.second) == (Verdict.TWO_MOVES, first, reply)


def test_a_rolled_face_in_doubt_names_only_its_square(tensei):
    """The move is clear but the die's new face is not: the players are shown the one die."""
    start = TENSEI.start()
    colors = learn(tensei, start)
    reading = reading_of(tensei, TENSEI.play(start, Move(sq("e2"), sq("e3"), State.KNIGHT)))
    reading.probabilities[sq("e3")] = TWO_OR_THREE
    result = tensei.infer(reading, start, colors)
    assert (result.verdict, result.squares) == (Verdict.UNREADABLE, (sq("e3"),))


def test_two_moves_by_the_same_side_stay_illegal(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    twice = RINNE.play(RINNE.play(start, Move(sq("e2"), sq("e3"), State.KNIGHT)),
                       Move(sq("a2"), sq("a3"), State.KNIGHT))
    twice = type(twice)(twice.board, start.turn)
    assert rinne.infer(reading_of(rinne, twice), start, colors).verdict is Verdict.ILLEGAL


def test_an_unsure_square_away_from_the_move_does_not_hold_the_game_up(rinne):
    start = RINNE.start()
    colors = learn(rinne, start)
    move = Move(sq("e2"), sq("e3"), State.KNIGHT)
    # c6 (a goal mark under the die, say) is unsure, but still favours its die.
    reading = reading_of(rinne, RINNE.play(start, move), unsure={sq("c6"): 0.45})
    assert (rinne.infer(reading, start, colors).move) == move


def test_a_capture_half_done_is_incomplete_not_illegal(rinne):
    pos = RINNE.from_placement({"c5": "R", "c6": "k", "a6": "k", "e1": "K"})
    colors = ColorModel(np.array([[92.0, 0.0, 4.0], [45.0, 55.0, 35.0]]), 4.0)
    captured_only = RINNE.from_placement({"c5": "R", "a6": "k", "e1": "K"})
    result = rinne.infer(reading_of(rinne, captured_only), pos, colors)
    assert result.verdict is Verdict.INCOMPLETE


def test_colours_hold_against_a_shaded_die_and_a_crop_that_missed_its_die():
    """White against cyan dice seen steeply: one white die's crop showed mostly the brown
    board, and in play a white die's shaded side reads as dark as a cyan top. The medians
    keep the colours, the spread stays small enough to tell them apart, and lightness
    counting half gives the shaded white die to White."""
    inferer = MoveInferer(RINNE, DICE, DICE_LABELS)
    start = RINNE.start()
    reading = reading_of(inferer, start)
    _, owners = inferer.appearance(start)
    known = {s: int(o) for s, o in enumerate(owners) if o >= 0}
    white = [s for s, o in known.items() if o == 0]
    for square, owner in known.items():
        reading.colors[square] = [92.0, 2.0, 0.0] if owner == 0 else [72.0, -25.0, -5.0]
    reading.colors[white[0]] = [36.0, 21.0, 26.0]  # the board, not the die
    colors = ColorModel.learn(reading, known)
    assert colors.separation >= 3.0
    shaded_white, cyan = np.array([[60.0, 2.0, 1.0]]), np.array([[70.0, -24.0, -5.0]])
    assert colors.first_owner_probability(shaded_white)[0] > 0.9
    assert colors.first_owner_probability(cyan)[0] < 0.1


@pytest.mark.parametrize("game", [RINNE, TENSEI], ids=["rinne", "tensei"])
def test_any_two_legal_plies_are_recovered_exactly(game):
    """Pairs are scored from the position between (two squares change): every random legal
    pair, its reply's die shown on 6 or rolled, is found."""
    inferer = MoveInferer(game, DICE, DICE_LABELS)
    start = game.start()
    colors = learn(inferer, start)
    rng = np.random.default_rng(5)
    for _ in range(12):
        moves = game.legal_moves(start)
        first = moves[int(rng.integers(len(moves)))]
        middle = game.play(start, first)
        replies = game.legal_moves(middle)
        reply = replies[int(rng.integers(len(replies)))]
        pending = game.chance and bool(rng.integers(2))
        shown = {reply.to_square: "6"} if pending else None
        reading = reading_of(inferer, game.play(middle, reply), shown=shown,
                             seed=int(rng.integers(1000)))
        result = inferer.infer(reading, start, colors)
        assert (result.verdict, result.move, result.second_pending) == (
            Verdict.TWO_MOVES, first, pending)
        assert (result.second.from_square, result.second.to_square) == (
            reply.from_square, reply.to_square)
        if not pending:
            assert result.second == reply


def test_candidates_scored_at_once_score_as_one_by_one():
    """The stacked candidates' scores are the very figures of scoring each alone (the same
    sums, in the same order), so no decision depends on how they are scored."""
    rng = np.random.default_rng(3)
    label_logp = np.log(rng.dirichlet(np.ones(7), size=25))
    owner_logp = np.log(rng.dirichlet(np.ones(3), size=25))
    found = [Candidate(Verdict.MOVE, None, rng.integers(0, 7, 25), rng.integers(-1, 2, 25))
             for _ in range(300)]
    rows = np.arange(25)
    one_by_one = [label_logp[rows, c.labels].sum() + owner_logp[rows, c.owners].sum()
                  for c in found]
    assert Explanations.of(found).scores(label_logp, owner_logp).tolist() == one_by_one
