"""`referee live`: the referee on a live camera, with lights, buzzer and button.

Every event is in the log before the players hear of it; after a crash or a pulled plug,
`--resume` rebuilds the game from the log and waits until the board shows the logged
position again before it goes on (with no game logged yet it starts one, so a service can
always pass `--resume`). A log is never overwritten: starting a new game where one is logged
needs `--resume` or another `--out`.

A video file (or a folder of images) stands in for the camera as a camera would deliver
it: at its own frame rate (`speed` times), from `start_s` seconds in. Resumed, footage
carries on from where the log stops, as a camera would still be looking at the table, not
from its first frame: the stabiliser's `settle_s` before the last logged event, the steady
moment at which the first run read the logged position (earlier frames may show the hand
that made the last move). Footage that shows an earlier position first is only waited
through. A camera's times carry on from the last logged event's.

Faults on the way (benchmarks/faults.md): SIGTERM ends the game as the end of footage does,
record and report written, exit 0; a disk that fills up or turns read-only shows the red
light and the alarm while the referee referees on, and the log catches up once the disk takes
writes again; a referee that cannot keep up with the camera says so. Every time is the
monotonic clock's; the wall clock only dates a new game's record, where it can be trusted."""

from __future__ import annotations

import contextlib
import datetime
import itertools
import logging
import math
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from referee.app.announce import cues_for
from referee.app.calibrated import BoardGame, Calibration, files_for, load_calibration
from referee.app.events import Event, EventKind
from referee.app.pipeline import BoardReader, GameLoop, board_referee, camera_game
from referee.app.record import GameLog, Recorder, has_a_whole_line, load_log, match_from_log
from referee.app.spectate import BoardFeed, SpectatedSignals, Spectators
from referee.app.state_machine import Referee
from referee.errors import RecordError, SourceError
from referee.hardware.button import ButtonAction
from referee.hardware.cues import Cue
from referee.hardware.frames import FrameSource
from referee.hardware.picamera import PiCameraConfig
from referee.hardware.signals import Clock, Signals, Ticker, open_signals
from referee.hardware.sources import is_camera, open_source
from referee.hardware.watch import watched_frames
from referee.rules.core import Match

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveOptions:
    game: str
    camera: str = "pi"
    pins: str | None = None
    pieces: str | None = None
    out: Path = Path("game")
    resume: bool = False
    model: str | None = None
    calibration: str | None = None  # a camera file (default for pi: the Pi Camera Module 3's)
    board: str | None = None  # a board profile from `referee calibrate board`
    start_s: float | None = None  # footage: where to begin (None: 0, or where the log stops)
    speed: float = 1.0  # footage: times its own frame rate; 0: as fast as it can be read
    camera_wait_s: float = 60.0  # how long a lost or missing camera is waited for
    ruleset: str | None = None  # a ruleset file for the game (Zensū)


@dataclass(frozen=True)
class LiveGame:
    referee: Referee
    recorder: Recorder
    reader: BoardReader
    resumed_at_s: float | None  # the time of the last logged event; None: a new game


class Table:
    """The game refereed at the table now and the folder it is logged in: the button's long
    hold ends it and puts a new one in its place, logged beside the first (`next_out`)."""

    def __init__(self, live: LiveGame, out: Path) -> None:
        self.live, self.out, self.first_out = live, out, out

    def next_out(self) -> Path:
        """The first of `game-2`, `game-3`, ... beside the first game's `game` with no game
        logged in it."""
        first = self.first_out
        return next(folder for n in itertools.count(2)
                    if not (folder := first.with_name(f"{first.name}-{n}")).joinpath("game.jsonl").exists())


