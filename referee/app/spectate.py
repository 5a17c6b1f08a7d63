"""What spectators see of the boards: each board's state and what happens on it, for the web
view (`web.py`) and the tournament broadcast (`mqtt.py`).

A refereed board's `BoardFeed` turns the referee's events, cues and camera frames into
`BoardView`s, `Happening`s and small camera pictures in a `Spectators` hub; the hub hands each
update to its subscribers. Everything here runs in the referee's thread, so a subscriber must
only queue what it is given, and pictures are cut down a few times a second at most: the
referee never waits for a spectator."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Any

import cv2
import numpy as np

from referee.app.diagrams import board_svg, score_text
from referee.app.events import Event, EventKind
from referee.calibration.undistort import Frame, pixels
from referee.hardware.button import ButtonAction
from referee.hardware.cues import Cue
from referee.hardware.signals import Signals
from referee.rules.core import Color, Game, Match
from referee.rules.records import format_record
from referee.vision.pose import BoardPose


@dataclass(frozen=True)
class BoardView:
    """One board as spectators see it after its latest event."""

    board: str  # the board's name in the tournament (its MQTT topic level)
    game: str  # the game's registry name, e.g. `rinne`
    title: str  # e.g. `Rinne (dice)`
    players: tuple[str, str]
    ply: int  # plies played
    turn: str | None  # the player to move; None before the start and once the game is over
    last_move: str | None  # the last ply in the designer's notation, numbered
    diagram_svg: str
    score: str  # Renaissance's score; "" for the other games
    record: str  # the record file so far
    result: str  # e.g. `White wins`; "" while the game goes on
    status: str  # the latest thing the players were told, in their words
    time_s: float  # the game's clock at the latest event

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BoardView:
        return cls(**{**data, "players": tuple(data["players"])})


@dataclass(frozen=True)
class Happening:
    """An event of the referee, or a cue of the hardware (camera lost, disk full), in words."""

    board: str
    kind: str  # an `EventKind` or `Cue` name
    text: str  # a sentence for a player
    time_s: float
    ply: int
    move: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Happening:
        return cls(**data)


Update = BoardView | Happening
Subscriber = Callable[[Update], None]


@dataclass(frozen=True)
class Picture:
    """A small camera picture of a board, the found grid drawn on it."""

    image_bgr: np.ndarray
    time_s: float


class Spectators:
    """The boards' latest views, their recent happenings and camera pictures, and who is
    told of each update. Thread-safe: the referee writes, servers read."""

    def __init__(self, history: int = 100) -> None:
        self._lock = threading.Lock()
        self._views: dict[str, BoardView] = {}
        self._happenings: dict[str, deque[Happening]] = {}
        self._pictures: dict[str, Picture] = {}
        self._subscribers: list[Subscriber] = []
        self._history = history

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """`subscriber` is called with every update from now on, in the publisher's thread;
        returns the call that unsubscribes it."""
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)
        return unsubscribe

    def publish(self, update: Update) -> None:
        with self._lock:
            if isinstance(update, BoardView):
                self._views[update.board] = update
            else:
                self._happenings.setdefault(
                    update.board, deque(maxlen=self._history)).append(update)
            subscribers = tuple(self._subscribers)
        for subscriber in subscribers:
            subscriber(update)

    def views(self) -> dict[str, BoardView]:
        with self._lock:
            return dict(self._views)

    def happenings(self, board: str) -> list[Happening]:
        with self._lock:
            return list(self._happenings.get(board, ()))

    def show_picture(self, board: str, picture: Picture) -> None:
        with self._lock:
            self._pictures[board] = picture

    def picture(self, board: str) -> Picture | None:
        with self._lock:
            return self._pictures.get(board)


class BoardFeed:
    """One refereed board into a `Spectators` hub: `on_event` is a game loop's listener,
    `on_frame` its frame watcher, `on_cue` the signals' tee."""

    def __init__(self, spectators: Spectators, board: str, match: Match[Any, Any], *,
                 headers: dict[str, str] | None = None, picture_fps: float = 4.0,
                 picture_width: int = 320, clock: Callable[[], float] = time.monotonic) -> None:
        self.spectators, self.board, self.match = spectators, board, match
        self.headers = dict(headers or {})
        self.picture_width = picture_width
        self._picture_every_s = 1.0 / picture_fps
        self._pictured_at: float | None = None
        self._clock = clock
        self._status = "set up the board"
        self._time_s = 0.0

    def on_event(self, event: Event) -> None:
        self._status, self._time_s = event_words(event, self.match), event.time_s
        self.spectators.publish(Happening(self.board, event.kind.name, self._status,
                                          event.time_s, event.ply, event.move))
        self.spectators.publish(self.view())

    def new_game(self, match: Match[Any, Any], headers: dict[str, str]) -> None:
        """A new game at the same board (the button held): shown from its set-up."""
        self.match, self.headers = match, dict(headers)
        self._status, self._time_s = "set up the board", 0.0
        self.spectators.publish(self.view())

    def on_cue(self, cue: Cue, player: Color | None = None) -> None:
        """The hardware's own cues that no event carries: the camera and the disk."""
        if cue in _HARDWARE_CUES:
            self.spectators.publish(Happening(self.board, cue.name, cue.value.capitalize(),
                                              self._time_s, len(self.match.moves)))

    def on_frame(self, frame_bgr: Frame, pose: BoardPose | None, time_s: float) -> None:
        """A few times a second, a small copy of the frame with the found grid on it."""
        now = self._clock()
        if self._pictured_at is not None and now - self._pictured_at < self._picture_every_s:
            return
        self._pictured_at = now
        self.spectators.show_picture(self.board, Picture(
            small_picture(pixels(frame_bgr), pose, self.picture_width), time_s))

    def view(self) -> BoardView:
        match = self.match
        game: Game[Any, Any] = match.game
        names = game.player_names
        position, moves = match.position, match.moves
        last = None
        if moves:
            ply = len(moves)
            last = f"{(ply + 1) // 2}{'.' if ply % 2 else '...'} " \
                   f"{game.move_text(match.positions[-2], moves[-1])}"
        over = match.outcome is not None
        turn = None if over else names[position.turn]
        return BoardView(
            self.board, game.name, f"{game.title} ({game.variant})",
            (self.headers.get("White", names[0]), self.headers.get("Black", names[1])),
            len(moves), turn, last, board_svg(game, position, moves[-1] if moves else None),
            score_text(game, position), format_record(match, self.headers),
            match.outcome.result(names) if match.outcome is not None else "", self._status,
            self._time_s)


