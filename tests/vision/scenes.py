"""Test frames drawn with OpenCV: a board (printed lines, checker or dark wood, with a margin)
seen by a pinhole camera up to 40 degrees from vertical at any rotation, dice as 3D cubes with
cast shadows, a textured table with clutter, uneven light, a hand, noise and blur. Every
frame comes with its true homography and corners. Shared by the tests and the benchmarks."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.pose import apply_homography, board_corners

STYLES = ("lines", "checker", "wood")
PX = 64  # texture pixels per square


@dataclass(frozen=True)
class Camera:
    k: NDArray[np.float64]
    r: NDArray[np.float64]
    t: NDArray[np.float64]

    def project(self, pts: NDArray[np.float64]) -> NDArray[np.float64]:
        cam = pts @ self.r.T + self.t
        img = cam @ self.k.T
        return img[:, :2] / img[:, 2:3]

    @property
    def homography(self) -> NDArray[np.float64]:
        h = self.k @ np.column_stack([self.r[:, 0], self.r[:, 1], self.t])
        return h / h[2, 2]


@dataclass(frozen=True)
class Scene:
    frame: NDArray[np.uint8]
    files: int
    ranks: int
    homography: NDArray[np.float64]
    corners: NDArray[np.float64]
    camera: Camera
    occupied: tuple[int, ...]
    style: str = ""

    @property
    def diagonal(self) -> float:
        c = self.corners
        return float(max(np.linalg.norm(c[2] - c[0]), np.linalg.norm(c[3] - c[1])))


def _rot_x(a: float) -> NDArray[np.float64]:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_z(a: float) -> NDArray[np.float64]:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def make_camera(files: int, ranks: int, margin: float, *, tilt_deg: float, rotation_deg: float,
                size: tuple[int, int], fill: float, rng: np.random.Generator) -> Camera:
    """A camera `tilt_deg` from vertical, the board turned `rotation_deg` in the image,
    the board (with margin) filling about `fill` of the frame's height."""
    w, h = size
    f = w * rng.uniform(0.8, 1.2)
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1.0]])
    r0 = np.array([[1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]])  # looking straight down
    azimuth = rng.uniform(0, 2 * np.pi)
    r = _rot_z(np.radians(rotation_deg)) @ _rot_x(np.radians(tilt_deg)) @ r0 @ _rot_z(azimuth)
    target = np.array([files / 2, ranks / 2, 0.0]) + rng.uniform(-0.3, 0.3, 3) * [1, 1, 0]
    outline = np.array([[-margin, -margin, 0], [files + margin, -margin, 0],
                        [files + margin, ranks + margin, 0], [-margin, ranks + margin, 0]])
    dist = 10.0
    for _ in range(6):  # settle the distance so the board fills the wanted part of the frame
        cam = Camera(k, r, -r @ (target - dist * r[2]))
        pts = cam.project(outline)
        span = max((pts[:, 0].max() - pts[:, 0].min()) / w, (pts[:, 1].max() - pts[:, 1].min()) / h)
        dist *= span / fill
    cam = Camera(k, r, -r @ (target - dist * r[2]))
    pts = cam.project(outline)
    shift = np.zeros(2)  # keep it inside the frame with a few pixels to spare
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    for i, extent in enumerate((w, h)):
        if lo[i] < 8:
            shift[i] = 8 - lo[i]
        elif hi[i] > extent - 8:
            shift[i] = extent - 8 - hi[i]
    k2 = k.copy()
    k2[:2, 2] += shift
    return Camera(k2, r, cam.t)


def _table(size: tuple[int, int], rng: np.random.Generator) -> NDArray[np.uint8]:
    w, h = size
    base = rng.uniform(60, 200, 3)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, np.pi)
    grain = np.sin((xx * np.cos(angle) + yy * np.sin(angle)) / rng.uniform(3, 12)
                   + 2.0 * np.sin(yy / 37.0 + xx / 53.0))
    img = base[None, None, :] * (1 + 0.12 * grain[..., None])
    img += rng.normal(0, 6, (h, w, 1))
    table = np.clip(img, 0, 255).astype(np.uint8)
    for _ in range(rng.integers(2, 7)):  # clutter: books, pens, cups
        cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        colour = tuple(int(c) for c in rng.uniform(0, 255, 3))
        if rng.random() < 0.5:
            sides = (float(rng.uniform(40, 220)), float(rng.uniform(20, 160)))
            box = ((cx, cy), sides, float(rng.uniform(0, 180)))
            cv2.fillConvexPoly(table, cv2.boxPoints(box).astype(np.int32), colour, cv2.LINE_AA)
        else:
            cv2.circle(table, (cx, cy), int(rng.uniform(15, 60)), colour, -1, cv2.LINE_AA)
    return table


