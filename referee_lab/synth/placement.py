"""Where each piece stands: off-centre and turned inside its square, dice with a random
choice among the four orientations that show their face, Penta-pieces turned so that the
current state's corner points forward. And the meshes that draw them."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from referee_lab.synth.board import BoardLayout
from referee_lab.synth.mesh import Mesh, Placed, rot_x, rot_z
from referee_lab.synth.pieces import (
    die_mesh,
    die_orientation,
    marker_mesh,
    penta_mesh,
    tile_mesh,
    zensu_mesh,
)
from referee_lab.synth.style import Style
from referee_lab.synth.textures import Colour
from referee_lab.synth.truth import Contents, SquareContent

FloatArray = npt.NDArray[np.float64]
TILE_HEIGHT = 4.0
MARKER_COLOURS: dict[str, Colour] = {"gold": (40, 165, 215), "silver": (190, 190, 185)}


@dataclass(frozen=True, eq=False)
class PiecePose:
    """A piece on a square, or carried: `lifted` is then the world point of its foot."""

    content: SquareContent
    square: str
    offset: tuple[float, float]
    yaw: float
    orientation: FloatArray
    lifted: tuple[float, float, float] | None = None
    tilt: float = 0.0  # radians about the piece's x axis: carried, or a die knocked over

    def carried(self, at: tuple[float, float, float], yaw: float, tilt: float) -> PiecePose:
        return replace(self, lifted=at, yaw=yaw, tilt=tilt)


@dataclass(frozen=True)
class BoardPose:
    """The board nudged on the table: shifted (mm) and turned (radians) about its centre."""

    dx: float = 0.0
    dy: float = 0.0
    angle: float = 0.0

    def transform(self, layout: BoardLayout) -> tuple[FloatArray, FloatArray]:
        rotation = rot_z(self.angle)
        centre = np.array([layout.width_mm / 2, layout.height_mm / 2, 0.0])
        shift = centre - rotation @ centre + np.array([self.dx, self.dy, 0.0])
        return rotation, shift

    def apply(self, layout: BoardLayout, points: FloatArray) -> FloatArray:
        rotation, shift = self.transform(layout)
        return np.asarray(np.asarray(points) @ rotation.T + shift, dtype=np.float64)


def forward_yaw(content: SquareContent) -> float:
    """The turn that points a piece's forward corner or edge at the opponent."""
    base = 0.0 if content.owner in (0, None) else math.pi
    if content.kind == "penta":
        return base + math.radians(72 * (content.value - 1))
    return base


def place(content: SquareContent, square: str, rng: np.random.Generator, style: Style,
          layout: BoardLayout) -> PiecePose:
    s = layout.square_mm
    jitter = style.jitter * s
    offset = (float(rng.uniform(-jitter, jitter)), float(rng.uniform(-jitter, jitter)))
    turn = math.radians(float(rng.uniform(-style.turn, style.turn)))
    orientation = np.eye(3)
    if content.kind == "die":
        orientation = die_orientation(content.value, rng)
    elif content.kind == "zensu":
        turn *= 0.3  # blocks are set square to the board
    return PiecePose(content, square, offset, forward_yaw(content) + turn, orientation)


def place_all(contents: Contents, rng: np.random.Generator, style: Style,
              layout: BoardLayout) -> dict[str, PiecePose]:
    return {sq: place(c, sq, rng, style, layout) for sq, c in contents.items() if c.is_piece}


def with_face(pose: PiecePose, content: SquareContent, rng: np.random.Generator) -> PiecePose:
    """The same piece showing a new face or state (a die turned, a Penta-piece rotated)."""
    orientation = die_orientation(content.value, rng) if content.kind == "die" else pose.orientation
    yaw = pose.yaw - forward_yaw(pose.content) + forward_yaw(content)
    return replace(pose, content=content, orientation=orientation, yaw=yaw)


def piece_height(content: SquareContent, style: Style) -> float:
    owner = content.owner or 0
    if content.kind == "die":
        return style.dice[owner].size
    if content.kind == "penta":
        return style.penta[owner].height
    if content.kind == "zensu":
        return style.zensu[owner].height
    if content.kind in ("tile", "monomino"):
        return TILE_HEIGHT + (2.5 if content.marker else 0.0)
    return 0.0


