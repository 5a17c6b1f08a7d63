"""Renaissance readings decoded in context: each kind of ply, the board part way through an
acquisition and through the monomino fill, the sample game refereed to its recorded result
from readings alone, a placement the rules forbid, and the plies' boards made at once as the
rules play them out."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from referee.app.events import EventKind
from referee.app.state_machine import Referee
from referee.rules import Match
from referee.rules.records import read_record
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import Phase, PlaceMarker, PlaceTile, Position
from referee.rules.renaissance_ruleset import default_settings
from referee.tracking.decoding import Verdict
from referee.tracking.reading import Reading
from referee.tracking.renaissance import RenaissanceDecoder
from referee.vision.seams import SeamLook, seam_pairs
from tests import DATA

GAME = RenaissanceRules()
# The tiles model's labels, "empty" first as a reading holds them.
LABELS = ("empty", "blocked", "empty+gold", "empty+silver", "tile", "tile+gold",
          "tile+silver", "monomino", "monomino+gold", "monomino+silver")


def sample() -> Match:
    match: Match = Match(GAME)
    for ply in read_record(DATA / "records" / "renaissance-sample.txt").plies:
        match.push_text(ply.text)
    return match


def reading(labels: np.ndarray, *, seed: int = 0, confidence: float = 0.93) -> Reading:
    """A camera's reading of a board whose squares show `labels` (label index a square)."""
    rng = np.random.default_rng(seed)
    k = len(LABELS)
    probabilities = np.empty((len(labels), k))
    for square, label in enumerate(labels):
        probabilities[square] = np.insert(rng.dirichlet(np.ones(k - 1)) * (1 - confidence),
                                          label, confidence)
    return Reading(LABELS, probabilities, np.zeros((len(labels), 3)))


def rendered_game_after(record: str, plies: int) -> Position:
    """The position after the first `plies` plies of a rendered game's committed record."""
    match: Match = Match(GAME)
    for ply in read_record(DATA / "records" / record).plies[:plies]:
        match.push_text(ply.text)
    return match.position


def shows(decoder: RenaissanceDecoder, position: Position) -> np.ndarray:
    return decoder.appearance(position)[0]


def first_acquisition(match: Match) -> int:
    return next(i for i, move in enumerate(match.moves)
                if GAME.acquisitions(match.positions[i], move))


def test_every_ply_of_the_sample_is_read_as_that_ply() -> None:
    """As that ply, or as the plain placement that leaves the same position (a push-in of
    the mover's own markers looks the same once made)."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    pushes_read_plain = 0
    for i, move in enumerate(match.moves):
        before, after = match.positions[i], match.positions[i + 1]
        inference = decoder.infer(reading(shows(decoder, after), seed=i), before, None)
        assert inference.verdict is Verdict.MOVE, (i, move)
        if inference.move != move:
            assert GAME.move_text(before, move).endswith(">"), (i, move)
            assert GAME.play(before, inference.move) == after, (i, move)
            pushes_read_plain += 1
    assert 0 < pushes_read_plain < len(match.moves) // 10


def test_a_push_in_seen_under_way_is_recorded_as_the_push_in() -> None:
    """a3> and c3 both take the I4 on a3-d3 and leave the same position; the board seen
    with the polyomino still down shows which."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    before, push = match.positions[27], match.moves[27]
    assert GAME.move_text(before, push) == "a3>"
    referee = Referee(decoder, match=Match(GAME, before))
    referee.on_reading(reading(shows(decoder, before)))
    events = referee.on_reading(reading(decoder.labels_of(
        before.cover, GAME.placed_markers(before, push.square))))
    assert [(e.kind, e.move) for e in events] == [(EventKind.INCOMPLETE, "a3>")]
    events = referee.on_reading(reading(shows(decoder, match.positions[28])))
    assert [(e.kind, e.move) for e in events] == [(EventKind.ACCEPTED, "a3>")]


