"""The camera: a real pinhole with OpenCV intrinsics, lens distortion and a pose.

World coordinates are millimetres with the board surface at z = 0, x along the files (a→e)
and y along the ranks (1→6), z up. Scenes are drawn on an undistorted *canvas* (the ideal
pinhole image plus a margin), then the lens distortion is applied to the whole picture
with one `cv2.remap`; so every image point in the ground truth is `cv2.projectPoints` with
the distortion coefficients, exactly where the lens puts it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from referee.errors import RenderError
from referee_lab.synth.truth import CameraTruth

FloatArray = npt.NDArray[np.float64]
Map = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Camera:
    """Intrinsics, distortion (k1, k2, p1, p2, k3) and pose (world → camera)."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    dist: tuple[float, float, float, float, float]
    rvec: tuple[float, float, float]
    tvec: tuple[float, float, float]

    @property
    def K(self) -> FloatArray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @cached_property
    def R(self) -> FloatArray:
        # Cached (read-only): every projection of every frame asks for it.
        turned, _ = cv2.Rodrigues(np.array(self.rvec, dtype=np.float64))
        rotation = np.asarray(turned, dtype=np.float64)
        rotation.flags.writeable = False
        return rotation

    @cached_property
    def position(self) -> FloatArray:
        """The camera centre in world coordinates."""
        centre = np.asarray(-self.R.T @ np.array(self.tvec), dtype=np.float64)
        centre.flags.writeable = False
        return centre

    def truth(self) -> CameraTruth:
        k = self.K
        rows = tuple((float(r[0]), float(r[1]), float(r[2])) for r in k)
        return CameraTruth(self.width, self.height, rows, tuple(float(d) for d in self.dist),
                           self.rvec, self.tvec)

    def project(self, points: FloatArray) -> FloatArray:
        """World points (N x 3) to distorted image points (N x 2): what the truth records."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 3)
        image, _ = cv2.projectPoints(pts, np.array(self.rvec), np.array(self.tvec), self.K,
                                     np.array(self.dist))
        return np.asarray(image, dtype=np.float64).reshape(-1, 2)

    def to_camera(self, points: FloatArray) -> FloatArray:
        """World points (N x 3) in camera coordinates (z = depth)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        return np.asarray(pts @ self.R.T + np.array(self.tvec), dtype=np.float64)

    def with_pose(self, rvec: FloatArray, tvec: FloatArray) -> Camera:
        r = np.asarray(rvec, dtype=np.float64).ravel()
        t = np.asarray(tvec, dtype=np.float64).ravel()
        return Camera(self.width, self.height, self.fx, self.fy, self.cx, self.cy, self.dist,
                      (float(r[0]), float(r[1]), float(r[2])),
                      (float(t[0]), float(t[1]), float(t[2])))

    def scaled(self, factor: float) -> Camera:
        """The same camera at another output size (for fast previews and tests)."""
        w, h = round(self.width * factor), round(self.height * factor)
        sx, sy = w / self.width, h / self.height
        return Camera(w, h, self.fx * sx, self.fy * sy, (self.cx + 0.5) * sx - 0.5,
                      (self.cy + 0.5) * sy - 0.5, self.dist, self.rvec, self.tvec)


def look_at(eye: FloatArray, target: FloatArray, up: FloatArray) -> tuple[FloatArray, FloatArray]:
    """rvec, tvec of a camera at `eye` looking at `target`, with `up` pointing up in the image."""
    forward = target - eye
    forward = forward / np.linalg.norm(forward)
    down = -(up - np.dot(up, forward) * forward)
    down = down / np.linalg.norm(down)
    right = np.cross(down, forward)
    rotation = np.stack([right, down, forward])  # rows: camera axes in world coordinates
    rvec, _ = cv2.Rodrigues(rotation)
    tvec = -rotation @ eye
    return np.asarray(rvec, dtype=np.float64).ravel(), np.asarray(tvec, dtype=np.float64)


