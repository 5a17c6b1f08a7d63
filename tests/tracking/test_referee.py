"""The referee state machine and the recorder, fed readings made from positions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from referee.app.events import EventKind
from referee.app.live import on_button
from referee.app.pipeline import GameLoop, board_referee
from referee.app.record import Recorder, load_log, match_from_log
from referee.app.state_machine import Phase, Referee
from referee.errors import RecordError
from referee.hardware.button import ButtonAction
from referee.rules import Match
from referee.rules.records import read_record
from referee.rules.rinne import RINNE, Move, State
from referee.tracking.inference import DICE, MoveInferer
from tests import DATA
from tests.tracking.fakes import DICE_LABELS, reading_of

SAMPLE = DATA / "records" / "rinne-sample.txt"


def sample_positions():
    match: Match = Match(RINNE)
    for ply in read_record(SAMPLE).plies:
        match.push_text(ply.text)
    return match


def kinds(events):
    return [e.kind for e in events]


def test_the_sample_game_is_refereed_to_white_winning(tmp_path):
    truth = sample_positions()
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    recorder = Recorder(tmp_path, RINNE, {"White": "W", "Black": "B"})
    frame = np.full((48, 64, 3), 128, np.uint8)
    events = []
    # Setup: first the board is half set up, then complete.
    half = RINNE.from_placement({"c1": "K", "a2": "K", "c6": "k"})
    for i, position in enumerate([half, *truth.positions]):
        for event in referee.on_reading(reading_of(referee.inferer, position, seed=i,
                                                   frame_index=i)):
            recorder.write(event, referee.match, frame)
            events.append(event)
    recorder.finish(referee.match)
    assert kinds(events[:2]) == [EventKind.SET_UP, EventKind.STARTED]
    assert kinds(events[2:-1]) == [EventKind.ACCEPTED] * 31
    assert events[-1].kind is EventKind.GAME_OVER
    assert events[-1].detail == "White wins (goal reached)"
    assert referee.phase is Phase.OVER
    assert referee.match.moves == truth.moves
    record = (tmp_path / "game.txt").read_text()
    assert record.splitlines()[-1] == "16. Rook e6 x c6 = Queen"
    assert "Result: White wins" in record
    assert (tmp_path / "keyframes" / "ply-031.jpg").exists()
    report = (tmp_path / "report.html").read_text()
    assert report.count("<svg") == 32 and "16. Rook e6 x c6 = Queen" in report
    # The log replays to the same game.
    assert match_from_log(load_log(tmp_path / "game.jsonl")).moves == truth.moves


def test_illegal_then_corrected_promotion_forgotten_take_back_and_unreadable():
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    inferer = referee.inferer
    start = RINNE.start()
    sq = RINNE.geometry.parse_square
    assert kinds(referee.on_reading(reading_of(inferer, start))) == [EventKind.STARTED]
    illegal = RINNE.play(start, Move(sq("c1"), sq("c3"), State.KNIGHT))
    assert kinds(referee.on_reading(reading_of(inferer, illegal))) == [EventKind.ILLEGAL]
    assert referee.phase is Phase.CORRECTING
    assert referee.on_reading(reading_of(inferer, illegal, seed=1)) == []  # said once
    assert kinds(referee.on_reading(reading_of(inferer, start))) == [EventKind.RESTORED]
    no_promotion = RINNE.play(start, Move(sq("e2"), sq("e3"), State.KING))
    events = referee.on_reading(reading_of(inferer, no_promotion))
    assert kinds(events) == [EventKind.PROMOTE]
    assert events[0].move == "King e2 - e3 = Knight"
    assert referee.match.moves == []  # nothing recorded until the die is turned
    promoted = RINNE.play(start, Move(sq("e2"), sq("e3"), State.KNIGHT))
    assert kinds(referee.on_reading(reading_of(inferer, promoted))) == [EventKind.ACCEPTED]
    reply = RINNE.play(promoted, Move(sq("e5"), sq("d5"), State.KNIGHT))
    blurred = reading_of(inferer, reply, unsure={sq("d5"): 0.35})  # where the reply lands
    events = referee.on_reading(blurred)
    assert kinds(events) == [EventKind.UNREADABLE] and events[0].detail == "squares d5"
    assert len(referee.match.moves) == 1
    events = referee.on_reading(reading_of(inferer, start, seed=5))
    assert kinds(events) == [EventKind.TAKE_BACK]
    assert events[0].move == "King e2 - e3 = Knight" and referee.match.moves == []


def test_pieces_of_one_colour_are_refused_at_setup():
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    reading = reading_of(referee.inferer, RINNE.start())
    reading.colors[:] = [80.0, 0.0, 0.0]
    events = referee.on_reading(reading)
    assert kinds(events) == [EventKind.UNREADABLE]
    assert "look alike" in events[0].detail
    assert referee.phase is Phase.SETUP


def test_a_cut_off_last_line_is_forgiven_but_a_corrupt_or_foreign_log_is_not(tmp_path):
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    recorder = Recorder(tmp_path, RINNE, {})
    truth = sample_positions()
    for i, position in enumerate(truth.positions[:6]):
        for event in referee.on_reading(reading_of(referee.inferer, position, seed=i)):
            recorder.write(event, referee.match)
    recorder.close()
    log_path = tmp_path / "game.jsonl"
    with open(log_path, "a") as handle:
        handle.write('{"kind": "ACCEPTED", "frame_ind')  # the plug was pulled here
    log = load_log(log_path)
    assert log.truncated_tail
    assert match_from_log(log).moves == truth.moves[:5]
    lines = log_path.read_text().splitlines()
    lines[3] = "garbage"
    log_path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordError, match="line 4 is corrupt"):
        load_log(log_path)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps({"hello": 1}) + "\n")
    with pytest.raises(RecordError, match="not a referee log"):
        load_log(foreign)


def test_an_unwritable_folder_is_one_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(RecordError, match="cannot write the game there"):
        Recorder(blocker / "game", RINNE, {})


def test_a_take_back_by_the_button_waits_for_the_board_to_be_put_back():
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    inferer = referee.inferer
    start = RINNE.start()
    sq = RINNE.geometry.parse_square
    referee.on_reading(reading_of(inferer, start))
    after = RINNE.play(start, Move(sq("e2"), sq("e3"), State.KNIGHT))
    assert kinds(referee.on_reading(reading_of(inferer, after))) == [EventKind.ACCEPTED]
    events = referee.take_back(100, 3.3)
    assert kinds(events) == [EventKind.TAKE_BACK] and events[0].detail == "by the button"
    assert referee.match.moves == [] and referee.phase is Phase.RESTORING
    # The board still shows the move: it is not accepted again.
    assert referee.on_reading(reading_of(inferer, after, seed=2)) == []
    assert kinds(referee.on_reading(reading_of(inferer, start))) == [EventKind.RESTORED]
    assert referee.phase is Phase.PLAYING


def test_two_plies_read_at_once_are_both_recorded_in_order():
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    truth = sample_positions()
    referee.on_reading(reading_of(referee.inferer, truth.positions[0]))
    events = referee.on_reading(reading_of(referee.inferer, truth.positions[2]))
    assert kinds(events) == [EventKind.ACCEPTED, EventKind.ACCEPTED]
    assert referee.match.moves == truth.moves[:2]


def test_a_tensei_ply_read_with_the_next_ones_pending_roll_waits_for_the_roll():
    from referee.rules.rinne import TENSEI

    referee = Referee(MoveInferer(TENSEI, DICE, DICE_LABELS))
    start = TENSEI.start()
    first = Move(RINNE.geometry.parse_square("e2"), RINNE.geometry.parse_square("e3"), State.ROOK)
    reply = Move(RINNE.geometry.parse_square("e5"), RINNE.geometry.parse_square("d5"), State.BISHOP)
    both = TENSEI.play(TENSEI.play(start, first), reply)
    referee.on_reading(reading_of(referee.inferer, start))
    events = referee.on_reading(reading_of(referee.inferer, both, shown={reply.to_square: "6"}))
    assert kinds(events) == [EventKind.ACCEPTED, EventKind.ROLL_PENDING]
    assert referee.match.moves == [first]
    events = referee.on_reading(reading_of(referee.inferer, both))
    assert kinds(events) == [EventKind.ACCEPTED] and referee.match.moves == [first, reply]


def test_a_move_taken_back_and_another_played_unread_between_is_both():
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    truth = sample_positions()
    referee.on_reading(reading_of(referee.inferer, truth.positions[0]))
    referee.on_reading(reading_of(referee.inferer, truth.positions[1]))
    instead = Move(RINNE.geometry.parse_square("a2"), RINNE.geometry.parse_square("a3"),
                   State.KNIGHT)
    replaced = RINNE.play(truth.positions[0], instead)
    events = referee.on_reading(reading_of(referee.inferer, replaced))
    assert kinds(events) == [EventKind.TAKE_BACK, EventKind.ACCEPTED]
    assert referee.match.moves == [instead]


def test_a_start_with_an_unsure_square_starts_the_game_but_a_wrong_one_does_not():
    """Every piece of the start where it belongs is the start, even if an empty square beside
    a leaning die was read unsurely; one square read as something else is not."""
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    start = RINNE.start()
    unsure = reading_of(referee.inferer, start)
    empty = int(np.flatnonzero(np.argmax(unsure.probabilities, axis=1) == 0)[0])
    unsure.probabilities[empty] = [0.5, 0.3, 0.2, 0, 0, 0, 0]
    wrong = reading_of(referee.inferer, start)
    wrong.probabilities[empty] = [0.3, 0.5, 0.2, 0, 0, 0, 0]
    assert kinds(referee.on_reading(wrong)) == [EventKind.SET_UP]
    assert kinds(referee.on_reading(unsure)) == [EventKind.STARTED]


def _confirming(k: int, ahead: int) -> tuple[Referee, list]:
    """A referee at the sample game's position `k` shown the board `ahead` plies on, then the
    button's confirm: its events."""
    truth = sample_positions()
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS), match=Match(RINNE, truth.positions[k]))
    referee.on_reading(reading_of(referee.inferer, truth.positions[k]))
    seen = referee.on_reading(reading_of(referee.inferer, truth.positions[k + ahead], seed=k))
    assert kinds(seen) == [EventKind.ILLEGAL]  # three plies at once: not read alone
    return referee, referee.confirm(500, 16.7)


