"""The frame loop: frames → board pose → stillness → reading → referee → events.

`BoardReader` is the vision side: it keeps the board's pose (tracked cheaply, re-found when
lost), gives the stabiliser a small top-down grey view, and turns a frame into a `Reading`
by cropping each square where a piece's top face shows and classifying the crops in one
batch. `GameLoop` joins it to the referee, the recorder and the signals, one frame at a time,
so the same code serves a live camera and recorded footage."""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.app.calibrated import Calibration, FrameLens, profile_lab, profile_pose, side_by_colours
from referee.app.events import Event, EventKind
from referee.app.record import Recorder
from referee.app.state_machine import Phase, Referee
from referee.calibration.undistort import Frame, LensImage, pixels
from referee.errors import NoBoardError, RefereeError
from referee.rules import game_with_ruleset
from referee.rules.core import Match
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import BLOCKED, Cover
from referee.rules.rinne import RinneRules
from referee.rules.zensu import ZensuRules
from referee.tracking.decoding import Decoder, Verdict
from referee.tracking.inference import PIECE_SETS, MoveInferer
from referee.tracking.reach import HandTrail, ReachSettings, StillSurroundings
from referee.tracking.reading import EMPTY, Reading
from referee.tracking.renaissance import RenaissanceDecoder
from referee.tracking.stabiliser import Stabiliser, StabiliserSettings, Stillness
from referee.tracking.zensu import ZensuDecoder
from referee.vision.aruco import ArucoLayout, MarkerFix, probe_aruco, search_aruco, track_aruco
from referee.vision.board_finder import find_board, find_board_and_lens
from referee.vision.board_tracker import refit, track
from referee.vision.change import square_changes
from referee.vision.classifier import Classifier
from referee.vision.corner_guesses import corner_network
from referee.vision.crops import CropSpec, grid_seam_crops, scaled_quads
from referee.vision.line_profiles import small_board
from referee.vision.monomino import MONOMINO_MODEL, second_opinion
from referee.vision.motion import Anchor, anchor, moved_by, shift_since
from referee.vision.pose import BoardPose
from referee.vision.seams import JOINED, SEAM_MODEL, SeamLook
from referee.vision.second_look import SecondLook, read_squares
from referee.vision.settings import VisionSettings, default_settings
from referee.vision.warp import top_face_quads, view_outside_frame, warp_board

log = logging.getLogger(__name__)

ZENSU_PIECES = "zensu"  # Zensū's own pieces, and the model that reads them
TILES = "tiles"  # Renaissance's tiles and markers, and the model that reads them
THUMBNAIL_STEP = 4  # through a lens, the thumbnail reads the frame shrunk 4 times each way


@dataclass(frozen=True)
class PipelineSettings:
    stabiliser: StabiliserSettings = field(default_factory=StabiliserSettings)
    view_px: int = 12  # pixels a square in the stillness view
    view_margin: int = 1  # squares of surroundings around the grid: arms cross them
    piece_height: float = 0.7  # height of a piece's top face, in squares (a die ~0.7)
    refind_every_s: float = 1.0  # how often to search for a board that is not in view
    # ... and for one not found yet: the players may start as soon as the referee does, and
    # a search refused on one frame (lines read bent on a board wood-on-wood) may pass on the next
    first_find_every_s: float = 0.2
    no_board_after_s: float = 3.0  # tell the players after this long without a board
    # A board profile's pose is only a guess, so tracking must confirm it more strictly:
    # its lines must stand out from the half-way lines by this much (a guess off by half
    # a square or more still finds lines, and the pieces' edges on its half-way lines)
    hint_min_contrast: float = 0.37
    # On 3x3 boards, while the image round the board moved less than `still_shift` squares
    # since the pose was taken (found, or settled at a reading), and the view still compares
    # (phase correlation peak `still_response` or more: no hand over it), the pose is that
    # one, slid with the image, not tracking's refit (vision/motion.py)
    still_shift: float = 0.1
    still_response: float = 0.5
    second_look: SecondLook = field(default_factory=SecondLook)  # at unsure squares
    # A square whose middle changed less than this (grey levels, `vision.change`) since the
    # board last showed the position, and whose best label is still its old one, is taken as
    # unchanged, to tell apart explanations the classifier scores alike
    # (`benchmarks/square_changes.md`)
    unchanged_below: float = 12.0
    # ... and a square whose middle changed by this much or more, and whose best label is no
    # longer its old one, as changed (no unchanged square measured so)
    changed_above: float = 30.0
    # While the image round the board is unchanged since it was last tracked (no cell of a
    # small grey thumbnail of it moved more than `hold_grey` levels beyond what all its cells
    # moved alike, a change of light), the pose stands without a fit: tracking is most of a
    # frame's time, and a still board is most frames. At least every `hold_frames` frames it
    # is tracked anyway (a drift too slow to see).
    hold_grey: float = 4.0
    hold_frames: int = 15
    # A board read as unreadable and still since is read again every `reread_s`, the readings
    # pooled (another frame's noise), up to `rereads` times: the last ply of a game has no
    # next move to stir the board.
    reread_s: float = 1.0
    rereads: int = 4
    # A hand the finer test of `tracking.reach` saw holds the reading back until it has been
    # gone this long: that test sees fingers leaving over the board's rim in one frame of two
    hand_gone_s: float = 0.3