@dataclass(frozen=True)
class Lens:
    """A real camera's intrinsics and distortion (from a camera calibration file), to render
    what that camera would see instead of drawing a lens."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    dist: tuple[float, float, float, float, float]  # k1 k2 p1 p2 k3

    def scaled_to(self, width: int, height: int) -> Lens:
        """The same lens delivering `width` x `height` frames (the same aspect)."""
        sx, sy = width / self.width, height / self.height
        if abs(sx - sy) > 1e-3 * max(sx, sy):
            raise RenderError(f"the camera file is for {self.width}x{self.height} frames: "
                              f"{width}x{height} has another aspect")
        return Lens(width, height, self.fx * sx, self.fy * sy, (self.cx + 0.5) * sx - 0.5,
                    (self.cy + 0.5) * sy - 0.5, self.dist)

    def folds_back(self) -> bool:
        """Whether the distortion turns back on itself inside the frame (a polynomial fitted
        to the middle of the field and extrapolated): no image could be drawn through it."""
        k1, k2, _, _, k3 = self.dist
        corner = max(math.hypot(x / self.fx, y / self.fy) for x in (self.cx, self.width - self.cx)
                     for y in (self.cy, self.height - self.cy))
        r = np.linspace(0.0, 1.05 * corner, 256)
        radius = r * (1 + k1 * r**2 + k2 * r**4 + k3 * r**6)
        return bool(np.any(np.diff(radius) <= 0))


@dataclass(frozen=True)
class CameraSpec:
    """The ranges a camera is drawn from."""

    width: int = 1280
    height: int = 720
    tilt: tuple[float, float] = (0.0, 40.0)  # degrees from straight down
    azimuth: tuple[float, float] = (0.0, 360.0)  # where the camera stands around the board
    hfov: tuple[float, float] = (50.0, 72.0)  # horizontal field of view, degrees
    fill: tuple[float, float] = (0.6, 0.92)  # board extent / image extent, limiting side
    distortion: float = 1.0  # scale of the drawn lens distortion (0 = ideal pinhole)
    lens: Lens | None = None  # a real camera's lens instead of a drawn one (then hfov,
    # distortion and the size above are not used)


def sample_camera(rng: np.random.Generator, spec: CameraSpec, extent: FloatArray) -> Camera:
    """A camera over a board whose outline (N x 3 points, mm) is `extent`: the board fills a
    drawn share of the frame, a little off-centre, and lies wholly inside it."""
    drawn = _drawn_lens(rng, spec)  # drawn always: a given lens keeps the seed's pose
    lens = spec.lens or drawn
    w, h = lens.width, lens.height
    tilt = math.radians(rng.uniform(*spec.tilt))
    azimuth = math.radians(rng.uniform(*spec.azimuth))
    fill = rng.uniform(*spec.fill)
    centre = extent.mean(axis=0)
    pan = rng.uniform(-1, 1, 2) * 0.06
    base = Camera(w, h, lens.fx, lens.fy, lens.cx, lens.cy, lens.dist, (0, 0, 0), (0, 0, 0))
    # Horizontal direction from the camera toward the board: "up" in the image.
    toward = np.array([math.cos(azimuth), math.sin(azimuth), 0.0])
    distance = 800.0
    span = float(np.ptp(extent[:, :2], axis=0).max())
    camera = base
    for _ in range(80):
        target = centre + np.array([pan[0], pan[1], 0.0]) * span
        eye = target - distance * math.sin(tilt) * toward
        eye = eye + np.array([0.0, 0.0, distance * math.cos(tilt)])
        rvec, tvec = look_at(eye, target, toward)
        camera = base.with_pose(rvec, tvec)
        image = camera.project(extent)
        size = np.ptp(image, axis=0)
        ratio = max(size[0] / w, size[1] / h)
        inside = bool(np.all((image > 2) & (image < np.array([w - 3, h - 3]))))
        if abs(ratio - fill) > 0.01:
            distance *= ratio / fill
        elif inside:
            break
        elif np.abs(pan).max() > 0.004:
            pan = pan * 0.5
        else:  # centred and still too big (distortion pushes corners out): shrink
            fill *= 0.97
    return camera


def _drawn_lens(rng: np.random.Generator, spec: CameraSpec) -> Lens:
    """A lens drawn from the spec's ranges."""
    w, h = spec.width, spec.height
    hfov = math.radians(rng.uniform(*spec.hfov))
    fx = (w / 2) / math.tan(hfov / 2)
    fy = fx * rng.uniform(0.997, 1.003)
    cx = (w - 1) / 2 + rng.uniform(-0.02, 0.02) * w
    cy = (h - 1) / 2 + rng.uniform(-0.02, 0.02) * h
    d = spec.distortion
    k1 = rng.uniform(-0.22, 0.06) * d
    k2 = rng.uniform(-0.05, 0.12) * d * abs(k1) * 4
    p1, p2 = rng.uniform(-0.0015, 0.0015, 2) * d
    k3 = 0.0
    # A real lens maps radius monotonically over the whole frame: shrink any drawn
    # distortion that would fold back (the inverse map would not exist).
    r = np.linspace(0, 1.6 * math.hypot(w / 2 / fx, h / 2 / fy), 64)
    while np.any(1 + 3 * k1 * r**2 + 5 * k2 * r**4 < 0.3):
        k1, k2 = k1 * 0.7, k2 * 0.7
    return Lens(w, h, fx, fy, cx, cy, (k1, k2, p1, p2, k3))


