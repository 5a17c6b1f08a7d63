"""`referee live` with a camera that fails: missing at the start, lost mid-game, or showing
black frames. The players get a clear cue, the log keeps every accepted ply, and a camera
gone for good ends the run with one line (no crash loop: the service unit waits between
starts). The camera is the committed footage with its faults scripted; the clock is fake."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from referee.app.live import LiveOptions, run_live
from referee.calibration.files import BoardProfile, PlayerPieces, save_board
from referee.cli import main
from referee.errors import CameraLost
from referee.hardware.cues import Cue
from referee.hardware.picamera import PiCameraConfig, PiCameraSource
from referee.hardware.signals import TerminalSignals
from referee.resources import calibration_dir
from referee.rules.core import Color
from tests.footage_camera import (
    PLIES,
    FakeClock,
    ScriptedCamera,
    Stretch,
    accepted_moves,
    logged_events,
    write_log,
)
from tests.hardware.fake_picamera2 import Script, finishes, make_module

MOVES = [ply.split(". ", 1)[1] for ply in PLIES]


def live_on(camera: ScriptedCamera, out: Path, cues: Path, clock: FakeClock, *,
            resume: bool = False, wait_s: float = 60.0) -> tuple[int, list[str]]:
    lines: list[str] = []
    # A USB camera (so no Pi lens is assumed for the footage), played by the script.
    options = LiveOptions("rinne", camera="0", out=out, resume=resume, camera_wait_s=wait_s)
    with open(cues, "w") as stream:
        status = run_live(options, print_line=lines.append, signals=TerminalSignals(stream),
                          open_camera=camera, clock=clock, sleep=clock.sleep)
    return status, lines


def test_a_camera_lost_mid_game_is_waited_for_and_the_game_goes_on(tmp_path: Path):
    clock = FakeClock()
    # Unplugged after the first ply, not there at the first retry, back at the second.
    camera = ScriptedCamera([Stretch(0.0, 5.0, lost=True), None, Stretch(5.0, 10.0)])
    live_on(camera, tmp_path / "game", tmp_path / "cues.txt", clock)
    assert clock.sleeps == [1.0, 2.0]  # back-off, on the fake clock
    assert (tmp_path / "cues.txt").read_text().splitlines() == [
        "[turn] White to move", "[green] move accepted", "[turn] Black to move",
        "[red] camera lost", "[ok] camera back",
        "[green] move accepted", "[turn] White to move"]
    assert accepted_moves(tmp_path / "game" / "game.jsonl") == MOVES[:2]
    times = [e["time_s"] for e in logged_events(tmp_path / "game" / "game.jsonl")]
    assert times == sorted(times)  # times go on after the gap


def test_a_camera_gone_for_good_ends_with_one_line_and_the_log_kept(tmp_path: Path):
    log = write_log(tmp_path, plies=2)
    written = log.read_text()
    clock = FakeClock()
    camera = ScriptedCamera([Stretch(8.3, 9.0, lost=True)])  # then never found again
    with pytest.raises(CameraLost) as lost:
        live_on(camera, tmp_path, tmp_path / "cues.txt", clock, resume=True, wait_s=60.0)
    message = str(lost.value)
    assert "\n" not in message
    assert message.startswith("camera /dev/video0 stopped delivering frames")
    assert message.endswith("still gone after 60 s (no camera at /dev/video0: is it plugged in?)")
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 29.0]  # doubling, then what is left
    text = log.read_text()
    assert text.startswith(written)  # every logged ply kept as it was
    assert [e["kind"] for e in logged_events(log)][-1] == "STARTED"
    assert accepted_moves(log) == MOVES[:2]
    record = (tmp_path / "game.txt").read_text().splitlines()
    assert [line for line in record if line[:1].isdigit()] == list(PLIES[:2])
    assert (tmp_path / "report.html").is_file()
    assert (tmp_path / "cues.txt").read_text().splitlines() == [
        "[turn] White to move", "[red] camera lost"]


def test_a_camera_missing_at_the_start_is_waited_for(tmp_path: Path):
    clock = FakeClock()
    camera = ScriptedCamera([None, None, Stretch(0.0, 1.0)])
    status, _ = live_on(camera, tmp_path / "game", tmp_path / "cues.txt", clock)
    assert status == 0 and clock.sleeps == [1.0, 2.0] and camera.openings == 3
    assert (tmp_path / "cues.txt").read_text().splitlines() == [
        "[red] camera lost", "[ok] camera back", "[turn] White to move"]
    assert [e["kind"] for e in logged_events(tmp_path / "game" / "game.jsonl")] == ["STARTED"]


def test_black_frames_mid_game_are_signalled_and_not_refereed(tmp_path: Path):
    """A lens cap from 0.9 s to 7.8 s, while two plies are played: the players see "camera
    sees nothing" then "camera back", and nothing else until both plies are accepted; the
    black frames are not read as a board that everyone's pieces have left."""
    clock = FakeClock()
    camera = ScriptedCamera([Stretch(0.0, 9.0, black=(0.9, 7.8))])
    live_on(camera, tmp_path / "game", tmp_path / "cues.txt", clock)
    assert (tmp_path / "cues.txt").read_text().splitlines() == [
        "[turn] White to move", "[red] camera sees nothing: black frames", "[ok] camera back",
        "[green] move accepted", "[turn] Black to move",
        "[green] move accepted", "[turn] White to move"]
    assert [e["kind"] for e in logged_events(tmp_path / "game" / "game.jsonl")] == [
        "STARTED", "ACCEPTED", "ACCEPTED"]
    assert accepted_moves(tmp_path / "game" / "game.jsonl") == MOVES[:2]


