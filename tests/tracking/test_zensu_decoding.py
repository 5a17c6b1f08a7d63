"""Zensū readings decoded in context: plies, captures under way, wrong removals, the sample
game refereed to Red's win, and a forced pass played by the referee itself."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from referee.app.events import EventKind
from referee.app.state_machine import Phase, Referee
from referee.rules import Match
from referee.rules.core import Color
from referee.rules.records import read_record
from referee.rules.zensu import PASS, Position, default_zensu
from referee.tracking.decoding import Verdict
from referee.tracking.reading import ColorModel
from referee.tracking.zensu import ZensuDecoder, forced_pass
from tests import DATA
from tests.tracking.fakes import PLAYER_LAB, reading_of

ZENSU = default_zensu()
LABELS = ("empty", "1", "2")
COLORS = ColorModel(np.array([PLAYER_LAB[0] * [0.5, 1, 1], PLAYER_LAB[1] * [0.5, 1, 1]]), 6.0)


def sample() -> Match:
    match: Match = Match(ZENSU)
    for ply in read_record(DATA / "records" / "zensu-sample.txt").plies:
        match.push_text(ply.text)
    return match


def capture_ply(match: Match) -> int:
    """The first ply that captures two pieces, one passed over and one landed on."""
    return next(i for i, move in enumerate(match.moves)
                if len(ZENSU.captures(match.positions[i], move)) >= 2)


def with_board(position: Position, changes: dict[int, int]) -> Position:
    board = list(position.board)
    for square, value in changes.items():
        board[square] = value
    return Position(tuple(board), position.turn)


def test_a_ply_is_read_as_that_ply() -> None:
    decoder = ZensuDecoder(ZENSU, LABELS)
    match = sample()
    for i, move in enumerate(match.moves[:6]):
        before, after = match.positions[i], match.positions[i + 1]
        inference = decoder.infer(reading_of(decoder, after, seed=i), before, COLORS)
        assert (inference.verdict, inference.move) == (Verdict.MOVE, move)


def test_a_capture_with_a_captured_piece_still_standing_is_under_way() -> None:
    decoder = ZensuDecoder(ZENSU, LABELS)
    match = sample()
    i = capture_ply(match)
    before, move, after = match.positions[i], match.moves[i], match.positions[i + 1]
    passed = [s for s in ZENSU.captures(before, move) if s != move.to_square]
    assert passed
    standing = with_board(after, {passed[0]: before.board[passed[0]]})
    inference = decoder.infer(reading_of(decoder, standing), before, COLORS)
    assert inference.verdict is Verdict.INCOMPLETE and inference.move == move
    assert inference.squares == (passed[0],)
    done = decoder.infer(reading_of(decoder, after), before, COLORS)
    assert (done.verdict, done.move) == (Verdict.MOVE, move)


def test_the_piece_landed_on_lifted_before_the_move_is_a_capture_under_way() -> None:
    """Players often lift the piece they capture first: the board then shows one piece gone
    and the capturer not yet moved, which is a ply under way told nothing, not an illegal
    change (the buzzer would sound in the middle of every such capture)."""
    decoder = ZensuDecoder(ZENSU, LABELS)
    referee = Referee(decoder)
    match = sample()
    i = next(i for i, move in enumerate(match.moves)
             if move.to_square in ZENSU.captures(match.positions[i], move))
    before, move = match.positions[i], match.moves[i]
    lifted = with_board(before, {move.to_square: 0})
    inference = decoder.infer(reading_of(decoder, lifted), before, COLORS)
    assert (inference.verdict, inference.move, inference.squares) == (Verdict.INCOMPLETE, move, ())
    for ply in match.moves[:i]:
        referee.match.push(ply)
    referee.phase = Phase.PLAYING
    assert referee.on_reading(reading_of(decoder, lifted, frame_index=1)) == []


def test_a_wrong_piece_taken_off_is_illegal() -> None:
    decoder = ZensuDecoder(ZENSU, LABELS)
    match = sample()
    i = capture_ply(match)
    before, after = match.positions[i], match.positions[i + 1]
    mover_sign = 1 if before.turn == 0 else -1
    own = next(s for s, v in enumerate(after.board) if v * mover_sign > 0 and before.board[s] == v)
    wrong = with_board(after, {own: 0})  # one of the mover's own pieces lifted as well
    inference = decoder.infer(reading_of(decoder, wrong), before, COLORS)
    assert inference.verdict is Verdict.ILLEGAL and own in inference.squares


def test_the_sample_game_is_refereed_to_reds_win_through_its_captures() -> None:
    truth = sample()
    referee = Referee(ZensuDecoder(ZENSU, LABELS))
    events = []
    boards: list[Position] = [truth.positions[0]]
    for i, move in enumerate(truth.moves):
        before, after = truth.positions[i], truth.positions[i + 1]
        passed = [s for s in ZENSU.captures(before, move) if s != move.to_square]
        if passed:  # the piece moves first, then its captives are lifted one by one
            for k in range(len(passed), 0, -1):
                boards.append(with_board(after, {s: before.board[s] for s in passed[:k]}))
        boards.append(after)
    for i, board in enumerate(boards):
        events += referee.on_reading(reading_of(referee.inferer, board, seed=i, frame_index=i))
    accepted = [e.move for e in events if e.kind is EventKind.ACCEPTED]
    assert accepted == [ZENSU.move_text(truth.positions[i], m) for i, m in enumerate(truth.moves)]
    incomplete = [e for e in events if e.kind is EventKind.INCOMPLETE]
    assert incomplete and all(e.detail.startswith("take off the captured squares ") for e in incomplete)
    assert events[-1].kind is EventKind.GAME_OVER and events[-1].detail.startswith("Red wins")
    assert referee.phase is Phase.OVER and referee.match.moves == truth.moves


def test_a_player_without_a_move_passes_and_the_referee_plays_it() -> None:
    # A ruleset where a "1" moves eight squares every way: on a 6x9 board, from the middle
    # rank, it cannot move at all; the ruleset lets such a player pass.
    game = replace(ZENSU, no_legal_move="pass", edges=((1, (8, 8, 8, 8)), (2, (2, 1, 3, 4))))
    geometry = game.geometry
    board = [0] * geometry.size
    board[geometry.parse_square("c5")] = 1  # Turquoise's only piece: stuck
    board[geometry.parse_square("a8")] = -2  # Red's
    red_to_move = Position(tuple(board), Color.SECOND)
    assert game.outcome(red_to_move, 1) is None
    red_move = next(m for m in game.legal_moves(red_to_move)
                    if m.to_square == geometry.parse_square("a6"))
    after = game.play(red_to_move, red_move)
    assert forced_pass(game, after) == PASS and forced_pass(game, red_to_move) is None
    referee = Referee(ZensuDecoder(game, LABELS), match=Match(game, red_to_move))
    events = referee.on_reading(reading_of(referee.inferer, red_to_move))  # the set-up
    events += referee.on_reading(reading_of(referee.inferer, after, seed=1, frame_index=1))
    accepted = [(e.move, e.detail) for e in events if e.kind is EventKind.ACCEPTED]
    assert accepted == [("2 a8 - a6", ""), ("pass", "Turquoise cannot move")]
    assert referee.match.moves == [red_move, PASS] and referee.match.position.turn is Color.SECOND


def test_the_report_draws_zensu_boards_with_their_numbers_and_home_ranks(tmp_path) -> None:
    from referee.app.diagrams import board_svg
    from referee.app.record import Recorder

    truth = sample()
    svg = board_svg(ZENSU, truth.positions[0], None)
    marks = re.findall(r'font-weight="bold" fill="#(fff|000)">(\d)</text>', svg)
    assert sorted(marks) == sorted([("000", "1"), ("000", "2"), ("fff", "1"), ("fff", "2")] * 6)
    assert svg.count("#c9e3c1") == 12  # both home ranks
    recorder = Recorder(tmp_path, ZENSU, {})
    recorder.finish(truth)
    report = (tmp_path / "report.html").read_text()
    assert report.count("<svg") == len(truth.moves) + 1 and "Red wins" in report
