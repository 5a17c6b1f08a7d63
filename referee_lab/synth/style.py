"""A render's style: everything about its look that the seed draws (board, table, pieces,
light, sensor), as one frozen value. Named style families narrow the board material."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

import referee_lab.synth.textures as tx
from referee.errors import RenderError
from referee_lab.synth.board import BoardStyle, sample_board_style
from referee_lab.synth.mesh import Light
from referee_lab.synth.pieces import BlockLook, DieLook, PentaLook
from referee_lab.synth.textures import Colour

STYLES = ("random", "paper", "card", "wood", "mat")
DIE_SIZE = (0.42, 0.62)  # dice this share of a square wide, as the models learnt them
TABLES = ("wood", "cloth", "stone", "laminate")

DIE_COLOURS: dict[str, Colour] = {
    "white": (238, 240, 242), "ivory": (200, 228, 240), "black": (35, 33, 32),
    "red": (40, 35, 190), "blue": (170, 90, 30), "green": (70, 150, 40),
    "yellow": (40, 200, 235), "orange": (30, 120, 230), "purple": (130, 50, 110),
    "pink": (170, 130, 235), "teal": (140, 140, 20), "grey": (140, 140, 140),
}
LIGHT_DICE = ("white", "ivory", "yellow", "pink", "grey")
# Pips at least this far in lightness (CIE L*, 0-100) from every surface of their die, the
# body and a marbled die's swirls: dice are inked to be read by every player, the
# colour-blind too, who tell pips by lightness, not hue. White pips on orange are 31 apart;
# gold on orange 9, on green 17, and white on orange's or green's pale swirls 1-3: pips a
# person barely makes out (benchmarks/dice_real.md).
MIN_PIP_LIGHTNESS = 25.0
RED_ONE: Colour = (30, 30, 190)  # the big red pip of face 1 on many light dice
PENTA_COLOURS: list[tuple[Colour, Colour]] = [
    ((150, 195, 230), (45, 60, 85)), ((230, 230, 230), (40, 40, 40)),
    ((120, 170, 215), (60, 50, 150)), ((200, 220, 230), (140, 80, 30)),
]


@dataclass(frozen=True)
class SensorStyle:
    wb: tuple[float, float, float]  # white-balance gains, BGR
    exposure: float
    gamma: float
    noise: float  # read noise, in 8-bit units
    shot: float  # shot noise scale
    blur: float  # defocus sigma, pixels at 1280 px width
    motion: float  # motion-blur length in pixels (single frames)
    motion_angle: float
    jpeg: int  # JPEG quality, 0 = none
    vignette: float
    sharpen: float
    contrast: float  # S-curve strength, 0 = none
    black: float  # lifted black level, 8-bit units
    dof: float  # defocus away from the board's plane of focus: blur sigma per unit of
    # relative depth difference, pixels at 1280 px width


@dataclass(frozen=True)
class Style:
    family: str
    board: BoardStyle
    table: str
    table_colours: tuple[Colour, Colour]
    pieces: str  # "dice" or "penta" for the Rinne family
    dice: tuple[DieLook, DieLook]
    penta: tuple[PentaLook, PentaLook]
    zensu: tuple[BlockLook, BlockLook]
    tile_colours: tuple[Colour, ...]
    light: Light
    lamp: tuple[float, float, float]  # illumination gradient: (x, y) in frame units, strength
    sensor: SensorStyle
    clutter: int
    jitter: float  # how far pieces stray from square centres, as a share of the square
    turn: float  # how far they are turned, degrees

    def name(self) -> str:
        return f"{self.family}:{self.board.material}/{self.table}/{self.pieces}"


def colour_distance(a: Colour, b: Colour) -> float:
    """Distance of two BGR colours in OpenCV's 8-bit CIELAB."""
    pair = cv2.cvtColor(np.array([[a, b]], dtype=np.uint8), cv2.COLOR_BGR2LAB).astype(float)
    return float(np.linalg.norm(pair[0, 0] - pair[0, 1]))


