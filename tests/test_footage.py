"""Recorded footage replays through the real pipeline to its exact expected record: every
file in tests/data/footage/ (rendered once and committed) beside its `.expected.json`."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.app.replay import replay_footage
from referee_lab.footage_check import Expected, accepted_plies, moves_during_hands
from tests import DATA

FOOTAGE = DATA / "footage"
CASES = sorted(FOOTAGE.glob("*.mp4"))


def test_there_is_footage_to_replay():
    assert CASES, f"no footage in {FOOTAGE}"


@pytest.mark.parametrize("video", CASES, ids=[c.stem for c in CASES])
def test_footage_replays_to_its_expected_record(video: Path, tmp_path: Path):
    expected = Expected.load(video.with_suffix(".expected.json"))
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
