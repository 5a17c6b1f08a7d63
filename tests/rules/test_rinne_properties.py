"""perft counts and property tests, with an independent legality check written from
RULES.md's words rather than from the move generator's tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.rules import Color, Match, find_game
from referee.rules.core import generic_perft
from referee.rules.records import format_record, parse_record, replay
from referee.rules.rinne import GAMES, Move, RinneRules, State

PERFT = {
    "rinne": [1, 25, 621, 14198, 320840],
    "rinne-5x5": [1, 13, 169, 2176, 27106],
    "tensei": [1, 125, 15525, 1835900],
    "tensei-5x5": [1, 65, 4225, 334350],
    "flipflop-3x3": [1, 4, 12, 40, 124],
    "flipflop-5x5": [1, 16, 221, 3232, 43730],
}


@pytest.mark.parametrize("name", sorted(PERFT))
def test_perft_counts(name):
    game = find_game(name)
    counts = PERFT[name]
    assert [game.perft(game.start(), depth) for depth in range(len(counts))] == counts


@pytest.mark.parametrize("name", sorted(PERFT))
def test_fast_perft_agrees_with_the_protocol_perft(name):
    game = find_game(name)
    depth = 2 if name.startswith("tensei") else 3
    assert game.perft(game.start(), depth) == generic_perft(game, game.start(), depth)


def independently_legal(game: RinneRules, position, move: Move) -> bool:
    """RULES.md section 1 read literally, one condition at a time."""
    geo = game.geometry
    piece = position.piece_at(move.from_square)
    if piece is None or piece.color is not position.turn or move.from_square == move.to_square:
        return False
    df = geo.file_of(move.to_square) - geo.file_of(move.from_square)
    dr = geo.rank_of(move.to_square) - geo.rank_of(move.from_square)
    straight = df == 0 or dr == 0
    diagonal = abs(df) == abs(dr)
    shape_ok = {
        State.KING: max(abs(df), abs(dr)) == 1,
        State.KNIGHT: sorted((abs(df), abs(dr))) == [1, 2],
        State.BISHOP: diagonal,
        State.ROOK: straight,
        State.QUEEN: straight or diagonal,
    }[piece.state]
    if not shape_ok:
        return False
    if piece.state is not State.KNIGHT:  # only the knight jumps
        steps = max(abs(df), abs(dr))
        sf, sr = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
        f, r = geo.file_of(move.from_square), geo.rank_of(move.from_square)
        for i in range(1, steps):
            if position.piece_at(geo.square(f + i * sf, r + i * sr)) is not None:
                return False
    target = position.piece_at(move.to_square)
    if target is not None and (target.color is piece.color or not game.is_goal(move.to_square)):
        return False
    return move.new_state in game.promotions(piece.state)


@st.composite
def positions(draw):
    game = draw(st.sampled_from(GAMES))
    squares = draw(st.lists(st.integers(0, game.geometry.size - 1), min_size=2, max_size=10,
                            unique=True))
    placement = {}
    for i, sq in enumerate(squares):
        letter = draw(st.sampled_from([s.letter for s in game.cycle]))
        placement[game.geometry.square_name(sq)] = letter if i % 2 == 0 else letter.lower()
    turn = draw(st.sampled_from(list(Color)))
    return game, game.from_placement(placement, turn)


@settings(max_examples=300, deadline=None)
@given(positions())
def test_generated_moves_are_exactly_the_independently_legal_ones(case):
    game, position = case
    generated = set(game.legal_moves(position))
    assert len(generated) == len(game.legal_moves(position))  # no duplicates
    every = {
        Move(f, t, s)
        for f in game.geometry.squares() for t in game.geometry.squares() for s in State
    }
    assert generated == {m for m in every if independently_legal(game, position, m)}
    for move in generated:  # never onto an own piece
        target = position.piece_at(move.to_square)
        assert target is None or target.color is not position.turn


@st.composite
def random_games(draw):
    game = draw(st.sampled_from(GAMES))
    match: Match = Match(game)
    for _ in range(draw(st.integers(0, 60))):
        moves = match.legal_moves()
        if not moves:
            break
        match.push(moves[draw(st.integers(0, len(moves) - 1))])
    return match


@settings(max_examples=150, deadline=None)
@given(random_games(), st.booleans())
def test_records_round_trip(match, compact):
    text = format_record(match, {"White": "Ann", "Black": "Ben", "Date": "2026-11-30"},
                         compact=compact)
    record = parse_record(text)
    assert record.headers["White"] == "Ann"
    again, _ = replay(record)
    assert again.game is match.game
    assert again.moves == match.moves
    assert again.outcome == match.outcome
    assert format_record(again, dict(record.headers), compact=compact) == text