def logged_game(out: Path, game: BoardGame) -> GameLog | None:
    """The game logged in `out`, checked to be the same game; None when none is logged (a
    log whose first line a power loss cut off holds none yet)."""
    path = out / "game.jsonl"
    if not path.exists() or (path.is_file() and path.stat().st_size == 0) or (
            path.is_file() and not has_a_whole_line(path)):
        return None
    logged = load_log(path)
    if logged.game.name != game.name:
        raise RecordError(f"{path} is a game of {logged.game.name}, not {game.name}")
    return logged


# A Raspberry Pi has no real-time clock: until the network sets it, its clock reads the time
# it was last shut down (fake-hwclock) or 1970. A date before this one is surely wrong.
EARLIEST_DATE = datetime.date(2025, 1, 1)
# systemd-timesyncd makes this file once it has set the clock (and its folder while it runs).
CLOCK_SYNCED = Path("/run/systemd/timesync/synchronized")


def record_date(now: Callable[[], float] | None = None, synced: Path | None = None) -> str:
    """A new game's `Date` header: the wall clock's day (2025-06-30) where it can be trusted,
    else "unknown": a day before `EARLIEST_DATE`, or a timesyncd that has not set the clock
    yet (`synced`: its flag file, default `CLOCK_SYNCED`). Only this reads the wall clock:
    the game's times and every wait run on the monotonic clock, which a clock set at boot
    does not move."""
    day = datetime.date.fromtimestamp(now() if now is not None else time.time())
    synced = synced if synced is not None else CLOCK_SYNCED
    if day < EARLIEST_DATE or (synced.parent.is_dir() and not synced.exists()):
        return "unknown"
    return day.isoformat()


def start_referee(options: LiveOptions, print_line: Callable[[str], None] = print) -> LiveGame:
    game = camera_game(options.game, options.ruleset)
    calibration = load_calibration(files_for(options.camera, options.calibration, options.board),
                                   game)
    logged = logged_game(options.out, game) if options.resume else None
    if options.resume and logged is None:
        print_line(f"no game logged in {options.out}: a new game")
    # A new game where one is logged is refused by the recorder (made before anything runs).
    match: Match[Any, Any] = match_from_log(logged) if logged is not None else Match(game)
    referee, reader = board_referee(game, options.pieces, model=options.model, match=match,
                                    calibration=calibration)
    # Resumed, the record keeps the headers logged when the game began (its date among them).
    headers = logged.headers if logged is not None else {"Date": record_date()}
    recorder = Recorder(options.out, game, headers, resume=options.resume)
    if recorder.dropped:
        print_line(f"{recorder.log_path}: its last write was cut off by a kill or a power loss "
                   f"({recorder.dropped} bytes): dropped (its events were never announced)")
    resumed_at = None if logged is None else logged.events[-1].time_s if logged.events else 0.0
    return LiveGame(referee, recorder, reader, resumed_at)


def check_camera_options(options: LiveOptions) -> None:
    """Footage options for a camera, or footage that is not there: a `SourceError`."""
    if is_camera(options.camera):
        if options.start_s is not None or options.speed != 1.0:
            raise SourceError(f"camera {options.camera}: --start and --speed are for footage only")
    elif not Path(options.camera).exists():
        raise SourceError(f"{options.camera}: no such video file or folder")


def live_signals(options: LiveOptions, print_line: Callable[[str], None] = print) -> Signals:
    """The lights, buzzer and button. Where they are asked for, by a pin map (`--pins`) or a
    pin factory in GPIOZERO_PIN_FACTORY (the service gives both), a GPIO that cannot be
    driven (no lgpio, not in the gpio group) ends the referee with one line before a game
    is logged, rather than refereeing with dark lights; otherwise (a laptop) the cues are
    printed in the terminal, and a line says so."""
    required = options.pins is not None or bool(os.environ.get("GPIOZERO_PIN_FACTORY"))
    return open_signals(options.pins, names=camera_game(options.game, options.ruleset).player_names,
                        require_gpio=required, say=print_line)


