"""The game log and what is made from it.

Everything the referee decides goes first into an append-only JSON-lines log, one line per
event, written and fsynced before the players are told: a pulled plug loses at most the
write under way. The events of one reading go in one write, every line of it but the last
marked `"more": true`, so a write that a power cut left unfinished (a line cut off, or the
last whole line marked `more`) is recognised whole and dropped, never half kept. The record
file (designer's notation) is rewritten atomically after every change, a keyframe image is
kept for each accepted position, and an HTML report with a board diagram per ply is written
at the end. `load_log` rebuilds the game from a log to resume it.

A disk that is full or turned read-only does not stop the game: what cannot be written is
held in memory (`Recorder.trouble` says why), tried again at every write and by `catch_up`,
and written, in order, once the disk takes it. Only `finish` with the disk still failing
raises a `RecordError`."""

from __future__ import annotations

import contextlib
import dataclasses
import html
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.app.diagrams import board_svg, renaissance_state_html, score_text
from referee.app.events import Event, EventKind
from referee.errors import RecordError, RefereeError, UnknownGameError
from referee.rules import find_game
from referee.rules.core import Game, Match
from referee.rules.records import format_record
from referee.rules.renaissance import RenaissanceRules

LOG_FORMAT = "referee-log/1"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameLog:
    game: Game[Any, Any]
    headers: dict[str, str]
    events: tuple[Event, ...]
    truncated_tail: bool  # the last write was cut off (a power loss while writing it): dropped
    path: Path | None = None  # where it was read from, to name in messages


@dataclass(frozen=True)
class GameFiles:
    """Where one game's files go: by default a folder of game.txt, game.jsonl, report.html
    and keyframes/; or a record file named by the user, with the others beside it."""

    record: Path
    log: Path
    report: Path
    keyframes: Path

    @classmethod
    def at(cls, out: str | Path, log: str | Path | None = None) -> GameFiles:
        """`out`: a folder, or a record file (a name ending .txt); `log`: the log elsewhere."""
        out = Path(out)
        if out.suffix == ".txt":
            files = cls(out, out.with_suffix(".jsonl"), out.with_suffix(".html"),
                        out.with_name(out.stem + "-keyframes"))
        else:
            files = cls(out / "game.txt", out / "game.jsonl", out / "report.html",
                        out / "keyframes")
        return files if log is None else dataclasses.replace(files, log=Path(log))