def test_the_push_in_that_ends_phase_1_seen_under_way_gives_the_polyomino_to_its_taker() -> None:
    """A rendered game's 91st ply, a3>, takes the I4 c3-c6 for Gold and ends phase 1; a1>,
    c1> and c3 give it to Silver. Once the board is cleared all four look the same, so only
    the board seen with the push made tells whose hand it went to."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    before = rendered_game_after("renaissance-890010.txt", 90)
    push = GAME.parse_move(before, "a3>")
    after = GAME.play(before, push)
    look_alikes = {GAME.move_text(before, move) for move in GAME.legal_moves(before)
                   if np.array_equal(shows(decoder, GAME.play(before, move)), shows(decoder, after))}
    assert look_alikes == {"a1>", "c1>", "a3>", "c3"}
    assert GAME.play(before, GAME.parse_move(before, "c3")) != after  # another hand
    referee = Referee(decoder, match=Match(GAME, before))
    referee.on_reading(reading(shows(decoder, before)))
    events = referee.on_reading(reading(decoder.labels_of(
        before.cover, GAME.placed_markers(before, push.square))))
    assert [(e.kind, e.move) for e in events] == [(EventKind.INCOMPLETE, "a3>")]
    events = referee.on_reading(reading(shows(decoder, after)))
    assert (events[0].kind, events[0].move) == (EventKind.ACCEPTED, "a3>")
    assert referee.match.position == after


def test_an_acquisition_under_way_that_two_look_alikes_explain_alike_is_the_plain_placement(
) -> None:
    """A rendered game's 49th ply, f2, completes the V3 f1 e2 f2 and leaves the same position
    as the push-in f1>. With the V3's markers lifted, the polyomino still down, the board
    shows nothing of which: the plain placement stands for both, as it does once made."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    before = rendered_game_after("renaissance-890009.txt", 48)
    placement = GAME.parse_move(before, "f2")
    push = GAME.parse_move(before, "f1>")
    after = GAME.play(before, placement)
    assert GAME.play(before, push) == after
    lifted = shows(decoder, before).copy()
    for square in before.tile_squares(before.cover[placement.square]):
        lifted[square] = LABELS.index("tile")
    referee = Referee(decoder, match=Match(GAME, before))
    referee.on_reading(reading(shows(decoder, before)))
    events = referee.on_reading(reading(lifted))
    assert [(e.kind, e.move) for e in events] == [(EventKind.INCOMPLETE, "f2")]
    events = referee.on_reading(reading(shows(decoder, after)))
    assert (events[0].kind, events[0].move) == (EventKind.ACCEPTED, "f2")


def test_a_taken_polyomino_still_on_the_board_is_an_acquisition_under_way() -> None:
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    i = first_acquisition(match)
    before, move = match.positions[i], match.moves[i]
    tile, _holder = GAME.acquisitions(before, move)[0]
    squares = before.tile_squares(tile)
    # The marker is down, the polyomino and its markers not yet lifted.
    acted = decoder.labels_of(before.cover, GAME.placed_markers(before, move.square))
    inference = decoder.infer(reading(acted), before, None)
    assert (inference.verdict, inference.move) == (Verdict.INCOMPLETE, move)
    assert set(inference.squares) == set(squares)
    # Lifted, and a monomino laid on all but one square.
    settled = shows(decoder, match.positions[i + 1]).copy()
    settled[squares[0]] = LABELS.index("empty")
    inference = decoder.infer(reading(settled), before, None)
    assert (inference.verdict, inference.move, inference.squares) == (
        Verdict.INCOMPLETE, move, (squares[0],))