def board_distance_m(calibration: Calibration) -> float | None:
    """How far the board is from the camera, from a board profile that gives the board's
    size (`square_mm`) and where it lies in the frame (`corners_px`) and the camera file's
    focal length: the board's diagonal in millimetres over its diagonal in pixels, times the
    focal length in pixels (a board seen at a slant reads a little farther). None without
    them."""
    board, camera = calibration.board, calibration.camera
    if board is None or camera is None or board.square_mm is None or board.corners_px is None:
        return None
    corners = [tuple(map(float, corner)) for corner in board.corners_px]
    diagonal_px = (math.dist(corners[0], corners[2]) + math.dist(corners[1], corners[3])) / 2
    if diagonal_px <= 0:
        return None
    diagonal_mm = board.square_mm * math.hypot(board.files, board.ranks)
    focal_px = (camera.camera_matrix[0][0] + camera.camera_matrix[1][1]) / 2
    return focal_px * diagonal_mm / diagonal_px / 1000


def camera_opener(options: LiveOptions, resumed_at_s: float | None, *, rewind_s: float = 0.0,
                  focus_m: float | None = None) -> Callable[[], FrameSource]:
    """How to open the camera, or the footage standing in for one (resumed: from `rewind_s`
    before the last logged event). A Pi camera is focused at `focus_m` (the board's
    distance), or focuses itself continuously when that is not known."""
    if is_camera(options.camera):
        pi = PiCameraConfig(focus_m=focus_m)
        return lambda: open_source(options.camera, pi=pi)
    start_s = options.start_s if options.start_s is not None else (
        max(0.0, resumed_at_s - rewind_s) if resumed_at_s is not None else 0.0)
    return lambda: open_source(options.camera, start_s=start_s, speed=options.speed)


class Stopped(BaseException):
    """SIGTERM (a service being stopped, the system shutting down): the game loop ends as at
    the end of footage, with the record and report written. A BaseException, as
    KeyboardInterrupt is, so that no `except Exception` on the way swallows it."""


