"""Lens undistortion: maps computed once, then one `cv2.remap` per frame.

Undistorting a whole 1280x720 BGR frame costs 3.3-4.5 ms on one core here
(benchmarks/undistort_speed.md), about 10-14 ms on a Pi 5: the whole tracking budget.
So while the board is tracked the pipeline reads the raw frame through the lens
(`LensImage`: the points it samples are looked up in the tables) and undistorts only where
pixels are read (`Undistorter.region`: the board's neighbourhood; the whole frame while it
searches; benchmarks/undistort_pipeline.md); a lens without distortion costs nothing.
`warp_maps` folds the lens into a fixed board warp: one remap from the raw frame straight to
the top-down board."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from referee.calibration.files import CameraCalibration
from referee.errors import CalibrationError


@dataclass(frozen=True, eq=False)  # arrays: compare by identity
class Undistorter:
    """Fixed-point remap tables from a distorted frame to a pinhole frame of the same size.

    `camera_matrix` is the intrinsics of the *undistorted* frames, which is what any
    later geometry (homographies, pose) must use."""

    image_size: tuple[int, int]
    camera_matrix: np.ndarray
    map1: np.ndarray | None  # None where the lens has no distortion: frames pass through
    map2: np.ndarray | None
    valid_roi: tuple[int, int, int, int]  # x, y, w, h of pixels that come from the sensor
    # Contiguous copies of the maps for the last few regions: remapping through slices of
    # the whole maps costs about a third more.
    _region_maps: dict[tuple[int, int, int, int], tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False)
    # The tables as float raw coordinates (read between their pixels), and the raw points
    # of the last few grids asked (`grid_points`: a tracked board's views stay put)
    _float_map: list[np.ndarray] = field(default_factory=list, repr=False)
    _grids: dict[bytes, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    def __call__(self, frame_bgr: np.ndarray) -> np.ndarray:
        height, width = frame_bgr.shape[:2]
        if (width, height) != self.image_size:
            w, h = self.image_size
            raise CalibrationError(
                f"frame is {width}x{height} but the camera calibration is for {w}x{h}"
            )
        if self.map1 is None or self.map2 is None:
            return frame_bgr
        return cv2.remap(frame_bgr, self.map1, self.map2, cv2.INTER_LINEAR)

    @property
    def is_identity(self) -> bool:
        """Frames pass through unchanged (the lens has no distortion)."""
        return self.map1 is None

    def region(self, frame_bgr: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
        """The undistorted frame inside `box` (x0, y0, x1, y1 in undistorted pixels; widened
        to a 32-pixel grid), black elsewhere: the same coordinates as `__call__`, for a
        fraction of the cost."""
        if self.map1 is None or self.map2 is None:
            return self(frame_bgr)
        width, height = self.image_size
        step = 32  # a board that shakes by a pixel keeps its region (and its cached maps)
        x0, y0 = max(0, box[0] // step * step), max(0, box[1] // step * step)
        x1, y1 = min(width, -(-box[2] // step) * step), min(height, -(-box[3] // step) * step)
        frame_height, frame_width = frame_bgr.shape[:2]
        if ((x1 - x0) * (y1 - y0) > 0.8 * width * height  # not worth it
                or (frame_width, frame_height) != self.image_size):  # (the size error)
            return self(frame_bgr)
        out = np.zeros_like(frame_bgr)
        if x1 > x0 and y1 > y0:  # written in place: no copy of the region
            map1, map2 = self._maps_for((x0, y0, x1, y1))
            cv2.remap(frame_bgr, map1, map2, cv2.INTER_LINEAR, dst=out[y0:y1, x0:x1])
        return out

    def _maps_for(self, box: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        maps = self._region_maps.get(box)
        if maps is None:
            assert self.map1 is not None and self.map2 is not None
            x0, y0, x1, y1 = box
            if len(self._region_maps) >= 8:
                self._region_maps.pop(next(iter(self._region_maps)))
            maps = (np.ascontiguousarray(self.map1[y0:y1, x0:x1]),
                    np.ascontiguousarray(self.map2[y0:y1, x0:x1]))
            self._region_maps[box] = maps
        return maps

    def raw_points(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the raw frame shows the undistorted frame's points `xs`, `ys` (float32, of
        one shape): the tables read between their pixels; -1 beyond the undistorted frame."""
        if not self._float_map:
            assert self.map1 is not None and self.map2 is not None
            self._float_map.append(cv2.convertMaps(self.map1, self.map2, cv2.CV_32FC2)[0])
        raw = cv2.remap(self._float_map[0], xs, ys, cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE)
        width, height = self.image_size
        raw[(xs < 0) | (ys < 0) | (xs > width - 1) | (ys > height - 1)] = -1.0
        return raw[..., 0], raw[..., 1]

    def grid_points(self, grid_to_frame: np.ndarray, size: tuple[int, int]
                    ) -> tuple[np.ndarray, np.ndarray]:
        """`raw_points` of a grid of `size` (width, height) points that the homography
        `grid_to_frame` sends into the undistorted frame (a top-down view of the board, a
        frame region sampled sparsely); the last few grids are kept."""
        key = np.asarray(grid_to_frame, np.float64).tobytes() + np.asarray(size).tobytes()
        points = self._grids.get(key)
        if points is None:
            width, height = size
            xs, ys = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
            mapped = np.asarray(grid_to_frame, np.float64) @ np.stack(
                [xs.ravel(), ys.ravel(), np.ones(xs.size)])
            with np.errstate(divide="ignore", invalid="ignore"):
                at = (mapped[:2] / mapped[2]).astype(np.float32)
            at[:, ~(mapped[2] > 0) | ~np.isfinite(at).all(axis=0)] = -1.0
            points = self.raw_points(at[0].reshape(height, width), at[1].reshape(height, width))
            if len(self._grids) >= 8:
                self._grids.pop(next(iter(self._grids)))
            self._grids[key] = points
        return points

    def distort_points(self, points_px: np.ndarray, calibration: CameraCalibration) -> np.ndarray:
        """Points (N, 2) in the undistorted frame → where the lens shows them in the raw
        frame (the inverse of `undistort_points`)."""
        pts = np.asarray(points_px, np.float64).reshape(-1, 2)
        rays = cv2.undistortPoints(pts.reshape(-1, 1, 2), self.camera_matrix, None)
        rays3 = cv2.convertPointsToHomogeneous(np.asarray(rays).reshape(-1, 2))
        out, _ = cv2.projectPoints(rays3.astype(np.float64), np.zeros(3), np.zeros(3),
                                   calibration.K, calibration.dist)
        return np.asarray(out, np.float64).reshape(-1, 2)

    def undistort_points(self, points_px: np.ndarray, calibration: CameraCalibration) -> np.ndarray:
        """Points (N, 2) in the distorted frame → the same points in the undistorted frame."""
        pts = np.asarray(points_px, np.float64).reshape(-1, 1, 2)
        # More iterations than undistortPoints' 5: a strong lens needs them near the corners.
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-10)
        # OpenCV 4 takes the criteria in undistortPointsIter, OpenCV 5 in undistortPoints.
        iterate = getattr(cv2, "undistortPointsIter", None)
        if iterate is not None:
            out = iterate(pts, calibration.K, calibration.dist, None, self.camera_matrix, criteria)
        else:
            out = cv2.undistortPoints(pts, calibration.K, calibration.dist, None, None,
                                      self.camera_matrix, criteria)
        return np.asarray(out).reshape(-1, 2)