def test_the_players_are_told_who_takes_which_polyomino() -> None:
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    i = first_acquisition(match)
    before, move = match.positions[i], match.moves[i]
    tile, holder = GAME.acquisitions(before, move)[0]
    referee = Referee(decoder, match=Match(GAME, before))
    referee.on_reading(reading(shows(decoder, before)))  # the set-up: the logged position
    acted = decoder.labels_of(before.cover, GAME.placed_markers(before, move.square))
    events = referee.on_reading(reading(acted))
    assert [e.kind for e in events] == [EventKind.INCOMPLETE]
    assert events[0].detail.startswith(f"{GAME.player_names[holder]} takes the ")
    assert all(GAME.geometry.square_name(sq) in events[0].detail
               for sq in before.tile_squares(tile))
    assert not referee.match.moves  # nothing recorded until the board is settled
    events = referee.on_reading(reading(shows(decoder, match.positions[i + 1])))
    assert [e.kind for e in events] == [EventKind.ACCEPTED]


def test_the_last_tile_of_the_preparation_waits_for_the_monomino_fill() -> None:
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    last = next(i for i, p in enumerate(match.positions) if p.phase is Phase.PHASE1) - 1
    before, move = match.positions[last], match.moves[last]
    acted = shows(decoder, before).copy()
    acted[list(move.squares)] = LABELS.index("tile")
    inference = decoder.infer(reading(acted), before, None)
    free = [sq for sq, cover in enumerate(match.positions[last + 1].cover)
            if before.cover[sq] < 0 and sq not in move.squares and before.is_free(sq)]
    assert (inference.verdict, inference.move) == (Verdict.INCOMPLETE, move)
    assert set(inference.squares) == set(free)


def test_a_whole_game_is_refereed_from_readings_alone() -> None:
    decoder = RenaissanceDecoder(GAME, LABELS)
    truth = sample()
    referee = Referee(decoder)
    events = referee.on_reading(reading(shows(decoder, GAME.start())))
    assert [e.kind for e in events] == [EventKind.STARTED]
    for i, after in enumerate(truth.positions[1:]):
        referee.on_reading(reading(shows(decoder, after), seed=i))
    # (Pushes-in seen only once made are recorded as the plain placement: same positions.)
    assert referee.match.positions == truth.positions
    assert referee.match.outcome == truth.outcome


def test_a_tile_laid_where_the_rules_forbid_is_illegal() -> None:
    decoder = RenaissanceDecoder(GAME, LABELS)
    start = GAME.start()
    board = shows(decoder, start).copy()
    board[[0, 8, 16]] = LABELS.index("tile")  # a1 b2 c3: no polyomino is a diagonal
    inference = decoder.infer(reading(board), start, None)
    assert inference.verdict is Verdict.ILLEGAL
    assert set(inference.squares) == {0, 8, 16}


