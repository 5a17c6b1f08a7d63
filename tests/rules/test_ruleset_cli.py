"""`referee check`, `perft` and `play` for Zensū and Renaissance, with `--ruleset FILE`; a
bad ruleset file ends in one clear line on stderr and exit status 1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.app.play import play_in_terminal
from referee.cli import main
from referee.rules import find_game
from tests import ROOT

RULESETS = ROOT / "referee" / "rules" / "rulesets"
RECORDS = ROOT / "tests" / "data" / "records"


def edited(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (RULESETS / name).read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("name", "old", "new", "message"), [
    ("zensu.toml", "files = 6", "files = 30", "[board] files must be 2..26, not 30"),
    ("zensu.toml", "ranks = 9", "ranks = 2", "[board] ranks must be 3..26, not 2"),
    ("zensu.toml", "back = 4", "back = 12", "back is 12: a piece could never move that far"),
    ("zensu.toml", "left = 2", "left = 7", "left is 7: a piece could never move that far"),
    ("renaissance.toml", "size = 7", "size = 6", "[board] size is 6"),
    ("renaissance.toml", "L4 = 1", "P5 = 1", "[tiles] P5 names an unknown tile shape 'P5'"),
    ("renaissance.toml", "needs = { I2 = 4 }", "needs = { X2 = 4 }",
     "needs X2 names an unknown tile shape"),
    ("renaissance.toml", "markers = 24", "markers = \"many\"", "markers must be a whole number"),
    ("zensu.toml", "[rules]", "[rulez]", "rulez is not a known setting"),
    ("zensu.toml", "files = 6", "files = = 6", "not a valid TOML file"),
])
def test_a_bad_ruleset_file_is_one_line_and_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, old: str, new: str,
        message: str) -> None:
    path = edited(tmp_path, name, old, new)
    game = name.removesuffix(".toml")
    for argv in (["perft", "--game", game, "--depth", "1", "--ruleset", str(path)],
                 ["play", "--game", game, "--ruleset", str(path)],
                 ["check", str(RECORDS / f"{game}-sample.txt"), "--ruleset", str(path)]):
        code, out, err = run(argv, capsys)
        assert code == 1 and out == ""
        assert err.count("\n") == 1 and err.startswith(f"referee: {path}: ")
        assert message in err


def test_a_missing_ruleset_file_and_one_for_another_game(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["perft", "--game", "zensu", "--depth", "1", "--ruleset",
                        str(tmp_path / "nope.toml")], capsys)
    assert code == 1 and "no such ruleset file" in err and err.count("\n") == 1
    code, _, err = run(["perft", "--game", "zensu", "--depth", "1", "--ruleset",
                        str(RULESETS / "renaissance.toml")], capsys)
    assert code == 1 and "a ruleset for renaissance, not zensu" in err
    code, _, err = run(["check", str(RECORDS / "zensu-sample.txt"), "--ruleset",
                        str(RULESETS / "renaissance.toml")], capsys)
    assert code == 1 and "the record is a game of zensu" in err


def test_perft_for_both_games(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["perft", "--game", "zensu", "--depth", "3"], capsys)
    assert code == 0 and out.split() == ["1944"]
    code, out, _ = run(["perft", "--game", "zensu", "--depth", "2", "--divide"], capsys)
    assert code == 0 and "1b2-b3: 12" in out and out.split()[-1] == "144"
    code, out, _ = run(["perft", "--game", "renaissance", "--depth", "1"], capsys)
    assert code == 0 and out.split() == ["772"]


def test_check_replays_both_samples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", str(RECORDS / "zensu-sample.txt")], capsys)
    assert code == 0 and out.splitlines()[-1] == "Red wins (home territory reached)"
    code, out, _ = run(["check", str(RECORDS / "renaissance-sample.txt")], capsys)
    assert code == 0 and out.splitlines()[-1] == "Gold wins (score)"
    # the same record under a corrected ruleset: one more marker doesn't change this game
    path = edited(tmp_path, "renaissance.toml", "markers = 24", "markers = 25")
    code, out, _ = run(["check", str(RECORDS / "renaissance-sample.txt"), "--ruleset",
                        str(path)], capsys)
    assert code == 0 and out.splitlines()[-1] == "Gold wins (score)"
    # …but Zensū with a "1" that steps 2 to the right no longer allows `1 c6 x f6`
    path = edited(tmp_path, "zensu.toml", "right = 3", "right = 2")
    code, _, err = run(["check", str(RECORDS / "zensu-sample.txt"), "--ruleset", str(path)],
                       capsys)
    assert code == 1 and err.startswith("referee: line 16: a 1 on c6 moves exactly 1/2/2/4")


def scripted(lines: list[str]) -> Iterator[str]:
    yield from lines


@pytest.mark.parametrize(("game", "lines", "expected"), [
    ("zensu", ["b2 - b4", "b2b3", "moves", "undo", "1 b2 - b3", "quit"],
     ["not accepted: a 1 on b2 moves exactly 1/2/3/4", "  1 b2 - b3", "1. 1 b2 - b3"]),
    ("renaissance", ["c3", "I2 a1 b1", "record", "quit"],
     ["not accepted:", "  I2 a1 b1", "1. I2 a1 b1", "Phase: preparation; Gold to move"]),
])
def test_play_in_the_terminal(game: str, lines: list[str], expected: list[str]) -> None:
    script = scripted(lines)
    output: list[str] = []
    code = play_in_terminal(find_game(game), input_fn=lambda _prompt: next(script),
                            output_fn=output.append)
    text = "\n".join(output)
    assert code == 0
    for piece in expected:
        assert piece in text