class BoardReader:
    """Vision for one board size and one classifier."""

    def __init__(self, files: int, ranks: int, classifier: Classifier, *,
                 settings: PipelineSettings | None = None,
                 vision: VisionSettings | None = None,
                 calibration: Calibration | None = None,
                 monomino: Classifier | None = None, seams: Classifier | None = None,
                 blocked: tuple[int, ...] = ()) -> None:
        self.files, self.ranks = files, ranks
        # Squares of the board itself that no piece stands on (Renaissance's centre): read
        # as an empty square, such a square is read as blocked (`_as_blocked`).
        self.blocked = blocked
        self.classifier = classifier
        self.monomino = monomino  # Renaissance: asked again of squares bare or a monomino
        self.seams = seams  # Renaissance: asked of the seams where the decoder doubts a tiling
        # A reading's labels put "empty" first (the tiles model's start with "blocked").
        self.labels = tuple(sorted(classifier.labels, key=lambda label: label != EMPTY))
        self._columns = [classifier.labels.index(label) for label in self.labels]
        self.settings = settings or PipelineSettings()
        self.vision = vision or default_settings()
        self.crop_spec = classifier.card.crop
        finder = self.vision.localise
        networks = ((finder.corner_net, finder.corner_refiner) if small_board(files, ranks)
                    else (finder.corner_net_big,))
        for network in filter(None, networks):
            corner_network(network)  # a missing model is told now, not mid-game
        # The board finder names the corners its own way, and the tracker follows that naming:
        # which corner is a1 is kept apart, as quarter turns from it.
        self._found: BoardPose | None = None
        self.turns = 0
        self.moved = False  # the last search found the board elsewhere (a bump)
        self._last_search_s = -np.inf
        # The calibration files: the lens, and the board profile's pose (a guess until the
        # frame confirms it) and piece colours.
        calibration = calibration or Calibration()
        self.lens = FrameLens(calibration)
        self.profile = calibration.board
        self.piece_colours = None if self.profile is None else profile_lab(self.profile)
        self._hint: BoardPose | None = None
        self._confirmed = False
        # 3x3 boards: the pose found or settled, and its frame, to hold the pose by (`_steadied`)
        self._steadies = small_board(files, ranks)
        self._anchor: Anchor | None = None
        # The thumbnail round the board when it was last tracked, and frames held on it since
        self._look: tuple[np.ndarray, int] | None = None
        # This frame's thumbnail and its box (whole pixels): a pose tracked in it mostly
        # leaves the box as it was, so the thumbnail `_held` made is the one to hold it by
        self._thumb: tuple[tuple[int, int, int, int], np.ndarray] | None = None
        # A board with ArUco markers (`referee board`): while `_fix` is set the pose came from
        # them, and `_found` names the corners as they do (a1 where marker ids[0] is)
        aruco = self.vision.aruco
        self.markers = ArucoLayout.for_board(files, ranks, aruco).markers() if aruco.search else None
        self._fix: MarkerFix | None = None
        self._bend: float | None = None  # the lens's bend the markers showed (a camera's own)
        self._last_probe_s = -np.inf
        _ready_for_readings()

    def look(self, frame_bgr: np.ndarray, time_s: float
             ) -> tuple[Frame, BoardPose | None, bool]:
        """`locate` on the frame undistorted where the lens is known: the frame to read (while
        the board is tracked, read through the lens, `_through_lens`, or its neighbourhood
        undistorted), the pose, and whether it is confirmed."""
        around = self._found if self._confirmed else None
        lensed = None if around is None else self._through_lens(frame_bgr)
        seen: Frame = self.lens.undistort(frame_bgr, around) if lensed is None else lensed
        whole = seen if around is None else None

        def whole_frame() -> np.ndarray:  # a search looks at the whole frame
            nonlocal whole
            whole = self.lens.undistort(frame_bgr, None)
            return whole

        if self.profile is not None and self._found is None and self._hint is None:
            self._hint = profile_pose(self.profile, self.lens)
        lens = self.lens
        pose, self._confirmed = self.locate(seen, time_s, whole_frame=whole_frame)
        if self.lens is not lens:  # a lens estimated from the board's lines: the pose is undistorted
            whole = self.lens.undistort(frame_bgr, None)
        return (seen if whole is None else whole), pose, self._confirmed

    def _through_lens(self, frame_bgr: np.ndarray) -> LensImage | None:
        """The frame read through the lens without undistorting it, where there is a lens
        and only lines and small views are read from most frames: a board of more than 3x3
        squares (3x3 boards hold their pose by the image itself) not followed by its markers."""
        height, width = frame_bgr.shape[:2]
        undistorter = self.lens.at(width, height)
        if undistorter is None or undistorter.is_identity or self._steadies or \
                self._fix is not None:
            return None
        return LensImage.of(frame_bgr, undistorter)

    def locate(self, frame_bgr: Frame, time_s: float, *,
               whole_frame: Callable[[], np.ndarray] | None = None
               ) -> tuple[BoardPose | None, bool]:
        """The board's pose, and whether this frame confirmed it. Tracking fails whenever a
        hand covers the grid's lines, so the last pose stands (unconfirmed) until a search,
        at most once every `refind_every_s` since it costs far more, finds the board again
        (every `first_find_every_s` until it is first found).
        A board profile's pose is tried first, and kept only if tracking confirms it."""
        self._thumb = None
        if self._found is None and self._hint is not None:
            strict = replace(self.vision.track, min_contrast=self.settings.hint_min_contrast)
            self._found = track(frame_bgr, self._hint, settings=strict)
            if self._found is not None:
                self._hint = None
                self._anchor = self._anchor_at(frame_bgr, self._found)
                return self.pose, True
        if self._found is not None:
            if self._held(frame_bgr):
                return self.pose, True
            if self._by_markers(frame_bgr, time_s):
                return self.pose, True
            tracked = track(frame_bgr, self._found, settings=self.vision.track)
            if tracked is not None:
                self._found = self._steadied(frame_bgr, tracked)
                self._look = (self._thumbnail(frame_bgr, self._found), 0)
                return self.pose, True
            self._look = None
        every = self.settings.refind_every_s if self._found is not None else \
            self.settings.first_find_every_s
        if time_s - self._last_search_s < every:
            return self.pose, False
        self._last_search_s = time_s
        searched = pixels(frame_bgr) if whole_frame is None else whole_frame()
        fix = None if self.markers is None else search_aruco(searched, self.markers, bend=self._bend,
                                                             settings=self.vision.aruco)
        try:
            if fix is not None:
                found = fix.pose
            elif whole_frame is not None and self.lens.camera_matrix is None:  # frames as taken
                found, frame_bgr = self._with_own_lens(searched)
            else:
                found = find_board(searched, self.files, self.ranks, settings=self.vision.localise,
                                   camera_matrix=self.lens.camera_matrix)
        except NoBoardError:
            return self.pose, False
        self._found_anew(frame_bgr, found, fix)
        return self.pose, True

    def _with_own_lens(self, frame_bgr: np.ndarray) -> tuple[BoardPose, np.ndarray]:
        """The board in a frame as taken (no camera file); where its lines bend, the lens the
        finder estimated from them is adopted as a camera file's would be (`look` undistorts
        the frames through it from now on): the pose in the frame undistorted, and that frame."""
        found = find_board_and_lens(frame_bgr, self.files, self.ranks, settings=self.vision.localise)
        if found.lens is None or found.undistorted is None:
            return found.pose, frame_bgr
        log.info("the board's lines bend: the frames are undistorted through the lens estimated "
                 "from them (k1 %.3f); a camera file (`referee calibrate camera`) fits it better",
                 found.lens.dist_coeffs[0])
        self.lens = FrameLens(replace(self.lens.calibration, camera=found.lens))
        return found.undistorted, self.lens.undistort(frame_bgr, None)

    def _found_anew(self, frame_bgr: Frame, found: BoardPose, fix: MarkerFix | None) -> None:
        """A search found the board (by its markers where `fix`): a1 stays the corner nearest
        where it was (or the profile put it); with no pose before, the markers name it."""
        before = self.pose if self.pose is not None else self._hint
        self._found, self._look, self._fix = found, None, fix
        self._bend = self._bend if fix is None or fix.bend is None else fix.bend
        self._anchor = self._anchor_at(frame_bgr, found)
        if before is None:
            self.turns = 0 if fix is not None else self.turns
            return
        self.moved = self._hint is None and _shift(found, before) > 0.25
        self._hint = None
        self.turns = min(self._every_turn(), key=lambda k: float(np.linalg.norm(
            found.rotated(k).corners_array[0] - before.corners_array[0])))

    def _by_markers(self, frame_bgr: Frame, time_s: float) -> bool:
        """Follow the board by its markers where it was found by them (in small regions
        round where they were), or look for them round a board found otherwise at most once
        every `refind_every_s` (a board profile's pose, markers hidden at the search): the
        pose from them where they show, else the line tracker's."""
        if self.markers is None or self._found is None:
            return False
        if self._fix is not None:
            fix = track_aruco(pixels(frame_bgr), self._fix, self.markers, near=self._found,
                              settings=self.vision.aruco)
        elif time_s - self._last_probe_s >= self.settings.refind_every_s:
            self._last_probe_s = time_s
            fix = probe_aruco(pixels(frame_bgr), self._found, self.markers, bend=self._bend,
                              settings=self.vision.aruco)
            if fix is not None:  # the markers' naming from now on, a1 kept where it was
                self._found_anew(frame_bgr, fix.pose, fix)
        else:
            return False
        if fix is None:
            return False
        self.moved = self.moved or _shift(fix.pose, self._found) > 0.25  # bumped
        self._found, self._fix = fix.pose, fix
        self._look = (self._thumbnail(frame_bgr, fix.pose), 0)
        return True

    def _held(self, frame_bgr: Frame) -> bool:
        """Whether the image round the board is as it was when last tracked (and not for
        too long), so that the pose stands."""
        if self._look is None or self._found is None:
            return False
        before, held = self._look
        if held >= self.settings.hold_frames:
            return False
        now = self._thumbnail(frame_bgr, self._found)
        if now.shape != before.shape:
            return False
        change = now - before  # (a change of light changes every cell alike: no motion)
        if np.abs(change - np.median(change)).max() > self.settings.hold_grey:
            return False
        self._look = (before, held + 1)
        return True

    def _thumbnail(self, frame_bgr: Frame, pose: BoardPose) -> np.ndarray:
        """The thumbnail round the board at `pose` in the frame `locate` is at."""
        box = region_box(frame_bgr, pose, margin=1.0)
        if self._thumb is None or self._thumb[0] != box:
            self._thumb = (box, _thumbnail(frame_bgr, box))
        return self._thumb[1]

    def settle(self, frame_bgr: Frame) -> BoardPose | None:
        """The board is still and clear: refit its pose in full (board_tracker.refit), which
        tracking, following rigid moves only, does not; by its markers where it has them."""
        if self._fix is not None and self.markers is not None:
            fix = track_aruco(pixels(frame_bgr), self._fix, self.markers, near=self._found,
                              settings=self.vision.aruco)
            if fix is not None:
                self._found, self._fix, self._look = fix.pose, fix, None
                self._anchor = self._anchor_at(frame_bgr, fix.pose)
                return self.pose
        if self._found is not None:
            refitted = refit(frame_bgr, self._found, settings=self.vision.track)
            # On a 3x3 board the pose already follows the image (`_steadied`): a refit that
            # moves it further went to a fixed point of the fit, off the grid (game 760000:
            # 0.2 square out)
            if not self._steadies or _shift(refitted, self._found) <= self.settings.still_shift:
                self._found, self._look = refitted, None
            self._anchor = self._anchor_at(frame_bgr, self._found)
        return self.pose

    def _steadied(self, frame_bgr: Frame, tracked: BoardPose) -> BoardPose:
        """On a 3x3 board, the tracked pose, or the anchor's slid with the image where the
        image moved less than `still_shift` squares since it: there a grid refitted frame by
        frame can wander to a fixed point of the fit (a border line beside a checker's outer
        squares) and wobble there, so that the board never looks still and is read off its
        squares. Where the image moved further and tracking moved the grid as far, that is
        the board's new place; where they disagree (a hand moving over it), the anchor
        waits. Bigger boards keep tracking's pose: their many lines hold the fit, and the
        shift, read up to 1.5 px off a still view and re-anchored at every reading, crept
        15 px in 30 s of the demo's Rinne footage."""
        if not self._steadies:
            return tracked
        if self._anchor is None:
            self._anchor = anchor(pixels(frame_bgr), tracked)
            return tracked
        shift = shift_since(self._anchor, pixels(frame_bgr))
        if shift.response < self.settings.still_response:
            return tracked  # a hand over the board, or the light changed: no comparing
        slid = moved_by(self._anchor.pose, shift)
        if shift.length <= self.settings.still_shift * self._anchor.pose.square_size_px():
            return slid
        if _shift(tracked, slid) <= self.settings.still_shift:
            self._anchor = anchor(pixels(frame_bgr), tracked)
        return tracked

    def _anchor_at(self, frame_bgr: Frame, pose: BoardPose) -> Anchor | None:
        return anchor(pixels(frame_bgr), pose) if self._steadies else None

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
        """The quarter turns that may name the corners as the players do: where the board's
        markers name them, that naming alone (`turned(0)`: the side question is answered);
        else every naming, 4 on a square board, 2 otherwise."""
        return (0,) if self._fix is not None else self._every_turn()

    def _every_turn(self) -> tuple[int, ...]:
        return (0, 1, 2, 3) if self.files == self.ranks else (0, 2)

    def turned(self, turns: int) -> BoardPose:
        assert self._found is not None
        return self._found.rotated(turns)

    def view(self, frame_bgr: Frame, pose: BoardPose) -> np.ndarray:
        """A small top-down grey view of the board and its margin, for the stillness check."""
        top = warp_board(frame_bgr, pose, self.settings.view_px, margin=self.settings.view_margin)
        return np.asarray(cv2.cvtColor(top, cv2.COLOR_BGR2GRAY))

    def view_outside(self, frame_bgr: Frame, pose: BoardPose) -> np.ndarray:
        """Which pixels of `view` lie beyond the frame (an arm may come in across them)."""
        height, width = frame_bgr.shape[:2]
        return view_outside_frame(pose, self.settings.view_px, (width, height),
                                  margin=self.settings.view_margin)

    @property
    def crop_scale(self) -> float:
        """How the squares' crops are scaled about their centres: the board profile's, where
        `calibrate pieces` measured the players' pieces (vision/piece_size.py), else 1."""
        return 1.0 if self.profile is None else self.profile.crop_scale

    def square_quads(self, frame_bgr: np.ndarray, pose: BoardPose, scale: float | None = None
                     ) -> np.ndarray:
        """Where each square is cut (rules order): its top face at the pieces' height,
        scaled by `scale` (default `crop_scale`)."""
        height, width = frame_bgr.shape[:2]
        quads = top_face_quads(pose, (width, height), height=self.piece_height,
                               default_focal=self.vision.crops.default_focal,
                               camera_matrix=self.lens.camera_matrix)
        scale = self.crop_scale if scale is None else scale
        return quads.astype(np.float32) if scale == 1.0 else scaled_quads(quads, scale)

    def read(self, frame_bgr: np.ndarray, pose: BoardPose, frame_index: int, time_s: float
             ) -> Reading:
        quads = self.square_quads(frame_bgr, pose)
        look = self.settings.second_look
        crops, probabilities = read_squares(self.classifier, frame_bgr, quads, pose.files, look)
        if self.monomino is not None:
            probabilities = second_opinion(self.monomino, crops, probabilities,
                                           self.classifier.labels, look)
        return Reading(self.labels, self._as_blocked(probabilities[:, self._columns]),
                       crop_colors(crops, self.crop_spec), frame_index, time_s,
                       seams=self._seam_look(frame_bgr, pose))

    def _as_blocked(self, probabilities: np.ndarray) -> np.ndarray:
        """The probabilities (reading order) with a blocked square's "empty" counted as
        "blocked": no ply makes a blocked square empty, but a board may draw it as one, and the
        classifier read 890013's dark patterned centre 0.64-0.72 empty, which contradicted
        every ply and stopped the game. A piece read on it still reads as a piece."""
        if not self.blocked:
            return probabilities
        blocked, empty = self.labels.index(Cover.BLOCKED.value), self.labels.index(EMPTY)
        squares = list(self.blocked)
        probabilities = probabilities.copy()
        probabilities[squares, blocked] += probabilities[squares, empty]
        probabilities[squares, empty] = 0.0
        return probabilities

    def _seam_look(self, frame_bgr: np.ndarray, pose: BoardPose) -> SeamLook | None:
        """The board's seams, cut and read by the seam model only if the decoder asks."""
        model = self.seams
        if model is None:
            return None

        def read() -> np.ndarray:
            crops = grid_seam_crops(frame_bgr, list(self.square_quads(frame_bgr, pose, 1.0)),
                                    pose.files, model.card.crop)
            return np.asarray(model.predict(crops)[:, model.labels.index(JOINED)])
        return SeamLook(read)


