"""Real board photographs with their truth (`tests/data/real-boards/`): OpenCV's sample photos
of a printed chessboard of 10x7 squares (9x6 inner corners) held in front of two cameras,
13 photos each, 640x480, through a lens that bends straight lines (k1 about -0.28). The left
camera's photos are the calibration samples' (`tests/data/calibration/opencv-left/`).

Truth: the inner corners as OpenCV finds them (`find_chessboard`: `findChessboardCorners`
and `cornerSubPix`), each camera calibrated from its own 13 photos; a homography through
the inner corners undistorted (0.16-0.24 px RMS) gives the board's outer corners, the outer
corners of its squares, and the lens puts them back in the photo.

The cases, every one made from a real photo:
- `camera file`: the photo undistorted as the referee undistorts it with a camera file
  (`make_undistorter`, the camera's own matrix: a barrel lens's rim is cut off, so many of
  these boards run out of the frame);
- `as taken`: the photo itself, a strong lens and no camera file;
- `fills the frame`: the photo undistorted keeping every pixel (alpha 1), cropped to the
  board and a quarter of a square round it, shrunk to 320 pixels wide or enlarged to 1280;
- `cut off`: the same photo cropped so that 1.5 squares' width of the board lies beyond one
  side of the frame (left, top, right, bottom in turn);
- `strong lens`: the same photo bent through a known barrel lens (k1 -0.35, no camera
  file), its truth mapped through that lens.

A board counts as out of view where a corner of it lies more than half a square beyond
the frame (`out_sides`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.calibration.files import CameraCalibration
from referee.calibration.undistort import Undistorter, make_undistorter
from referee.vision.lattice import canonical
from referee.vision.pose import FloatArray
from tests import DATA

FOLDER = DATA / "real-boards"
TRUTH = FOLDER / "truth.json"
FILES, RANKS = 10, 7
PATTERN = (FILES - 1, RANKS - 1)  # inner corners a row, rows
LENS_K1 = -0.35       # the strong lens's k1 (radial, normalised by the focal length)
CUT_SQUARES = 1.5     # how much of the board a cut-off crop leaves outside
FILL_MARGIN = 0.25    # squares round the board in a frame-filling crop
FILL_WIDTHS = (320, 1280)
OUT_OF_VIEW = 0.5     # a corner this many squares beyond the frame: the board is out of view
SIDES = ("left", "top", "right", "bottom")


@dataclass(frozen=True)
class Photo:
    """One real photo: its pixels (BGR), its camera, and the inner corners found in it (the
    pattern's row order, (54, 2) photo pixels)."""

    name: str
    image: NDArray[np.uint8]
    camera: CameraCalibration
    inner: FloatArray


@dataclass(frozen=True)
class Case:
    """A frame to find the board in, with the board's true outer corners (canonical order,
    frame pixels); through a lens (`as taken`, `strong lens`) also the corners of the
    homography nearest its inner corners (`flat`), the best any grid of straight lines can
    do there."""

    name: str
    group: str
    frame: NDArray[np.uint8]
    corners: FloatArray
    flat: FloatArray | None = None

    @property
    def diagonal(self) -> float:
        c = self.corners
        return float(max(np.linalg.norm(c[2] - c[0]), np.linalg.norm(c[3] - c[1])))

    @property
    def out_sides(self) -> tuple[str, ...]:
        """The sides of the frame that a corner of the board lies more than `OUT_OF_VIEW`
        squares beyond."""
        height, width = self.frame.shape[:2]
        beyond = np.stack([-0.5 - self.corners[:, 0], -0.5 - self.corners[:, 1],
                           self.corners[:, 0] - (width - 0.5), self.corners[:, 1] - (height - 0.5)])
        return tuple(side for side, past in zip(SIDES, beyond.max(axis=1), strict=True)
                     if past > OUT_OF_VIEW * square_px(self.corners))


def square_px(corners: FloatArray) -> float:
    """The mean side of a square of the board whose outer corners these are (pixels)."""
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=0), axis=1)
    return float((sides[0] + sides[2]) / (2 * FILES) + (sides[1] + sides[3]) / (2 * RANKS)) / 2


def board_points() -> FloatArray:
    """The inner corners in board squares, in the pattern's row order."""
    cols, rows = PATTERN
    return np.array([[c + 1, r + 1] for r in range(rows) for c in range(cols)], np.float64)


def outer_corners(inner: FloatArray) -> FloatArray:
    """The board's outer corners (canonical order) of the homography through `inner`."""
    h, _ = cv2.findHomography(board_points(), np.asarray(inner, np.float64), 0)
    return canonical(np.asarray(h, np.float64), FILES, RANKS).corners_array


@cache
def truth() -> dict[str, object]:
    return dict(json.loads(TRUTH.read_text(encoding="utf-8")))


def camera(side: str) -> CameraCalibration:
    spec = truth()["cameras"][side]  # type: ignore[index]
    return CameraCalibration((640, 480), tuple(map(tuple, spec["K"])), tuple(spec["dist"]),
                             spec["rms_px"], f"OpenCV's {side} samples")


def photos() -> list[Photo]:
    out = []
    for name, spec in truth()["photos"].items():  # type: ignore[attr-defined]
        image = cv2.imread(str(DATA / spec["file"]), cv2.IMREAD_COLOR)
        assert image is not None, spec["file"]
        out.append(Photo(name, np.asarray(image, np.uint8), camera(spec["camera"]),
                         np.array(spec["inner"], np.float64)))
    return out


def undistorted(photo: Photo, alpha: float | None) -> tuple[NDArray[np.uint8], FloatArray, Undistorter]:
    """The photo undistorted (`make_undistorter` at `alpha`), the board's corners there, and
    the undistorter."""
    lens = make_undistorter(photo.camera, alpha=alpha)
    inner = lens.undistort_points(photo.inner, photo.camera)
    return np.asarray(lens(photo.image), np.uint8), outer_corners(inner), lens