def _texture(files: int, ranks: int, margin: float, style: str,
             rng: np.random.Generator) -> NDArray[np.uint8]:
    m = round(margin * PX)
    w, h = files * PX + 2 * m, ranks * PX + 2 * m
    if style == "wood":
        base = np.array([rng.uniform(20, 50), rng.uniform(40, 80), rng.uniform(70, 120)])
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        grain = np.sin(xx / rng.uniform(2, 6) + 3 * np.sin(yy / 41.0)) * 0.15
        tex = np.clip(base[None, None, :] * (1 + grain[..., None]), 0, 255).astype(np.uint8)
        line = tuple(int(c) for c in base * rng.uniform(0.3, 0.55))
    elif style == "checker":
        a = rng.uniform(150, 240, 3)
        b = a * rng.uniform(0.3, 0.7)
        tex = np.empty((h, w, 3), np.uint8)
        tex[:] = rng.uniform(20, 120, 3)  # the frame around the squares
        for r in range(ranks):
            for f in range(files):
                y0 = m + (ranks - 1 - r) * PX
                tex[y0:y0 + PX, m + f * PX:m + (f + 1) * PX] = a if (r + f) % 2 else b
        return tex
    else:
        base = rng.uniform(190, 250, 3)
        tex = np.empty((h, w, 3), np.uint8)
        tex[:] = base
        line = tuple(int(c) for c in rng.uniform(0, 80, 3))
    thick = max(1, round(PX * rng.uniform(0.02, 0.06)))
    for i in range(files + 1):
        x = m + i * PX
        cv2.line(tex, (x, m), (x, m + ranks * PX), line, thick, cv2.LINE_AA)
    for j in range(ranks + 1):
        y = m + j * PX
        cv2.line(tex, (m, y), (m + files * PX, y), line, thick, cv2.LINE_AA)
    return tex


def _draw_die(img: NDArray[np.uint8], cam: Camera, centre: NDArray[np.float64], side: float,
              angle: float, colour: NDArray[np.float64], light: NDArray[np.float64]) -> None:
    c, s = np.cos(angle), np.sin(angle)
    half = side / 2
    square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    base = square @ np.array([[c, s], [-s, c]])
    base = base + centre
    bottom = np.column_stack([base, np.zeros(4)])
    top = np.column_stack([base, np.full(4, side)])
    # cast shadow: the cube's top pushed down along the light onto the table
    shadow_top = top[:, :2] - light[:2] / light[2] * side
    shadow = cam.project(np.column_stack([np.vstack([base, shadow_top]), np.zeros(8)]))
    hull = cv2.convexHull(shadow.astype(np.float32)).astype(np.int32)
    overlay = img.copy()
    cv2.fillConvexPoly(overlay, hull, (0, 0, 0), cv2.LINE_AA)
    cv2.addWeighted(overlay, 0.35, img, 0.65, 0, dst=img)
    cam_centre = -cam.r.T @ cam.t
    faces = [(top, np.array([0, 0, 1.0]))]
    for i in range(4):
        quad = np.array([bottom[i], bottom[(i + 1) % 4], top[(i + 1) % 4], top[i]])
        normal = np.cross(quad[1] - quad[0], quad[3] - quad[0])
        normal /= np.linalg.norm(normal)
        if normal @ (cam_centre - quad.mean(axis=0)) < 0:
            normal = -normal
        faces.append((quad, normal))
    for quad, normal in faces:
        if normal @ (cam_centre - quad.mean(axis=0)) <= 0:
            continue  # faces turned away from the camera
        shade = 0.45 + 0.55 * max(0.0, float(normal @ (-light)))
        pts = cam.project(quad).astype(np.int32)
        cv2.fillConvexPoly(img, pts, tuple(float(v) for v in colour * shade), cv2.LINE_AA)
    pip = cam.project(np.array([[*centre, side]]))[0]
    cv2.circle(img, (int(pip[0]), int(pip[1])), max(2, int(side * 4)), (20, 20, 20), -1, cv2.LINE_AA)


