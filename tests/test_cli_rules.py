"""`referee check`, `perft` and `play` as a user meets them, bad input included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from referee.app.play import play_in_terminal
from referee.cli import main
from referee.rules import find_game
from tests import DATA

RECORDS = DATA / "records"
SAMPLE = (RECORDS / "rinne-sample.txt").read_text()


def test_check_prints_every_ply_and_the_outcome(capsys):
    assert main(["check", str(RECORDS / "rinne-sample.txt")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "1. King e2 - e3 = Knight"
    assert lines[-2] == "16. Rook e6 x c6 = Queen"
    assert lines[-1] == "White wins (goal reached)"
    assert len(lines) == 32


def test_perft_prints_the_count_last(capsys):
    assert main(["perft", "--game", "rinne", "--depth", "3"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "14198"
    assert main(["perft", "--game", "flipflop-3x3", "--depth", "2", "--divide"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "Rb1xb3=B: 4" in out  # Black may retake on b3 from a3 or c3, or move on
    assert out[-1] == "12"
    assert sum(int(line.split(": ")[1]) for line in out[:-1]) == 12


def write(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "record.txt"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


BAD_RECORDS = {
    "misspelt piece": (SAMPLE.replace("1. King e5 - d5", "1. Kign e5 - d5"), "line 7: "),
    "empty square": (SAMPLE.replace("2. King a2 - b2", "2. King a1 - b2"), "no piece on a1"),
    "wrong side": (SAMPLE.replace("1. King e5 - d5 = Knight", "1. King e3 - d4 = Knight"),
                   "line 7: the piece on e3 is White's, but Black is to move"),
    "illegal promotion": (SAMPLE.replace("e2 - e3 = Knight", "e2 - e3 = Bishop"),
                          "line 6: a King becomes Knight after its move, not a Bishop"),
    "truncated file": (SAMPLE[: SAMPLE.index("16. Rook e6 x")], "the game is unfinished"),
    "truncated line": (SAMPLE[: SAMPLE.index("x c6 = Queen\n", -40)], "line 36: "),
    "wrong move number": (SAMPLE.replace("3. Knight e3", "4. Knight e3"), "line 10: move number"),
    "unknown game": (SAMPLE.replace("Game: Rinne", "Game: Chess"), "unknown game 'Chess'"),
    "no game header": (SAMPLE.replace("Game: Rinne\n", ""), "no 'Game:' header"),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_bad_records_get_one_clear_line_and_exit_1(case, tmp_path, capsys):
    text, expected = BAD_RECORDS[case]
    assert main(["check", write(tmp_path, text)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("referee: ")
    assert expected in err


def test_binary_missing_and_folder_inputs(tmp_path, capsys):
    assert main(["check", write(tmp_path, bytes(range(256)))]) == 1
    assert "binary file" in capsys.readouterr().err
    assert main(["check", write(tmp_path, "Game: Rinne\n\n1. King e2 - e3 = Kn\xe9ght\n".encode(
        "latin-1"))]) == 1
    assert "not UTF-8" in capsys.readouterr().err
    assert main(["check", str(tmp_path / "nothing.txt")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["check", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err


def test_unknown_game_name(capsys):
    assert main(["perft", "--game", "chess", "--depth", "1"]) == 1
    err = capsys.readouterr().err
    assert err == ("referee: unknown game 'chess'; known games: flipflop-3x3, flipflop-5x5, "
                   "renaissance, rinne, rinne-5x5, tensei, tensei-5x5, zensu\n")


def test_the_installed_command_exits_1_without_a_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "referee", "check", write(tmp_path, b"\x00\x01")],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().endswith("a binary file, not a game record")


def test_play_in_the_terminal_to_the_end():
    moves = iter(["help", "Kc1-c2=N", "Kc6-c5=N", "bogus", "undo", "King c6 - c5 = Knight",
                  "Nc2-e3=B", "quit"])
    out: list[str] = []
    assert play_in_terminal(find_game("rinne"), input_fn=lambda _: next(moves),
                            output_fn=out.append) == 0
    text = "\n".join(out)
    assert "not accepted: 'bogus' is not a move" in text
    assert "  King c6 - c5 = Knight" in text
    assert text.rstrip().endswith("2. Knight c2 - e3 = Bishop")
