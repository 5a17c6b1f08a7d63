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
    aruco: bool = False  # four ArUco markers outside the grid's corners (`ArucoMarks`)

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
                  square_mm: float | None = None, aruco: bool = False) -> BoardLayout:
    square = square_mm or float(rng.uniform(32, 48))
    margin = float(rng.uniform(0.15, 0.8)) * square
    thickness = {"paper": 0.3, "mat": 1.5, "card": float(rng.uniform(2, 4)),
                 "wood": float(rng.uniform(8, 20))}[material]
    if aruco:  # the printable board's paper round the grid (the draws above stay the same)
        margin = ARUCO.border * square
    return BoardLayout(files, ranks, square, margin, thickness, goals, blocked, aruco)


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
    if layout.aruco:
        _aruco_marks(out, layout, (sx, sy), ppm)
    return tx.grime(rng, out, ppm, style.wear)


@dataclass(frozen=True)
class ArucoMarks:
    """The printable ArUco board's markers (`referee board`), set down here again so that the
    renderer stays an independent truth: marker k (ids[k]) lies diagonally outside grid corner
    k (a1's, then along rank 1, the far corner, then along the a-file), `gap` squares from it
    along both axes, `side` squares wide, printed upright as seen from the first player's side
    on white paper reaching `quiet` squares round it."""

    ids: tuple[int, ...] = (0, 1, 2, 3)
    side: float = 0.8
    gap: float = 0.25
    quiet: float = 0.25
    dictionary: int = cv2.aruco.DICT_4X4_50

    @property
    def border(self) -> float:
        return self.gap + self.side + self.quiet

    def box(self, k: int, files: int, ranks: int) -> tuple[float, float, float, float]:
        """Marker k's left, bottom, right, top edges (squares)."""
        cx, cy = (0 if k in (0, 3) else files), (0 if k in (0, 1) else ranks)
        sx, sy = (-1 if k in (0, 3) else 1), (-1 if k in (0, 1) else 1)
        xs = sorted((cx + sx * self.gap, cx + sx * (self.gap + self.side)))
        ys = sorted((cy + sy * self.gap, cy + sy * (self.gap + self.side)))
        return xs[0], ys[0], xs[1], ys[1]


ARUCO = ArucoMarks()
ARUCO_WHITE = (236.0, 240.0, 242.0)  # the paper round a marker and its white cells
ARUCO_BLACK = (28.0, 28.0, 30.0)


def _aruco_marks(out: Image, layout: BoardLayout, scale: tuple[float, float], ppm: float) -> None:
    """The four markers, each on white paper (a sticker on boards that are not paper), drawn
    by coverage (4x4 samples a texture pixel) so that their edges lie exactly where the truth
    puts them, then softened as the print is."""
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO.dictionary)
    bits = dictionary.markerSize + 2
    for k, marker_id in enumerate(ARUCO.ids):
        cells = cv2.aruco.generateImageMarker(dictionary, marker_id, bits) < 128
        box = tuple(v * layout.square_mm for v in ARUCO.box(k, layout.files, layout.ranks))
        paper, black, (r0, c0) = _marker_cover(layout, box, cells, scale)
        if ppm > 1.5:
            paper = np.asarray(cv2.GaussianBlur(paper, (0, 0), 0.35 * ppm), np.float32)
            black = np.asarray(cv2.GaussianBlur(black, (0, 0), 0.35 * ppm), np.float32)
        region = out[r0:r0 + paper.shape[0], c0:c0 + paper.shape[1]]
        if region.shape[:2] != paper.shape:
            continue  # (the margin always holds the paper; a texture too small skips it)
        white, ink = np.array(ARUCO_WHITE, np.float32), np.array(ARUCO_BLACK, np.float32)
        tone = region * (1 - paper[..., None]) + white * paper[..., None]
        tone = tone * (1 - black[..., None]) + ink * black[..., None]
        region[...] = np.clip(tone + 0.5, 0, 255).astype(np.uint8)


def _marker_cover(layout: BoardLayout, box: tuple[float, ...], cells: npt.NDArray[np.bool_],
                  scale: tuple[float, float],
                  ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], tuple[int, int]]:
    """How much of each texture pixel round one marker (`box`: left, bottom, right, top in
    world mm) is its paper and its black cells, and the region's top-left pixel."""
    m, sx, sy = layout.margin_mm, scale[0], scale[1]
    quiet = 0.6 * ARUCO.quiet * layout.square_mm  # the paper: most of the quiet zone
    left, bottom, right, top = box[0] - quiet, box[1] - quiet, box[2] + quiet, box[3] + quiet
    c0, c1 = int(np.floor((left + m) * sx)) - 2, int(np.ceil((right + m) * sx)) + 3
    r0 = int(np.floor((layout.height_mm + m - top) * sy)) - 2
    r1 = int(np.ceil((layout.height_mm + m - bottom) * sy)) + 3
    sub = (np.arange(4) + 0.5) / 4 - 0.5
    u = (np.arange(c0, c1)[:, None] + sub).ravel()  # pixel centres at integers (cv2's drawing)
    v = (np.arange(r0, r1)[:, None] + sub).ravel()
    wx, wy = u / sx - m, layout.height_mm + m - v / sy
    n = cells.shape[0]
    col = np.floor((wx - box[0]) / (box[2] - box[0]) * n).astype(int)
    row = np.floor((box[3] - wy) / (box[3] - box[1]) * n).astype(int)
    inside = ((row >= 0) & (row < n))[:, None] & ((col >= 0) & (col < n))[None, :]
    black = inside & cells[np.clip(row, 0, n - 1)][:, np.clip(col, 0, n - 1)]
    paper = ((wy >= bottom) & (wy <= top))[:, None] & ((wx >= left) & (wx <= right))[None, :]

    def per_pixel(samples: npt.NDArray[np.bool_]) -> npt.NDArray[np.float32]:
        h, w = r1 - r0, c1 - c0
        return np.asarray(samples.reshape(h, 4, w, 4).mean(axis=(1, 3)), np.float32)

    return per_pixel(paper), per_pixel(black), (r0, c0)


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
