"""`referee replay` and `referee demo`: referee recorded footage through the live pipeline."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from referee.app.calibrated import files_for, load_calibration
from referee.app.events import Event
from referee.app.pipeline import FrameWatcher, GameLoop, PipelineSettings, board_referee, camera_game
from referee.app.record import GameFiles, Recorder
from referee.app.spectate import BoardFeed, Spectators
from referee.app.state_machine import Phase
from referee.errors import FootageError
from referee.hardware.sources import open_source
from referee.rules.core import Match


@dataclass(frozen=True)
class ReplayResult:
    match: Match[Any, Any]
    events: tuple[Event, ...]
    frames: int
    seconds: float  # wall-clock time the replay took
    footage_s: float  # length of the footage
    files: GameFiles


def replay_footage(footage: str | Path, game_name: str, *, pieces: str | None = None,
                   out: str | Path | None = None, log: str | Path | None = None,
                   model: str | None = None,
                   headers: dict[str, str] | None = None,
                   on_event: Callable[[Event, Match[Any, Any]], None] | None = None,
                   progress: TextIO | None = None,
                   settings: PipelineSettings | None = None,
                   calibration: str | Path | None = None,
                   board: str | Path | None = None,
                   ruleset: str | Path | None = None,
                   spectators: Spectators | None = None, board_name: str = "board",
                   speed: float = 0.0) -> ReplayResult:
    """Referee `footage`; the log, record, keyframes and report go to `out`, a folder or a
    record file (default: a folder beside the footage; `log`: the log elsewhere, see
    `GameFiles`). Whatever was read before a fault stays in the log.
    `calibration`: the camera file of the footage; `board`: a board profile; `ruleset`: a
    ruleset file for the game (Zensū). `spectators`: a hub the game is shown in, as board
    `board_name` (the web view, the broadcast); `speed`: footage paced at that many times its
    frame rate (0: as fast as it can be read)."""
    game = camera_game(game_name, ruleset)
    files = load_calibration(files_for(str(footage), calibration, board), game)
    referee, reader = board_referee(game, pieces, model=model, settings=settings,
                                    calibration=files)
    footage = Path(footage)
    written = GameFiles.at(footage.with_name(footage.stem + "-referee") if out is None else out,
                           log)
    events: list[Event] = []

    def collect(event: Event) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event, referee.match)

    started = time.perf_counter()
    frames, last_time = 0, 0.0
    headers = {"Source": footage.name, **(headers or {})}
    listeners: tuple[Callable[[Event], None], ...] = (collect,)
    watchers: tuple[FrameWatcher, ...] = ()
    if spectators is not None:
        feed = BoardFeed(spectators, board_name, referee.match, headers=headers)
        listeners, watchers = (collect, feed.on_event), (feed.on_frame,)
        spectators.publish(feed.view())
    with open_source(footage, speed=speed) as source:
        total = int(getattr(source, "frame_count", 0) or 0)
        recorder = Recorder(written, game, headers)
        loop = GameLoop(reader, referee, recorder=recorder, listeners=listeners,
                        watchers=watchers)
        try:
            for frame in source:
                loop.feed(frame.frame_bgr, frame.index, frame.timestamp_s)
                frames, last_time = frames + 1, frame.timestamp_s
                if progress is not None and total and frames % 15 == 0:
                    _progress(progress, frames, total)
        finally:
            loop.finish()
            if progress is not None and total:
                progress.write("\r" + " " * 60 + "\r")
    if not loop.board_seen:
        raise FootageError(f"{footage}: no {game.geometry.files}x{game.geometry.ranks} board "
                           "found in the footage")
    if referee.phase is Phase.SETUP:
        raise FootageError(f"{footage}: the board never showed the start position")
    return ReplayResult(referee.match, tuple(events), frames, time.perf_counter() - started,
                        last_time, written)


def _progress(stream: TextIO, done: int, total: int) -> None:
    width = 30
    filled = round(width * done / total)
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} frames")
    stream.flush()


def stderr_progress() -> TextIO | None:
    return sys.stderr if sys.stderr.isatty() else None
