"""`referee replay` with bad input: one clear line, exit 1, and the log kept."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.cli import main
from tests import ROOT


def noise_video(path: Path, frames: int = 100) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, (320, 240))
    rng = np.random.default_rng(0)
    for _ in range(frames):
        writer.write(rng.integers(0, 255, (240, 320, 3), dtype=np.uint8))
    writer.release()
    return path


def test_footage_without_a_board(tmp_path, capsys):
    video = noise_video(tmp_path / "table.avi")
    out = tmp_path / "out"
    assert main(["replay", str(video), "--game", "rinne", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no 5x6 board found in the footage" in err
    log = (out / "game.jsonl").read_text().splitlines()
    assert log[0].startswith('{"format": "referee-log/1"')
    assert any('"NO_BOARD"' in line for line in log[1:])


def test_missing_non_video_and_empty_files(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "none.mp4"), "--game", "rinne"]) == 1
    assert "no such video file" in capsys.readouterr().err
    text = tmp_path / "notes.mp4"
    text.write_text("not a video")
    assert main(["replay", str(text), "--game", "rinne"]) == 1
    assert "cannot open it as a video" in capsys.readouterr().err
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    assert main(["replay", str(empty), "--game", "rinne"]) == 1
    assert capsys.readouterr().err.startswith("referee: ")


def test_wrong_game_and_pieces(tmp_path, capsys):
    video = noise_video(tmp_path / "table.avi", frames=3)
    assert main(["replay", str(video), "--game", "chess"]) == 1
    assert "unknown game 'chess'" in capsys.readouterr().err
    assert main(["replay", str(video), "--game", "zensu", "--pieces", "dice"]) == 1
    assert "Zensū is played with its own pieces" in capsys.readouterr().err
    assert main(["replay", str(video), "--game", "renaissance", "--pieces", "penta"]) == 1
    assert "Renaissance is played with its own pieces" in capsys.readouterr().err
    assert main(["replay", str(video), "--game", "renaissance"]) == 1
    assert "no 7x7 board found in the footage" in capsys.readouterr().err
    assert main(["replay", str(video), "--game", "rinne", "--pieces", "marbles"]) == 1
    assert "unknown piece set 'marbles'" in capsys.readouterr().err


def test_an_unwritable_output_folder(tmp_path, capsys):
    video = noise_video(tmp_path / "table.avi", frames=3)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["replay", str(video), "--game", "rinne", "--out", str(blocker / "x")]) == 1
    assert "cannot write the game there" in capsys.readouterr().err


def test_the_record_and_the_log_where_the_user_names_them(tmp_path, capsys):
    """`--out RECORD --log LOG`: the record file as named, its report and keyframes beside
    it, the log elsewhere; what was read before the fault is in both."""
    video = noise_video(tmp_path / "table.avi", frames=3)
    record, log = tmp_path / "records" / "round-1.txt", tmp_path / "logs" / "round-1.jsonl"
    assert main(["replay", str(video), "--game", "rinne", "--out", str(record),
                 "--log", str(log)]) == 1
    assert "no 5x6 board found" in capsys.readouterr().err
    assert record.read_text().startswith("Game: Rinne")
    assert (tmp_path / "records" / "round-1.html").is_file()
    assert (tmp_path / "records" / "round-1-keyframes").is_dir()
    assert json.loads(log.read_text().splitlines()[0])["game"] == "rinne"
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == [
        "round-1-keyframes", "round-1.html", "round-1.txt"]


@pytest.mark.parametrize("verb", ["replay", "live"])
def test_a_ruleset_of_another_game_is_one_line(verb, tmp_path, capsys):
    video = noise_video(tmp_path / "table.avi", frames=3)
    ruleset = tmp_path / "renaissance.toml"
    ruleset.write_text((ROOT / "referee" / "rules" / "rulesets" / "renaissance.toml").read_text())
    where = [str(video)] if verb == "replay" else ["--camera", str(video)]
    assert main([verb, *where, "--game", "zensu", "--ruleset", str(ruleset),
                 "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a ruleset for renaissance, not zensu" in err