_HARDWARE_CUES = frozenset({Cue.CAMERA_LOST, Cue.NO_PICTURE, Cue.CAMERA_BACK, Cue.LOG_FAILED,
                            Cue.LOG_BACK})


def event_words(event: Event, match: Match[Any, Any]) -> str:
    """The event as a sentence for the players."""
    names = match.game.player_names
    if event.kind is EventKind.ACCEPTED and event.ply >= 1:
        mover = names[match.positions[min(event.ply - 1, len(match.positions) - 1)].turn]
        text = f"{mover} played {event.move}"
    elif event.kind is EventKind.GAME_OVER and match.outcome is not None:
        text = f"game over: {match.outcome.result(names)}"
    else:
        text = event.kind.value + (f" {event.move}" if event.move else "")
    return text[0].upper() + text[1:] + (f" ({event.detail})" if event.detail else "")


def small_picture(frame_bgr: np.ndarray, pose: BoardPose | None, width: int) -> np.ndarray:
    """`frame_bgr` cut down to `width` pixels across, the grid of `pose` drawn in green."""
    scale = width / frame_bgr.shape[1]
    small = cv2.resize(frame_bgr, (width, max(1, round(frame_bgr.shape[0] * scale))),
                       interpolation=cv2.INTER_AREA)
    if pose is None:
        return small
    h = pose.h
    lines = [((f, 0.0), (f, float(pose.ranks))) for f in range(pose.files + 1)] + \
            [((0.0, r), (float(pose.files), r)) for r in range(pose.ranks + 1)]
    ends = np.array(lines, dtype=np.float64).reshape(-1, 1, 2)
    pixels = cv2.perspectiveTransform(ends, h).reshape(-1, 2, 2) * scale
    for start, end in pixels:
        cv2.line(small, tuple(int(v) for v in np.round(start)),
                 tuple(int(v) for v in np.round(end)), (60, 220, 60), 1, cv2.LINE_AA)
    return small


class SpectatedSignals:
    """The players' signals, their camera and disk cues also told to a `BoardFeed`."""

    def __init__(self, signals: Signals, feed: BoardFeed) -> None:
        self.signals, self.feed = signals, feed

    def show(self, cue: Cue, now: float, *, player: Color | None = None) -> None:
        self.signals.show(cue, now, player=player)
        self.feed.on_cue(cue, player)

    def tick(self, now: float) -> None:
        self.signals.tick(now)

    def take_actions(self) -> list[ButtonAction]:
        return self.signals.take_actions()

    def close(self) -> None:
        self.signals.close()

    def __enter__(self) -> SpectatedSignals:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()