def _ready_for_readings() -> None:
    """What would otherwise be built during the first readings is built now: OpenCV's Lab
    tables (about 80 ms at the first BGR to Lab conversion, `crop_colors`); and, once a
    process, the objects of the start-up (models, tables) are collected and frozen out of the
    garbage collector's full passes, one of which (about 9 ms, every object it tracks) would
    otherwise fall in a reading."""
    cv2.cvtColor(np.zeros((1, 1, 3), np.uint8), cv2.COLOR_BGR2LAB)
    if not gc.get_freeze_count():
        gc.collect()
        gc.freeze()


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


# (a frame read through the lens: `pixels(frame)` where its pixels are wanted)
FrameWatcher = Callable[[Frame, BoardPose | None, float], None]


class GameLoop:
    """One game refereed from frames: feed every frame; events go to the recorder first (so a
    pulled plug loses nothing the players were told), then to the listeners. `watchers` see
    every frame as read (undistorted) with the board's pose in it, or None (the live view)."""

    def __init__(self, reader: BoardReader, referee: Referee, *,
                 recorder: Recorder | None = None,
                 listeners: tuple[Callable[[Event], None], ...] = (),
                 watchers: tuple[FrameWatcher, ...] = (),
                 settings: PipelineSettings | None = None) -> None:
        self.reader = reader
        self.referee = referee
        self.recorder = recorder
        self.listeners = listeners
        self.watchers = watchers
        self.settings = settings or reader.settings
        columns = 2 * self.settings.view_margin + reader.files
        rows = 2 * self.settings.view_margin + reader.ranks
        self.stabiliser = Stabiliser(columns, rows, self.settings.stabiliser)
        # (where the finer hand test floods the view, the stillness check's own arm test,
        # as this game's settings make it)
        reach = ReachSettings(flooded_arm=self.settings.stabiliser.arm)
        self.hands = (HandTrail(reader.files, reader.ranks, self.settings.view_px,
                                self.settings.view_margin, reach)
                      if referee.inferer.reads_hands else None)
        self.surroundings = (StillSurroundings(reader.files, reader.ranks, self.settings.view_px,
                                               self.settings.view_margin)
                             if self.hands is not None else None)
        self.board_seen = False
        self._lost_since: float | None = None  # from the first frame without a board
        self._told_no_board = False
        self.last_stillness: Stillness | None = None
        self._other_sides: tuple[int, ...] = ()  # other namings of the corners, as turns
        self._first_arm: np.ndarray | None = None  # where the first arm after the start came in
        self._refitted_while_still = False
        self._clean_frame: Frame | None = None  # the frame arms are looked for against
        self._clean_pose: BoardPose | None = None  # and the pose it was read with
        # The position as last read and accepted, and the frame it was read from
        self._position_seen: tuple[Any, np.ndarray] | None = None
        self._unclear: list[Reading] = []  # the still board's readings, all unreadable
        self._hand_since: float | None = None  # when the hand now seen began to hold the reading

    def feed(self, frame_bgr: np.ndarray, frame_index: int, time_s: float) -> list[Event]:
        # Where tracking loses the lines (a hand over them, a flicker) the board is taken to
        # be where it was: a real move of it shows as motion, and a search soon finds it.
        seen, pose, _confirmed = self.reader.look(frame_bgr, time_s)
        for watcher in self.watchers:
            watcher(seen, pose, time_s)
        if pose is None:
            return self._no_board(frame_index, time_s)
        self.board_seen = True
        self._lost_since, self._told_no_board = None, False
        if self.reader.moved or self._bumped(pose):  # the view changed: read the board afresh
            self.reader.moved = False
            self.stabiliser.forget_reading()
            if self.hands is not None:
                self.hands.clear()
            self._clean_frame = self._clean_pose = self._position_seen = None
        outside = self.reader.view_outside(seen, pose)
        stillness = self.stabiliser.update(self.reader.view(seen, pose), time_s,
                                           outside=outside, clean=self._clean_cut(pose))
        if self.hands is not None and self._watches_hands(stillness):
            self.hands.update(lambda arm: self.stabiliser.arm_pixels(arm, outside), outside, time_s)
        if self._surroundings_changed(stillness, time_s):
            self._renew_clean(seen, pose)
        refitted = stillness is Stillness.OCCLUDED and not self._refitted_while_still
        if refitted:
            # Once each time the board comes to rest: is it an arm, or tracking's drift?
            self._refitted_while_still = True
            pose = self.reader.settle(seen) or pose
            stillness = self.stabiliser.recheck(self.reader.view(seen, pose),
                                                outside=self.reader.view_outside(seen, pose),
                                                clean=self._clean_cut(pose))
        elif stillness is Stillness.MOVING:
            self._refitted_while_still = False
        if stillness is Stillness.READ and self._hand_holds(time_s):
            stillness = Stillness.OCCLUDED
        self.last_stillness = stillness
        if self._first_arm is None and self._other_sides and not self.referee.match.moves:
            self._first_arm = self._arm_entry(pose)
        if stillness is Stillness.STEADY and self._read_again_due(time_s):
            return self._read_again(pixels(seen), pose, frame_index, time_s)
        if stillness is not Stillness.READ:
            if stillness is not Stillness.STEADY:
                self._unclear = []
            return []
        turns = self.reader.turns
        # (`pose`: what the stillness view was cut from; after a recheck, already refitted.)
        settled = pose if refitted else self.reader.settle(seen) or pose
        events = self._judge(pixels(seen), settled, frame_index, time_s)
        named = self.reader.pose
        # A hand seen by the finer test of `tracking.reach` (fingers at the view's edge, their
        # sleeve beyond it) leaves the view no reference for arms: its going would look like one.
        # So does an unreadable board: fingers resting over a square whose wrist, much like the
        # table, hides the arm from both tests (890009's g1>).
        hand_seen = ((self.hands is not None and self.hands.in_view)
                     or self.referee.last_verdict is Verdict.UNREADABLE)
        if named is not None and not np.allclose(named.corners_array, pose.corners_array):
            # The pose was refitted, or the reading settled which corner is a1: later
            # views are cut from that pose, so the stillness reference must be too.
            self.stabiliser.mark_read(self.reader.view(seen, named),
                                      renamed=self.reader.turns != turns, hand_seen=hand_seen)
        else:
            self.stabiliser.mark_read(hand_seen=hand_seen)
        if self.stabiliser.clean_taken:
            self._clean_frame, self._clean_pose = seen, named or pose
        self.emit_all(events, pixels(seen))  # (undistorted: the frame the pose belongs to)
        return events

    def _watches_hands(self, stillness: Stillness) -> bool:
        """Whether the hand trail looks for an arm in this frame: whenever the board is not
        steady, and while it follows one: fingers laying a marker beyond the near rim, their
        arm out of the view, change too little of it for the stillness check to stir."""
        return self.hands is not None and (stillness is not Stillness.STEADY or self.hands.in_view)

    def _hand_holds(self, time_s: float) -> bool:
        """Whether a hand the finer test of `tracking.reach` sees, where the arm test saw none
        (fingers over the board's rim, their sleeve beyond the view), holds the reading back:
        as an arm in view does, up to the occlusion timeout, and until it has been gone for
        `hand_gone_s` (the test flickers as the fingers leave). Only a hand that came in beyond
        the band along the view's edge it crossed: an arm resting just beyond the view, or its
        shadow, darkens that band and would hold every reading back."""
        seen_s = None if self.hands is None else self.hands.reached_s
        if seen_s is None or time_s - seen_s >= self.settings.hand_gone_s:
            self._hand_since = None
            return False
        if self._hand_since is None:
            self._hand_since = time_s
        return time_s - self._hand_since < self.settings.stabiliser.occlusion_timeout_s

    def _surroundings_changed(self, stillness: Stillness, time_s: float) -> bool:
        """Whether the arm the finer hand test sees on a still board is the surroundings
        changed since the clean reading (`tracking.reach.StillSurroundings`)."""
        if self.hands is None or self.surroundings is None:
            return False
        still = stillness is not Stillness.MOVING
        return self.surroundings.update(self.hands.arm if still else None, time_s)

    def _renew_clean(self, seen: Frame, pose: BoardPose) -> None:
        """Arms are looked for against the frame of now, cut with `pose`: the change at the
        view's edge since the clean reading was the surroundings, not an arm."""
        self.stabiliser.renew_clean()
        self._clean_frame, self._clean_pose = seen, pose
        if self.hands is not None:
            self.hands.forget_arm()
        if self.surroundings is not None:
            self.surroundings.clear()

    def _bumped(self, pose: BoardPose) -> bool:
        """Whether the board has been tracked a quarter of a square from where it was at the
        last clean reading (a bump the tracker followed): that frame no longer shows the board
        where the view is cut, and every line of it would differ as an arm does."""
        return self._clean_pose is not None and _shift(pose, self._clean_pose) > 0.25

    def _clean_cut(self, pose: BoardPose) -> Callable[[], np.ndarray | None]:
        """The frame of the last reading with no arm in view, cut with `pose`, for the arm
        test: both views cut alike, tracking's drift since then does not show as a change."""
        frame = self._clean_frame
        return lambda: None if frame is None else self.reader.view(frame, pose)

    def _judge(self, frame_bgr: np.ndarray, pose: BoardPose, frame_index: int, time_s: float
               ) -> list[Event]:
        referee = self.referee
        if referee.phase is Phase.SETUP:
            events = self._set_up(frame_bgr, frame_index, time_s)
        else:
            if self._other_sides and not referee.match.moves and not referee.inferer.uses_colours:
                reading = self._read_from_the_first_arms_side(frame_bgr, pose, frame_index, time_s)
            else:
                reading = self.reader.read(frame_bgr, pose, frame_index, time_s)
                if self._other_sides and not referee.match.moves:
                    reading = self._first_move_decides_sides(reading)
            if referee.match.moves:
                self._other_sides = ()
            events = self._tell(reading, frame_bgr, [])
        self._remember_position(events, frame_bgr)
        return events

    def _tell(self, reading: Reading, frame_bgr: np.ndarray, unclear: list[Reading]) -> list[Event]:
        """The referee's events for `reading` of `frame_bgr`, pooled with the `unclear`
        readings of the same still board before it; kept among them if it is unreadable too."""
        readings = [*unclear, self._with_hands(self._with_image_changes(reading, frame_bgr))]
        events = self.referee.on_reading(Reading.pooled(readings) if unclear else readings[-1])
        self._unclear = readings if self.referee.last_verdict is Verdict.UNREADABLE else []
        return events

    def _read_again_due(self, time_s: float) -> bool:
        unclear = self._unclear
        return bool(unclear) and not self._other_sides and len(unclear) <= self.settings.rereads \
            and time_s - unclear[-1].time_s >= self.settings.reread_s

    def _read_again(self, frame_bgr: np.ndarray, pose: BoardPose, frame_index: int,
                    time_s: float) -> list[Event]:
        """The still board, unreadable so far, read once more and pooled with its readings."""
        settled = self.reader.settle(frame_bgr) or pose
        reading = self.reader.read(frame_bgr, settled, frame_index, time_s)
        events = self._tell(reading, frame_bgr, self._unclear)
        self._remember_position(events, frame_bgr)
        self.emit_all(events, frame_bgr)
        return events

    def _with_image_changes(self, reading: Reading, frame_bgr: np.ndarray) -> Reading:
        """The reading with the squares whose image has not changed, or has clearly
        changed, since the board last showed the position it is decoded against."""
        seen, pose = self._position_seen, self.reader.pose
        if seen is None or pose is None or seen[0] is not self.referee.match.position:
            return reading
        changes = square_changes(frame_bgr, seen[1], pose)
        return replace(reading, unchanged=changes < self.settings.unchanged_below,
                       changed=changes >= self.settings.changed_above)

    def _with_hands(self, reading: Reading) -> Reading:
        """The reading with where the hands rested since the position was last seen."""
        if self.hands is None:
            return reading
        return replace(reading, hand_rests=self.hands.rests())

    def _remember_position(self, events: list[Event], frame_bgr: np.ndarray) -> None:
        """A reading that started the game or was accepted showed the position now: its
        frame is what later readings' squares are compared with. A position reached
        otherwise (taken back, a pass the referee plays) has no frame."""
        position = self.referee.match.position
        if any(e.kind in (EventKind.ACCEPTED, EventKind.STARTED) for e in events):
            self._position_seen = (position, frame_bgr)
            if self.hands is not None:
                self.hands.clear()
        elif self._position_seen is not None and self._position_seen[0] is not position:
            self._position_seen = None

    def _set_up(self, frame_bgr: np.ndarray, frame_index: int, time_s: float) -> list[Event]:
        """The start position decides which corner is a1. Where it looks the same from both
        sides (Rinne's does), the side whose pieces make the first move is the first
        player's: the other orientations are kept until then."""
        reader = self.reader
        readings = self._every_side(frame_bgr, frame_index, time_s)
        # Sides read surely first; else those where only some squares were unsure (a board
        # that shows every piece of the start where it belongs is the start).
        matching = ([(k, r) for k, r in readings if self.referee.shows_setup(r)]
                    or [(k, r) for k, r in readings if self.referee.shows_setup(r, clearly=False)])
        if not matching:
            return self.referee.on_reading(readings[0][1])
        decided = False
        if reader.piece_colours is not None and self.referee.inferer.uses_colours:
            # the board profile's colours say whose side
            _, owners = self.referee.inferer.appearance(self.referee.match.position)
            known = {square: int(owner) for square, owner in enumerate(owners) if owner >= 0}
            matching, decided = side_by_colours(matching, known, reader.piece_colours)
        reader.turns = matching[0][0]
        # Another side stays possible where the start looks the same from it, even if a
        # square there was read less surely (its crops are cut turned).
        others = tuple(k for k, r in readings
                       if k != reader.turns and self.referee.shows_setup(r, clearly=False))
        self._other_sides = () if decided else others
        return self.referee.on_reading(matching[0][1])

    def _every_side(self, frame_bgr: np.ndarray, frame_index: int, time_s: float
                    ) -> list[tuple[int, Reading]]:
        """The board read as named from each side that may be the first player's. Where it
        clearly shows a start that looks the same from another side, it is cut once: from
        there it is the same reading with its squares named from there."""
        reader = self.reader
        first, *rest = reader.turn_options()
        pose = reader.turned(first)
        seen = reader.read(frame_bgr, pose, frame_index, time_s)
        clear = self.referee.shows_setup(seen)
        readings = [(first, seen)]
        for turns in rest:
            turned = reader.turned(turns)
            renamed = seen.reordered(pose.squares_named_by(turned))
            alike = clear and self.referee.shows_setup(renamed)
            readings.append((turns, renamed if alike else
                             reader.read(frame_bgr, turned, frame_index, time_s)))
        return readings

    def _first_move_decides_sides(self, reading: Reading) -> Reading:
        """Before the first move: if the board only makes sense seen from another side,
        name the corners from that side (and the colours' owners swap with it; the reading is
        renamed, not cut again, so the sides are told apart on the same reading). One ply
        decides: seen from the wrong side it is the second player moving first. Two plies
        read at once look legal from both sides of a symmetric start; then the side the
        first arm reached in from is taken for the first player's."""
        referee, reader = self.referee, self.reader
        verdict = referee.inspect(reading).verdict
        if verdict in (Verdict.MOVE, Verdict.NO_CHANGE):
            return reading
        assert referee.colors is not None
        others: dict[int, tuple[Reading, Verdict]] = {}
        pose = reader.turned(reader.turns)
        for turns in self._other_sides:
            seen = reading.reordered(pose.squares_named_by(reader.turned(turns)))
            referee.colors = referee.colors.swapped()
            verdict = referee.inspect(seen).verdict
            referee.colors = referee.colors.swapped()
            if verdict is Verdict.MOVE:
                return self._name_from(turns, seen, decided=True)
            others[turns] = (seen, verdict)
        if self._first_arm is None:
            return reading
        turns = min((reader.turns, *others), key=self._arm_distance)
        if turns == reader.turns:
            return reading
        seen, verdict = others[turns]
        # Not read as two plies from the arm's side: look from that side, but keep the
        # others open, rather than take the pair the other side shows.
        return self._name_from(turns, seen, decided=verdict is Verdict.TWO_MOVES)

    def _read_from_the_first_arms_side(self, frame_bgr: np.ndarray, pose: BoardPose,
                                       frame_index: int, time_s: float) -> Reading:
        """Pieces that are nobody's on a start that looks the same from every side
        (Renaissance's empty board): the first ply is legal seen from any side, so the side
        the first arm reached in from is the first mover's. The board is cut once, as named
        from there; if nothing changed, every side stays open."""
        reader = self.reader
        if self._first_arm is None:
            return reader.read(frame_bgr, pose, frame_index, time_s)
        turns = min((reader.turns, *self._other_sides), key=self._arm_distance)
        turned = pose.rotated((turns - reader.turns) % 4)
        reading = reader.read(frame_bgr, turned, frame_index, time_s)
        if self.referee.inspect(reading).verdict is Verdict.NO_CHANGE:
            return reading.reordered(turned.squares_named_by(pose))
        self._other_sides = ()
        if turns != reader.turns:
            log.info("the first player sits on another side")
            reader.turns = turns
        return reading

    def _name_from(self, turns: int, seen: Reading, *, decided: bool) -> Reading:
        """Name the corners from another side from now on."""
        assert self.referee.colors is not None
        log.info("the first player sits on the other side")
        self.referee.colors = self.referee.colors.swapped()
        rest = (*self._other_sides, self.reader.turns)
        self._other_sides = () if decided else tuple(k for k in rest if k != turns)
        self.reader.turns = turns
        return seen

    def _arm_entry(self, pose: BoardPose) -> np.ndarray | None:
        """The image point where an arm crosses the view's edge now, if one does."""
        changes = self.stabiliser.edge_changes()
        strongest = float(changes.max())
        # An arm crosses one edge; a change on every edge is the light, or a covered lens.
        if strongest <= self.settings.stabiliser.change_threshold or (
                strongest < 3 * float(np.median(changes))):
            return None
        files, ranks, m = pose.files, pose.ranks, self.settings.view_margin / 2
        edges = ((files / 2, -m), (files / 2, ranks + m), (-m, ranks / 2), (files + m, ranks / 2))
        return np.asarray(pose.to_image(np.array([edges[int(np.argmax(changes))]]))[0])

    def _arm_distance(self, turns: int) -> float:
        """How far the first arm came in from the edge of the player to move first (the
        first player's near edge, the second's far one), named by `turns`."""
        pose = self.reader.turned(turns)
        assert self._first_arm is not None
        edge = 0.0 if int(self.referee.match.positions[0].turn) == 0 else float(pose.ranks)
        home = pose.to_image(np.array([(pose.files / 2, edge)]))[0]
        return float(np.linalg.norm(home - self._first_arm))

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
        self.emit_all([event], frame_bgr)

    def emit_all(self, events: list[Event], frame_bgr: np.ndarray | None) -> None:
        """Log the events of one reading together, then tell the listeners of each."""
        if not events:
            return
        if self.recorder is not None:
            pose = self.reader.pose
            keyframe = frame_bgr if frame_bgr is None or pose is None else board_region(
                frame_bgr, pose)
            self.recorder.write_all(events, self.referee.match, keyframe)
        for event in events:
            for listener in self.listeners:
                listener(event)

    def finish(self) -> None:
        if self.recorder is not None:
            self.recorder.finish(self.referee.match)


