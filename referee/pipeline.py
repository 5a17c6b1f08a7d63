"""The frame loop: frames → board pose → stillness → reading → referee → events.

`BoardReader` is the vision side: it keeps the board's pose (tracked cheaply, re-found when
lost), gives the stabiliser a small top-down grey view, and turns a frame into a `Reading`
by cropping each square where a piece's top face shows and classifying the crops in one
batch. `Session` joins it to the referee, the recorder and the signals, one frame at a time,
so the same code serves a live camera and recorded footage."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from referee.errors import NoBoardError, RefereeError
from referee.events import Event, EventKind
from referee.record import Recorder
from referee.referee import Phase, Referee
from referee.rules import find_game
from referee.rules.core import Match
from referee.rules.rinne import RinneRules
from referee.tracking.inference import PIECE_SETS, Verdict
from referee.tracking.reading import Reading
from referee.tracking.stabiliser import Stabiliser, StabiliserSettings, Stillness
from referee.vision.classifier import Classifier
from referee.vision.crops import CropSpec, crop_squares
from referee.vision.localise import find_board, track
from referee.vision.pose import BoardPose
from referee.vision.settings import VisionSettings, default_settings
from referee.vision.warp import top_face_quads, warp_board

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PipelineSettings:
    stabiliser: StabiliserSettings = field(default_factory=StabiliserSettings)
    view_px: int = 12  # pixels a square in the stillness view
    view_margin: int = 1  # squares of surroundings around the grid: arms cross them
    piece_height: float = 0.7  # height of a piece's top face, in squares (a die ~0.7)
    refind_every_s: float = 1.0  # how often to search for a board that is not in view
    no_board_after_s: float = 3.0  # tell the players after this long without a board


class BoardReader:
    """Vision for one board size and one classifier."""

    def __init__(self, files: int, ranks: int, classifier: Classifier, *,
                 settings: PipelineSettings | None = None,
                 vision: VisionSettings | None = None) -> None:
        self.files, self.ranks = files, ranks
        self.classifier = classifier
        self.settings = settings or PipelineSettings()
        self.vision = vision or default_settings()
        self.crop_spec = classifier.card.crop
        # The board finder names the corners its own way, and the tracker follows that naming:
        # which corner is a1 is kept apart, as quarter turns from it.
        self._found: BoardPose | None = None
        self.turns = 0
        self.moved = False  # the last search found the board elsewhere (a bump)
        self._last_search_s = -np.inf

    def locate(self, frame_bgr: np.ndarray, time_s: float) -> tuple[BoardPose | None, bool]:
        """The board's pose, and whether this frame confirmed it. Tracking fails whenever a
        hand covers the grid's lines, so the last pose stands (unconfirmed) until a search,
        at most once every `refind_every_s` since it costs far more, finds the board again."""
        if self._found is not None:
            tracked = track(frame_bgr, self._found, settings=self.vision.track)
            if tracked is not None:
                self._found = tracked
                return self.pose, True
        if time_s - self._last_search_s < self.settings.refind_every_s:
            return self.pose, False
        self._last_search_s = time_s
        try:
            found = find_board(frame_bgr, self.files, self.ranks, settings=self.vision.localise)
        except NoBoardError:
            return self.pose, False
        before = self.pose
        self._found = found
        if before is not None:  # a1 stays the corner nearest where it was
            self.moved = _shift(found, before) > 0.25
            self.turns = min(self.turn_options(), key=lambda k: float(np.linalg.norm(
                found.rotated(k).corners_array[0] - before.corners_array[0])))
        return self.pose, True

    @property
    def piece_height(self) -> float:
        """Where the crops are cut: the model's own height if its card names one (it was
        trained on crops cut there), else the settings' (a die's)."""
        card_height = self.classifier.card.piece_height
        return self.settings.piece_height if card_height is None else card_height

    @property
    def pose(self) -> BoardPose | None:
        return None if self._found is None else self._found.rotated(self.turns)

    def turn_options(self) -> tuple[int, ...]:
        """The quarter turns that name the corners differently: 4 on a square board, else 2."""
        return (0, 1, 2, 3) if self.files == self.ranks else (0, 2)

    def turned(self, turns: int) -> BoardPose:
        assert self._found is not None
        return self._found.rotated(turns)

    def view(self, frame_bgr: np.ndarray, pose: BoardPose) -> np.ndarray:
        """A small top-down grey view of the board and its margin, for the stillness check."""
        top = warp_board(frame_bgr, pose, self.settings.view_px, margin=self.settings.view_margin)
        return np.asarray(cv2.cvtColor(top, cv2.COLOR_BGR2GRAY))

    def read(self, frame_bgr: np.ndarray, pose: BoardPose, frame_index: int, time_s: float
             ) -> Reading:
        height, width = frame_bgr.shape[:2]
        quads = top_face_quads(pose, (width, height), height=self.piece_height,
                               default_focal=self.vision.crops.default_focal)
        crops = crop_squares(frame_bgr, list(quads.astype(np.float32)), self.crop_spec)
        probabilities = self.classifier.predict(crops)
        return Reading(self.classifier.labels, probabilities.astype(np.float64),
                       crop_colors(crops, self.crop_spec), frame_index, time_s)


def crop_colors(crops: np.ndarray, spec: CropSpec) -> np.ndarray:
    """Mean Lab colour of the middle of each crop (inside its square, away from the edges):
    a piece's body colour, which tells its owner."""
    border = round(spec.border + 0.25 * (spec.size - 2 * spec.border))
    middle = np.ascontiguousarray(crops[:, border:spec.size - border, border:spec.size - border])
    n, h, w, _ = middle.shape
    lab = cv2.cvtColor(middle.reshape(n * h, w, 3), cv2.COLOR_BGR2LAB).reshape(n, h * w, 3)
    # OpenCV's 8-bit Lab: L * 255/100, a + 128, b + 128.
    lab = lab.astype(np.float64) - np.array([0.0, 128.0, 128.0])
    lab[:, :, 0] *= 100.0 / 255.0
    return np.asarray(np.median(lab, axis=1))


