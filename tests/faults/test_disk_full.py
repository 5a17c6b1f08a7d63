"""A full disk and a file system turned read-only while a game is refereed: the players are
told (the red light and the alarm, and a line for the journal), the referee referees on, and
once the disk takes writes again the log, record and keyframes catch up, in order, nothing
lost or doubled. A disk still failing at the end is one clear line and exit 1."""

from __future__ import annotations

import errno
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.app.events import Event, EventKind
from referee.app.live import run_live
from referee.app.record import Recorder, load_log
from referee.errors import RecordError
from referee.hardware.cues import Cue, cue_line
from referee.hardware.frames import BaseSource, Frame
from referee.hardware.signals import TerminalSignals
from referee.hardware.sources import open_source
from referee.rules import Match, find_game
from tests.faults.conftest import GAME, LiveRun, live_options
from tests.faults.disk import FailingDisk

ERRORS = {"disk full": errno.ENOSPC, "read-only": errno.EROFS}


class FailingFrom(BaseSource):
    """The footage, with the disk failing from `start_s` to `end_s` of it."""

    def __init__(self, disk: FailingDisk, error: int, start_s: float, end_s: float) -> None:
        self.disk, self.error, self.start_s, self.end_s = disk, error, start_s, end_s
        self._source = open_source(GAME)
        self.description = self._source.description

    def __iter__(self) -> Iterator[Frame]:
        for frame in self._source:
            failing = self.start_s <= frame.timestamp_s < self.end_s
            if failing != (self.disk.error is not None):
                self.disk.fail(self.error if failing else None)
            yield frame

    def close(self) -> None:
        self._source.close()


def cues(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(ERRORS))
def test_the_referee_referees_on_and_the_log_catches_up(
        fault: str, whole_game: LiveRun, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The disk fails from 6 s to 14 s of the game: plies 2 and 3 are accepted meanwhile."""
    out = tmp_path / "game"
    disk = FailingDisk(tmp_path, monkeypatch)
    lines: list[str] = []
    shown = io.StringIO()
    assert run_live(live_options(out), print_line=lines.append, signals=TerminalSignals(shown),
                    open_camera=lambda: FailingFrom(disk, ERRORS[fault], 6.0, 14.0)) == 0
    assert disk.refused > 0
    # The players were told: after each event while the disk failed, the red light and the
    # alarm; the light out once it was written again.
    trouble, back = cue_line(Cue.LOG_FAILED), cue_line(Cue.LOG_BACK)
    shown_lines = cues(shown)
    assert shown_lines.count(trouble) >= 2 and shown_lines.count(back) == 1
    assert shown_lines.index(back) > max(i for i, line in enumerate(shown_lines)
                                         if line == trouble)
    why = "No space left on device" if fault == "disk full" else "Read-only file system"
    assert any(line.startswith(f"cannot write the game in {out} ({why}): refereeing on")
               for line in lines), lines
    assert f"the game is written again in {out}: nothing lost" in lines
    # Nothing lost, nothing doubled, in order: the log and record are the uninterrupted run's.
    log = (out / "game.jsonl").read_bytes()
    assert [json.loads(line) for line in log.splitlines()[1:]] == whole_game.events
    assert (out / "game.txt").read_text() == whole_game.record
    assert sorted(p.name for p in (out / "keyframes").iterdir()) == [
        f"ply-{ply:03d}.jpg" for ply in range(7)]
    assert (out / "report.html").is_file()
    assert not list(out.rglob("*.tmp"))


def game_and_events() -> tuple[Match[Any, Any], list[Event]]:
    game = find_game("rinne")
    match: Match[Any, Any] = Match(game)
    events = [Event(EventKind.STARTED, 1, 0.1, 0)]
    for ply, move in enumerate(("King d3 - c3 = Knight", "King a5 - b5 = Knight"), 1):
        match.push_text(move)
        events.append(Event(EventKind.ACCEPTED, ply * 10, ply * 1.0, ply, move))
    return match, events


@pytest.mark.parametrize("fault", sorted(ERRORS))
def test_a_disk_still_failing_at_the_end_is_one_clear_error(
        fault: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    match, events = game_and_events()
    disk = FailingDisk(tmp_path, monkeypatch)
    recorder = Recorder(tmp_path / "game", match.game, {})
    recorder.write(events[0], match, np.zeros((8, 8, 3), np.uint8))
    disk.fail(ERRORS[fault])
    for event in events[1:]:
        recorder.write(event, match, np.zeros((8, 8, 3), np.uint8))  # no raise: held
    assert recorder.behind == 2 and recorder.trouble is not None
    with pytest.raises(RecordError, match=r"cannot write the game's files \(.*\); the last 2 "
                       "writes of its log are lost"):
        recorder.finish(match)
    disk.fail(None)
    held = load_log(tmp_path / "game" / "game.jsonl")  # what was written is whole
    assert [e.kind for e in held.events] == [EventKind.STARTED] and not held.truncated_tail


def test_a_write_the_full_disk_cut_short_is_written_whole_once_it_has_room(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    match, events = game_and_events()
    disk = FailingDisk(tmp_path, monkeypatch)
    recorder = Recorder(tmp_path / "game", match.game, {})
    disk.fail(errno.ENOSPC)
    recorder.write_all(events[:2], match)  # half of it reaches the disk, then ENOSPC
    log = tmp_path / "game" / "game.jsonl"
    assert not log.read_bytes().endswith(b"\n")
    disk.fail(None)
    recorder.write(events[2], match)
    recorder.finish(match)
    assert load_log(log).events == tuple(events)
    assert not load_log(log).truncated_tail


def test_a_game_the_disk_cannot_begin_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    from referee.cli import main

    disk = FailingDisk(tmp_path, monkeypatch)
    disk.fail(errno.ENOSPC)
    out = tmp_path / "game"
    assert main(["live", "--game", "rinne", "--camera", str(GAME), "--speed", "0",
                 "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"referee: {out / 'game.jsonl'}: cannot write the game there (No space left " \
        "on device)\n"


def test_a_record_the_disk_refused_is_written_at_the_next_event(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The log is written but the record's rewrite is refused: the recorder is in trouble
    until an event that changes nothing brings the record up to date."""
    from referee.app import record

    match, events = game_and_events()
    recorder = Recorder(tmp_path / "game", match.game, {})
    real = record.write_atomically
    refusals = iter([True])

    def refuse_once(path: Path, data: bytes) -> None:
        if path.name == "game.txt" and next(refusals, False):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(record, "write_atomically", refuse_once)
    recorder.write_all(events, match)
    assert recorder.trouble == "No space left on device" and recorder.behind == 0
    assert not (tmp_path / "game" / "game.txt").exists()
    recorder.write(Event(EventKind.UNREADABLE, 40, 4.0, 2, detail="squares a1"), match)
    assert recorder.trouble is None
    assert (tmp_path / "game" / "game.txt").read_text().endswith("1. King a5 - b5 = Knight\n")
    recorder.close()