def test_no_camera_on_the_command_line_is_one_line_and_exit_1(tmp_path: Path, capsys):
    out = tmp_path / "game"
    assert main(["live", "--game", "rinne", "--camera", "/dev/video99", "--camera-wait", "0",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no camera at /dev/video99" in err
    assert "still gone after 0 s" in err
    # The game's log was started and is kept: the service's next start resumes it.
    assert (out / "game.jsonl").read_text().startswith('{"format": "referee-log/1"')


def test_footage_options_with_a_camera_are_one_line(tmp_path: Path, capsys):
    assert main(["live", "--game", "rinne", "--camera", "pi", "--start", "3", "--out",
                 str(tmp_path / "g")]) == 1
    err = capsys.readouterr().err
    assert err == "referee: camera pi: --start and --speed are for footage only\n"
    assert not (tmp_path / "g").exists()


class LoggedSignals(TerminalSignals):
    """Terminal signals that also write each cue into the fake camera's log."""

    def __init__(self, log: list[str], stream: io.StringIO) -> None:
        super().__init__(stream)
        self._log = log

    def show(self, cue: Cue, now: float, *, player: Color | None = None) -> None:
        self._log.append(f"cue {cue.name}")
        super().show(cue, now, player=player)


@pytest.fixture
def pi_camera(monkeypatch: pytest.MonkeyPatch) -> Script:
    """picamera2 as it works (tests/hardware/fake_picamera2.py): a Pi camera that delivers
    3 frames, then its ribbon is pulled and it is never found again."""
    script = Script(stop_after=3)
    monkeypatch.setitem(sys.modules, "picamera2", make_module(script))
    return script


def test_a_pulled_pi_camera_raises_the_alarm_retries_then_exits(tmp_path: Path, pi_camera: Script):
    """The capture that never ends stays queued in picamera2 and would hold back closing the
    camera for ever: the players hear "camera lost" first, the camera is closed (its queue
    cancelled), looked for again with back-off, and after --camera-wait seconds the run ends
    with one CameraLost (exit 1 from the command). The clock is fake; a hang fails the test."""
    clock = FakeClock()

    def unplugged(seconds: float) -> None:
        clock.now += seconds
        pi_camera.cameras = 0

    pi_camera.on_timeout = unplugged
    cues = io.StringIO()
    options = LiveOptions("rinne", camera="pi", out=tmp_path / "game", camera_wait_s=60.0)
    lines: list[str] = []
    raised = finishes(lambda: run_live(
        options, print_line=lines.append, signals=LoggedSignals(pi_camera.log, cues),
        open_camera=lambda: PiCameraSource(PiCameraConfig(), clock=clock), clock=clock,
        sleep=clock.sleep), within_s=60.0)
    assert len(raised) == 1 and isinstance(raised[0], CameraLost), raised
    assert str(raised[0]) == ("the Pi camera sent no frame for 2 s after frame 3: check the ribbon "
                              "cable; still gone after 60 s (no Pi camera 0 found (0 connected): "
                              "check the ribbon cable, then `rpicam-hello --list-cameras`)")
    calls = [entry for entry in pi_camera.log if entry not in ("release", "open 0", "configure")]
    assert calls[calls.index("cue CAMERA_LOST"):] == [
        "cue CAMERA_LOST", "cancel_all_and_flush", "stop", "close"]  # the alarm before the close
    assert clock.sleeps == [1.0, 2.0, 4.0, 8.0, 16.0, 29.0]  # retried until --camera-wait
    assert 62.0 <= clock.now <= 62.1  # the 2 s the last frame was waited for, then 60
    assert cues.getvalue().splitlines()[-1] == "[red] camera lost"
    assert (tmp_path / "game" / "game.jsonl").is_file()  # the log is kept for --resume


def test_a_pulled_pi_camera_ends_the_command_with_one_line_and_exit_1(
        tmp_path: Path, pi_camera: Script, capsys: pytest.CaptureFixture[str]):
    pi_camera.on_timeout = lambda seconds: setattr(pi_camera, "cameras", 0)
    status: list[int] = []
    assert finishes(lambda: status.append(main([
        "live", "--game", "rinne", "--camera", "pi", "--camera-wait", "0", "--out",
        str(tmp_path / "game")])), within_s=60.0) == []
    captured = capsys.readouterr()
    assert status == [1]
    assert captured.err.count("\n") == 1 and captured.err.startswith(
        "referee: the Pi camera sent no frame for 2 s after frame 3")
    assert "[red] camera lost" in captured.out.splitlines()
    assert pi_camera.instances[0].closed


def test_a_pi_camera_is_focused_at_the_board_profiles_distance(
        tmp_path: Path, pi_camera: Script, capsys: pytest.CaptureFixture[str]):
    camera_file = calibration_dir() / "pi-camera-module-3-1280x720.yaml"
    square = 940.4761904761905 * 40 / 500  # Rinne's 5x6 board of 40 mm squares 0.5 m away
    w, h = 5 * square, 6 * square
    pieces = PlayerPieces("white", "#ffffff", "#000000")
    profile = tmp_path / "board.yaml"
    save_board(BoardProfile("rinne", 5, 6, 40.0, ((300.0, 80.0), (300.0 + w, 80.0),
                                                  (300.0 + w, 80.0 + h), (300.0, 80.0 + h)),
                            "bottom", camera_file, pieces, pieces), profile)
    pi_camera.on_timeout = lambda seconds: setattr(pi_camera, "cameras", 0)
    assert finishes(lambda: main(["live", "--game", "rinne", "--camera", "pi", "--board",
                                  str(profile), "--camera-wait", "0", "--out",
                                  str(tmp_path / "game")]), within_s=60.0) == []
    assert "focus: fixed at the board's distance, 0.50 m" in capsys.readouterr().out
    controls = pi_camera.instances[0].camera_config["controls"]
    assert controls["AfMode"] == 0 and controls["LensPosition"] == pytest.approx(2.0)
