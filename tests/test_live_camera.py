"""`referee live` with a camera that fails: missing at the start, lost mid-game, or showing
black frames. The players get a clear cue, the log keeps every accepted ply, and a camera
gone for good ends the run with one line (no crash loop: the service unit waits between
starts). The camera is the committed footage with its faults scripted; the clock is fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.app.live import LiveOptions, run_live
from referee.cli import main
from referee.errors import CameraLost
from referee.hardware.signals import TerminalSignals
from tests.footage_camera import (
    PLIES,
    FakeClock,
    ScriptedCamera,
    Stretch,
    accepted_moves,
    logged_events,
    write_log,
)

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
