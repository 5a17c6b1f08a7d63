"""A power cut at every byte of the log: for each byte offset of a whole game's log, the log
is cut there and the game resumed as `referee live --resume` does (`start_referee`). The log
then always holds the uninterrupted run's events up to the end of a reading, never part of
one, and the game resumes from there; end to end, the resumed game ends with the
uninterrupted run's record and events, no ply lost or doubled."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from referee.app.live import start_referee
from tests.faults.conftest import LiveRun, live_options, referee_live

CHANGES = ("ACCEPTED", "TAKE_BACK", "GAME_OVER")


def write_ends(log: bytes) -> list[int]:
    """Where each write of the uninterrupted log ends: the header line, then each reading's
    events (those of one frame)."""
    lines = log.splitlines(keepends=True)
    ends, at = [len(lines[0])], len(lines[0])
    events = [json.loads(line) for line in lines[1:]]
    for n, (line, event) in enumerate(zip(lines[1:], events, strict=True)):
        at += len(line)
        if n + 1 == len(events) or events[n + 1]["frame_index"] != event["frame_index"]:
            ends.append(at)
    return ends


def changes(events: list[dict[str, Any]]) -> list[tuple[str, int, str | None]]:
    return [(e["kind"], e["ply"], e["move"]) for e in events if e["kind"] in CHANGES]


def resumed_from(log: bytes, folder: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`start_referee` of `referee live --resume` on the log `log` (the board reader, which
    the log does not touch, left out)."""
    folder.mkdir()
    (folder / "game.jsonl").write_bytes(log)
    monkeypatch.setattr("referee.app.live.board_referee",
                        lambda game, pieces, *, match, **_: (SimpleNamespace(match=match), None))
    live = start_referee(live_options(folder, resume=True), print_line=lambda line: None)
    live.recorder.close()
    return live


def test_a_power_cut_at_every_byte_of_the_log_resumes_at_a_whole_reading(
        whole_game: LiveRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log, events = whole_game.log, whole_game.events
    ends = write_ends(log)
    assert len(ends) - 1 < len(events), "the game has a reading of two events"
    moves = [e["move"] for e in events if e["kind"] == "ACCEPTED"]
    for offset in range(len(log) + 1):
        live = resumed_from(log[:offset], tmp_path / f"cut-{offset}", monkeypatch)
        kept = (tmp_path / f"cut-{offset}" / "game.jsonl").read_bytes()
        if offset < ends[0]:  # the header cut off: no game was logged yet, a new one begins
            assert live.resumed_at_s is None, offset
            assert json.loads(kept)["game"] == "rinne" and kept.count(b"\n") == 1, offset
            continue
        end = max(end for end in ends if end <= offset)
        assert kept == log[:end], f"cut at byte {offset}: the log is not cut at a write's end"
        held = [json.loads(line) for line in kept.splitlines()[1:]]
        replayed = [str(move) for move in live.referee.match.ply_texts()]
        assert replayed == moves[:sum(e["kind"] == "ACCEPTED" for e in held)], offset
        assert live.resumed_at_s == (held[-1]["time_s"] if held else 0.0), offset


@pytest.mark.slow
@pytest.mark.parametrize("where", ["the winning reading's second line", "the header line",
                                   "ply 3's line"])
def test_a_game_cut_by_a_power_loss_resumes_to_the_uninterrupted_record(
        where: str, whole_game: LiveRun, tmp_path: Path) -> None:
    lines = whole_game.log.splitlines(keepends=True)
    line = {"the winning reading's second line": len(lines) - 1, "the header line": 0,
            "ply 3's line": 4}[where]
    offset = sum(map(len, lines[:line])) + len(lines[line]) // 2
    out = tmp_path / "game"
    out.mkdir()
    (out / "game.jsonl").write_bytes(whole_game.log[:offset])
    resumed = referee_live(out, resume=True)
    assert resumed.record == whole_game.record
    assert changes(resumed.events) == changes(whole_game.events)  # none lost, none doubled


def test_a_cut_write_dropped_on_resume_is_said_on_stdout_leaving_stderr_one_line(
        whole_game: LiveRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The drop is news for the journal, not an error: a resume that then fails (here the
    footage ends before the logged game does) still ends with one line on stderr."""
    from referee.cli import main
    from tests.faults.broken import _write_clip

    clip = tmp_path / "clip.avi"
    _write_clip(clip, frames=10)
    out = tmp_path / "game"
    out.mkdir()
    lines = whole_game.log.splitlines(keepends=True)
    cut = sum(map(len, lines[:3])) + 40  # in ply 2's line
    (out / "game.jsonl").write_bytes(whole_game.log[:cut])
    assert main(["live", "--game", "rinne", "--pieces", "penta", "--camera", str(clip),
                 "--speed", "0", "--resume", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"referee: {clip}: the video ends before 3.767 s\n"
    assert f"{out / 'game.jsonl'}: its last write was cut off by a kill or a power loss (40 " \
        "bytes): dropped (its events were never announced)" in captured.out.splitlines()
