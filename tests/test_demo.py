"""`referee demo`: the bundled footage of the designer's sample game, refereed through the
real pipeline, ends with White winning and the exact published record."""

from __future__ import annotations

from referee.cli import main
from referee.resources import demo_footage
from referee_lab.footage_check import Expected
from tests import DATA

SAMPLE = DATA / "records" / "rinne-sample.txt"


def test_the_demo_reads_the_designers_game_to_white_winning(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the demo writes into the current directory, never the package
    assert main(["demo"]) == 0
    tmp_path = tmp_path / "referee-demo"
    out = capsys.readouterr().out.splitlines()
    assert "31 plies read; White wins" in out
    assert any("game over (White wins (goal reached))" in line for line in out)
    assert any(line.startswith("[green] move accepted") for line in out)  # the signals
    published = [line for line in SAMPLE.read_text().splitlines() if line[:1].isdigit()]
    recorded = [line for line in (tmp_path / "game.txt").read_text().splitlines()
                if line[:1].isdigit()]
    assert recorded == published
    expected = Expected.load(demo_footage().with_suffix(".expected.json"))
    assert tuple(published) == expected.plies
    assert (tmp_path / "report.html").read_text().count("<svg") == 32


def test_the_zensu_demo_reads_the_constructed_game_to_reds_double_capture(tmp_path, capsys):
    assert main(["demo", "--game", "zensu", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    sample = (DATA / "records" / "zensu-sample.txt").read_text().splitlines()
    published = [line for line in sample if line[:1].isdigit()]
    assert f"{len(published)} plies read; Red wins" in out
    recorded = [line for line in (tmp_path / "game.txt").read_text().splitlines()
                if line[:1].isdigit()]
    assert recorded == published
    assert not any("illegal move" in line for line in out)


def test_the_renaissance_demo_reads_the_constructed_game_through_every_phase(tmp_path, capsys):
    """Preparation, the monomino fill, phase 1 with its acquisitions and push-ins, the
    clearing, phase 2 and the score: the record exact, nothing illegal, the report drawn."""
    assert main(["demo", "--game", "renaissance", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    record = (DATA / "records" / "renaissance-demo.txt").read_text().splitlines()
    published = [line for line in record if line[:1].isdigit()]
    assert any(line.startswith(f"{len(published)} plies read; Gold wins (score: Gold ")
               for line in out)
    recorded = [line for line in (tmp_path / "game.txt").read_text().splitlines()
                if line[:1].isdigit()]
    assert recorded == published
    assert not any("illegal move" in line for line in out)
    assert any("takes the" in line for line in out)  # an acquisition told
    expected = Expected.load(demo_footage("renaissance").with_suffix(".expected.json"))
    assert tuple(published) == expected.plies