def test_a_tile_shifted_after_it_was_accepted_is_taken_back_and_the_shift_recorded() -> None:
    """The first tile set down a square off and accepted, then slid into its place."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    referee = Referee(decoder)
    start = GAME.start()
    referee.on_reading(reading(shows(decoder, start)))
    meant = next(m for m in GAME.legal_moves(start) if GAME.move_text(start, m).startswith("I4"))
    off = next(m for m in GAME.legal_moves(start) if GAME.move_text(start, m).startswith("I4")
               and len(set(m.squares) & set(meant.squares)) == 3)
    events = referee.on_reading(reading(shows(decoder, GAME.play(start, off)), seed=1))
    assert [(e.kind, e.move) for e in events] == [
        (EventKind.ACCEPTED, GAME.move_text(start, off))]
    events = referee.on_reading(reading(shows(decoder, GAME.play(start, meant)), seed=2))
    assert [(e.kind, e.move) for e in events] == [
        (EventKind.TAKE_BACK, GAME.move_text(start, off)),
        (EventKind.ACCEPTED, GAME.move_text(start, meant))]
    assert referee.match.moves == [meant]


ALLOW = RenaissanceRules(replace(default_settings(), dead_end="allow"))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([GAME, ALLOW]), st.integers(0, 2**32 - 1),
       st.integers(0, 13) | st.integers(0, 110))
def test_plies_made_at_once_are_those_the_rules_play_out(game: RenaissanceRules, seed: int,
                                                         plies: int) -> None:
    """Where the rules say every ply only acts (`acts_only`), the boards made at once are
    those of each ply played out, and none stands for another (as often in the preparation,
    whose last tile does not only act, as in the rest of the game)."""
    position = game.start()
    rng = random.Random(seed)
    for _ in range(plies):
        moves = game.legal_moves(position)
        if not moves:
            break
        position = game.play(position, rng.choice(moves))
    assume(game.acts_only(position))
    decoder = RenaissanceDecoder(game, LABELS)
    moves = game.moves_to_look_for(position)
    made = decoder._acted_plies(position, moves)
    for played in decoder._played_plies(position, moves):
        assert [p.move for p in played] == [p.move for p in made] == moves
        for slow, fast in zip(played, made, strict=True):
            for a, b in ((slow.acted, fast.acted), (slow.settled, fast.settled),
                         (slow.steps, fast.steps), (slow.changing, fast.changing)):
                assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)


def test_squares_the_image_shows_unchanged_tell_a_tile_from_a_longer_one() -> None:
    """A new tile's neighbour read with some doubt (its crop's edge shows the tile) leaves
    the tile and a longer one that covers the neighbour about as likely: unreadable from
    the classifier alone. The image shows the neighbour as it was, and the classifier leans
    that way too, so only the tile fits."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    tried = 0
    for i, move in enumerate(match.moves[:8]):
        before, after = match.positions[i], match.positions[i + 1]
        shown_before, shown_after = shows(decoder, before), shows(decoder, after)
        for square in np.flatnonzero(shown_after == LABELS.index("empty")):
            doubted = reading(shown_after, seed=i)
            probabilities = doubted.probabilities.copy()
            probabilities[square] = 0.002
            probabilities[square, [LABELS.index("empty"), LABELS.index("tile")]] = 0.9, 0.084
            doubted = replace(doubted, probabilities=probabilities)
            alone = decoder.infer(doubted, before, None)
            if alone.verdict is not Verdict.UNREADABLE:
                continue
            tried += 1
            assert square in alone.squares
            unchanged = shown_before == shown_after
            seen = decoder.infer(replace(doubted, unchanged=unchanged), before, None)
            assert (seen.verdict, seen.move) == (Verdict.MOVE, move), (i, square)
            assert seen.margin >= decoder.settings.min_margin
            # an image blind to the tile (cream on cream) still has the classifier's word
            blind = decoder.infer(replace(doubted, unchanged=np.ones_like(unchanged)), before, None)
            assert (blind.verdict, blind.move) == (Verdict.MOVE, move)
            # where the classifier leans the other way, the image alone decides nothing
            leaning = probabilities.copy()
            leaning[square, [LABELS.index("empty"), LABELS.index("tile")]] = 0.45, 0.534
            torn = replace(doubted, probabilities=leaning, unchanged=unchanged)
            assert decoder.infer(torn, before, None).verdict is Verdict.UNREADABLE
    assert tried >= 3, "the sample's first tiles have neighbours a longer tile would cover"


