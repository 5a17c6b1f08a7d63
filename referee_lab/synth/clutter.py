"""Things lying on the table beside the board: score sheets, coins, a pencil, a phone, and
spare dice; drawn into the table's texture (flat things) or as meshes (dice)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from referee_lab.synth.board import BoardLayout
from referee_lab.synth.mesh import Placed, rot_z
from referee_lab.synth.pieces import DieLook, die_mesh, die_orientation
from referee_lab.synth.textures import Image

FloatArray = npt.NDArray[np.float64]


def _free_spot(rng: np.random.Generator, layout: BoardLayout, region: tuple[float, ...],
               size: float) -> tuple[float, float] | None:
    """A point of the visible table region at least `size` mm from the board."""
    x0, y0, x1, y1 = region
    m = layout.margin_mm
    for _ in range(30):
        x, y = float(rng.uniform(x0, x1)), float(rng.uniform(y0, y1))
        dx = max(-m - x, x - layout.width_mm - m, 0.0)
        dy = max(-m - y, y - layout.height_mm - m, 0.0)
        if math.hypot(dx, dy) > size:
            return x, y
    return None


def draw_flat_clutter(rng: np.random.Generator, texture: Image, layout: BoardLayout,
                      region: tuple[float, ...], ppm: float, count: int) -> None:
    """Draw `count` flat things into the table texture (in place). Texture pixel (u, v) is
    world (x0 + u / ppm, y1 - v / ppm)."""
    x0, _, _, y1 = region

    def px(x: float, y: float) -> tuple[float, float]:
        return (x - x0) * ppm, (y1 - y) * ppm

    for _ in range(count):
        kind = str(rng.choice(["sheet", "coin", "pencil", "phone", "coin"]))
        spot = _free_spot(rng, layout, region, 60.0)
        if spot is None:
            return
        cx, cy = px(*spot)
        angle = float(rng.uniform(0, 180))
        shade = np.zeros(texture.shape[:2], np.uint8)
        if kind == "sheet":
            size = (210 * ppm, 148 * ppm) if rng.random() < 0.5 else (148 * ppm, 105 * ppm)
            box = _box(((cx, cy), size, angle))
            _shadow(texture, box, ppm, 3)
            cv2.fillConvexPoly(texture, np.round(box * 16).astype(np.int32),
                               (235, 240, 242), cv2.LINE_AA, 4)
            _lines(texture, box, ppm, rng)
        elif kind == "coin":
            r = float(rng.uniform(9, 13)) * ppm
            colour = (60, 120, 170) if rng.random() < 0.5 else (170, 170, 165)
            cv2.circle(shade, (round(cx + 1.5 * ppm), round(cy + 1.5 * ppm)), round(r), 255, -1)
            _apply_shadow(texture, shade, ppm)
            cv2.circle(texture, (round(cx * 16), round(cy * 16)), round(r * 16), colour, -1,
                       cv2.LINE_AA, 4)
            rim = tuple(c * 0.7 for c in colour)
            cv2.circle(texture, (round(cx * 16), round(cy * 16)), round(r * 0.85 * 16), rim,
                       max(1, round(ppm * 0.6)), cv2.LINE_AA, 4)
        elif kind == "pencil":
            box = _box(((cx, cy), (170 * ppm, 7 * ppm), angle))
            _shadow(texture, box + 2 * ppm, ppm, 2)
            colour = [(40, 180, 230), (40, 40, 170), (140, 90, 30)][int(rng.integers(3))]
            cv2.fillConvexPoly(texture, np.round(box * 16).astype(np.int32), colour,
                               cv2.LINE_AA, 4)
            centre_line = _box(((cx, cy), (170 * ppm, 2 * ppm), angle))
            light = tuple(min(255, c * 1.3 + 30) for c in colour)
            cv2.fillConvexPoly(texture, np.round(centre_line * 16).astype(np.int32), light,
                               cv2.LINE_AA, 4)
        else:
            box = _box(((cx, cy), (150 * ppm, 72 * ppm), angle))
            _shadow(texture, box + 2 * ppm, ppm, 3)
            cv2.fillConvexPoly(texture, np.round(box * 16).astype(np.int32), (25, 22, 20),
                               cv2.LINE_AA, 4)
            inner = _box(((cx, cy), (138 * ppm, 64 * ppm), angle))
            cv2.fillConvexPoly(texture, np.round(inner * 16).astype(np.int32), (45, 38, 35),
                               cv2.LINE_AA, 4)


def _box(rect: tuple[tuple[float, float], tuple[float, float], float]) -> npt.NDArray[np.float32]:
    return np.asarray(cv2.boxPoints(rect), dtype=np.float32)


def _shadow(texture: Image, box: npt.NDArray[np.float32], ppm: float, blur_mm: float) -> None:
    shade = np.zeros(texture.shape[:2], np.uint8)
    cv2.fillConvexPoly(shade, np.round((box + 1.5 * ppm) * 16).astype(np.int32), 255,
                       cv2.LINE_AA, 4)
    _apply_shadow(texture, shade, ppm * blur_mm / 2)


def _apply_shadow(texture: Image, shade: npt.NDArray[np.uint8], sigma: float) -> None:
    """Darken the texture under a blurred shadow mask, only around the mask's extent."""
    bx, by, bw, bh = cv2.boundingRect(shade)
    if bw == 0 or bh == 0:
        return
    pad = int(3 * max(sigma, 0.8)) + 2
    h, w = shade.shape
    x0, y0 = max(bx - pad, 0), max(by - pad, 0)
    x1, y1 = min(bx + bw + pad, w), min(by + bh + pad, h)
    soft = cv2.GaussianBlur(shade[y0:y1, x0:x1], (0, 0), max(sigma, 0.8)).astype(np.float32)
    roi = texture[y0:y1, x0:x1]
    roi[...] = (roi * (1 - 0.45 / 255.0 * soft[..., None])).astype(np.uint8)