def test_three_plies_made_unseen_are_recorded_when_the_players_confirm_the_board():
    truth = sample_positions()
    referee, events = _confirming(1, 3)
    assert kinds(events) == [EventKind.ACCEPTED] * 3
    assert [e.detail for e in events] == ["confirmed by the button"] * 3
    assert (events[0].frame_index, events[0].time_s, events[-1].ply) == (500, 16.7, 3)
    assert referee.match.moves == truth.moves[1:4] and referee.phase is Phase.PLAYING


def test_a_board_that_plies_made_in_another_order_leave_too_is_not_guessed():
    truth = sample_positions()
    referee, events = _confirming(0, 3)
    assert kinds(events) == [EventKind.ILLEGAL]
    assert events[0].detail == "more than one way of playing leaves this board: put back the last position"
    assert referee.match.moves == [] and referee.match.position == truth.positions[0]
    # Put back, the game goes on as before.
    assert kinds(referee.on_reading(reading_of(referee.inferer, truth.positions[0]))) == [EventKind.RESTORED]


def test_a_ply_held_up_by_a_square_in_doubt_is_recorded_when_the_players_confirm_it():
    referee = Referee(MoveInferer(RINNE, DICE, DICE_LABELS))
    inferer, start, sq = referee.inferer, RINNE.start(), RINNE.geometry.parse_square
    assert referee.confirm(0, 0.0) == []  # nothing to confirm: the game has not started
    referee.on_reading(reading_of(inferer, start))
    # A square in doubt on the board as it stands, and a press by mistake: no ply explains it.
    glare = reading_of(inferer, start, seed=4)
    glare.probabilities[sq("c1")] = 1 / len(DICE_LABELS)
    assert kinds(referee.on_reading(glare)) == [EventKind.UNREADABLE]
    events = referee.confirm(20, 0.7)
    assert kinds(events) == [EventKind.ILLEGAL] and referee.phase is Phase.CORRECTING
    assert kinds(referee.on_reading(reading_of(inferer, start, seed=5))) == [EventKind.RESTORED]
    after = RINNE.play(start, Move(sq("e2"), sq("e3"), State.KNIGHT))
    reading = reading_of(inferer, after)
    labels, _ = inferer.appearance(after)
    e3 = sq("e3")
    doubt = np.full(len(DICE_LABELS), 0.01)
    doubt[0], doubt[labels[e3]] = 0.45, 0.5  # the die there, or the square still empty
    reading.probabilities[e3] = doubt / doubt.sum()
    assert kinds(referee.on_reading(reading)) == [EventKind.UNREADABLE]
    events = referee.confirm(40, 1.3)
    assert [(e.kind, e.move) for e in events] == [(EventKind.ACCEPTED, "King e2 - e3 = Knight")]
    assert referee.confirm(41, 1.4) == []  # nothing in doubt any more


def test_the_buttons_confirm_logs_the_plies_it_records(tmp_path):
    """Pressed in `live`, the confirm's plies go to the log like any reading's, so that a
    resumed game has them."""
    truth = sample_positions()
    referee, reader = board_referee(RINNE, "dice")
    recorder = Recorder(tmp_path, RINNE, {})
    loop = GameLoop(reader, referee, recorder=recorder)
    for seed, position in enumerate(truth.positions[i] for i in (0, 1, 4)):
        loop.emit_all(referee.on_reading(reading_of(referee.inferer, position, seed=seed)), None)
    on_button(ButtonAction.CONFIRM, loop, 300, 10.0)
    recorder.finish(referee.match)
    logged = load_log(tmp_path / "game.jsonl")
    assert [e.kind for e in logged.events] == [
        EventKind.STARTED, EventKind.ACCEPTED, EventKind.ILLEGAL] + [EventKind.ACCEPTED] * 3
    assert match_from_log(logged).moves == truth.moves[:4]