class Session:
    """One game refereed from frames: feed every frame; events go to the recorder first (so a
    pulled plug loses nothing the players were told), then to the listeners."""

    def __init__(self, reader: BoardReader, referee: Referee, *,
                 recorder: Recorder | None = None,
                 listeners: tuple[Callable[[Event], None], ...] = (),
                 settings: PipelineSettings | None = None) -> None:
        self.reader = reader
        self.referee = referee
        self.recorder = recorder
        self.listeners = listeners
        self.settings = settings or reader.settings
        columns = 2 * self.settings.view_margin + reader.files
        rows = 2 * self.settings.view_margin + reader.ranks
        self.stabiliser = Stabiliser(columns, rows, self.settings.stabiliser)
        self.board_seen = False
        self._lost_since: float | None = 0.0
        self._told_no_board = False
        self.last_stillness: Stillness | None = None
        self._other_sides: tuple[int, ...] = ()  # other namings of the corners, as turns

    def feed(self, frame_bgr: np.ndarray, frame_index: int, time_s: float) -> list[Event]:
        # Where tracking loses the lines (a hand over them, a flicker) the board is taken to
        # be where it was: a real move of it shows as motion, and a search soon finds it.
        pose, _confirmed = self.reader.locate(frame_bgr, time_s)
        if pose is None:
            return self._no_board(frame_index, time_s)
        self.board_seen = True
        self._lost_since, self._told_no_board = None, False
        if self.reader.moved:  # bumped: the view changed, read the board afresh
            self.reader.moved = False
            self.stabiliser.forget_reading()
        stillness = self.stabiliser.update(self.reader.view(frame_bgr, pose), time_s)
        self.last_stillness = stillness
        if stillness is not Stillness.READ:
            return []
        events = self._judge(frame_bgr, pose, frame_index, time_s)
        self.stabiliser.mark_read()
        for event in events:
            self.emit(event, frame_bgr)
        return events

    def _judge(self, frame_bgr: np.ndarray, pose: BoardPose, frame_index: int, time_s: float
               ) -> list[Event]:
        referee = self.referee
        if referee.phase is Phase.SETUP:
            return self._set_up(frame_bgr, frame_index, time_s)
        reading = self.reader.read(frame_bgr, pose, frame_index, time_s)
        if self._other_sides and not referee.match.moves:
            reading = self._first_move_decides_sides(frame_bgr, reading)
        if referee.match.moves:
            self._other_sides = ()
        return referee.on_reading(reading)

    def _set_up(self, frame_bgr: np.ndarray, frame_index: int, time_s: float) -> list[Event]:
        """The start position decides which corner is a1. Where it looks the same from both
        sides (Rinne's does), the side whose pieces make the first move is the first
        player's: the other orientations are kept until then."""
        reader = self.reader
        readings = [(k, reader.read(frame_bgr, reader.turned(k), frame_index, time_s))
                    for k in reader.turn_options()]
        matching = [(k, r) for k, r in readings if self.referee.shows_setup(r)]
        if not matching:
            return self.referee.on_reading(readings[0][1])
        reader.turns = matching[0][0]
        self._other_sides = tuple(k for k, _ in matching[1:])
        return self.referee.on_reading(matching[0][1])

    def _first_move_decides_sides(self, frame_bgr: np.ndarray, reading: Reading) -> Reading:
        """Before the first move: if the board only makes sense seen from another side,
        name the corners from that side (and the colours' owners swap with it)."""
        referee, reader = self.referee, self.reader
        if referee.inspect(reading).verdict in (Verdict.MOVE, Verdict.NO_CHANGE):
            return reading
        assert referee.colors is not None
        for turns in self._other_sides:
            seen = reader.read(frame_bgr, reader.turned(turns), reading.frame_index,
                               reading.time_s)
            referee.colors = referee.colors.swapped()
            if referee.inspect(seen).verdict is Verdict.MOVE:
                log.info("the first move shows the first player sits on the other side")
                reader.turns = turns
                self._other_sides = ()
                return seen
            referee.colors = referee.colors.swapped()
        return reading

    def _no_board(self, frame_index: int, time_s: float) -> list[Event]:
        if self._lost_since is None:
            self._lost_since = time_s
        if self._told_no_board or time_s - self._lost_since < self.settings.no_board_after_s:
            return []
        self._told_no_board = True
        event = Event(EventKind.NO_BOARD, frame_index, round(time_s, 3),
                      len(self.referee.match.moves), detail="no board in view")
        self.emit(event, None)
        return [event]

    def emit(self, event: Event, frame_bgr: np.ndarray | None) -> None:
        if self.recorder is not None:
            self.recorder.write(event, self.referee.match, frame_bgr)
        for listener in self.listeners:
            listener(event)

    def finish(self) -> None:
        if self.recorder is not None:
            self.recorder.finish(self.referee.match)