def test_a_square_read_as_nothing_in_particular_holds_what_the_image_shows_it_held() -> None:
    """An empty square walled in by tall tiles, dark and half hidden, is read 0.14-0.36 for
    any label from the moment it is walled in: each next tile beside it would be unreadable
    (the longer tile over it about as likely) for the rest of the game. Where the image shows
    it unchanged since the position, it holds what it held; where the image shows it changed,
    or does not say, it is still in doubt."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    lost = {"tile": 0.3, "empty": 0.25, "monomino": 0.2, "monomino+gold": 0.1, "empty+gold": 0.1}
    tried = 0
    for i, move in enumerate(match.moves[:8]):
        before, after = match.positions[i], match.positions[i + 1]
        shown_before, shown_after = shows(decoder, before), shows(decoder, after)
        for square in np.flatnonzero(shown_after == LABELS.index("empty")):
            probabilities = reading(shown_after, seed=i).probabilities.copy()
            probabilities[square] = 0.05 / (len(LABELS) - len(lost))
            for label, p in lost.items():
                probabilities[square, LABELS.index(label)] = p
            doubted = Reading(LABELS, probabilities, np.zeros((len(shown_after), 3)))
            alone = decoder.infer(doubted, before, None)
            if alone.verdict is not Verdict.UNREADABLE:
                continue
            tried += 1
            unchanged = shown_before == shown_after
            seen = decoder.infer(replace(doubted, unchanged=unchanged), before, None)
            assert (seen.verdict, seen.move) == (Verdict.MOVE, move), (i, square)
            shown_changed = unchanged.copy()
            shown_changed[square] = False
            assert decoder.infer(replace(doubted, unchanged=shown_changed), before, None
                                 ).verdict is Verdict.UNREADABLE
    assert tried >= 3, "the sample's first tiles have neighbours a longer tile would cover"


def test_two_plies_made_before_the_board_was_read_are_both_recorded() -> None:
    """A reply laid before the referee could read the first ply (the board still for less
    than a moment between them): the pair that leaves the board seen, in the preparation
    (two tiles) and in phase 1 (two markers, pushes among them), none taking a polyomino."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    pairs = [i for i in range(len(match.moves) - 1)
             if not GAME.acquisitions(match.positions[i], match.moves[i])
             and not GAME.acquisitions(match.positions[i + 1], match.moves[i + 1])
             and match.positions[i + 2].phase is match.positions[i].phase]
    phases = {match.positions[i].phase for i in pairs}
    assert {Phase.PREPARATION, Phase.PHASE1} <= phases
    apart = [i for i in pairs if not decoder._touching(match.moves[i], match.moves[i + 1])]
    assert len(apart) < len(pairs), "some of the sample's tiles are laid side by side"
    for i in apart[::3]:
        before, after = match.positions[i], match.positions[i + 2]
        seen = decoder.infer(reading(shows(decoder, after), seed=i, confidence=0.99), before, None)
        assert seen.verdict is Verdict.TWO_MOVES, (i, match.moves[i], match.moves[i + 1])
        made = GAME.play(GAME.play(before, seen.move), seen.second)
        # (two tiles laid at once may be taken in the other order: the same board)
        assert np.array_equal(shows(decoder, made), shows(decoder, after)), i
        if before.phase is Phase.PHASE1:  # the markers' colours tell the order
            assert made == after, i
    for i in sorted(set(pairs) - set(apart)):  # side by side: as one tile, not two plies
        before, after = match.positions[i], match.positions[i + 2]
        seen = decoder.infer(reading(shows(decoder, after), seed=i, confidence=0.99), before, None)
        assert seen.verdict is not Verdict.TWO_MOVES, i