def _die_pair(rng: np.random.Generator, square: float,
              die_size: tuple[float, float] = DIE_SIZE) -> tuple[DieLook, DieLook]:
    names = list(DIE_COLOURS)
    first = str(rng.choice(names))
    # The two sides must differ clearly, as people see colour (CIELAB), not only in BGR.
    far = [n for n in names if colour_distance(DIE_COLOURS[n], DIE_COLOURS[first]) >= 95]
    second = str(rng.choice(far))
    size = square * float(rng.uniform(*die_size))
    rounded = float(rng.uniform(0.06, 0.14))
    pip = float(rng.uniform(0.07, 0.11))
    looks = []
    for name in (first, second):
        body = tx.jitter(rng, DIE_COLOURS[name], 0.06)
        light = name in LIGHT_DICE
        pips: Colour = (25, 25, 25) if light else (235, 235, 235)
        accent: Colour = (40, 170, 210) if not light else (120, 40, 20)  # gold or navy pips
        if rng.random() < 0.15 and legible(accent, [body]):
            pips = accent
        one = RED_ONE if light and rng.random() < 0.3 and legible(RED_ONE, [body]) else pips
        alpha = float(rng.uniform(0.8, 0.92)) if (not light and rng.random() < 0.12) else 1.0
        marble = None
        if rng.random() < 0.15:
            marble = _swirls(body, light, tx.jitter_factors(rng, 0.1), (pips, one))
        looks.append(DieLook(size, body, pips, one, rounded, pip, float(rng.uniform(0.15, 0.6)),
                             alpha, marble))
    return looks[0], looks[1]


def _swirls(body: Colour, light: bool, factors: np.ndarray, inks: tuple[Colour, ...]) -> Colour:
    """Marbled plastic's swirls: a lighter tone of a dark body, a darker one of a light body,
    or the other tone where the pips would not stand out from the first."""
    lighter = np.minimum(255.0, np.array(body) * 1.6 + 40)
    darker = np.array(body) * 0.6
    tones = [np.clip(t * factors, 0, 255) for t in ((darker, lighter) if light else (lighter, darker))]
    colours = [(float(t[0]), float(t[1]), float(t[2])) for t in tones]
    return next((c for c in colours if all(legible(ink, [c]) for ink in inks)), colours[0])


def lightness(colour: Colour) -> float:
    """CIE L* (0-100) of a BGR colour."""
    lab = cv2.cvtColor(np.array([[colour]], dtype=np.uint8), cv2.COLOR_BGR2LAB)
    return float(lab[0, 0, 0]) * 100.0 / 255.0


def legible(ink: Colour, surfaces: list[Colour]) -> bool:
    """Whether `ink` stands out by lightness from every one of `surfaces`."""
    return all(abs(lightness(ink) - lightness(s)) >= MIN_PIP_LIGHTNESS for s in surfaces)


def _penta_pair(rng: np.random.Generator, square: float) -> tuple[PentaLook, PentaLook]:
    light, dark = PENTA_COLOURS[int(rng.integers(len(PENTA_COLOURS)))]
    radius = square * float(rng.uniform(0.36, 0.44))
    height = float(rng.uniform(5, 10))
    signs = "letters" if rng.random() < 0.5 else "symbols"
    gloss = float(rng.uniform(0.1, 0.4))
    ink_light: Colour = (30, 30, 30) if rng.random() < 0.7 else (30, 30, 150)
    ink_dark: Colour = (225, 230, 235) if rng.random() < 0.7 else (60, 190, 220)
    return (PentaLook(radius, height, tx.jitter(rng, light, 0.06), ink_light, signs, gloss),
            PentaLook(radius, height, tx.jitter(rng, dark, 0.06), ink_dark, signs, gloss))


def _zensu_pair(rng: np.random.Generator, square: float) -> tuple[BlockLook, BlockLook]:
    size = square * float(rng.uniform(0.72, 0.84))
    height = float(rng.uniform(8, 14))
    turquoise = tx.jitter(rng, (190, 180, 60), 0.1)
    red = tx.jitter(rng, (50, 45, 185), 0.1)
    ink: Colour = (240, 245, 245) if rng.random() < 0.7 else (30, 30, 30)
    gloss = float(rng.uniform(0.1, 0.3))
    return BlockLook(size, height, turquoise, ink, gloss), BlockLook(size, height, red, ink, gloss)


def _light(rng: np.random.Generator) -> Light:
    elevation = math.radians(rng.uniform(35, 85))
    azimuth = rng.uniform(0, 2 * math.pi)
    direction = (math.cos(azimuth) * math.cos(elevation), math.sin(azimuth) * math.cos(elevation),
                 math.sin(elevation))
    kelvin = rng.uniform(2800, 6500)  # warm lamp … daylight
    warm = (6500 - kelvin) / 3700
    colour = (1.0 - 0.35 * warm, 1.0 - 0.1 * warm, 1.0 + 0.05 * warm)
    return Light(direction, colour, diffuse=float(rng.uniform(0.45, 0.75)),
                 ambient=float(rng.uniform(0.3, 0.5)), shadow=float(rng.uniform(0.25, 0.6)),
                 softness=float(rng.uniform(2.0, 9.0)))


