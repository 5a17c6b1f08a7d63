"""Camera calibration from photos of a printed chessboard or ChArUco board (OpenCV).

Chessboards are found with `cv2.findChessboardCorners` and refined with
`cv2.cornerSubPix`; where that finder fails, `cv2.findChessboardCornersSB` is tried.
The refinement windows adapt to the pattern's size in each photo: a fixed 11x11 window
(OpenCV's sample default) reaches over the neighbouring corners of a small or steeply
tilted board and drags corners by several pixels (on OpenCV's own left02.jpg by 6.3 px;
see benchmarks/calibration_opencv_samples.md), while a small window alone cannot reach
the true corner when the finder's rough corner is far off: so a wide pass, then a narrow.
ChArUco boards use `cv2.aruco.CharucoDetector` and `CharucoBoard.matchImagePoints`
(OpenCV ≥ 4.7 API), so photos that show only part of the board still count.

Photos where the pattern is not found are refused by name and left out; the calibration
itself fails with one `CalibrationError` line when too few views remain.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np

from referee.errors import CalibrationError

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
DEFAULT_MIN_VIEWS = 5
# The half-sizes of cornerSubPix's windows as shares of the shortest corner spacing in the
# photo: a coarse pass wide enough to reach the true corner from the finder's rough one
# (off by up to ~9 px on steep views), then a fine pass that stays off the next corner.
SUBPIX_WINDOW_SHARES = (0.6, 0.3)
SUBPIX_WINDOW_MAX = 11  # OpenCV's sample default, kept as the upper bound
_SUBPIX_CRITERIA = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT, 30, 1e-3)
# A ChArUco view needs enough corners, not on one line, for a homography and more.
CHARUCO_MIN_CORNERS = 6


@dataclass(frozen=True)
class Chessboard:
    """A chessboard with `cols` x `rows` inner corners (OpenCV's convention: 9x6 has 10x7
    squares) of `square_mm` millimetres."""

    cols: int
    rows: int
    square_mm: float

    @property
    def label(self) -> str:
        return f"{self.cols}x{self.rows} chessboard"

    def object_points(self) -> np.ndarray:
        """Inner corners in millimetres on the board plane, row by row (z = 0)."""
        grid = np.mgrid[0 : self.cols, 0 : self.rows].T.reshape(-1, 2)
        points = np.zeros((self.cols * self.rows, 3), np.float32)
        points[:, :2] = grid * self.square_mm
        return points


@dataclass(frozen=True)
class Charuco:
    """A ChArUco board of `cols` x `rows` *squares* (OpenCV's convention), ArUco markers of
    `marker_mm` in the white squares, from a predefined dictionary."""

    cols: int
    rows: int
    square_mm: float
    marker_mm: float
    dictionary: str = "DICT_5X5_100"

    @property
    def label(self) -> str:
        return f"{self.cols}x{self.rows} ChArUco board ({self.dictionary})"

    def board(self) -> cv2.aruco.CharucoBoard:
        dictionary = cv2.aruco.getPredefinedDictionary(_dictionary_id(self.dictionary))
        return cv2.aruco.CharucoBoard(
            (self.cols, self.rows), self.square_mm, self.marker_mm, dictionary
        )


Pattern = Chessboard | Charuco


@dataclass(frozen=True)
class Detection:
    """One photo's pattern: matched image points (pixels) and board points (mm)."""

    name: str
    image_size: tuple[int, int]  # (width, height)
    image_points: np.ndarray  # (N, 1, 2) float32
    object_points: np.ndarray  # (N, 1, 3) float32
    complete: bool  # every corner of the pattern was found (chessboards always are)


@dataclass(frozen=True)
class Refusal:
    name: str
    reason: str


@dataclass(frozen=True)
class ViewError:
    name: str
    corners: int
    rms_px: float


@dataclass(frozen=True)
class CalibrationResult:
    image_size: tuple[int, int]
    camera_matrix: np.ndarray  # 3x3
    dist_coeffs: np.ndarray  # k1 k2 p1 p2 k3
    rms_px: float  # over every corner of every view
    views: tuple[ViewError, ...]
    refused: tuple[Refusal, ...]


# ---------------------------------------------------------------- parsing helpers


def parse_size(text: str) -> tuple[int, int]:
    """'9x6' → (9, 6)."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", text)
    if not match:
        raise CalibrationError(f"pattern size {text!r} is not COLSxROWS, e.g. 9x6")
    cols, rows = int(match.group(1)), int(match.group(2))
    if cols < 2 or rows < 2:
        raise CalibrationError(f"pattern size {text!r} needs at least 2 columns and 2 rows")
    return cols, rows


def make_pattern(
    size: str,
    square_mm: float,
    *,
    charuco: bool = False,
    marker_mm: float | None = None,
    dictionary: str = "DICT_5X5_100",
) -> Pattern:
    """A pattern from command-line values, checked for sense."""
    cols, rows = parse_size(size)
    if not (square_mm > 0 and math.isfinite(square_mm)):
        raise CalibrationError(f"square size must be a positive number of mm, not {square_mm}")
    if not charuco:
        if cols == rows:
            # A square grid of corners has no orientation: the corner order may flip.
            raise CalibrationError(f"a {cols}x{rows} chessboard is ambiguous; use unequal sides")
        return Chessboard(cols, rows, square_mm)
    marker = square_mm * 0.7 if marker_mm is None else marker_mm
    if not 0 < marker < square_mm:
        raise CalibrationError(f"marker size {marker} mm must be below the square size")
    _dictionary_id(dictionary)
    return Charuco(cols, rows, square_mm, marker, dictionary)


def _dictionary_id(name: str) -> int:
    value = getattr(cv2.aruco, name, None) if name.startswith("DICT_") else None
    if not isinstance(value, int):
        raise CalibrationError(f"unknown ArUco dictionary {name!r} (e.g. DICT_5X5_100)")
    return value


# ---------------------------------------------------------------- finding photos


def find_images(folder: str | Path) -> list[Path]:
    """The image files directly in `folder`, sorted by name."""
    folder = Path(folder)
    if not folder.exists():
        raise CalibrationError(f"{folder}: no such folder")
    if not folder.is_dir():
        raise CalibrationError(f"{folder}: not a folder")
    paths = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        kinds = ", ".join(IMAGE_SUFFIXES)
        raise CalibrationError(f"{folder}: no images ({kinds}) in this folder")
    return paths


# ---------------------------------------------------------------- detection


def detect(
    gray: np.ndarray, pattern: Pattern, name: str, *, subpix_window: int | None = None
) -> Detection | None:
    """The pattern in one grey photo, or None where it is not found."""
    height, width = gray.shape[:2]
    if isinstance(pattern, Chessboard):
        corners = find_chessboard(gray, pattern, subpix_window=subpix_window)
        if corners is None:
            return None
        objects = pattern.object_points().reshape(-1, 1, 3)
        return Detection(name, (width, height), corners, objects, complete=True)
    return _detect_charuco(gray, pattern, name)


def find_chessboard(
    gray: np.ndarray, pattern: Chessboard, *, subpix_window: int | None = None
) -> np.ndarray | None:
    """Inner corners (N, 1, 2) float32 in the pattern's row order, or None."""
    size = (pattern.cols, pattern.rows)
    flags = cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE
    found, corners = cv2.findChessboardCorners(gray, size, flags=flags)
    if found:
        if subpix_window is not None:
            windows = [subpix_window]
        else:
            windows = [_subpix_window(corners, size, share) for share in SUBPIX_WINDOW_SHARES]
        for win in windows:
            corners = cv2.cornerSubPix(gray, corners, (win, win), (-1, -1), _SUBPIX_CRITERIA)
        return corners
    # The sector-based finder copes with blur, glare and boards without a white border;
    # its corners are already sub-pixel.
    found, corners = cv2.findChessboardCornersSB(gray, size, flags=cv2.CALIB_CB_NORMALIZE_IMAGE)
    if found:
        return np.asarray(corners, np.float32).reshape(-1, 1, 2)
    return None


def _subpix_window(corners: np.ndarray, size: tuple[int, int], share: float) -> int:
    grid = corners.reshape(size[1], size[0], 2)
    along = np.linalg.norm(np.diff(grid, axis=1), axis=2).min()
    across = np.linalg.norm(np.diff(grid, axis=0), axis=2).min()
    return int(np.clip(round(share * min(along, across)), 2, SUBPIX_WINDOW_MAX))


def _detect_charuco(gray: np.ndarray, pattern: Charuco, name: str) -> Detection | None:
    board = pattern.board()
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(gray)
    if ids is None or len(ids) < CHARUCO_MIN_CORNERS:
        return None
    if board.checkCharucoCornersCollinear(ids):
        return None
    # The stubs want a sequence of marker corners; ChArUco corners are one (N, 1, 2) array.
    objects, images = cast(Any, board).matchImagePoints(corners, ids)
    height, width = gray.shape[:2]
    total = (pattern.cols - 1) * (pattern.rows - 1)
    return Detection(
        name,
        (width, height),
        np.asarray(images, np.float32).reshape(-1, 1, 2),
        np.asarray(objects, np.float32).reshape(-1, 1, 3),
        complete=len(ids) == total,
    )


def read_gray(path: Path) -> np.ndarray | None:
    data = np.fromfile(str(path), dtype=np.uint8)
    if data.size == 0:
        return None
    return cv2.imdecode(data, cv2.IMREAD_GRAYSCALE)


def detect_all(
    paths: Iterable[Path], pattern: Pattern, *, subpix_window: int | None = None
) -> tuple[list[Detection], list[Refusal]]:
    """Each photo's detection, and the photos refused with the reason."""
    detections: list[Detection] = []
    refused: list[Refusal] = []
    for path in paths:
        gray = read_gray(path)
        if gray is None:
            refused.append(Refusal(path.name, "not a readable image"))
            continue
        found = detect(gray, pattern, path.name, subpix_window=subpix_window)
        if found is None:
            refused.append(Refusal(path.name, f"no {pattern.label} found"))
        elif detections and found.image_size != detections[0].image_size:
            w, h = found.image_size
            w0, h0 = detections[0].image_size
            refused.append(Refusal(path.name, f"is {w}x{h}, the first photo is {w0}x{h0}"))
        else:
            detections.append(found)
    return detections, refused


# ---------------------------------------------------------------- calibration


def calibrate(
    detections: Sequence[Detection],
    *,
    refused: Sequence[Refusal] = (),
    min_views: int = DEFAULT_MIN_VIEWS,
    fix_aspect_ratio: bool = False,
) -> CalibrationResult:
    """Intrinsics and distortion (k1 k2 p1 p2 k3) from the detected views."""
    if len(detections) < min_views:
        raise CalibrationError(_too_few(len(detections), min_views, refused))
    size = detections[0].image_size
    flags = cv2.CALIB_FIX_ASPECT_RATIO if fix_aspect_ratio else 0
    initial = np.eye(3)  # with FIX_ASPECT_RATIO the ratio fx/fy of the guess is kept: 1
    result = cv2.calibrateCameraExtended(
        [d.object_points for d in detections],
        [d.image_points for d in detections],
        size,
        initial,
        np.zeros(5),
        flags=flags,
    )
    rms, camera_matrix, dist = result[0], result[1], result[2]
    per_view = np.asarray(result[-1]).ravel()
    if not (math.isfinite(rms) and np.all(np.isfinite(camera_matrix))):
        raise CalibrationError("the calibration did not converge; take more varied photos")
    views = tuple(
        ViewError(d.name, len(d.image_points), float(e))
        for d, e in zip(detections, per_view, strict=True)
    )
    return CalibrationResult(
        size, camera_matrix, dist.ravel()[:5].copy(), float(rms), views, tuple(refused)
    )


def _too_few(found: int, needed: int, refused: Sequence[Refusal]) -> str:
    message = f"too few views: the pattern was found in {found} photo(s), {needed} needed"
    if refused:
        names = ", ".join(r.name for r in refused[:5])
        more = f" and {len(refused) - 5} more" if len(refused) > 5 else ""
        message += f" (refused: {names}{more})"
    return message


def calibrate_folder(
    folder: str | Path,
    pattern: Pattern,
    *,
    min_views: int = DEFAULT_MIN_VIEWS,
    fix_aspect_ratio: bool = False,
    subpix_window: int | None = None,
) -> CalibrationResult:
    """Find the pattern in every photo of `folder` and calibrate from the ones that show it."""
    detections, refused = detect_all(find_images(folder), pattern, subpix_window=subpix_window)
    return calibrate(
        detections, refused=refused, min_views=min_views, fix_aspect_ratio=fix_aspect_ratio
    )


def draw_detection(image_bgr: np.ndarray, detection: Detection, pattern: Pattern) -> np.ndarray:
    """A copy of the photo with the found corners drawn (OpenCV's coloured rows)."""
    canvas = image_bgr.copy()
    if isinstance(pattern, Chessboard):
        size = (pattern.cols, pattern.rows)
        cv2.drawChessboardCorners(canvas, size, detection.image_points, True)
    else:
        for x, y in detection.image_points.reshape(-1, 2).tolist():
            cv2.circle(canvas, (round(x), round(y)), 4, (0, 0, 255), 1, cv2.LINE_AA)
    return canvas
