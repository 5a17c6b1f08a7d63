"""A live game killed with SIGKILL mid-game and resumed ends with the uninterrupted run's
record, no ply lost or doubled; a resumed game goes on only once the board shows the logged
position. `referee live --camera FILE` plays the committed footage as a camera would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from referee.app.events import Event, EventKind
from referee.app.live import LiveOptions, run_live
from referee.app.record import Recorder, load_log
from referee.hardware.signals import TerminalSignals
from referee.rules import Match, find_game
from tests import ROOT
from tests.footage_camera import (
    FOOTAGE,
    HANDS_GONE,
    PLIES,
    ScriptedCamera,
    Stretch,
    accepted_moves,
    logged_events,
    write_log,
)

MOVES = [ply.split(". ", 1)[1] for ply in PLIES]


def live(out: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "referee", "live", "--game", "rinne", "--camera", str(FOOTAGE),
            "--out", str(out), *options]


def start(command: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


@pytest.mark.slow
def test_a_game_killed_mid_game_resumes_to_the_uninterrupted_record(tmp_path: Path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    uninterrupted = start(live(whole, "--speed", "0"))  # beside the killed run: 2 cores
    victim = start(live(killed, "--speed", "2"))  # twice real time, as a camera delivers it
    deadline = time.monotonic() + 120
    while len(accepted_moves(killed / "game.jsonl")) < 2:
        assert victim.poll() is None, victim.communicate()[1]
        assert time.monotonic() < deadline, "no two plies logged in 2 minutes"
        time.sleep(0.02)
    time.sleep(0.5)  # about a second of footage on: the third ply is being made
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    assert victim.returncode == -signal.SIGKILL
    before = logged_events(killed / "game.jsonl")
    logged = accepted_moves(killed / "game.jsonl")
    assert 2 <= len(logged) < len(MOVES), "killed in the middle of the game"

    resumed = start(live(killed, "--resume", "--speed", "0"))
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert uninterrupted.wait(timeout=180) == 0, uninterrupted.communicate()[1]

    assert accepted_moves(whole / "game.jsonl") == MOVES
    assert accepted_moves(killed / "game.jsonl") == MOVES  # none lost, none doubled
    assert (killed / "game.txt").read_text() == (whole / "game.txt").read_text()
    after = logged_events(killed / "game.jsonl")[len(before):]
    # The resumed run saw the logged position first, where the footage was, not at frame 0.
    assert after[0]["kind"] == "STARTED" and after[0]["ply"] == len(logged)
    assert float(after[0]["time_s"]) >= float(before[-1]["time_s"]) - 1.0
    assert [e["ply"] for e in after if e["kind"] == "ACCEPTED"] == list(
        range(len(logged) + 1, len(MOVES) + 1))
    assert f"resuming after {len(logged)} plies" in out
    assert load_log(killed / "game.jsonl").truncated_tail is False


def test_a_resumed_game_waits_for_the_board_to_show_the_logged_position(tmp_path: Path):
    """Logged: two plies. The camera shows the start position (the footage from its first
    frame): the referee asks for the logged position and accepts nothing, not even the first
    ply being played again, until the board shows the second."""
    write_log(tmp_path, plies=2)
    lines: list[str] = []
    with open(tmp_path / "signals.txt", "w") as cues:
        options = LiveOptions("rinne", camera="footage", out=tmp_path, resume=True)
        camera = ScriptedCamera([Stretch(0.0, 10.0)])
        assert run_live(options, print_line=lines.append, signals=TerminalSignals(cues),
                        open_camera=camera) == 0
    events = logged_events(tmp_path / "game.jsonl")[3:]
    assert [(e["kind"], e["detail"]) for e in events] == [
        ("SET_UP", "set up the logged position"), ("STARTED", "White to move")]
    assert float(events[1]["time_s"]) > HANDS_GONE[1]  # the second ply made, its hand gone
    assert accepted_moves(tmp_path / "game.jsonl") == MOVES[:2]
    assert (tmp_path / "signals.txt").read_text().splitlines() == [
        "[amber] set up the board", "[turn] White to move"]
    assert lines[0] == "resuming after 2 plies: set up the logged position"


def test_resume_without_a_logged_game_starts_one(tmp_path: Path):
    lines: list[str] = []
    out = tmp_path / "game"
    options = LiveOptions("rinne", camera="footage", out=out, resume=True)
    camera = ScriptedCamera([Stretch(0.0, 1.0)])
    with open(tmp_path / "signals.txt", "w") as cues:
        assert run_live(options, print_line=lines.append, signals=TerminalSignals(cues),
                        open_camera=camera) == 0
    assert lines[0] == f"no game logged in {out}: a new game"
    assert [e["kind"] for e in logged_events(out / "game.jsonl")] == ["STARTED"]


def test_a_log_line_cut_off_by_a_kill_is_dropped_before_the_game_goes_on(tmp_path: Path):
    log = write_log(tmp_path, plies=2)
    whole = log.read_bytes()
    log.write_bytes(whole + b'{"kind": "ACCEPTED", "frame_ind')  # killed while writing ply 3
    assert load_log(log).truncated_tail
    game = find_game("rinne")
    recorder = Recorder(tmp_path, game, {}, resume=True)
    recorder.close()
    assert log.read_bytes() == whole  # the next event starts a line of its own


def test_two_plies_read_at_once_are_logged_together(tmp_path: Path, monkeypatch):
    """The footage's third and fourth plies are read from one picture. Killed at the first
    fsync after that reading, the log holds both or neither, never the third alone: resumed,
    the referee would wait for a position (after the third) that the board never shows."""
    game = find_game("rinne")
    match: Match[Any, Any] = Match(game)
    for move in MOVES[:4]:
        match.push_text(move)
    recorder = Recorder(tmp_path, game, {})
    together = [Event(EventKind.ACCEPTED, 459, 15.3, ply, MOVES[ply - 1]) for ply in (3, 4)]

    def killed(descriptor: int) -> None:
        raise SystemExit("SIGKILL")

    monkeypatch.setattr("referee.app.record.os.fsync", killed)
    with pytest.raises(SystemExit):
        recorder.write_all(together, match)
    assert accepted_moves(tmp_path / "game.jsonl") == MOVES[2:4]