def _sensor(rng: np.random.Generator) -> SensorStyle:
    # White balance errs mostly along blue–amber, a little along green–magenta.
    amber, green = float(rng.uniform(-0.1, 0.1)), float(rng.uniform(-0.03, 0.03))
    wb = (1.0 - amber, 1.0 + green, 1.0 + amber)
    return SensorStyle(
        wb=wb, exposure=float(rng.uniform(0.8, 1.15)), gamma=float(rng.uniform(0.9, 1.1)),
        noise=float(rng.uniform(1.0, 5.0)), shot=float(rng.uniform(0.1, 0.5)),
        blur=float(rng.uniform(0.3, 1.3)),
        motion=float(rng.uniform(0, 3.0)) if rng.random() < 0.25 else 0.0,
        motion_angle=float(rng.uniform(0, 180)),
        jpeg=int(rng.integers(55, 96)) if rng.random() < 0.8 else 0,
        vignette=float(rng.uniform(0.05, 0.45)), sharpen=float(rng.uniform(0, 0.6)),
        contrast=float(rng.uniform(-0.1, 0.35)), black=float(rng.uniform(0, 14)),
        dof=float(rng.uniform(4.0, 14.0)) if rng.random() < 0.6 else 0.0,
    )


def sample_style(rng: np.random.Generator, family: str = "random", *, square_mm: float,
                 pieces: str | None = None, die_size: tuple[float, float] = DIE_SIZE) -> Style:
    """Draw a style; `family` is one of STYLES (a board material, or any)."""
    if family not in STYLES:
        raise RenderError(f"unknown style {family!r}; known styles: {', '.join(STYLES)}")
    board = sample_board_style(rng, None if family == "random" else family)
    table = str(rng.choice(TABLES))
    tables: dict[str, list[tuple[Colour, Colour]]] = {
        "wood": [((95, 135, 180), (45, 70, 105)), ((70, 95, 130), (30, 45, 65)),
                 ((150, 180, 205), (95, 125, 160)), ((60, 70, 85), (25, 30, 40))],
        "cloth": [((70, 105, 55), (50, 80, 40)), ((115, 75, 60), (90, 55, 45)),
                  ((150, 150, 150), (120, 120, 120)), ((60, 60, 110), (40, 40, 85)),
                  ((190, 192, 196), (165, 168, 172)), ((120, 135, 150), (95, 105, 120))],
        "stone": [((190, 190, 195), (120, 120, 125)), ((80, 80, 85), (150, 150, 155)),
                  ((175, 190, 200), (110, 120, 130))],
        "laminate": [((220, 225, 228), (200, 205, 210)), ((180, 190, 195), (160, 170, 175)),
                     ((60, 60, 62), (50, 50, 52))],
    }
    options = tables[table]
    pair = options[int(rng.integers(len(options)))]
    kind = pieces or ("dice" if rng.random() < 0.6 else "penta")
    if kind not in ("dice", "penta"):
        raise RenderError(f"unknown pieces {kind!r}; known: dice, penta")
    tile_palette = [tx.jitter(rng, c, 0.1) for c in
                    [(150, 190, 220), (120, 160, 200), (170, 200, 215), (100, 140, 180),
                     (140, 180, 205)]]
    if rng.random() < 0.4:
        tile_palette = [tx.jitter(rng, c, 0.08) for c in
                        [(60, 60, 170), (170, 110, 40), (60, 150, 70), (40, 170, 210),
                         (150, 70, 130)]]
    lamp = (float(rng.uniform(-0.8, 0.8)), float(rng.uniform(-0.8, 0.8)),
            float(rng.uniform(0.15, 0.55)))
    return Style(
        family=family, board=board, table=table,
        table_colours=(tx.jitter(rng, pair[0], 0.08), tx.jitter(rng, pair[1], 0.08)),
        pieces=kind, dice=_die_pair(rng, square_mm, die_size), penta=_penta_pair(rng, square_mm),
        zensu=_zensu_pair(rng, square_mm), tile_colours=tuple(tile_palette),
        light=_light(rng), lamp=lamp, sensor=_sensor(rng), clutter=int(rng.integers(0, 5)),
        jitter=float(rng.uniform(0.02, 0.12)), turn=float(rng.uniform(2, 20)),
    )
