"""Boards: their geometry in millimetres and their looks, drawn as a top-down texture.

A board of `files` x `ranks` squares of `square_mm` lies with a1's outer corner at the world
origin, files along +x and ranks along +y, its surface at z = 0; its margin surrounds the
grid. The texture maps texture pixel (u, v) to world (x0 + u / ppm, y1 - v / ppm)."""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

import referee_lab.synth.textures as tx
from referee_lab.synth.textures import Colour, Image

FloatArray = npt.NDArray[np.float64]
ToPixel = Callable[[float, float], tuple[int, int]]

BOARD_MATERIALS = ("paper", "card", "wood", "mat")
GOAL_MARKS = ("none", "tint", "circle", "cross", "frame")
SHIFT = 4  # sub-pixel bits for cv2 drawing
ONE = 1 << SHIFT


@dataclass(frozen=True)
class BoardLayout:
    """Where things are on a board, in world millimetres."""

    files: int
    ranks: int
    square_mm: float
    margin_mm: float
    thickness_mm: float
    goals: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()

    @property
    def width_mm(self) -> float:
        return self.files * self.square_mm

    @property
    def height_mm(self) -> float:
        return self.ranks * self.square_mm

    def square_names(self) -> list[str]:
        return [f"{string.ascii_lowercase[f]}{r + 1}"
                for r in range(self.ranks) for f in range(self.files)]

    def parse(self, name: str) -> tuple[int, int]:
        return ord(name[0]) - ord("a"), int(name[1:]) - 1

    def centre(self, name: str) -> FloatArray:
        f, r = self.parse(name)
        return np.array([(f + 0.5) * self.square_mm, (r + 0.5) * self.square_mm, 0.0])

    def grid_points(self) -> FloatArray:
        """(files+1) x (ranks+1) intersections, rank-major, at z = 0."""
        s = self.square_mm
        return np.array([[f * s, r * s, 0.0] for r in range(self.ranks + 1)
                         for f in range(self.files + 1)])

    def corners(self) -> FloatArray:
        w, h = self.width_mm, self.height_mm
        return np.array([[0, 0, 0], [w, 0, 0], [w, h, 0], [0, h, 0]], dtype=np.float64)

    def outline(self, z: float = 0.0) -> FloatArray:
        m, w, h = self.margin_mm, self.width_mm, self.height_mm
        return np.array([[-m, -m, z], [w + m, -m, z], [w + m, h + m, z], [-m, h + m, z]],
                        dtype=np.float64)

    def square_quad(self, name: str, z: float = 0.0) -> FloatArray:
        f, r = self.parse(name)
        s = self.square_mm
        return np.array([[f * s, r * s, z], [(f + 1) * s, r * s, z],
                         [(f + 1) * s, (r + 1) * s, z], [f * s, (r + 1) * s, z]])


@dataclass(frozen=True)
class BoardStyle:
    material: str  # one of BOARD_MATERIALS
    base: Colour  # paper, card or mat colour; the light tone of wood
    base_dark: Colour  # the dark tone of wood (and of the mat's texture)
    checkered: bool
    dark_square: Colour  # ink of the dark squares (multiplied over the material)
    light_square: Colour  # ink of the light squares
    line: Colour
    line_mm: float  # 0 = no grid lines
    border_mm: float  # outer frame line, 0 = none
    cell_gap_mm: float  # > 0 draws cells as separate rounded tiles of ink
    goal_mark: str
    goal_colour: Colour
    labels: bool
    wear: float
    side: Colour  # colour of the board's edge faces
    gloss: float  # 0 matte paper … 1 varnished wood