def make_undistorter(
    calibration: CameraCalibration,
    image_size: tuple[int, int] | None = None,
    *,
    alpha: float | None = 0.0,
) -> Undistorter:
    """Remap tables for `calibration` at `image_size` (default: the calibration's own).

    `alpha` = 0 keeps only pixels that exist in the photo (a slight zoom); 1 keeps every
    photo pixel, with black corners; None keeps the calibration's own camera matrix, so the
    middle of the frame keeps its scale (with barrel distortion, the photo's rim is lost and
    no pixel is black). A calibration made at another size of the same aspect is scaled
    first."""
    if alpha is not None and not 0.0 <= alpha <= 1.0:
        raise CalibrationError(f"alpha must be between 0 and 1, not {alpha}")
    if image_size is not None and image_size != calibration.image_size:
        calibration = calibration.scaled_to(*image_size)
    size = calibration.image_size
    if not calibration.has_distortion:
        w, h = size
        return Undistorter(size, calibration.K, None, None, (0, 0, w, h))
    k, dist = calibration.K, calibration.dist
    roi: tuple[int, int, int, int] | Sequence[int] = (0, 0, *size)
    new_k = k
    if alpha is not None:
        new_k, roi = cv2.getOptimalNewCameraMatrix(k, dist, size, alpha, size)
    # CV_16SC2 tables: fixed-point coordinates, ~1.4x faster to remap than float maps.
    map1, map2 = cv2.initUndistortRectifyMap(k, dist, None, new_k, size, cv2.CV_16SC2)
    x, y, w, h = (int(v) for v in roi)
    return Undistorter(size, new_k, map1, map2, (x, y, w, h))


@dataclass(frozen=True, eq=False)  # arrays: compare by identity
class WarpMaps:
    """Remap tables from the raw (distorted) frame to a view defined by a homography."""

    out_size: tuple[int, int]
    map1: np.ndarray
    map2: np.ndarray

    def __call__(self, frame_bgr: np.ndarray) -> np.ndarray:
        return cv2.remap(frame_bgr, self.map1, self.map2, cv2.INTER_LINEAR)