def with_camera_file(photo: Photo) -> Case:
    frame, corners, _ = undistorted(photo, None)
    return Case(f"{photo.name} camera file", "camera file", frame, corners)


def as_taken(photo: Photo) -> Case:
    _, corners, lens = undistorted(photo, None)
    return Case(f"{photo.name} as taken", "as taken", photo.image, lens.distort_points(corners, photo.camera),
                flat=outer_corners(photo.inner))


def crop(frame: NDArray[np.uint8], corners: FloatArray, box: tuple[int, int, int, int],
         width: int | None = None) -> tuple[NDArray[np.uint8], FloatArray]:
    """`frame` cut to `box` (x0, y0, x1, y1), resized to `width` pixels wide (the aspect
    kept), and the corners with it (pixel centres kept aligned)."""
    x0, y0, x1, y1 = box
    part = frame[y0:y1, x0:x1]
    scale = 1.0 if width is None else width / part.shape[1]
    if scale != 1.0:
        size = (width or part.shape[1], max(1, round(part.shape[0] * scale)))
        part = cv2.resize(part, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    return np.ascontiguousarray(part), (corners - [x0, y0] + 0.5) * scale - 0.5


def board_box(corners: FloatArray, margin_px: float) -> tuple[int, int, int, int]:
    lo = np.floor(corners.min(axis=0) - margin_px).astype(int)
    hi = np.ceil(corners.max(axis=0) + margin_px).astype(int) + 1
    return int(lo[0]), int(lo[1]), int(hi[0]), int(hi[1])


def inside(box: tuple[int, int, int, int], frame: NDArray[np.uint8]) -> bool:
    x0, y0, x1, y1 = box
    return x0 >= 0 and y0 >= 0 and x1 <= frame.shape[1] and y1 <= frame.shape[0]


def filling(photo: Photo) -> list[Case]:
    """The board cropped to fill the frame, at each of `FILL_WIDTHS`; none where the board
    with its margin is not wholly in the photo."""
    frame, corners, _ = undistorted(photo, 1.0)
    box = board_box(corners, FILL_MARGIN * square_px(corners))
    if not inside(box, frame):
        return []
    cases = []
    for width in FILL_WIDTHS:
        part, moved = crop(frame, corners, box, width)
        cases.append(Case(f"{photo.name} fills {width}", "fills the frame", part, moved))
    return cases


def cut_off(photo: Photo, side: str) -> Case:
    """The board with `CUT_SQUARES` of its width beyond `side` of the frame, a square of
    margin on the other sides (as far as the photo reaches)."""
    frame, corners, _ = undistorted(photo, 1.0)
    square = square_px(corners)
    x0, y0, x1, y1 = board_box(corners, square)
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    cut = CUT_SQUARES * square
    if side == "left":
        x0 = int(lo[0] + cut)
    elif side == "right":
        x1 = int(hi[0] - cut)
    elif side == "top":
        y0 = int(lo[1] + cut)
    else:
        y1 = int(hi[1] - cut)
    box = (max(0, x0), max(0, y0), min(frame.shape[1], x1), min(frame.shape[0], y1))
    part, moved = crop(frame, corners, box)
    return Case(f"{photo.name} cut {side}", "cut off", part, moved)


def strong_lens(photo: Photo) -> Case:
    """The photo undistorted keeping every pixel, then bent through a barrel lens of k1
    `LENS_K1` about the same camera matrix; the truth goes through the lens with it."""
    frame, corners, lens = undistorted(photo, 1.0)
    k = lens.camera_matrix
    dist = np.array([LENS_K1, 0.0, 0.0, 0.0, 0.0])
    height, width = frame.shape[:2]
    grid = np.stack(np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64)),
                    axis=-1).reshape(-1, 1, 2)
    source = cv2.undistortPoints(grid, k, dist, P=k).reshape(height, width, 2).astype(np.float32)
    bent = cv2.remap(frame, source[..., 0], source[..., 1], cv2.INTER_LINEAR)
    inner = through_lens(lens.undistort_points(photo.inner, photo.camera), k, dist)
    return Case(f"{photo.name} strong lens", "strong lens", np.asarray(bent, np.uint8),
                through_lens(corners, k, dist), flat=outer_corners(inner))


def through_lens(points: FloatArray, k: FloatArray, dist: FloatArray) -> FloatArray:
    """Pinhole image points (camera matrix `k`) where a lens `dist` about `k` shows them."""
    rays = cv2.undistortPoints(np.asarray(points, np.float64).reshape(-1, 1, 2), k, None).reshape(-1, 2)
    rays3 = np.column_stack([rays, np.ones(len(rays))])
    moved, _ = cv2.projectPoints(rays3, np.zeros(3), np.zeros(3), k, dist)
    return np.asarray(moved, np.float64).reshape(-1, 2)


GROUPS = ("camera file", "fills the frame", "cut off", "as taken", "strong lens")


def cases(groups: tuple[str, ...] = GROUPS, names: tuple[str, ...] = ()) -> Iterator[Case]:
    """Every case of `groups` made from the photos (those named in `names`, or all)."""
    for k, photo in enumerate(photos()):
        if names and photo.name not in names:
            continue
        if "camera file" in groups:
            yield with_camera_file(photo)
        if "fills the frame" in groups:
            yield from filling(photo)
        if "cut off" in groups:
            yield cut_off(photo, SIDES[k % len(SIDES)])
        if "as taken" in groups:
            yield as_taken(photo)
        if "strong lens" in groups:
            yield strong_lens(photo)
