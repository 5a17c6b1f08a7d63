"""`referee live` start-up and resume checks: never overwrite a logged game, refuse a foreign
or corrupt log in one line and leave it as it was."""

from __future__ import annotations

import json
from pathlib import Path

from referee.app.live import LiveOptions, run_live
from referee.cli import main
from referee.hardware.signals import TerminalSignals
from tests import ROOT
from tests.test_replay_cli import noise_video


def test_a_logged_game_is_never_overwritten(tmp_path, capsys):
    (tmp_path / "game.jsonl").write_text('{"format": "referee-log/1", "game": "rinne"}\n')
    assert main(["live", "--game", "rinne", "--camera", "pi", "--out",
                 str(tmp_path)]) == 1
    assert "already logged" in capsys.readouterr().err


HEADER = '{"format": "referee-log/1", "game": "rinne", "headers": {}}\n'


def accepted(ply: int, move: str) -> str:
    return json.dumps({"kind": "ACCEPTED", "frame_index": ply, "time_s": float(ply), "ply": ply,
                       "move": move, "detail": "", "confidence": 1.0}) + "\n"


def test_a_foreign_or_corrupt_log_is_refused_and_kept(tmp_path, capsys):
    log = tmp_path / "game.jsonl"
    for text, message in [('{"hello": 1}\n', "not a referee log"),
                          ('{"format": "referee-log/1", "game": "rinne"}\nnonsense\n',
                           "line 2 is corrupt"),
                          ('{"format": "referee-log/1", "game": "tensei"}\n',
                           "a game of tensei, not rinne"),
                          ('{"format": "referee-log/1", "game": "chess"}\n',
                           "a log of a game this referee does not know (unknown game 'chess'"),
                          (HEADER + accepted(1, "King a1 - a2 = Knight"),
                           "ply 1 (ACCEPTED King a1 - a2 = Knight) cannot be replayed: there is "
                           "no piece on a1"),
                          (HEADER + accepted(1, "Ke2-e3=N") + accepted(1, "Ke5-d5=N"),
                           "the log is inconsistent at ply 1 (2 plies replayed)"),
                          ('\x00\x01 not text\n', "line 1 is corrupt"),
                          (HEADER + '{"kind": "EXPLODED", "ply": 1}\n', "line 2 is not an event")]:
        log.write_text(text)
        assert main(["live", "--game", "rinne", "--camera", "pi", "--out", str(tmp_path),
                     "--resume"]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err
        assert log.read_text() == text


def test_a_missing_camera_is_one_line(tmp_path, capsys):
    assert main(["live", "--game", "rinne", "--camera", str(tmp_path / "none.mp4"), "--out",
                 str(tmp_path / "g")]) == 1
    assert "no such video file" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()  # no game logged: the same command may be run again


def test_live_on_footage_without_a_board_tells_the_players(tmp_path):
    video = noise_video(tmp_path / "table.avi", frames=120)
    lines: list[str] = []
    signals = TerminalSignals(stream=open(tmp_path / "signals.txt", "w"))  # noqa: SIM115
    options = LiveOptions("rinne", camera=str(video), out=tmp_path / "game", speed=0)
    assert run_live(options, print_line=lines.append, signals=signals) == 0
    signals.close()
    assert any("no board in view" in line for line in lines)
    assert "board unreadable" in (tmp_path / "signals.txt").read_text()
    logged = [json.loads(x) for x in Path(tmp_path / "game" / "game.jsonl").read_text().splitlines()]
    assert logged[0]["game"] == "rinne" and logged[-1]["kind"] == "NO_BOARD"


def test_a_bad_pin_map_is_one_line_and_no_game_is_logged(tmp_path, capsys):
    pins = tmp_path / "pins.toml"
    pins.write_text((ROOT / "hardware" / "pins.toml").read_text().replace("second = 24", "second = 17"))
    out = tmp_path / "game"
    assert main(["live", "--game", "rinne", "--camera", "pi", "--pins", str(pins), "--out",
                 str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"referee: {pins}: turn.second: GPIO17 is already used by leds.green\n"
    assert not out.exists()  # put right, the same command starts the game
