"""`referee live` start-up and resume checks: never overwrite a logged game, refuse a foreign
or corrupt log in one line and leave it as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.app.calibrated import Calibration
from referee.app.events import EventKind
from referee.app.live import LiveOptions, board_distance_m, run_live
from referee.app.record import load_log, match_from_log
from referee.calibration.defaults import pi_camera_module_3
from referee.calibration.files import BoardProfile, PlayerPieces
from referee.cli import main
from referee.hardware import signals as signals_module
from referee.hardware.button import ButtonAction
from referee.hardware.signals import TerminalSignals
from tests import DATA, ROOT
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


def live_command(tmp_path: Path, factory: str) -> subprocess.CompletedProcess[str]:
    """`referee live` on a short video in a fresh interpreter, with GPIOZERO_PIN_FACTORY."""
    video = noise_video(tmp_path / "table.avi", frames=30)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GPIOZERO_PIN_FACTORY": factory,
           "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "referee", "live", "--game", "rinne", "--camera",
                           str(video), "--speed", "0", "--out", str(tmp_path / "game")],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_live_on_gpiozero_mock_pins_without_pwm_referees_and_says_why_it_beeps(tmp_path):
    result = live_command(tmp_path, "mock")
    assert result.returncode == 0, result.stderr
    assert "cannot drive" not in result.stderr
    assert ("the buzzer on GPIO18: this pin factory (MockFactory) has no PWM, so the tunes are "
            "beeped on and off at one pitch") in result.stderr
    assert "the footage ended: 0 plies" in result.stdout


def test_live_with_a_pin_factory_that_cannot_load_is_one_line_and_no_game(tmp_path):
    """The service sets GPIOZERO_PIN_FACTORY=lgpio: without lgpio (or the gpio group) it
    stops at once with one line, rather than refereeing with dark lights."""
    result = live_command(tmp_path, "nonexistent")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("referee: no GPIO here (")
    assert "install python3-lgpio (hardware/setup-pi.sh) and add the user to the gpio group" in \
        result.stderr
    assert not (tmp_path / "game").exists()


def test_live_without_gpio_says_the_cues_go_to_the_terminal(tmp_path, capsys,
                                                             monkeypatch: pytest.MonkeyPatch):
    def no_gpio() -> None:
        raise ImportError("Unable to load any default pin factory!")

    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    monkeypatch.setattr(signals_module, "_default_factory", no_gpio)
    video = noise_video(tmp_path / "table.avi", frames=10)
    assert main(["live", "--game", "rinne", "--camera", str(video), "--speed", "0", "--out",
                 str(tmp_path / "game")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "no GPIO here (Unable to load any default pin factory!): the cues are shown in this "
        "terminal")
    # --pins asks for the lights: then no GPIO is an error
    assert main(["live", "--game", "rinne", "--camera", str(video), "--pins",
                 str(ROOT / "hardware" / "pins.toml"), "--out", str(tmp_path / "g2")]) == 1
    assert capsys.readouterr().err.startswith("referee: no GPIO here (Unable to load")
    assert not (tmp_path / "g2").exists()


def test_the_board_distance_comes_from_the_board_profile_and_the_lens():
    camera = pi_camera_module_3(1280, 720)  # fx 940.5 px
    pieces = PlayerPieces("white", "#ffffff", "#000000")
    # Rinne's 5x6 board of 40 mm squares seen face on, 37.6 px a square: 1.0 m away
    square = 940.4761904761905 * 40 / 1000
    w, h = 5 * square, 6 * square
    corners = ((400.0, 100.0), (400.0 + w, 100.0), (400.0 + w, 100.0 + h), (400.0, 100.0 + h))
    profile = BoardProfile("rinne", 5, 6, 40.0, corners, "bottom", None, pieces, pieces)
    assert board_distance_m(Calibration(camera, None, profile)) == pytest.approx(1.0)
    for unknown in (Calibration(camera, None, None), Calibration(None, None, profile),
                    Calibration(camera, None, BoardProfile("rinne", 5, 6, None, corners, "bottom",
                                                           None, pieces, pieces))):
        assert board_distance_m(unknown) is None


class HeldAfter(TerminalSignals):
    """The players' signals, shown in a file, and a button held for a new game once, at the
    `frames`-th frame (the button's own timing is `tests/hardware/test_button.py`'s)."""

    def __init__(self, path: Path, frames: int) -> None:
        super().__init__(stream=open(path, "w"))  # noqa: SIM115
        self.frames = frames

    def take_actions(self) -> list[ButtonAction]:
        self.frames -= 1
        return [ButtonAction.NEW_GAME] if self.frames == 0 else []


def test_the_button_held_ends_the_game_and_logs_a_new_one_beside_it(tmp_path):
    """Held mid-game: the game so far is recorded in `game`, and the next one, which waits for
    the start position, in the first free `game-N` (`game-2` already holds one)."""
    video = DATA / "footage" / "rinne-penta-whole.mp4"
    (tmp_path / "game-2").mkdir()
    (tmp_path / "game-2" / "game.jsonl").write_text("{}\n")
    lines: list[str] = []
    signals = HeldAfter(tmp_path / "signals.txt", frames=600)
    options = LiveOptions("rinne", camera=str(video), out=tmp_path / "game", speed=0, pieces="penta")
    assert run_live(options, print_line=lines.append, signals=signals) == 0
    signals.close()
    first = load_log(tmp_path / "game" / "game.jsonl")
    assert 0 < len(match_from_log(first).moves) < 6
    assert "Result: unfinished" in (tmp_path / "game" / "game.txt").read_text()
    assert (tmp_path / "game" / "report.html").exists()
    assert f"new game: logged in {tmp_path / 'game-3'}; set up the board" in lines
    second = load_log(tmp_path / "game-3" / "game.jsonl")
    assert [e.kind for e in second.events][:1] == [EventKind.SET_UP]
    assert not match_from_log(second).moves
    assert "new game" in (tmp_path / "signals.txt").read_text()
    assert lines[-1] == f"the footage ended: 0 plies in {tmp_path / 'game-3'}"
