"""The constructed Renaissance game of the demo: made again from its seed, the committed
record; no push-in in it leaves the board as a plain placement would."""

from __future__ import annotations

from referee.rules.records import read_record, replay
from referee.rules.renaissance_position import PlaceMarker
from referee_lab.synth.constructed import main, pushes
from tests import DATA

RECORD = DATA / "records" / "renaissance-demo.txt"


def test_the_demo_record_is_the_game_of_its_seed(tmp_path, capsys):
    assert main(["--seed", "5", "--out", str(tmp_path / "game.txt")]) == 0
    assert capsys.readouterr().out.startswith("seed 5: 107 plies, 13 push-ins, Gold wins")
    assert (tmp_path / "game.txt").read_text() == RECORD.read_text()


def test_no_push_in_looks_like_a_placement():
    match, _ = replay(read_record(RECORD))
    game = match.game
    for position, move in zip(match.positions, match.moves, strict=False):
        if isinstance(move, PlaceMarker) and position.markers[move.square]:
            after = game.play(position, move)
            assert not any(isinstance(other, PlaceMarker) and not position.markers[other.square]
                           and game.play(position, other) == after
                           for other in game.legal_moves(position))
    assert pushes(match) == 13
