"""Footage cut short, as a recording ended by a power loss leaves it: `referee replay` reads
the plies before the cut, then ends with one clear line on stderr and exit 1, never a wrong
ply. A committed game (its index first, as `referee`'s footage is written) is cut at ten
byte offsets, from inside its index to near its end; a recording whose index was to come at
its end (OpenCV's mp4 writer, most cameras' recorders) holds nothing playable once cut."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cv2
import pytest

from referee.cli import main
from tests import DATA

GAME = DATA / "footage" / "tensei-penta-whole.mp4"
EXPECTED = json.loads(GAME.with_suffix(".expected.json").read_text())
PLIES = EXPECTED["plies"]
HANDS_GONE = [last for _, last in EXPECTED["hand_frames"]]  # the frame each ply's hand left
SETTLE = 45  # frames: a ply is read well within 1.5 s of the board coming to rest after it
SIZE = GAME.stat().st_size
UNOPENABLE = "cannot open it as a video (not a video, truncated, or a codec OpenCV lacks)"
# Inside the file type box, inside the index (moov), then through the frames (mdat).
OFFSETS = [16, 4_000, *(round(SIZE * share / 100) for share in (5, 15, 30, 45, 60, 75, 85, 95))]


def replay(video: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["replay", str(video), "--game", "tensei", "--pieces", "penta",
                   "--out", str(out)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def recorded(out: Path) -> list[str]:
    record = out / "game.txt"
    return [line for line in record.read_text().splitlines() if line[:1].isdigit()] \
        if record.exists() else []


@pytest.mark.parametrize("offset", [
    pytest.param(offset, marks=pytest.mark.slow) if offset > SIZE // 4 else offset
    for offset in OFFSETS])
def test_footage_cut_at_a_byte_offset_keeps_the_plies_before_and_says_so(
        offset: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(GAME.read_bytes()[:offset])
    status, out, err = replay(cut, tmp_path / "out", capsys)
    assert status == 1
    assert err.count("\n") == 1 and "Traceback" not in err, err
    if offset < 9_000:  # the index is cut: nothing to play
        assert err == f"referee: {cut}: {UNOPENABLE}\n"
        return
    ended = re.search(r"the video ends after (\d+) of its 628 frames \(the file is truncated "
                      r"or damaged\)$", err)
    assert ended, err
    read = recorded(tmp_path / "out")
    assert read == PLIES[:len(read)]  # never a wrong ply
    frames = int(ended.group(1))
    # none lost: every ply whose board was still for 1.5 s before the cut is read; none
    # whose hand was still over the board
    assert sum(gone + SETTLE < frames for gone in HANDS_GONE) <= len(read)
    assert len(read) <= sum(gone < frames for gone in HANDS_GONE)
    printed = [line.split("move accepted ", 1)[1] for line in out.splitlines()
               if "move accepted" in line]
    assert printed == [ply.split(". ", 1)[1] for ply in read]


def recording(tmp_path: Path, seconds: float) -> Path:
    """The first `seconds` of the game written as a camera's recorder writes mp4: the index
    at the end."""
    source = cv2.VideoCapture(str(GAME))
    size = (int(source.get(cv2.CAP_PROP_FRAME_WIDTH)), int(source.get(cv2.CAP_PROP_FRAME_HEIGHT)))
    path = tmp_path / "recording.mp4"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), 30, size)
    for _ in range(round(seconds * 30)):
        ok, frame = source.read()
        assert ok
        writer.write(frame)
    writer.release()
    source.release()
    return path


def test_a_recording_cut_before_its_index_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = recording(tmp_path, 2.0).read_bytes()
    assert whole.rfind(b"moov") > len(whole) // 2, "the index comes last"
    for share in (25, 50, 90):
        cut = tmp_path / f"cut-{share}.mp4"
        cut.write_bytes(whole[:len(whole) * share // 100])
        status, out, err = replay(cut, tmp_path / f"out-{share}", capsys)
        assert (status, err) == (1, f"referee: {cut}: {UNOPENABLE}\n")
        assert "move accepted" not in out