def piece_placed(pose: PiecePose, style: Style, layout: BoardLayout,
                 board: BoardPose) -> Placed:
    c = pose.content
    owner = c.owner or 0
    if c.kind == "die":
        mesh = die_mesh(style.dice[owner])
    elif c.kind == "penta":
        mesh = penta_mesh(style.penta[owner])
    else:
        mesh = zensu_mesh(style.zensu[owner], c.value)
    rotation_b, shift_b = board.transform(layout)
    lift = np.array([0.0, 0.0, style.dice[owner].size / 2 if c.kind == "die" else 0.0])
    if pose.lifted is not None:
        rotation = rot_z(pose.yaw) @ rot_x(pose.tilt) @ pose.orientation
        return Placed(mesh, rotation, np.array(pose.lifted) + lift, base_z=0.0)
    if pose.tilt:  # knocked over, resting on an edge: its centre rises
        lift = lift * (math.cos(pose.tilt) + math.sin(abs(pose.tilt)))
    centre = layout.centre(pose.square) + np.array([*pose.offset, 0.0]) + lift
    rotation = rotation_b @ rot_z(pose.yaw) @ rot_x(pose.tilt) @ pose.orientation
    return Placed(mesh, rotation, rotation_b @ centre + shift_b)


@lru_cache(maxsize=256)
def _tile(cells: tuple[tuple[int, int], ...], square: float, colour: Colour, gloss: float) -> Mesh:
    return tile_mesh(cells, square, TILE_HEIGHT, colour, 0.6, gloss)


def flat_placed(contents: Contents, style: Style, layout: BoardLayout, board: BoardPose,
                seed: int) -> tuple[list[Placed], list[Placed]]:
    """Tiles and monominoes (first list) and the markers on them (second list). Their small
    offsets come from `seed` and the square, so they stay put from frame to frame."""
    rotation_b, shift_b = board.transform(layout)
    s = layout.square_mm
    groups: dict[int, list[tuple[int, int]]] = {}
    singles: list[str] = []
    for name, c in contents.items():
        if c.kind == "tile":
            groups.setdefault(c.value, []).append(layout.parse(name))
        elif c.kind == "monomino":
            singles.append(name)
    tiles: list[Placed] = []
    for tile_id, cells in sorted(groups.items()):
        f0, r0 = min(f for f, _ in cells), min(r for _, r in cells)
        rel = tuple(sorted((f - f0, r - r0) for f, r in cells))
        colour = style.tile_colours[tile_id % len(style.tile_colours)]
        rng = np.random.default_rng([seed, 7, tile_id])
        tiles.append(_flat(_tile(rel, s, colour, 0.3), (f0 * s, r0 * s), rng, rotation_b, shift_b))
    for name in singles:
        f, r = layout.parse(name)
        rng = np.random.default_rng([seed, 8, f, r])
        colour = (200, 210, 215) if style.tile_colours[0][2] > 150 else (215, 225, 230)
        tiles.append(_flat(_tile(((0, 0),), s, colour, 0.3), (f * s, r * s), rng, rotation_b,
                           shift_b))
    markers: list[Placed] = []
    for name, c in sorted(contents.items()):
        if c.marker is None:
            continue
        f, r = layout.parse(name)
        rng = np.random.default_rng([seed, 9, f, r])
        base = TILE_HEIGHT if c.kind in ("tile", "monomino") else 0.0
        mesh = marker_mesh(round(0.3 * s, 1), 2.5, MARKER_COLOURS[c.marker], 0.8)
        centre = layout.centre(name) + np.array([*rng.uniform(-0.06, 0.06, 2) * s, base])
        markers.append(Placed(mesh, rotation_b, rotation_b @ centre + shift_b, base_z=base))
    return tiles, markers


def _flat(mesh: Mesh, corner: tuple[float, float], rng: np.random.Generator,
          rotation_b: FloatArray, shift_b: FloatArray) -> Placed:
    offset = np.array([*rng.uniform(-0.4, 0.4, 2), 0.0]) + np.array([*corner, 0.0])
    turn = rot_z(math.radians(float(rng.uniform(-0.4, 0.4))))
    return Placed(mesh, rotation_b @ turn, rotation_b @ offset + shift_b)
