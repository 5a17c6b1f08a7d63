"""`referee live`: the referee on a live camera, with lights, buzzer and button.

Every event is in the log before the players hear of it; after a crash or a pulled plug,
`--resume` rebuilds the game from the log and waits until the board shows the logged
position again before it goes on. A log is never overwritten: starting a new game where one
is logged needs `--resume` or another `--out`."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.announce import cues_for
from referee.calibrated import files_for, load_calibration
from referee.errors import RecordError
from referee.events import Event, EventKind
from referee.hardware.button import ButtonAction
from referee.hardware.signals import Signals, Ticker, open_signals
from referee.hardware.sources import open_source
from referee.hardware.watch import watched_frames
from referee.pipeline import BoardReader, Session, board_referee, camera_game
from referee.record import Recorder, load_log, match_from_log
from referee.referee import Referee
from referee.rules.core import Match
from referee.rules.rinne import RinneRules

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveOptions:
    game: str
    camera: str = "pi"
    pins: str | None = None
    pieces: str = "dice"
    out: Path = Path("game")
    resume: bool = False
    model: str | None = None
    calibration: str | None = None  # a camera file (default for pi: the Pi Camera Module 3's)
    board: str | None = None  # a board profile from `referee calibrate board`


def resumed_match(out: Path, game: RinneRules) -> Match[Any, Any]:
    """The game as logged in `out`, checked to be the same game."""
    logged = load_log(out / "game.jsonl")
    if logged.game.name != game.name:
        raise RecordError(f"{out / 'game.jsonl'} is a game of {logged.game.name}, not {game.name}")
    if logged.truncated_tail:
        log.warning("the log's last line was cut off (power loss while writing it): ignored")
    return match_from_log(logged)


def start_referee(options: LiveOptions) -> tuple[Referee, Recorder, BoardReader]:
    game = camera_game(options.game)
    calibration = load_calibration(files_for(options.camera, options.calibration, options.board),
                                   game)
    # A new game where one is logged is refused by the recorder (made before anything runs).
    match = resumed_match(options.out, game) if options.resume else Match(game)
    referee, reader = board_referee(game, options.pieces, model=options.model, match=match,
                                    calibration=calibration)
    recorder = Recorder(options.out, game, {}, resume=options.resume)
    return referee, recorder, reader


def run_live(options: LiveOptions, *, print_line: Callable[[str], None] = print,
             signals: Signals | None = None) -> int:
    referee, recorder, reader = start_referee(options)
    names = referee.game.player_names
    own_signals = signals is None
    signals = signals or open_signals(options.pins, names=names)
    ticker = Ticker(signals) if own_signals else None

    def announce(event: Event) -> None:
        print_line(event.line())
        if event.kind in (EventKind.ACCEPTED, EventKind.TAKE_BACK, EventKind.STARTED):
            print_line(referee.game.diagram(referee.match.position))
        for cue, player in cues_for(event, referee.match):
            signals.show(cue, time.monotonic(), player=player)

    session = Session(reader, referee, recorder=recorder, listeners=(announce,))
    if options.resume:
        print_line(f"resuming after {len(referee.match.moves)} plies: set up the logged position")
        print_line(referee.game.diagram(referee.match.position))
    try:
        for frame in watched_frames(lambda: open_source(options.camera), signals):
            session.feed(frame.frame_bgr, frame.index, frame.timestamp_s)
            for action in signals.take_actions():
                _button(action, session, frame.index, frame.timestamp_s)
    finally:
        session.finish()
        if ticker is not None:
            ticker.close()
        if own_signals:
            signals.close()
    return 0


def _button(action: ButtonAction, session: Session, frame_index: int, time_s: float) -> None:
    """The button's double press takes the last move back by hand (the board must then show
    the position before it, which the referee checks as usual)."""
    if action is ButtonAction.TAKE_BACK:
        for event in session.referee.take_back(frame_index, time_s):
            session.emit(event, None)
    else:
        log.info("button: %s (not used yet)", action.value)