def test_two_tiles_read_at_once_are_recorded_in_the_order_a_glimpse_between_showed() -> None:
    """Two tiles laid before the board was read leave the same board in either order; a
    reading between them, unreadable as it was (a square of the tile unsure), shows which
    was laid first, and the record keeps that order."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    i = next(i for i in range(len(match.moves) - 1)
             if match.positions[i + 2].phase is Phase.PREPARATION
             and not decoder._touching(match.moves[i], match.moves[i + 1]))
    before, after = match.positions[i], match.positions[i + 2]
    tiles = match.moves[i], match.moves[i + 1]
    for first, second in (tiles, tiles[::-1]):
        referee = Referee(decoder, match=Match(GAME, before))
        referee.on_reading(reading(shows(decoder, before)))
        glimpse = reading(shows(decoder, GAME.play(before, first)), seed=1)
        unsure = first.squares[0]
        glimpse.probabilities[unsure] = np.full(len(LABELS), 1 / len(LABELS))
        glimpse.probabilities[unsure, shows(decoder, after)[unsure]] += 0.3
        glimpse.probabilities[unsure] /= glimpse.probabilities[unsure].sum()
        assert [e.kind for e in referee.on_reading(glimpse)] == [EventKind.UNREADABLE]
        events = referee.on_reading(reading(shows(decoder, after), seed=2, confidence=0.99))
        assert [e.kind for e in events] == [EventKind.ACCEPTED] * 2
        assert [e.move for e in events] == [GAME.move_text(before, first),
                                            GAME.move_text(GAME.play(before, first), second)]


def test_a_marker_laid_in_doubt_only_over_what_lies_under_it_is_read() -> None:
    """The square a marker was laid on, read unsurely between the marker on a tile and the
    marker on a monomino (no rival lays a monomino there), is surely changed: the ply is
    read. In doubt between the marker and the square as it was, it is not."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    i = next(i for i, move in enumerate(match.moves) if isinstance(move, PlaceMarker)
             and match.positions[i].phase is Phase.PHASE1
             and not GAME.acquisitions(match.positions[i], move)
             and GAME.move_text(match.positions[i], move)[-1] != ">"
             and LABELS[shows(decoder, match.positions[i])[move.square]] == "tile")
    before, after, square = match.positions[i], match.positions[i + 1], match.moves[i].square
    laid = shows(decoder, after)[square]
    for other, verdict in (("monomino", Verdict.MOVE), ("tile", Verdict.UNREADABLE)):
        if other == "monomino":
            other += LABELS[laid][len("tile"):]  # the same marker, on a monomino
        seen = reading(shows(decoder, after), seed=i)
        seen.probabilities[square] = 0.02
        seen.probabilities[square, laid] = 0.45
        seen.probabilities[square, LABELS.index(other)] = 0.39
        assert decoder.infer(seen, before, None).verdict is verdict, other


def test_a_square_both_signals_show_changed_rules_out_what_leaves_it() -> None:
    """A marker laid, read at 0.8 only against 0.07 for the square as it was: the ply leads
    "nothing changed" by less than the margin. Where the image shows the square changed
    by far more than light or a neighbour does, "nothing changed" is ruled out."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    i = next(i for i, move in enumerate(match.moves) if isinstance(move, PlaceMarker)
             and not GAME.acquisitions(match.positions[i], move))
    before, after, square = match.positions[i], match.positions[i + 1], match.moves[i].square
    seen = reading(shows(decoder, after), seed=i)
    seen.probabilities[square] = 0.13 / (len(LABELS) - 2)
    seen.probabilities[square, shows(decoder, after)[square]] = 0.8
    seen.probabilities[square, shows(decoder, before)[square]] = 0.07
    assert decoder.infer(seen, before, None).verdict is Verdict.UNREADABLE
    changed = np.zeros(seen.squares, bool)
    changed[square] = True
    told = decoder.infer(replace(seen, changed=changed), before, None)
    assert (told.verdict, GAME.play(before, told.move)) == (Verdict.MOVE, after)


def test_a_ply_taking_a_polyomino_and_the_reply_read_at_once_are_both_recorded() -> None:
    """The polyomino lifted, its squares filled, and the reply's marker laid before the
    board was still long enough to read: both plies, as the rules play them out."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    taking = [i for i in range(len(match.moves) - 1)
              if GAME.acquisitions(match.positions[i], match.moves[i])
              and not GAME.acquisitions(match.positions[i + 1], match.moves[i + 1])
              and match.positions[i].phase is match.positions[i + 2].phase is Phase.PHASE1]
    assert len(taking) >= 3
    for i in taking:
        before, after = match.positions[i], match.positions[i + 2]
        seen = decoder.infer(reading(shows(decoder, after), seed=i, confidence=0.99), before, None)
        assert seen.verdict is Verdict.TWO_MOVES, (i, match.moves[i], match.moves[i + 1])
        assert GAME.play(GAME.play(before, seen.move), seen.second) == after, i


