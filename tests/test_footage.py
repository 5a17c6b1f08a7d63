"""Recorded footage replays through the real pipeline to its exact expected record: every
file in tests/data/footage/ (rendered once and committed) beside its `.expected.json`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.app.pipeline import BoardReader, GameLoop
from referee.app.replay import replay_footage
from referee.app.state_machine import Referee
from referee_lab.footage_check import Expected, accepted_plies, moves_during_hands
from tests import DATA

FOOTAGE = DATA / "footage"
CASES = sorted(FOOTAGE.glob("*.mp4"))


def test_there_is_footage_to_replay():
    assert CASES, f"no footage in {FOOTAGE}"


@pytest.mark.parametrize("video", CASES, ids=[c.stem for c in CASES])
def test_footage_replays_to_its_expected_record(video: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch):
    expected = Expected.load(video.with_suffix(".expected.json"))
    cuts = count_cuts(monkeypatch)
    result = replay_footage(video, expected.game, pieces=expected.pieces, out=tmp_path)
    assert accepted_plies(result.events) == list(expected.plies)
    if expected.result:
        outcome = result.match.outcome
        assert outcome is not None
        assert outcome.result(result.match.game.player_names) == expected.result
    assert moves_during_hands(result.events, expected) == []
    kinds = {event.kind.name for event in result.events}
    assert set(expected.events) <= kinds
    record = (tmp_path / "game.txt").read_text().splitlines()
    assert [line for line in record if line[:1].isdigit()] == list(expected.plies)
    # One cut of the board a reading: the sides a start looks the same from, and the side a
    # first move is seen from, are told apart on one reading renamed (Rinne's and Tensei's
    # set-up cuts again where the start was not read clearly from the first side).
    setup, game = cuts["setup"], cuts["game"]
    assert game and set(game) == {1}
    if expected.game in ("renaissance", "zensu"):
        assert setup and set(setup) == {1}


def count_cuts(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[int]]:
    """How many times each reading cuts the board (`BoardReader.read`), at the set-up and
    after it."""
    cuts: dict[str, list[int]] = {"setup": [], "game": []}
    calls: list[int] = []
    read, judge = BoardReader.read, GameLoop._judge

    def counted_read(self: BoardReader, *args: Any) -> Any:
        calls.append(1)
        return read(self, *args)

    def counted_judge(self: GameLoop, *args: Any) -> Any:
        stage = "setup" if self.referee.phase.name == "SETUP" else "game"
        before = len(calls)
        try:
            return judge(self, *args)
        finally:
            cuts[stage].append(len(calls) - before)

    monkeypatch.setattr(BoardReader, "read", counted_read)
    monkeypatch.setattr(GameLoop, "_judge", counted_judge)
    return cuts


def test_a_last_ply_read_unreadable_is_read_again_while_the_board_is_still(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The last ply of a game has no next move to stir the board: a reading of it with a
    square in doubt (a frame's noise) is not the end. The still board is read again, the
    readings pooled, until the ply is told."""
    video = FOOTAGE / "renaissance-opening.mp4"
    expected = Expected.load(video.with_suffix(".expected.json"))
    last = len(expected.plies) - 1
    # The last ply lays a marker on c1, takes the domino c1-d1 and fills it with monominoes;
    # the last hand leaves at `gone`.
    assert expected.plies[last] == "11. c1"
    gone, d1 = expected.hand_frames[-1][1], 3  # (squares: a1 first, rank by rank)
    read, plies, doubted = BoardReader.read, [0], []

    def read_in_doubt(self: BoardReader, frame: Any, pose: Any, index: int, *args: Any) -> Any:
        reading = read(self, frame, pose, index, *args)
        if plies[0] == last and index > gone and not doubted:  # its first reading once done
            reading.probabilities[d1] = 1 / len(reading.labels)
            doubted.append(index)
        return reading

    def counted(event: Any, match: Any) -> None:
        plies[0] = len(match.moves)

    monkeypatch.setattr(BoardReader, "read", read_in_doubt)
    result = replay_footage(video, expected.game, pieces=expected.pieces, out=tmp_path,
                            on_event=counted)
    assert accepted_plies(result.events) == list(expected.plies)
    told = [e for e in result.events if e.frame_index >= doubted[0]]
    assert [e.kind.name for e in told][:2] == ["UNREADABLE", "ACCEPTED"]
    assert told[1].frame_index - told[0].frame_index >= 30  # a second later, still


def test_every_reading_in_play_carries_the_images_changes_and_the_hands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each reading after the start, the first of a still board or pooled, reaches the
    referee with the squares the image shows unchanged or changed since the position was
    last seen, and where the hands rested since (Renaissance tells look-alike plies by them)."""
    video = FOOTAGE / "renaissance-light.mp4"
    expected = Expected.load(video.with_suffix(".expected.json"))
    seen: list[Any] = []
    on_reading = Referee.on_reading

    def kept(self: Referee, reading: Any) -> Any:
        if self.phase.name != "SETUP":
            seen.append(reading)
        return on_reading(self, reading)

    monkeypatch.setattr(Referee, "on_reading", kept)
    result = replay_footage(video, expected.game, pieces=expected.pieces, out=tmp_path)
    assert accepted_plies(result.events) == list(expected.plies)
    assert len(seen) >= len(expected.plies)
    assert all(r.unchanged is not None and r.changed is not None for r in seen)
    assert all(r.hand_rests is not None for r in seen)
    assert any(len(r.hand_rests) for r in seen)