@lru_cache(maxsize=8)
def _distortion_map(width: int, height: int, fx: float, fy: float, cx: float, cy: float,
                    dist: tuple[float, float, float, float, float]) -> tuple[Map, Map]:
    """For every output pixel, where the ideal canvas shows it: the inverse of the lens model,
    solved by fixed-point iteration on a coarse grid and interpolated (it is smooth)."""
    step = 4
    # Coarse samples sit where cv2.resize (float, exact integer ratio) expects them, with one
    # sample of padding all round, so every pixel is interpolated and none clamped.
    nx, ny = -(-width // step) + 2, -(-height // step) + 2
    gx = (np.arange(nx) - 1 + 0.5) * step - 0.5
    gy = (np.arange(ny) - 1 + 0.5) * step - 0.5
    xd, yd = np.meshgrid((gx - cx) / fx, (gy - cy) / fy)
    k1, k2, p1, p2, k3 = dist
    x, y = xd.copy(), yd.copy()
    for _ in range(100):
        r2 = x * x + y * y
        radial = 1 + k1 * r2 + k2 * r2 * r2 + k3 * r2 ** 3
        dx = 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
        dy = p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
        nx_, ny_ = (xd - dx) / radial, (yd - dy) / radial
        change = float(np.abs(nx_ - x).max() + np.abs(ny_ - y).max())
        x, y = nx_, ny_
        if change < 1e-10:
            break
    coarse = np.dstack([x * fx + cx, y * fy + cy]).astype(np.float32)
    fine = cv2.resize(coarse, (nx * step, ny * step), interpolation=cv2.INTER_LINEAR)
    fine = fine[step:step + height, step:step + width]
    return np.ascontiguousarray(fine[..., 0]), np.ascontiguousarray(fine[..., 1])


def canvas_margin(camera: Camera) -> int:
    """How far outside the frame the distortion reaches into the ideal image, in pixels."""
    map_x, map_y = _distortion_map(camera.width, camera.height, camera.fx, camera.fy, camera.cx,
                                   camera.cy, camera.dist)
    over = max(-float(map_x.min()), -float(map_y.min()), float(map_x.max()) - camera.width,
               float(map_y.max()) - camera.height, 0.0)
    return math.ceil(over) + 4


def distortion_maps(camera: Camera, margin: int) -> tuple[Map, Map]:
    return _margin_maps(camera.width, camera.height, camera.fx, camera.fy, camera.cx, camera.cy,
                        camera.dist, margin)


@lru_cache(maxsize=8)
def _margin_maps(width: int, height: int, fx: float, fy: float, cx: float, cy: float,
                 dist: tuple[float, float, float, float, float], margin: int) -> tuple[Map, Map]:
    """The maps shifted onto the canvas: kept, since a shaking camera keeps its lens."""
    map_x, map_y = _distortion_map(width, height, fx, fy, cx, cy, dist)
    shifted = map_x + np.float32(margin), map_y + np.float32(margin)
    for array in shifted:
        array.flags.writeable = False
    return shifted


def turned_about_centre(steady: Camera, camera: Camera) -> bool:
    """Whether `camera` is `steady` turned about its own centre (a trembling camera): the
    same lens in the same place."""
    lens = ("width", "height", "fx", "fy", "cx", "cy", "dist")
    return all(getattr(steady, name) == getattr(camera, name) for name in lens) and bool(
        np.allclose(steady.position, camera.position, rtol=0.0, atol=1e-6))


def turned_lens_map(drawn_from: Camera, camera: Camera, margin: int) -> Map | None:
    """Where each pixel of the frame `camera` takes lies on a canvas drawn from `drawn_from`,
    the same camera turned about its centre: the lens's map through the homography
    K R_drawn R_camera^T K^-1, for one resampling (`through_lens`). None: the same camera."""
    if drawn_from == camera:
        return None
    k = np.array([[camera.fx, 0.0, camera.cx + margin], [0.0, camera.fy, camera.cy + margin],
                  [0.0, 0.0, 1.0]])
    back = k @ drawn_from.R @ camera.R.T @ np.linalg.inv(k)
    points = _lens_points(camera.width, camera.height, camera.fx, camera.fy, camera.cx,
                          camera.cy, camera.dist, margin)
    where = cv2.perspectiveTransform(points, back).reshape(camera.height, camera.width, 2)
    return np.asarray(where, dtype=np.float32)


def through_lens(canvas_image: npt.NDArray[np.uint8], canvas: Canvas, turned: Map | None,
                 ) -> npt.NDArray[np.uint8]:
    """The frame of a canvas: through `canvas`'s lens, or the turned map of it
    (`turned_lens_map`)."""
    if turned is None:
        return canvas.distort(canvas_image)
    out = cv2.remap(canvas_image, turned, None,  # type: ignore[call-overload]  # (one 2-channel map)
                    cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return np.asarray(out, dtype=canvas_image.dtype)


@lru_cache(maxsize=4)
def _lens_points(width: int, height: int, fx: float, fy: float, cx: float, cy: float,
                 dist: tuple[float, float, float, float, float], margin: int,
                 ) -> npt.NDArray[np.float32]:
    """The lens's map on the canvas as (pixels, 1, 2) points, for `cv2.perspectiveTransform`."""
    map_x, map_y = _margin_maps(width, height, fx, fy, cx, cy, dist, margin)
    points = np.stack([map_x, map_y], axis=-1).reshape(-1, 1, 2)
    points.flags.writeable = False
    return points


@dataclass(frozen=True)
class Canvas:
    """The undistorted drawing surface of a camera: pinhole projection plus a margin."""

    camera: Camera
    margin: int

    @property
    def size(self) -> tuple[int, int]:
        return self.camera.width + 2 * self.margin, self.camera.height + 2 * self.margin

    def project(self, points: FloatArray) -> tuple[FloatArray, FloatArray]:
        """World points (N x 3) to canvas pixels (N x 2, ideal pinhole) and their depths."""
        cam = self.camera.to_camera(points)
        z = np.maximum(cam[:, 2], 1e-3)
        u = self.camera.fx * cam[:, 0] / z + self.camera.cx + self.margin
        v = self.camera.fy * cam[:, 1] / z + self.camera.cy + self.margin
        return np.stack([u, v], axis=1), cam[:, 2]

    def homography(self, plane_points: FloatArray, texture_points: FloatArray) -> FloatArray:
        """The homography from texture pixels to canvas pixels for a planar patch whose four
        world points `plane_points` sit at `texture_points` in the texture."""
        image, _ = self.project(plane_points)
        h = cv2.getPerspectiveTransform(texture_points.astype(np.float32), image.astype(np.float32))
        return np.asarray(h, dtype=np.float64)

    def distort(self, canvas: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
        """The finished canvas through the lens: the output frame."""
        map_x, map_y = distortion_maps(self.camera, self.margin)
        out = cv2.remap(canvas, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        return np.asarray(out, dtype=canvas.dtype)


def make_canvas(camera: Camera) -> Canvas:
    return Canvas(camera, canvas_margin(camera))
