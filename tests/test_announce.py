from __future__ import annotations

from referee.app.announce import cues_for
from referee.app.events import Event, EventKind
from referee.hardware.cues import Cue
from referee.rules import Color, Match
from referee.rules.records import read_record
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import Phase
from referee.rules.rinne import RINNE
from tests import DATA


def test_two_plies_read_at_once_announce_each_turn_in_order():
    match: Match = Match(RINNE)
    match.push_text("Ke2-e3=N")
    match.push_text("Ke5-d5=N")
    first = Event(EventKind.ACCEPTED, 10, 1.0, 1, "King e2 - e3 = Knight")
    second = Event(EventKind.ACCEPTED, 10, 1.0, 2, "King e5 - d5 = Knight")
    assert cues_for(first, match) == [(Cue.ACCEPTED, None), (Cue.TURN, Color.SECOND)]
    assert cues_for(second, match) == [(Cue.ACCEPTED, None), (Cue.TURN, Color.FIRST)]


def test_the_end_of_the_game_is_a_win_without_a_turn():
    match: Match = Match(RINNE, RINNE.from_placement({"c5": "R", "a1": "k", "e1": "k"}))
    match.push_text("Rc5-c6=Q")
    accepted = Event(EventKind.ACCEPTED, 5, 0.5, 1, "Rook c5 - c6 = Queen")
    over = Event(EventKind.GAME_OVER, 5, 0.5, 1, detail="White wins")
    assert cues_for(accepted, match) == [(Cue.ACCEPTED, None)]
    assert cues_for(over, match) == [(Cue.WIN, Color.FIRST)]


def test_the_turn_light_follows_the_rules_not_the_ply_count():
    """Renaissance: Silver lays the first tile; in phase 2 a turn is a tile, then a marker
    moved by the same player."""
    game = RenaissanceRules()
    match: Match = Match(game)
    started = Event(EventKind.STARTED, 0, 0.0, 0)
    assert cues_for(started, match) == [(Cue.TURN, Color.SECOND)]
    for ply in read_record(DATA / "records" / "renaissance-sample.txt").plies:
        match.push_text(ply.text)
    turns = [p.turn for p in match.positions]
    twice = next(i for i in range(1, len(turns) - 1) if turns[i] == turns[i - 1]
                 and match.positions[i].phase is Phase.RELOCATE2)
    accepted = Event(EventKind.ACCEPTED, 9, 0.3, twice, "T4 b2 c2 d2 c3")
    assert cues_for(accepted, match) == [(Cue.ACCEPTED, None), (Cue.TURN, turns[twice])]