@contextlib.contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """While inside, SIGTERM raises `Stopped` (once: a second SIGTERM is ignored while the
    game's files are written); outside the main thread, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(number: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Stopped(signal.Signals(number).name)

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def run_live(options: LiveOptions, *, print_line: Callable[[str], None] = print,
             signals: Signals | None = None,
             open_camera: Callable[[], FrameSource] | None = None,
             clock: Clock = time.monotonic, sleep: Callable[[float], None] = time.sleep,
             spectators: Spectators | None = None, board_name: str = "board") -> int:
    """Referee until the footage ends (a camera never does) or SIGTERM comes; 0 then, with
    the record and report written. A camera gone for longer than `camera_wait_s` raises
    `CameraLost`, with the log kept. `spectators`: a hub the game is shown in, as board
    `board_name` (the web view, the broadcast). `open_camera`, `clock` and `sleep` stand in
    for the camera and the time in tests."""
    # What cannot work (footage options, the pin map, the pins) is refused before a game is
    # logged, so that the same command may be run again once it is put right.
    if open_camera is None:
        check_camera_options(options)
    own_signals = signals is None
    table: Table | None = None
    ticker: Ticker | None = None
    with stopped_by_sigterm():
        try:
            if signals is None:
                signals = live_signals(options, print_line)
                ticker = Ticker(signals)
            live = start_referee(options, print_line)
            table = Table(live, options.out)
            settings = live.reader.settings
            focus_m = board_distance_m(live.reader.lens.calibration)
            if focus_m is not None and is_camera(options.camera):
                print_line(f"focus: fixed at the board's distance, {focus_m:.2f} m")
            # From the start of the steady moment the last event was read at: earlier frames
            # may still show the hand that made that move, and a first reading with an arm
            # in view makes the arm's going look like another coming. (The first frame is
            # searched for the board at once.)
            open_camera = open_camera or camera_opener(
                options, live.resumed_at_s, rewind_s=settings.stabiliser.settle_s,
                focus_m=focus_m)
            feed = None if spectators is None else BoardFeed(
                spectators, board_name, live.referee.match, headers=live.recorder.headers)
            referee_frames(table, options, signals, open_camera, print_line=print_line,
                           clock=clock, sleep=sleep, feed=feed)
        except Stopped as stop:
            print_line(f"stopped by {stop}: " + (
                f"{len(table.live.referee.match.moves)} plies in {table.out}" if table is not None
                else "before a game began"))
        finally:
            if ticker is not None:
                ticker.close()
            if own_signals and signals is not None:
                signals.close()
    return 0


def referee_frames(table: Table, options: LiveOptions, signals: Signals,
                   open_camera: Callable[[], FrameSource], *, print_line: Callable[[str], None],
                   clock: Clock, sleep: Callable[[float], None], feed: BoardFeed | None = None
                   ) -> None:
    """The frame loop: every frame to the referee, every event to the log, then the players
    (and the spectators, through `feed`); the button's presses to the game at the table."""
    if feed is not None:
        signals = SpectatedSignals(signals, feed)
        feed.spectators.publish(feed.view())
    loop, storage = _seated(table.live, signals, print_line, feed)
    referee = table.live.referee
    if table.live.resumed_at_s is not None:
        print_line(f"resuming after {len(referee.match.moves)} plies: set up the logged position")
        print_line(referee.game.diagram(referee.match.position))
    camera = is_camera(options.camera)
    pace = PaceWatch(print_line, clock)
    try:
        for frame in watched_frames(open_camera, signals, clock=clock, sleep=sleep,
                                    wait_at_start=camera, give_up_s=options.camera_wait_s,
                                    time_offset_s=(table.live.resumed_at_s or 0.0) if camera else 0.0):
            loop.feed(frame.frame_bgr, frame.index, frame.timestamp_s)
            for action in signals.take_actions():
                if action is ButtonAction.NEW_GAME:
                    loop, storage = _new_game(table, loop, options, signals, print_line, feed)
                else:
                    on_button(action, loop, frame.index, frame.timestamp_s)
            storage.retry(clock())
            pace.frame()
        print_line(f"the footage ended: {len(table.live.referee.match.moves)} plies in {table.out}")
    finally:
        loop.finish()
    storage.check()  # a log that caught up only at the end: the all-clear


def _seated(live: LiveGame, signals: Signals, print_line: Callable[[str], None],
            feed: BoardFeed | None) -> tuple[GameLoop, StorageWatch]:
    """The game loop of `live`, its events announced to the players, and its disk watch."""
    referee = live.referee
    storage = StorageWatch(live.recorder, signals, print_line)

    def announce(event: Event) -> None:
        print_line(event.line())
        if event.kind in (EventKind.ACCEPTED, EventKind.TAKE_BACK, EventKind.STARTED):
            print_line(referee.game.diagram(referee.match.position))
        for cue, player in cues_for(event, referee.match):
            signals.show(cue, time.monotonic(), player=player)
        storage.check()  # after the event's own cues: its tune would cut the alarm short

    loop = GameLoop(live.reader, referee, recorder=live.recorder,
                    listeners=(announce,) if feed is None else (announce, feed.on_event),
                    watchers=() if feed is None else (feed.on_frame,))
    return loop, storage


def _new_game(table: Table, loop: GameLoop, options: LiveOptions, signals: Signals,
              print_line: Callable[[str], None], feed: BoardFeed | None
              ) -> tuple[GameLoop, StorageWatch]:
    """The button held: the game at the table ends as it stands (record and report
    written), and a new one is logged in the next free folder, the board found afresh."""
    loop.finish()
    print_line(f"game ended by the button: {len(table.live.referee.match.moves)} plies in {table.out}")
    table.out = table.next_out()
    table.live = start_referee(replace(options, out=table.out, resume=False), print_line)
    print_line(f"new game: logged in {table.out}; set up the board")
    signals.show(Cue.NEW_GAME, time.monotonic())
    if feed is not None:
        feed.new_game(table.live.referee.match, table.live.recorder.headers)
    return _seated(table.live, signals, print_line, feed)