def sample_board_style(rng: np.random.Generator, material: str | None = None) -> BoardStyle:
    material = material or str(rng.choice(BOARD_MATERIALS))
    inks = [(40, 40, 40), (60, 50, 45), (120, 70, 30), (40, 40, 130), (50, 90, 40),
            (20, 20, 20), (90, 90, 90)]
    line = tx.jitter(rng, inks[int(rng.integers(len(inks)))], 0.15)
    if material == "wood":
        tones = [((150, 190, 225), (90, 130, 175)), ((110, 150, 200), (60, 95, 140)),
                 ((80, 110, 150), (40, 60, 95)), ((170, 205, 230), (120, 160, 200))]
        base, dark = tones[int(rng.integers(len(tones)))]
        side = tx.jitter(rng, (dark[0] * 0.8, dark[1] * 0.8, dark[2] * 0.8), 0.1)
    elif material == "mat":
        mats = [(225, 235, 238), (200, 225, 215), (235, 225, 205), (180, 200, 200)]
        base = mats[int(rng.integers(len(mats)))]
        dark = base
        side = tx.jitter(rng, (120, 120, 120), 0.2)
    else:
        papers = [(238, 242, 245), (215, 232, 240), (225, 225, 225), (205, 225, 235),
                  (235, 236, 230), (190, 215, 230)]
        base = papers[int(rng.integers(len(papers)))]
        dark = base
        side = (40, 40, 40) if rng.random() < 0.5 else (180, 185, 190)
    base_colour = tx.jitter(rng, base, 0.05)
    checkered = bool(rng.random() < 0.5)
    palettes = [((120, 160, 200), (225, 235, 240)), ((90, 130, 90), (220, 235, 230)),
                ((150, 110, 80), (230, 225, 215)), ((100, 100, 100), (235, 235, 235)),
                ((70, 100, 160), (200, 225, 240)), ((140, 140, 170), (240, 240, 245)),
                ((60, 90, 120), (170, 200, 220))]
    dark_sq, light_sq = palettes[int(rng.integers(len(palettes)))]
    if material == "wood" and rng.random() < 0.6:
        dark_sq = (150, 170, 190)  # a darker stain over the grain
        light_sq = (255, 255, 255)
    line_mm = 0.0 if checkered and rng.random() < 0.5 else float(rng.uniform(0.3, 2.5))
    gap = float(rng.uniform(1.0, 3.0)) if (not checkered and rng.random() < 0.25) else 0.0
    goal_colours = [(80, 80, 200), (60, 150, 220), (150, 110, 60), (90, 90, 90)]
    return BoardStyle(
        material=material, base=base_colour, base_dark=tx.jitter(rng, dark, 0.05),
        checkered=checkered,
        dark_square=tx.jitter(rng, dark_sq, 0.08), light_square=tx.jitter(rng, light_sq, 0.03),
        line=line, line_mm=line_mm, border_mm=float(rng.choice([0.0, rng.uniform(1.0, 4.0)])),
        cell_gap_mm=gap, goal_mark=str(rng.choice(GOAL_MARKS)),
        goal_colour=tx.jitter(rng, goal_colours[int(rng.integers(len(goal_colours)))], 0.1),
        labels=bool(rng.random() < 0.5), wear=float(rng.uniform(0.0, 0.25)), side=side,
        gloss=float(rng.uniform(0.3, 0.9) if material in ("wood", "mat") else rng.uniform(0, 0.3)),
    )


def sample_layout(rng: np.random.Generator, files: int, ranks: int, material: str, *,
                  goals: tuple[str, ...] = (), blocked: tuple[str, ...] = (),
                  square_mm: float | None = None) -> BoardLayout:
    square = square_mm or float(rng.uniform(32, 48))
    margin = float(rng.uniform(0.15, 0.8)) * square
    thickness = {"paper": 0.3, "mat": 1.5, "card": float(rng.uniform(2, 4)),
                 "wood": float(rng.uniform(8, 20))}[material]
    return BoardLayout(files, ranks, square, margin, thickness, goals, blocked)


def _pt(x: float, y: float) -> tuple[int, int]:
    return round(x * ONE), round(y * ONE)


def draw_board(rng: np.random.Generator, layout: BoardLayout, style: BoardStyle,
               ppm: float) -> Image:
    """The board's top face, `ppm` texture pixels per millimetre."""
    m, s = layout.margin_mm, layout.square_mm
    w = round((layout.width_mm + 2 * m) * ppm)
    h = round((layout.height_mm + 2 * m) * ppm)
    if style.material == "wood":
        base = tx.material(rng, "wood", (h, w), ppm, style.base, style.base_dark)
    else:
        base = tx.material(rng, "paper", (h, w), ppm * (0.5 if style.material == "mat" else 1),
                           style.base, style.base)
    ink = np.full((h, w, 3), 255, np.uint8)

    sx, sy = w / (layout.width_mm + 2 * m), h / (layout.height_mm + 2 * m)  # exact scales

    def xy(wx: float, wy: float) -> tuple[int, int]:  # world mm -> texture pixel (shifted)
        return _pt((wx + m) * sx, (layout.height_mm + m - wy) * sy)

    if style.cell_gap_mm:  # the gaps between separate cells show the line ink
        gap_ink = tx.jitter(rng, style.line, 0.1)
        cv2.rectangle(ink, xy(0, layout.height_mm), xy(layout.width_mm, 0), gap_ink, -1,
                      cv2.LINE_AA, SHIFT)
    for name in layout.square_names():
        f, r = layout.parse(name)
        x0, y0 = f * s, r * s
        colour = style.light_square
        if style.checkered and (f + r) % 2 == 0:
            colour = style.dark_square
        inset = style.cell_gap_mm / 2
        if colour != (255, 255, 255) or inset:
            cv2.rectangle(ink, xy(x0 + inset, y0 + s - inset), xy(x0 + s - inset, y0 + inset),
                          colour, -1, cv2.LINE_AA, SHIFT)
        if name in layout.goals:
            _goal_mark(ink, style, xy, x0, y0, s, ppm)
        if name in layout.blocked:
            _blocked_mark(ink, style, xy, x0, y0, s, ppm)
    if style.line_mm > 0:
        thick = max(1, round(style.line_mm * ppm))
        for f in range(layout.files + 1):
            cv2.line(ink, xy(f * s, 0), xy(f * s, layout.height_mm), style.line, thick,
                     cv2.LINE_AA, SHIFT)
        for r in range(layout.ranks + 1):
            cv2.line(ink, xy(0, r * s), xy(layout.width_mm, r * s), style.line, thick,
                     cv2.LINE_AA, SHIFT)
    if style.border_mm > 0:
        b = style.border_mm + style.line_mm
        off = min(m * 0.5, b + 2.0)
        cv2.rectangle(ink, xy(-off, layout.height_mm + off), xy(layout.width_mm + off, -off),
                      style.line, max(1, round(style.border_mm * ppm)), cv2.LINE_AA, SHIFT)
    if style.labels and m > 0.3 * s:
        _labels(ink, layout, style, xy, ppm)
    if ppm > 1.5:  # printing is never razor sharp
        ink = np.asarray(cv2.GaussianBlur(ink, (0, 0), 0.35 * ppm), dtype=np.uint8)
    out = np.asarray(cv2.multiply(base, ink, scale=1 / 255.0), dtype=np.uint8)
    return tx.grime(rng, out, ppm, style.wear)