class Recorder:
    """Writes one game: its log, record, keyframes and report (`GameFiles`; a plain path is
    a folder)."""

    # Keyframes held in memory while the disk refuses them (a board crop is some 30 kB).
    MAX_HELD_KEYFRAMES = 64

    def __init__(self, files: GameFiles | str | Path, game: Game[Any, Any],
                 headers: dict[str, str], *, resume: bool = False) -> None:
        self.files = files if isinstance(files, GameFiles) else GameFiles.at(files)
        self.game = game
        self.headers = dict(headers)
        self.trouble: str | None = None  # why the disk refuses the game's files, while it does
        self._held: list[bytes] = []  # writes of the log not yet on the disk, in order
        self._held_keyframes: dict[int, bytes] = {}  # JPEG bytes by ply
        self._record_behind: Match[Any, Any] | None = None  # the record to write again
        self.dropped = 0  # bytes of an unfinished last write dropped from a resumed log
        if not resume and self.log_path.is_file() and self.log_path.stat().st_size > 0:
            raise RecordError(f"a game is already logged in {self.log_path}: resume it, or "
                              "choose another place")
        try:
            for path in (self.record_path.parent, self.log_path.parent, self.files.keyframes):
                path.mkdir(parents=True, exist_ok=True)
            if resume and self.log_path.is_file():
                self.dropped = drop_unfinished_write(self.log_path)
            self._fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as error:
            where = error.filename or self.record_path.parent
            raise RecordError(f"{where}: cannot write the game there ({error.strerror})"
                              ) from None
        self._size = os.fstat(self._fd).st_size  # the log's bytes known to be on the disk
        if self._size == 0:
            # A game the disk cannot even begin is refused before anything is refereed.
            self._held.append(_lines({"format": LOG_FORMAT, "game": game.name,
                                      "headers": self.headers}))
            if not self.catch_up():
                self.close()
                raise RecordError(f"{self.log_path}: cannot write the game there "
                                  f"({self.trouble})")

    @property
    def log_path(self) -> Path:
        return self.files.log

    @property
    def record_path(self) -> Path:
        return self.files.record

    @property
    def report_path(self) -> Path:
        return self.files.report

    @property
    def behind(self) -> int:
        """How many writes of the log are held in memory, waiting for the disk."""
        return len(self._held)

    def write(self, event: Event, match: Match[Any, Any], frame_bgr: np.ndarray | None = None
              ) -> None:
        """Log `event` durably; on a change of the game, also the record and a keyframe."""
        self.write_all([event], match, frame_bgr)

    def write_all(self, events: list[Event], match: Match[Any, Any],
                  frame_bgr: np.ndarray | None = None) -> None:
        """Log the events of one reading in one write and one fsync: two plies read at once
        are both in the log or neither (a log holding only the first would ask the players,
        after a crash, for a position the board never showed); then the record, on a change
        of the game, and a keyframe of each position reached. A disk that refuses them does
        not raise: they are held (see `trouble`, `catch_up`)."""
        marked = [{**e.to_json(), "more": True} for e in events[:-1]] + [
            e.to_json() for e in events[-1:]]
        self._held.append(_lines(*marked))
        if any(e.kind in (EventKind.ACCEPTED, EventKind.TAKE_BACK, EventKind.STARTED)
               for e in events):
            self._record_behind = match
        for event in events:
            if event.kind in (EventKind.ACCEPTED, EventKind.STARTED) and frame_bgr is not None:
                self._hold_keyframe(event.ply, frame_bgr)
        self.catch_up()

    def catch_up(self) -> bool:
        """Write what is waiting, the log's writes first and in order, then the record and
        the keyframes; whether all of it is written. A disk that refuses sets `trouble`."""
        try:
            self._write_log()
            if self._record_behind is not None:
                write_atomically(self.record_path, format_record(
                    self._record_behind, self.headers).encode("utf-8"))
                self._record_behind = None
            for ply in sorted(self._held_keyframes):
                write_atomically(self.keyframe_path(ply), self._held_keyframes[ply])
                del self._held_keyframes[ply]
        except OSError as error:
            self._refused(error)
            return False
        if self.trouble is not None:
            log.warning("%s: the game's files are written again, caught up",
                        self.log_path.parent)
        self.trouble = None
        return True

    def _hold_keyframe(self, ply: int, frame_bgr: np.ndarray) -> None:
        ok, jpeg = cv2.imencode(".jpg", frame_bgr, [cv2.IMWRITE_JPEG_QUALITY, 85])
        if not ok:
            return
        held = self._held_keyframes
        held[ply] = jpeg.tobytes()
        while len(held) > self.MAX_HELD_KEYFRAMES:  # a long outage: the first ones let go
            del held[min(held)]

    def keyframe_path(self, ply: int) -> Path:
        return self.files.keyframes / f"ply-{ply:03d}.jpg"

    def finish(self, match: Match[Any, Any]) -> None:
        """Write the final record and the report; close the log. A disk that still refuses
        the game's files raises `RecordError` (after closing the log), saying what is lost."""
        self._record_behind = match
        if self.catch_up():
            try:
                write_atomically(self.report_path, self.report(match).encode("utf-8"))
            except OSError as error:
                self._refused(error)
        behind, trouble = self.behind, self.trouble
        self.close()
        if trouble is not None:
            lost = f"the last {behind} writes of its log are lost" if behind else \
                "its log is whole"
            raise RecordError(f"{self.record_path.parent}: cannot write the game's files "
                              f"({trouble}); {lost}")

    def close(self) -> None:
        """Close the log (twice is fine); a write the disk cut short is cut off first."""
        if self._fd < 0:
            return
        with contextlib.suppress(OSError):
            if os.fstat(self._fd).st_size != self._size:
                os.ftruncate(self._fd, self._size)
        os.close(self._fd)
        self._fd = -1

    def _write_log(self) -> None:
        """Write the held writes of the log in order, each fsynced. A write the disk cut
        short is cut off the log first; so is one whose fsync failed (the kernel may have
        dropped its pages: it is written afresh)."""
        if os.fstat(self._fd).st_size != self._size:
            os.ftruncate(self._fd, self._size)
        while self._held:
            data = self._held[0]
            _write_fully(self._fd, data)
            os.fsync(self._fd)
            self._size += len(data)
            self._held.pop(0)

    def _refused(self, error: OSError) -> None:
        trouble = error.strerror or str(error)
        if trouble != self.trouble:
            log.error("%s: cannot write the game's files (%s): refereeing on, %d writes of "
                      "the log held until the disk takes them", self.log_path.parent, trouble,
                      self.behind)
        self.trouble = trouble

    def report(self, match: Match[Any, Any]) -> str:
        """An HTML page: the result, and for every ply its notation, a board diagram (SVG)
        and the keyframe the camera took of it."""
        game = self.game
        result = match.outcome.result(game.player_names) if match.outcome else "unfinished"
        title = f"{game.title} ({game.variant}): {self.headers.get('White', game.player_names[0])}" \
                f" – {self.headers.get('Black', game.player_names[1])}"
        rows = [_ply_html(game, 0, "start", match.positions[0], None,
                          self._keyframe_name(0))]
        for ply, (before, move) in enumerate(zip(match.positions, match.moves, strict=False), 1):
            text = f"{(ply + 1) // 2}. {game.move_text(before, move)}"
            rows.append(_ply_html(game, ply, text, match.positions[ply], move,
                                  self._keyframe_name(ply)))
        score = score_text(game, match.position)
        return _PAGE.format(title=html.escape(title), result=html.escape(result),
                            score=f" (score: {html.escape(score)})" if score else "",
                            record=html.escape(format_record(match, self.headers)),
                            rows="\n".join(rows))

    def _keyframe_name(self, ply: int) -> str | None:
        path = self.keyframe_path(ply)
        if not path.exists():
            return None
        return Path(os.path.relpath(path, self.report_path.parent)).as_posix()