class PaceWatch:
    """Says when the referee cannot keep up: fewer than `min_fps` frames read a second (of
    the monotonic clock) over `window_s`. A camera then drops the frames that were not taken
    in time (footage is delivered late instead): a move is read later, and below some 2
    frames a second a board still for the half second it must settle is barely seen (the
    committed game was read exactly at 2.6 frames a second: benchmarks/faults.md). Said once
    when it starts, and once when it is over."""

    def __init__(self, print_line: Callable[[str], None], clock: Clock, *,
                 min_fps: float = 5.0, window_s: float = 10.0) -> None:
        self.print_line, self.clock = print_line, clock
        self.min_fps, self.window_s = min_fps, window_s
        self.behind = False
        self._since: float | None = None
        self._frames = 0

    def frame(self) -> None:
        now = self.clock()
        if self._since is None:
            self._since = now
            return
        self._frames += 1
        elapsed = now - self._since
        if elapsed < self.window_s:
            return
        fps = self._frames / elapsed
        self._since, self._frames = now, 0
        if fps < self.min_fps and not self.behind:
            self.behind = True
            self.print_line(f"the referee cannot keep up: {fps:.1f} frames a second read "
                            f"(fewer than {self.min_fps:g}): moves are read late, from fewer "
                            "pictures; is another program using the processor?")
            log.warning("falling behind: %.1f frames a second", fps)
        elif fps >= self.min_fps and self.behind:
            self.behind = False
            self.print_line(f"the referee keeps up again: {fps:.1f} frames a second")


class StorageWatch:
    """Tells the players and the journal when the game's files cannot be written (a full
    disk, a file system turned read-only) and when they are again. The recorder holds what
    the disk refuses; it is tried again at each event and every `retry_s` between them."""

    def __init__(self, recorder: Recorder, signals: Signals, print_line: Callable[[str], None],
                 *, retry_s: float = 2.0) -> None:
        self.recorder, self.signals, self.print_line = recorder, signals, print_line
        self.retry_s = retry_s
        self.failing = False
        self._tried_at: float | None = None

    def check(self) -> None:
        """After an event: the alarm again while the disk still refuses the game."""
        trouble = self.recorder.trouble
        if trouble is not None:
            if not self.failing:
                self.print_line(f"cannot write the game in {self.recorder.log_path.parent} "
                                f"({trouble}): refereeing on, {self.recorder.behind} writes "
                                "held until the disk takes them")
            self.failing = True
            self.signals.show(Cue.LOG_FAILED, time.monotonic())
        elif self.failing:
            self.failing = False
            self.print_line(f"the game is written again in {self.recorder.log_path.parent}: "
                            "nothing lost")
            self.signals.show(Cue.LOG_BACK, time.monotonic())

    def retry(self, now: float) -> None:
        """Between events: try the disk again every `retry_s`."""
        if not self.failing:
            return
        if self._tried_at is not None and now - self._tried_at < self.retry_s:
            return
        self._tried_at = now
        if self.recorder.catch_up():
            self.check()


def on_button(action: ButtonAction, loop: GameLoop, frame_index: int, time_s: float) -> None:
    """The button's double press takes the last move back by hand (the board must then show
    the position before it, which the referee checks as usual); a short press vouches for
    the board the referee could not read a ply off (`Referee.confirm`). (The long hold, a new
    game, is the frame loop's: `_new_game`.)"""
    if action is ButtonAction.TAKE_BACK:
        loop.emit_all(loop.referee.take_back(frame_index, time_s), None)
    elif action is ButtonAction.CONFIRM:
        loop.emit_all(loop.referee.confirm(frame_index, time_s), None)
