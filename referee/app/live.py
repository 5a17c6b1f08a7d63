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
through. A camera's times carry on from the last logged event's."""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.app.announce import cues_for
from referee.app.calibrated import BoardGame, Calibration, files_for, load_calibration
from referee.app.events import Event, EventKind
from referee.app.pipeline import BoardReader, GameLoop, board_referee, camera_game
from referee.app.record import GameLog, Recorder, load_log, match_from_log
from referee.app.state_machine import Referee
from referee.errors import RecordError, SourceError
from referee.hardware.button import ButtonAction
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


@dataclass(frozen=True)
class LiveGame:
    referee: Referee
    recorder: Recorder
    reader: BoardReader
    resumed_at_s: float | None  # the time of the last logged event; None: a new game


def logged_game(out: Path, game: BoardGame) -> GameLog | None:
    """The game logged in `out`, checked to be the same game; None when none is logged."""
    path = out / "game.jsonl"
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return None
    logged = load_log(path)
    if logged.game.name != game.name:
        raise RecordError(f"{path} is a game of {logged.game.name}, not {game.name}")
    return logged


def start_referee(options: LiveOptions, print_line: Callable[[str], None] = print) -> LiveGame:
    game = camera_game(options.game)
    calibration = load_calibration(files_for(options.camera, options.calibration, options.board),
                                   game)
    logged = logged_game(options.out, game) if options.resume else None
    if options.resume and logged is None:
        print_line(f"no game logged in {options.out}: a new game")
    # A new game where one is logged is refused by the recorder (made before anything runs).
    match: Match[Any, Any] = match_from_log(logged) if logged is not None else Match(game)
    referee, reader = board_referee(game, options.pieces, model=options.model, match=match,
                                    calibration=calibration)
    recorder = Recorder(options.out, game, {}, resume=logged is not None)
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
    return open_signals(options.pins, names=camera_game(options.game).player_names,
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


def run_live(options: LiveOptions, *, print_line: Callable[[str], None] = print,
             signals: Signals | None = None,
             open_camera: Callable[[], FrameSource] | None = None,
             clock: Clock = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> int:
    """Referee until the footage ends (a camera never does); 0 then. A camera gone for
    longer than `camera_wait_s` raises `CameraLost`, with the log kept. `open_camera`,
    `clock` and `sleep` stand in for the camera and the time in tests."""
    # What cannot work (footage options, the pin map, the pins) is refused before a game is
    # logged, so that the same command may be run again once it is put right.
    if open_camera is None:
        check_camera_options(options)
    own_signals = signals is None
    if signals is None:
        signals = live_signals(options, print_line)
    ticker = Ticker(signals) if own_signals else None
    try:
        live = start_referee(options, print_line)
        settings = live.reader.settings
        focus_m = board_distance_m(live.reader.lens.calibration)
        if focus_m is not None and is_camera(options.camera):
            print_line(f"focus: fixed at the board's distance, {focus_m:.2f} m")
        # From the start of the steady moment the last event was read at: earlier frames
        # may still show the hand that made that move, and a first reading with an arm in
        # view makes the arm's going look like another coming. (The first frame is searched
        # for the board at once.)
        open_camera = open_camera or camera_opener(
            options, live.resumed_at_s, rewind_s=settings.stabiliser.settle_s, focus_m=focus_m)
        referee_frames(live, options, signals, open_camera, print_line=print_line, clock=clock,
                       sleep=sleep)
    finally:
        if ticker is not None:
            ticker.close()
        if own_signals:
            signals.close()
    return 0


def referee_frames(live: LiveGame, options: LiveOptions, signals: Signals,
                   open_camera: Callable[[], FrameSource], *, print_line: Callable[[str], None],
                   clock: Clock, sleep: Callable[[float], None]) -> None:
    """The frame loop: every frame to the referee, every event to the log, then the players."""
    referee = live.referee

    def announce(event: Event) -> None:
        print_line(event.line())
        if event.kind in (EventKind.ACCEPTED, EventKind.TAKE_BACK, EventKind.STARTED):
            print_line(referee.game.diagram(referee.match.position))
        for cue, player in cues_for(event, referee.match):
            signals.show(cue, time.monotonic(), player=player)

    loop = GameLoop(live.reader, referee, recorder=live.recorder, listeners=(announce,))
    if live.resumed_at_s is not None:
        print_line(f"resuming after {len(referee.match.moves)} plies: set up the logged position")
        print_line(referee.game.diagram(referee.match.position))
    camera = is_camera(options.camera)
    try:
        for frame in watched_frames(open_camera, signals, clock=clock, sleep=sleep,
                                    wait_at_start=camera, give_up_s=options.camera_wait_s,
                                    time_offset_s=(live.resumed_at_s or 0.0) if camera else 0.0):
            loop.feed(frame.frame_bgr, frame.index, frame.timestamp_s)
            for action in signals.take_actions():
                _button(action, loop, frame.index, frame.timestamp_s)
        print_line(f"the footage ended: {len(referee.match.moves)} plies in {options.out}")
    finally:
        loop.finish()


def _button(action: ButtonAction, loop: GameLoop, frame_index: int, time_s: float) -> None:
    """The button's double press takes the last move back by hand (the board must then show
    the position before it, which the referee checks as usual)."""
    if action is ButtonAction.TAKE_BACK:
        for event in loop.referee.take_back(frame_index, time_s):
            loop.emit(event, None)
    else:
        log.info("button: %s (not used yet)", action.value)