def _shift(a: BoardPose, b: BoardPose) -> float:
    """How far apart two poses put the board's corners, in squares (either naming of them)."""
    side = max(a.square_size_px(), 1e-6)
    return min(float(np.linalg.norm(a.corners_array - o.corners_array, axis=1).max()) / side
               for o in b.orientations())


def camera_game(name: str) -> RinneRules:
    """The game `name`, if the camera can referee it yet (the Rinne family)."""
    game = find_game(name)
    if not isinstance(game, RinneRules):
        raise RefereeError(f"{game.name}: only the Rinne family can be refereed from a camera yet")
    return game


def board_referee(game: RinneRules, pieces: str, *, model: str | None = None,
                  match: Match[Any, Any] | None = None,
                  settings: PipelineSettings | None = None) -> tuple[Referee, BoardReader]:
    """The referee and the board reader for `game` played with the piece set `pieces`,
    reading with `model` or the piece set's own board model."""
    if pieces not in PIECE_SETS:
        raise RefereeError(f"unknown piece set {pieces!r}; known: {', '.join(sorted(PIECE_SETS))}")
    piece_set = PIECE_SETS[pieces]
    classifier = Classifier.load(model or piece_set.model)
    referee = Referee(game, piece_set, classifier.labels, match=match)
    reader = BoardReader(game.geometry.files, game.geometry.ranks, classifier, settings=settings)
    return referee, reader

