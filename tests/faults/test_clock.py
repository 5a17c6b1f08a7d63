"""The wall clock jumping (a Raspberry Pi has no real-time clock: it boots at the time it
last shut down, or 1970, until the network sets it): the game's times, its waits and its
pacing run on the monotonic clock, so a refereed game is the same however the wall clock
jumps; the record's date is today's only where the clock can be trusted, and a resumed
game keeps the date logged when it began."""

from __future__ import annotations

import datetime
import itertools
import json
import re
import time
from pathlib import Path

import pytest

from referee.app.live import EARLIEST_DATE, record_date
from tests import ROOT
from tests.faults.conftest import LiveRun, referee_live

DAY = datetime.datetime(2025, 6, 30, 12, 0).timestamp()


def test_the_date_is_todays_only_where_the_clock_is_trusted(tmp_path: Path) -> None:
    synced = tmp_path / "timesync" / "synchronized"
    assert record_date(lambda: DAY, synced) == "2025-06-30"  # no timesyncd: the clock as set
    assert record_date(lambda: 0.0, synced) == "unknown"  # 1970: no clock set at all
    before = datetime.datetime.combine(EARLIEST_DATE, datetime.time()).timestamp() - 86400
    assert record_date(lambda: before, synced) == "unknown"
    synced.parent.mkdir()
    assert record_date(lambda: DAY, synced) == "unknown"  # timesyncd has not set it yet
    synced.touch()
    assert record_date(lambda: DAY, synced) == "2025-06-30"


@pytest.mark.slow
def test_a_game_refereed_while_the_wall_clock_jumps_is_the_same_game(
        whole_game: LiveRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock reads 1970 at the start, then jumps forward years and back hours at every
    reading of it."""
    jumps = itertools.chain([0.0], itertools.cycle([DAY, DAY + 3e8, DAY - 7200.0, 5.0]))
    monkeypatch.setattr(time, "time", lambda: next(jumps))
    monkeypatch.setattr("referee.app.live.CLOCK_SYNCED", tmp_path / "no-timesyncd" / "x")
    jumped = referee_live(tmp_path / "game")
    assert jumped.events == whole_game.events  # every event, at the same footage times
    assert json.loads(jumped.log.splitlines()[0])["headers"] == {"Date": "unknown"}
    assert jumped.record == re.sub(r"^Date: .*$", "Date: unknown", whole_game.record,
                                   flags=re.MULTILINE)


@pytest.mark.slow
def test_a_resumed_game_keeps_the_headers_logged_when_it_began(
        whole_game: LiveRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "game"
    out.mkdir()
    lines = whole_game.log.splitlines(keepends=True)
    header = json.dumps({"format": "referee-log/1", "game": "rinne",
                         "headers": {"Date": "2025-03-01", "White": "Ann", "Black": "Bo"}})
    (out / "game.jsonl").write_bytes(header.encode() + b"\n" + b"".join(lines[1:-2]))
    monkeypatch.setattr(time, "time", lambda: 0.0)  # booted without the clock set
    resumed = referee_live(out, resume=True)
    assert resumed.record.splitlines()[:5] == [
        "Game: Rinne", "Variant: 5x6 standard", "White: Ann", "Black: Bo", "Date: 2025-03-01"]


def test_only_the_records_date_reads_the_wall_clock() -> None:
    """Times, waits and pacing: time.monotonic (or a clock passed in) everywhere."""
    readers = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "referee").rglob("*.py"))
               for n, line in enumerate(path.read_text().splitlines(), 1)
               if re.search(r"\btime\.time\b|datetime\.(datetime\.)?now|date\.today", line)]
    assert readers == [f"referee/app/live.py:{n}" for n in _record_date_lines()]


def _record_date_lines() -> list[int]:
    lines = (ROOT / "referee" / "app" / "live.py").read_text().splitlines()
    return [n for n, line in enumerate(lines, 1) if "time.time" in line]