def _lines(texture: Image, box: npt.NDArray[np.float32], ppm: float,
           rng: np.random.Generator) -> None:
    """Ruled lines and a few scribbled marks on a score sheet."""
    p0, p1, _, p3 = box
    across, down = p1 - p0, p3 - p0
    n = int(np.linalg.norm(down) / (8 * ppm))
    for i in range(1, n):
        a = p0 + down * i / n + across * 0.05
        b = p0 + down * i / n + across * 0.95
        cv2.line(texture, tuple(np.round(a * 16).astype(int)), tuple(np.round(b * 16).astype(int)),
                 (215, 205, 195), 1, cv2.LINE_AA, 4)
        if rng.random() < 0.5:
            e = a + across * float(rng.uniform(0.1, 0.5))
            cv2.line(texture, tuple(np.round((a + down * -0.3 / n) * 16).astype(int)),
                     tuple(np.round((e + down * -0.3 / n) * 16).astype(int)), (90, 50, 40),
                     max(1, round(ppm * 0.4)), cv2.LINE_AA, 4)


def spare_dice(rng: np.random.Generator, layout: BoardLayout, region: tuple[float, ...],
               looks: tuple[DieLook, ...], count: int, floor: float) -> list[Placed]:
    """Loose dice on the table (the die a Tensei player rolls, spares)."""
    out = []
    for _ in range(count):
        spot = _free_spot(rng, layout, region, 25.0)
        if spot is None:
            break
        look = looks[int(rng.integers(len(looks)))]
        rotation = rot_z(float(rng.uniform(0, 2 * math.pi))) @ die_orientation(
            int(rng.integers(1, 7)), rng)
        out.append(Placed(die_mesh(look), rotation, np.array([*spot, floor + look.size / 2]),
                          base_z=floor))
    return out