def _hand(img: NDArray[np.uint8], target: NDArray[np.float64], scale: float,
          rng: np.random.Generator) -> None:
    h, w = img.shape[:2]
    edge = rng.integers(4)
    start = [np.array([rng.uniform(0, w), h + 20]), np.array([rng.uniform(0, w), -20.0]),
             np.array([-20.0, rng.uniform(0, h)]), np.array([w + 20.0, rng.uniform(0, h)])][edge]
    skin = np.array([rng.uniform(90, 150), rng.uniform(120, 180), rng.uniform(170, 235)])
    arm_w = int(scale * rng.uniform(0.9, 1.3))
    cv2.line(img, tuple(start.astype(int)), tuple(target.astype(int)), tuple(float(v) for v in skin * 0.9),
             arm_w, cv2.LINE_AA)
    direction = (target - start) / np.linalg.norm(target - start)
    angle = float(np.degrees(np.arctan2(direction[1], direction[0])))
    cv2.ellipse(img, tuple(target.astype(int)), (int(scale * 0.9), int(scale * 0.7)), angle, 0, 360,
                tuple(float(v) for v in skin), -1, cv2.LINE_AA)
    for i in range(4):  # fingers
        a = np.radians(angle + (i - 1.5) * 18)
        tip = target + scale * 1.6 * np.array([np.cos(a), np.sin(a)])
        cv2.line(img, tuple(target.astype(int)), tuple(tip.astype(int)), tuple(float(v) for v in skin),
                 max(3, int(scale * 0.28)), cv2.LINE_AA)


def make_scene(rng: np.random.Generator, files: int = 5, ranks: int = 6, *, style: str | None = None,
               tilt_deg: float | None = None, rotation_deg: float | None = None, hand: bool | None = None,
               pieces: float = 0.4, size: tuple[int, int] = (1280, 720), fill: float | None = None,
               margin: float | None = None, noise: float | None = None) -> Scene:
    """One random frame with ground truth; every unset condition is drawn from `rng`."""
    style = style if style is not None else str(rng.choice(STYLES))
    tilt = float(tilt_deg if tilt_deg is not None else rng.uniform(0, 40))
    rotation = float(rotation_deg if rotation_deg is not None else rng.uniform(0, 360))
    margin = float(margin if margin is not None else rng.uniform(0.15, 0.6))
    fill = float(fill if fill is not None else rng.uniform(0.55, 0.9))
    cam = make_camera(files, ranks, margin, tilt_deg=tilt, rotation_deg=rotation, size=size, fill=fill,
                      rng=rng)
    w, h = size
    frame = _table(size, rng)
    tex = _texture(files, ranks, margin, style, rng)
    m = round(margin * PX)
    # texture pixel -> board units (y up), then board -> image
    tex_to_board = np.array([[1 / PX, 0, -m / PX], [0, -1 / PX, ranks + m / PX], [0, 0, 1.0]])
    hom = cam.homography
    warp = hom @ tex_to_board
    board_img = cv2.warpPerspective(tex, warp, size, flags=cv2.INTER_AREA if tilt < 0 else cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full(tex.shape[:2], 255, np.uint8), warp, size)
    frame[mask > 127] = board_img[mask > 127]
    light = np.array([rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6), -1.0])
    light /= np.linalg.norm(light)
    occupied: list[int] = []
    colours = [rng.uniform(170, 250, 3), rng.uniform(10, 90, 3) * [1, 1, rng.uniform(1, 3)]]
    squares = [(f, r) for r in range(ranks) for f in range(files)]
    cam_centre = -cam.r.T @ cam.t
    # far squares first so nearer dice are drawn over them
    squares.sort(key=lambda fr: -float(np.hypot(fr[0] + 0.5 - cam_centre[0], fr[1] + 0.5 - cam_centre[1])))
    for f, r in squares:
        if rng.random() < pieces:
            occupied.append(r * files + f)
            centre = np.array([f + 0.5, r + 0.5]) + rng.uniform(-0.08, 0.08, 2)
            _draw_die(frame, cam, centre, 0.7, float(rng.uniform(0, np.pi / 2)),
                      colours[int(rng.integers(2))], light)
    corners = apply_homography(hom, board_corners(files, ranks))
    square_px = float(np.linalg.norm(corners[1] - corners[0])) / files
    if hand if hand is not None else rng.random() < 0.3:
        target = apply_homography(hom, np.array([[rng.uniform(0, files), rng.uniform(0, ranks)]]))[0]
        _hand(frame, target, square_px, rng)
    # uneven light, noise, blur
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    gx, gy = rng.uniform(-0.5, 0.5, 2)
    gain = 1 + gx * (xx / w - 0.5) + gy * (yy / h - 0.5)
    gain *= rng.uniform(0.55, 1.15)
    img = frame.astype(np.float32) * gain[..., None]
    sigma = float(noise if noise is not None else rng.uniform(1, 6))
    img += rng.normal(0, sigma, img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    blur = rng.uniform(0, 1.2)
    if blur > 0.3:
        out = cv2.GaussianBlur(out, (0, 0), blur)
    return Scene(out, files, ranks, hom, corners, cam, tuple(sorted(occupied)), style)