def _lines(*lines: dict[str, Any]) -> bytes:
    return "".join(json.dumps(data, ensure_ascii=False) + "\n" for data in lines).encode("utf-8")


def _write_fully(fd: int, data: bytes) -> None:
    """All of `data` to `fd`: `os.write` may take only part of it."""
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])


def write_atomically(path: Path, data: bytes) -> None:
    """`data` into a temporary file beside `path`, fsynced, then renamed over it; nothing of
    the temporary file is left where the disk refuses it."""
    temporary = path.with_suffix(path.suffix + ".tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            _write_fully(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise


def finished_length(data: bytes) -> int:
    """How many bytes of a log's `data` hold finished writes: up to its last whole line, less
    any whole lines marked `more` at the end (their write stopped before its last line)."""
    end = data.rfind(b"\n") + 1
    while end:
        start = data.rfind(b"\n", 0, end - 1) + 1
        if not _marked_more(data[start:end]):
            break
        end = start
    return end


def _marked_more(line: bytes) -> bool:
    try:
        data = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and data.get("more") is True


def drop_unfinished_write(path: Path) -> int:
    """Cut off the end of a log that a power loss or a kill left unfinished (a line cut
    off, or the first lines of a reading's write without its last), so that the next event
    starts a line of its own and no reading is half kept. Its events were never announced:
    the log is written first. Returns how many bytes were dropped."""
    data = path.read_bytes()  # a game's log is a few kB
    keep = finished_length(data)
    if keep == len(data):
        return 0
    with open(path, "r+b") as handle:
        handle.truncate(keep)
        os.fsync(handle.fileno())
    log.info("%s: its last write was cut off by a kill or a power loss (%d bytes): dropped",
             path, len(data) - keep)
    return len(data) - keep


def has_a_whole_line(path: Path) -> bool:
    """Whether a log holds a whole line: a log whose header line a power loss cut off holds
    no game yet."""
    try:
        with open(path, "rb") as handle:
            return b"\n" in handle.read()
    except OSError:
        return True  # let load_log say why it cannot be read


def load_log(path: str | Path) -> GameLog:
    """Read a log written by `Recorder`; raises RecordError for a missing, foreign or corrupt
    log. Only an unfinished last write (a power loss while writing it) is forgiven, and
    reported in `truncated_tail`."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise RecordError(f"{path}: cannot be read ({error.strerror})") from None
    finished = finished_length(raw)
    truncated = finished < len(raw)
    lines = raw[:finished].split(b"\n")[:-1]
    if not lines:
        raise RecordError(f"{path}: empty, not a referee log")
    header = _json_line(path, 1, lines[0])
    if header.get("format") != LOG_FORMAT:
        raise RecordError(f"{path}: not a referee log (no '{LOG_FORMAT}' header)")
    try:
        game = find_game(str(header.get("game", "")))
    except UnknownGameError as error:
        raise RecordError(f"{path}: a log of a game this referee does not know ({error})") from None
    events = tuple(_event(path, n, line) for n, line in enumerate(lines[1:], start=2))
    return GameLog(game, dict(header.get("headers", {})), events, truncated, path)


def _json_line(path: Path, number: int, line: bytes) -> dict[str, Any]:
    try:
        data = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RecordError(f"{path}: line {number} is corrupt") from None
    if not isinstance(data, dict):
        raise RecordError(f"{path}: line {number} is corrupt")
    return data


def _event(path: Path, number: int, line: bytes) -> Event:
    try:
        data = _json_line(path, number, line)
        data.pop("more", None)  # one of a reading's events, not its last
        return Event.from_json(data)
    except (KeyError, TypeError):
        raise RecordError(f"{path}: line {number} is not an event") from None


def match_from_log(log: GameLog) -> Match[Any, Any]:
    """The game as the log has it: accepted moves, minus those taken back."""
    match: Match[Any, Any] = Match(log.game)
    where = f"{log.path}: " if log.path is not None else ""
    for event in _changes(log.events):
        try:
            if event.kind is EventKind.TAKE_BACK:
                match.pop()
            else:
                match.push_text(event.move or "")
        except RefereeError as error:
            raise RecordError(f"{where}ply {event.ply} ({event.kind.name} {event.move}) cannot "
                              f"be replayed: {error}") from None
        if len(match.moves) != event.ply:
            raise RecordError(f"{where}the log is inconsistent at ply {event.ply} "
                              f"({len(match.moves)} plies replayed)")
    return match


def _changes(events: tuple[Event, ...]) -> Iterator[Event]:
    return (e for e in events if e.kind in (EventKind.ACCEPTED, EventKind.TAKE_BACK))


def _ply_html(game: Game[Any, Any], ply: int, text: str, position: Any, move: Any,
              keyframe: str | None) -> str:
    image = f'<img src="{keyframe}" alt="camera view after ply {ply}">' if keyframe else ""
    state = renaissance_state_html(game, position) if isinstance(game, RenaissanceRules) else ""
    return (f'<section class="ply"><h2>{html.escape(text)}</h2>'
            f"{board_svg(game, position, move)}{state}{image}</section>")


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
.ply {{ display: inline-block; vertical-align: top; margin: 0 1.5em 1.5em 0; }}
.ply h2 {{ font-size: 1em; margin: 0 0 .4em; }}
.ply img {{ display: block; width: 240px; margin-top: .4em; }}
.ply .phase {{ margin: .2em 0; font-size: .85em; color: #444; }}
.ply .score {{ font-size: .8em; border-collapse: collapse; }}
.ply .score th, .ply .score td {{ padding: 0 .4em; text-align: right; }}
</style></head>
<body><h1>{title}</h1><p>Result: <strong>{result}</strong>{score}</p>
<details><summary>Record</summary><pre>{record}</pre></details>
{rows}
</body></html>
"""