def warp_maps(
    calibration: CameraCalibration, homography: np.ndarray, out_size: tuple[int, int]
) -> WarpMaps:
    """Tables for `out = warpPerspective(undistort(frame), homography)` in one remap.

    `homography` maps *undistorted* pixel coordinates (the calibration's own K, not an
    optimal new one) to output pixels, e.g. image → top-down board. Build the tables
    once per board pose; each frame then costs a remap of the output size only."""
    k = calibration.K
    h = np.asarray(homography, np.float64)
    # initUndistortRectifyMap sends output pixel p along the ray (P R)^-1 p, then through
    # the lens and K. With P = I and R = H K that ray is K^-1 H^-1 p: the undistorted
    # pixel H^-1 p, seen by the calibrated camera. (R need not be a rotation here.)
    map1, map2 = cv2.initUndistortRectifyMap(
        k, calibration.dist, h @ k, np.eye(3), out_size, cv2.CV_16SC2
    )
    return WarpMaps(out_size, map1, map2)


@dataclass(frozen=True, eq=False)  # arrays: compare by identity
class LensImage:
    """A raw frame read as its undistorted frame without undistorting it: the points asked
    are looked up through the lens (`Undistorter.raw_points`), so the few thousand samples
    tracking reads, and the small views of the board, cost a fraction of undistorting the
    whole frame. Sliced like an image (rows, then columns), a region keeps its place in the
    undistorted frame; `pixels()` undistorts the whole frame where pixels are needed."""

    raw: np.ndarray
    undistorter: Undistorter
    box: tuple[int, int, int, int]  # x0, y0, x1, y1: the region of the undistorted frame
    _whole: list[np.ndarray] = field(default_factory=list, repr=False)
    _small: list[tuple[int, np.ndarray]] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, raw: np.ndarray, undistorter: Undistorter) -> LensImage:
        width, height = undistorter.image_size
        return cls(raw, undistorter, (0, 0, width, height))

    @property
    def shape(self) -> tuple[int, ...]:
        x0, y0, x1, y1 = self.box
        return (y1 - y0, x1 - x0, *self.raw.shape[2:])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __getitem__(self, index: tuple[slice, slice]) -> LensImage:
        rows, columns = index
        x0, y0, x1, y1 = self.box
        top, bottom, _ = rows.indices(y1 - y0)
        left, right, _ = columns.indices(x1 - x0)
        # (one frame's: the region shares the whole frame's undistorted and shrunk copies)
        return LensImage(self.raw, self.undistorter, (x0 + left, y0 + top, x0 + right, y0 + bottom),
                         self._whole, self._small)

    def remap(self, xs: np.ndarray, ys: np.ndarray, border: int = cv2.BORDER_CONSTANT) -> np.ndarray:
        """`cv2.remap` of this region at the points `xs`, `ys` (float32), bilinear."""
        raw_x, raw_y = self.undistorter.raw_points(xs + np.float32(self.box[0]),
                                                   ys + np.float32(self.box[1]))
        return np.asarray(cv2.remap(self.raw, raw_x, raw_y, cv2.INTER_LINEAR, borderMode=border))

    def grid(self, grid_to_region: np.ndarray, size: tuple[int, int], *, shrink: int = 1
             ) -> np.ndarray:
        """The region read at a grid of `size` (width, height) points that the homography
        `grid_to_region` sends into it, black beyond the frame (`warpPerspective` with an
        inverse map, through the lens). `shrink`: grey, each point the mean of `shrink` x `shrink`
        raw pixels round it (a grid that many pixels apart, read without aliasing)."""
        to_frame = np.array([[1.0, 0, self.box[0]], [0, 1.0, self.box[1]], [0, 0, 1.0]]) @ grid_to_region
        raw_x, raw_y = self.undistorter.grid_points(to_frame, size)
        source = self.raw
        if shrink > 1:
            source = self._shrunk(shrink)
            raw_x, raw_y = (raw_x + 0.5) / shrink - 0.5, (raw_y + 0.5) / shrink - 0.5
        return np.asarray(cv2.remap(source, raw_x, raw_y, cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT))

    def _shrunk(self, shrink: int) -> np.ndarray:
        """The raw frame, grey, each `shrink` x `shrink` block averaged (kept: the
        thumbnails of one frame share it)."""
        for kept, image in self._small:
            if kept == shrink:
                return image
        grey = self.raw if self.raw.ndim == 2 else cv2.cvtColor(self.raw, cv2.COLOR_BGR2GRAY)
        image = cv2.resize(grey, None, fx=1 / shrink, fy=1 / shrink, interpolation=cv2.INTER_AREA)
        self._small.append((shrink, image))
        return image

    def pixels(self) -> np.ndarray:
        """The region undistorted."""
        if not self._whole:
            self._whole.append(self.undistorter(self.raw))
        x0, y0, x1, y1 = self.box
        return self._whole[0][y0:y1, x0:x1]


# A frame, or a region of one, as the pipeline reads it: an image (undistorted where there is
# a lens), or a raw frame read through its lens
Frame = np.ndarray | LensImage


def pixels(frame: Frame) -> np.ndarray:
    """A frame's pixels: a `LensImage` undistorted, an image as it is."""
    return frame.pixels() if isinstance(frame, LensImage) else frame
