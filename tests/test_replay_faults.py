"""`referee replay` on real game footage that goes wrong part-way: a file cut short after
some plies, and footage that never shows the start position. One clear line, exit 1, and
whatever was read before the fault kept in the record and the log."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from referee.cli import main
from referee_lab.footage_check import Expected
from tests import DATA

GAME = DATA / "footage" / "tensei-penta-whole.mp4"


def as_avi(frames: range, path: Path) -> Path:
    """Frames of the committed game re-encoded as Motion-JPEG (whose frames a cut file still
    holds, unlike an mp4 whose index is at its end)."""
    source = cv2.VideoCapture(str(GAME))
    size = (int(source.get(cv2.CAP_PROP_FRAME_WIDTH)), int(source.get(cv2.CAP_PROP_FRAME_HEIGHT)))
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, size)
    for index in range(frames.stop):
        ok, frame = source.read()
        assert ok, f"{GAME} has no frame {index}"
        if index in frames:
            writer.write(frame)
    writer.release()
    source.release()
    return path


def recorded_plies(record: Path) -> list[str]:
    return [line for line in record.read_text().splitlines() if line[:1].isdigit()]


def accepted_in_log(log: Path) -> list[str]:
    lines = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    return [line["move"] for line in lines if line["kind"] == "ACCEPTED"]


@pytest.fixture(scope="module")
def expected() -> Expected:
    return Expected.load(GAME.with_suffix(".expected.json"))


def test_a_file_cut_short_keeps_the_plies_read_before(tmp_path: Path, expected: Expected,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    whole = as_avi(range(len(expected.corners)), tmp_path / "whole.avi")
    cut = tmp_path / "cut.avi"
    cut.write_bytes(whole.read_bytes()[: int(whole.stat().st_size * 0.7)])
    out = tmp_path / "out"
    assert main(["replay", str(cut), "--game", "tensei", "--pieces", "penta",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "truncated" in err
    read = recorded_plies(out / "game.txt")
    assert 2 <= len(read) < len(expected.plies)
    assert read == list(expected.plies[: len(read)])
    assert accepted_in_log(out / "game.jsonl") == [ply.split(". ", 1)[1] for ply in read]


def test_footage_that_never_shows_the_start_position(tmp_path: Path, expected: Expected,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    after_two_plies = expected.hand_frames[1][1] + 15
    video = as_avi(range(after_two_plies, len(expected.corners)), tmp_path / "late.avi")
    out = tmp_path / "out"
    assert main(["replay", str(video), "--game", "tensei", "--pieces", "penta",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "never showed the start position" in err
    assert recorded_plies(out / "game.txt") == []
    assert accepted_in_log(out / "game.jsonl") == []