def _goal_mark(ink: Image, style: BoardStyle, xy: ToPixel, x0: float, y0: float, s: float,
               ppm: float) -> None:
    to = xy
    c = style.goal_colour
    thick = max(1, round(max(style.line_mm, 0.8) * ppm))
    if style.goal_mark == "tint":
        tint = tuple(255 - (255 - v) * 0.45 for v in c)
        cv2.rectangle(ink, to(x0 + 1, y0 + s - 1), to(x0 + s - 1, y0 + 1), tint, -1,
                      cv2.LINE_AA, SHIFT)
    elif style.goal_mark == "circle":
        centre = to(x0 + s / 2, y0 + s / 2)
        cv2.circle(ink, centre, round(0.36 * s * ppm * ONE), c, thick, cv2.LINE_AA, SHIFT)
    elif style.goal_mark == "cross":
        a, b = 0.2 * s, 0.8 * s
        cv2.line(ink, to(x0 + a, y0 + a), to(x0 + b, y0 + b), c, thick, cv2.LINE_AA, SHIFT)
        cv2.line(ink, to(x0 + a, y0 + b), to(x0 + b, y0 + a), c, thick, cv2.LINE_AA, SHIFT)
    elif style.goal_mark == "frame":
        d = 0.12 * s
        cv2.rectangle(ink, to(x0 + d, y0 + s - d), to(x0 + s - d, y0 + d), c, thick,
                      cv2.LINE_AA, SHIFT)


def _blocked_mark(ink: Image, style: BoardStyle, xy: ToPixel, x0: float, y0: float, s: float,
                  ppm: float) -> None:
    to = xy
    dark = tuple(v * 0.35 for v in style.line)
    cv2.rectangle(ink, to(x0, y0 + s), to(x0 + s, y0), dark, -1, cv2.LINE_AA, SHIFT)
    light = tuple(min(255, v + 90) for v in dark)
    cv2.line(ink, to(x0 + 0.15 * s, y0 + 0.15 * s), to(x0 + 0.85 * s, y0 + 0.85 * s), light,
             max(1, round(ppm)), cv2.LINE_AA, SHIFT)
    cv2.line(ink, to(x0 + 0.15 * s, y0 + 0.85 * s), to(x0 + 0.85 * s, y0 + 0.15 * s), light,
             max(1, round(ppm)), cv2.LINE_AA, SHIFT)


def _labels(ink: Image, layout: BoardLayout, style: BoardStyle, xy: ToPixel, ppm: float) -> None:
    to = xy
    s, m = layout.square_mm, layout.margin_mm
    scale = 0.025 * min(m, s * 0.6) * ppm
    thick = max(1, round(scale * 1.6))
    for f in range(layout.files):
        letter = string.ascii_lowercase[f]
        x, y = to((f + 0.5) * s - 0.18 * m, -0.65 * m)
        cv2.putText(ink, letter, (x >> SHIFT, y >> SHIFT), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    style.line, thick, cv2.LINE_AA)
    for r in range(layout.ranks):
        x, y = to(-0.7 * m, (r + 0.5) * s - 0.2 * m)
        cv2.putText(ink, str(r + 1), (x >> SHIFT, y >> SHIFT), cv2.FONT_HERSHEY_SIMPLEX, scale,
                    style.line, thick, cv2.LINE_AA)
