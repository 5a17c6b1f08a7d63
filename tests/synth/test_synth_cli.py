"""`referee-lab render`: frames and footage from the command line; bad input ends with one
clear line and exit status 1."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from referee_lab.cli import main
from tests import DATA

RECORDS = DATA / "records"


def test_render_a_frame_with_its_truth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "frame.png"
    code = main(["render", "--game", "rinne", "--record", str(RECORDS / "rinne-sample.txt"),
                 "--seed", "4", "--out", str(out), "--size", "320x240", "--tilt", "10-30"])
    assert code == 0
    image = cv2.imread(str(out))
    assert image.shape == (240, 320, 3)
    truth = json.loads(out.with_suffix(".json").read_text())
    # The sample game ends with White's Queen on c6.
    assert truth["squares"]["c6"]["owner"] == 0 and truth["squares"]["c6"]["value"] == 5
    assert "frame.png" in capsys.readouterr().out
    code = main(["render", "--game", "rinne", "--record", str(RECORDS / "rinne-sample.txt"),
                 "--ply", "0", "--seed", "4", "--out", str(out), "--size", "320x240"])
    truth = json.loads(out.with_suffix(".json").read_text())
    assert code == 0 and truth["squares"]["c1"]["value"] == 1  # the start: all Kings


def test_render_zensu_and_renaissance_records(tmp_path: Path) -> None:
    """Their records play through the rules: a frame of a later position shows it."""
    out = tmp_path / "r.png"
    code = main(["render", "--game", "renaissance", "--record",
                 str(RECORDS / "renaissance-sample.txt"), "--ply", "81", "--seed", "2",
                 "--out", str(out), "--size", "160x120"])
    squares = json.loads(out.with_suffix(".json").read_text())["squares"]
    assert code == 0 and squares["g5"]["marker"] and not squares["b4"]["marker"]  # b4 - g5
    assert {squares[s]["kind"] for s in ("c7", "d7", "e7", "f7")} == {"tile"}
    code = main(["render", "--game", "zensu", "--record", str(RECORDS / "zensu-sample.txt"),
                 "--ply", "1", "--seed", "2", "--out", str(out), "--size", "160x120"])
    squares = json.loads(out.with_suffix(".json").read_text())["squares"]
    assert code == 0 and squares["c3"]["kind"] == "zensu" and squares["c2"]["kind"] == "empty"


def test_render_footage(tmp_path: Path) -> None:
    out = tmp_path / "game.avi"
    code = main(["render", "--game", "flipflop-3x3", "--seed", "2", "--out", str(out),
                 "--size", "160x120", "--plies", "1", "--fps", "6", "--faults", "light"])
    assert code == 0
    truth = json.loads(out.with_suffix(".json").read_text())
    capture = cv2.VideoCapture(str(out))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == truth["frame_count"]
    assert truth["faults"]["asked"] == ["light"]


@pytest.mark.parametrize(("args", "message"), [
    (["--game", "chess"], "unknown game 'chess'"),
    (["--game", "rinne", "--style", "neon"], "unknown style 'neon'"),
    (["--game", "rinne", "--size", "big"], "is not WIDTHxHEIGHT"),
    (["--game", "rinne", "--tilt", "90"], "tilt"),
    (["--game", "tensei", "--record", "RECORD"], "the record is a game of rinne"),
    (["--game", "rinne", "--record", "BAD"], "line 3:"),
    (["--game", "rinne", "--record", "MISSING"], "no such file"),
    (["--game", "rinne", "--faults", "drop"], "apply to footage"),
    (["--game", "rinne", "--record", "RECORD", "--ply", "40"], "the record has 31 plies"),
])
def test_bad_input_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          args: list[str], message: str) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("Game: Rinne\n\n1. King e2 - e5 = Knight\n")
    args = [a.replace("RECORD", str(RECORDS / "rinne-sample.txt")).replace("BAD", str(bad))
            .replace("MISSING", str(tmp_path / "none.txt")) for a in args]
    code = main(["render", *args, "--seed", "1", "--out", str(tmp_path / "x.png")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("out", ["nowhere/x.png", "x.gif", "nowhere/x.mp4"])
def test_unwritable_output_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      out: str) -> None:
    code = main(["render", "--game", "rinne", "--seed", "1", "--out", str(tmp_path / out),
                 "--size", "160x120"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and str(tmp_path) in err
