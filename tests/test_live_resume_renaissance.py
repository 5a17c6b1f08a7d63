"""A Renaissance game killed with SIGKILL in the middle of an acquisition (the marker that
takes a polyomino is down, the polyomino not yet lifted off) and resumed ends with the
uninterrupted record: the resumed referee tells the players again who takes which polyomino,
then accepts the ply once the board is settled, no ply lost or doubled."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from referee_lab.footage_check import Expected
from tests import DATA
from tests.footage_camera import accepted_moves, logged_events
from tests.test_live_resume import start

FOOTAGE = DATA / "footage" / "renaissance-opening.mp4"


def live(out: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "referee", "live", "--game", "renaissance", "--camera",
            str(FOOTAGE), "--out", str(out), *options]


def acquisitions(log: Path) -> list[dict[str, object]]:
    """The logged "move incomplete" events that tell who takes a polyomino."""
    return [e for e in logged_events(log)
            if e["kind"] == "INCOMPLETE" and " takes the " in str(e["detail"])]


@pytest.mark.slow
def test_a_game_killed_mid_acquisition_resumes_to_the_uninterrupted_record(tmp_path: Path):
    expected = [ply.split(". ", 1)[1] for ply in Expected.load(
        FOOTAGE.with_suffix(".expected.json")).plies]
    killed = tmp_path / "killed"
    victim = start(live(killed, "--speed", "2"))
    log = killed / "game.jsonl"
    deadline = time.monotonic() + 300
    while not (log.exists() and acquisitions(log)):
        assert victim.poll() is None, victim.communicate()[1]
        assert time.monotonic() < deadline, "no acquisition announced in 5 minutes"
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    victim.communicate()
    assert victim.returncode == -signal.SIGKILL
    taking = acquisitions(log)[0]
    logged = accepted_moves(log)
    assert len(logged) == taking["ply"] < len(expected), "killed before the taking ply"
    assert expected[len(logged)] == taking["move"]

    resumed = start(live(killed, "--resume", "--speed", "0"))
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert f"resuming after {len(logged)} plies" in out
    assert accepted_moves(log) == expected  # none lost, none doubled
    after = [e for e in logged_events(log) if float(e["time_s"]) >= float(taking["time_s"])
             and e["ply"] >= len(logged)]
    # Told again who takes the polyomino, then the ply accepted once the board is settled.
    who = str(taking["detail"]).split("; ")[0]
    again = next(e for e in after if e["kind"] == "INCOMPLETE"
                 and str(e["detail"]).startswith(who))
    accepted = next(e for e in after if e["kind"] == "ACCEPTED")
    assert accepted["move"] == taking["move"] and again["time_s"] < accepted["time_s"]
    record = (killed / "game.txt").read_text().splitlines()
    assert [line.split(". ", 1)[1] for line in record if line[:1].isdigit()] == expected