def test_the_last_tile_with_its_fill_and_the_first_marker_read_at_once_are_both_recorded(
) -> None:
    """The fill's last monomino laid and the first marker of phase 1 laid before the board
    was still long enough to read (a rendered game's first marker came 0.7 s after it)."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    last = next(i for i, position in enumerate(match.positions) if position.phase is Phase.PHASE1) - 1
    before, after = match.positions[last], match.positions[last + 2]
    seen = decoder.infer(reading(shows(decoder, after), confidence=0.99), before, None)
    assert (seen.verdict, seen.move, seen.second) == (
        Verdict.TWO_MOVES, match.moves[last], match.moves[last + 1])


def test_the_seams_tell_a_tile_from_a_smaller_one_where_a_square_is_in_doubt() -> None:
    """A tile laid with one end square read 0.74 tile / 0.13 bare (a tan tile on a light
    square): the smaller tile without that square is under the margin behind. The seam model,
    asked only then, reads the seam between that square and the rest of the tile: joined, the
    tile is read; apart, or no seams read, the ply waits."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    tile_label, empty = LABELS.index("tile"), LABELS.index("empty")
    for i, move in enumerate(match.moves):
        before, after = match.positions[i], match.positions[i + 1]
        if before.phase is not Phase.PREPARATION or not isinstance(move, PlaceTile):
            continue
        for square in move.squares:
            seen = reading(shows(decoder, after), seed=i)
            seen.probabilities[square] = 0.13 / (len(LABELS) - 2)
            seen.probabilities[square, tile_label], seen.probabilities[square, empty] = 0.74, 0.13
            if decoder.infer(seen, before, None).verdict is Verdict.UNREADABLE:
                break
        else:
            continue
        break
    else:
        raise AssertionError("no tile of the sample has a smaller rival")
    truth = decoder._joined_seams(before, move)
    seams = seam_pairs(GAME.geometry.files, GAME.geometry.ranks)
    apart = truth & np.any(seams == square, axis=1)  # the doubted square's seams in the tile

    def look(joined: np.ndarray) -> SeamLook:
        return SeamLook(lambda: np.where(joined, 0.95, 0.03))

    told = decoder.infer(replace(seen, seams=look(truth)), before, None)
    assert (told.verdict, told.move) == (Verdict.MOVE, move)
    assert decoder.infer(replace(seen, seams=look(truth & ~apart)), before, None).verdict \
        is Verdict.UNREADABLE


def test_a_marker_read_in_doubt_is_recorded_when_the_players_confirm_it() -> None:
    """One square changes, read 0.5 marker / 0.4 as it was: the referee waits; the players'
    confirm says a ply was made, and only that marker explains the board."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    before, after = match.positions[30], match.positions[31]
    referee = Referee(decoder, match=Match(GAME, before))
    referee.on_reading(reading(shows(decoder, before)))
    was, now = shows(decoder, before), shows(decoder, after)
    (square,) = np.flatnonzero(was != now)
    seen = reading(now, seed=3)
    doubt = np.full(len(LABELS), 0.01)
    doubt[was[square]], doubt[now[square]] = 0.4, 0.5
    seen.probabilities[square] = doubt / doubt.sum()
    assert [e.kind for e in referee.on_reading(seen)] == [EventKind.UNREADABLE]
    events = referee.confirm(900, 30.0)
    assert [(e.kind, e.move, e.detail) for e in events] == [
        (EventKind.ACCEPTED, GAME.move_text(before, match.moves[30]), "confirmed by the button")]
    assert referee.match.position == after


def test_a_board_far_from_the_preparation_is_not_searched_for_pairs_of_plies(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The empty board taken as the position while the board shows the preparation's thirteen
    tiles: no two plies explain it, and its hundreds of pairs are not looked for (each costs a
    packing search; such readings took seconds and 300 MB each)."""
    decoder = RenaissanceDecoder(GAME, LABELS)
    match = sample()
    start, prepared = match.positions[0], match.positions[13]
    board = reading(shows(decoder, prepared))
    searched: list[int] = []
    is_legal = RenaissanceRules.is_legal
    monkeypatch.setattr(RenaissanceRules, "is_legal",
                        lambda rules, position, move: searched.append(1) or is_legal(rules, position, move))
    pair = decoder.two_moves(start, board.log_probabilities(), np.zeros((49, 3)), free=0.0)
    assert pair is None
    assert not searched