def board_region(frame_bgr: np.ndarray, pose: BoardPose, margin: float = 0.6) -> np.ndarray:
    """The part of the frame that shows the board and `margin` squares around it (pieces
    stand up from the far edge): what a keyframe needs, a fraction of the frame's bytes."""
    x0, y0, x1, y1 = region_box(frame_bgr, pose, margin)
    return frame_bgr[y0:y1, x0:x1]


def region_box(frame_bgr: Frame, pose: BoardPose, margin: float) -> tuple[int, int, int, int]:
    """Where `board_region` cuts (x0, y0, x1, y1): the whole frame where the board and its
    margin hardly show in it."""
    height, width = frame_bgr.shape[:2]
    corners = pose.corners_array
    pad = margin * pose.square_size_px()
    x0, y0 = np.floor(corners.min(axis=0) - pad).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0) + pad).astype(int)
    x0, y0, x1, y1 = max(int(x0), 0), max(int(y0), 0), min(int(x1), width), min(int(y1), height)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return 0, 0, width, height
    return x0, y0, x1, y1


def _thumbnail(frame_bgr: Frame, box: tuple[int, int, int, int],
               side: int = 24) -> np.ndarray:
    """The frame inside `box`, grey, averaged down to `side` x `side` cells (each cell some
    20 px: the sensor's noise averages out, an arm or a bump does not). The region is trimmed
    to whole cells: averaging whole blocks costs a sixth of averaging fractions of pixels.
    Through a lens, the raw frame shrunk `THUMBNAIL_STEP` times each way is read, a point
    every `THUMBNAIL_STEP` pixels (each cell still the mean of its pixels, near enough)."""
    x0, y0, x1, y1 = box
    if isinstance(frame_bgr, LensImage):
        step = THUMBNAIL_STEP
        sparse = np.array([[step, 0, x0], [0, step, y0], [0, 0, 1.0]])
        frame_bgr = frame_bgr.grid(sparse, (max(1, (x1 - x0) // step), max(1, (y1 - y0) // step)),
                                   shrink=step)
        x0, y0, x1, y1 = 0, 0, frame_bgr.shape[1], frame_bgr.shape[0]
    region = frame_bgr[y0:y1, x0:x1]
    height, width = region.shape[:2]
    if height >= side and width >= side:
        top, left = height % side // 2, width % side // 2
        region = region[top:top + height - height % side, left:left + width - width % side]
    grey = region if region.ndim == 2 else cv2.cvtColor(region, cv2.COLOR_BGR2GRAY)
    return np.asarray(cv2.resize(grey, (side, side), interpolation=cv2.INTER_AREA), np.float32)


def _shift(a: BoardPose, b: BoardPose) -> float:
    """How far apart two poses put the board's corners, in squares (either naming of them)."""
    side = max(a.square_size_px(), 1e-6)
    return min(float(np.linalg.norm(a.corners_array - o.corners_array, axis=1).max()) / side
               for o in b.orientations())


CameraGame = RinneRules | ZensuRules | RenaissanceRules


def camera_game(name: str, ruleset: str | Path | None = None) -> CameraGame:
    """The game `name` (as a ruleset file sets it out, if one is given), if the camera can
    referee it."""
    game = game_with_ruleset(name, ruleset)
    if not isinstance(game, CameraGame):
        raise RefereeError(f"{game.name}: not refereed from a camera")
    return game


def own_pieces(game: CameraGame) -> str | None:
    """The piece set a game is played with where it has its own (Zensū, Renaissance); None
    for the Rinne family, played with dice or Penta-pieces."""
    return {ZensuRules: ZENSU_PIECES, RenaissanceRules: TILES}.get(type(game))


def board_referee(game: CameraGame, pieces: str | None, *, model: str | None = None,
                  match: Match[Any, Any] | None = None,
                  settings: PipelineSettings | None = None,
                  calibration: Calibration | None = None) -> tuple[Referee, BoardReader]:
    """The referee and the board reader for `game` played with the piece set `pieces` (the
    Rinne family: dice, the default, or penta; Zensū and Renaissance have their own),
    reading with `model` or the piece set's own board model, through the camera and board
    profile of `calibration` (see calibrated.py)."""
    own = own_pieces(game)
    if own is not None and pieces not in (None, own):
        raise RefereeError(f"{game.title} is played with its own pieces, not {pieces}: "
                           "leave --pieces out")
    pieces = pieces or own or "dice"
    if own is None and pieces not in PIECE_SETS:
        raise RefereeError(f"unknown piece set {pieces!r}; known: {', '.join(sorted(PIECE_SETS))}")
    classifier = Classifier.load(model or own or PIECE_SETS[pieces].model)
    if calibration is not None and calibration.board is not None:  # the players' own pieces
        classifier = classifier.with_head(calibration.board.head)
    monomino = Classifier.load(MONOMINO_MODEL) if own == TILES else None
    seams = Classifier.load(SEAM_MODEL) if own == TILES else None
    blocked = (tuple(square for square, cover in enumerate(game.start().cover) if cover == BLOCKED)
               if isinstance(game, RenaissanceRules) else ())
    reader = BoardReader(game.geometry.files, game.geometry.ranks, classifier, settings=settings,
                         calibration=calibration, monomino=monomino, seams=seams, blocked=blocked)
    decoder: Decoder
    if isinstance(game, ZensuRules):
        decoder = ZensuDecoder(game, reader.labels)
    elif isinstance(game, RenaissanceRules):
        decoder = RenaissanceDecoder(game, reader.labels)
    else:
        decoder = MoveInferer(game, PIECE_SETS[pieces], reader.labels)
    return Referee(decoder, match=match), reader
