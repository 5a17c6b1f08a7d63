"""Stopped mid-game by systemd (SIGTERM; the unit's KillSignal, SIGINT, too): `referee live`
stops cleanly, the record and the report written with every ply logged, the log whole, and
an exit status systemd counts as a clean stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee.app.record import load_log
from tests import ROOT
from tests.faults.conftest import GAME, PIECES


def accepted(log: Path) -> list[str]:
    if not log.exists():
        return []
    lines = log.read_text().split("\n")[:-1]
    return [e["move"] for e in map(json.loads, lines[1:]) if e["kind"] == "ACCEPTED"]


@pytest.mark.slow
@pytest.mark.parametrize(("stop", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_a_live_game_stopped_by_a_signal_writes_its_record_and_report(
        stop: signal.Signals, status: int, tmp_path: Path) -> None:
    out = tmp_path / "game"
    command = [sys.executable, "-m", "referee", "live", "--game", "rinne", "--pieces", PIECES,
               "--camera", str(GAME), "--speed", "3", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    # (A suite started in the background by a shell without job control inherits SIGINT
    # ignored, and so would the referee: it gets SIGINT's default back, as at a terminal.)
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(accepted(out / "game.jsonl")) < 2:
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "no two plies logged in 2 minutes"
        time.sleep(0.05)
    run.send_signal(stop)
    stdout, stderr = run.communicate(timeout=30)
    assert run.returncode == status, stderr
    assert "Traceback" not in stderr
    moves = accepted(out / "game.jsonl")
    assert 2 <= len(moves) < 6, "stopped mid-game"
    if stop is signal.SIGTERM:
        assert f"stopped by SIGTERM: {len(moves)} plies in {out}" in stdout.splitlines()
    plies = [line.split(". ", 1)[1] for line in (out / "game.txt").read_text().splitlines()
             if line[:1].isdigit()]
    assert plies == moves
    report = (out / "report.html").read_text()
    assert all(move in report for move in moves) and "unfinished" in report
    assert not load_log(out / "game.jsonl").truncated_tail
