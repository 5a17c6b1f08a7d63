"""The pieces as 3D meshes: dice (rounded cubes with pips), Penta-pieces (pentagonal prisms
with five signs), Zensū blocks (large forward number, small edge numbers), Renaissance
polyomino tiles, monominoes and gold and silver markers. Local coordinates: millimetres,
origin at the centre of the piece's foot, z up, +y the owner's forward direction before the
piece is turned."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from referee.pieces_design import (  # the faces' look, shared with `referee pieces`
    draw_zensu_numbers,
    penta_corners,
    penta_face,
    renderer_edges,
)
from referee_lab.synth.mesh import Face, Mesh, face
from referee_lab.synth.textures import Colour, Image

FloatArray = npt.NDArray[np.float64]

# Die faces in the canonical orientation: opposite faces add up to 7.
DIE_NORMALS: dict[int, tuple[int, int, int]] = {
    1: (0, 0, 1), 6: (0, 0, -1), 2: (0, -1, 0), 5: (0, 1, 0), 3: (1, 0, 0), 4: (-1, 0, 0)}
# Texture axes (right, down) of each canonical face.
DIE_AXES: dict[int, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    1: ((1, 0, 0), (0, -1, 0)), 6: ((1, 0, 0), (0, 1, 0)), 2: ((1, 0, 0), (0, 0, -1)),
    5: ((-1, 0, 0), (0, 0, -1)), 3: ((0, 1, 0), (0, 0, -1)), 4: ((0, -1, 0), (0, 0, -1))}
PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0, 0),), 2: ((-1, -1), (1, 1)), 3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)), 5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1))}


@dataclass(frozen=True)
class DieLook:
    size: float  # edge, mm
    body: Colour
    pips: Colour
    one_pip: Colour  # the single pip of face 1 (red on many Western dice)
    round: float  # chamfer as a share of the edge
    pip_size: float  # pip radius as a share of the edge
    gloss: float
    alpha: float
    marble: Colour | None = None  # swirls of a second colour in the plastic


@dataclass(frozen=True)
class PentaLook:
    radius: float  # centre to corner, mm
    height: float
    body: Colour
    ink: Colour
    signs: str  # "letters" or "symbols"
    gloss: float


@dataclass(frozen=True)
class BlockLook:
    size: float
    height: float
    body: Colour
    ink: Colour
    gloss: float


def die_rotations() -> list[FloatArray]:
    """The 24 rotations of a cube: signed permutation matrices with determinant +1."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            m = np.zeros((3, 3))
            for row, (col, sign) in enumerate(zip(perm, signs, strict=True)):
                m[row, col] = sign
            if np.linalg.det(m) > 0:
                out.append(m)
    return out


_ROTATIONS = die_rotations()


def die_orientation(top: int, rng: np.random.Generator) -> FloatArray:
    """A rotation of the canonical die that puts face `top` up (one of four at random)."""
    choices = [m for m in _ROTATIONS if (m @ np.array(DIE_NORMALS[top]))[2] > 0.5]
    return choices[int(rng.integers(len(choices)))]


def _pip_texture(look: DieLook, value: int, px: int) -> Image:
    """A face of the die between its rounded edges: body colour, concave pips."""
    tex = np.zeros((px, px, 3), np.uint8)
    tex[:] = [int(c) for c in look.body]
    if look.marble is not None:
        from referee_lab.synth.textures import BANK_SIZE, BANK_VARIANTS, _bank, mix

        swirl = _bank("stone", value % BANK_VARIANTS)
        y0 = (value * 131 + round(look.size * 7)) % (BANK_SIZE - 2 * px)
        patch = cv2.resize(swirl[y0:y0 + 2 * px, y0:y0 + 2 * px], (px, px))
        tex = mix(look.body, look.marble, np.clip(patch * 1.6 - 0.5, 0, 1).astype(np.float32))
    inner = look.size * (0.5 - look.round)  # half-width of the flat face, mm
    scale = px / (2 * inner)
    spread = look.size * 0.27
    r = look.pip_size * look.size * (1.35 if value == 1 else 1.0)
    for gx, gy in PIPS[value]:
        cx = (gx * spread + inner) * scale
        cy = (gy * spread + inner) * scale
        colour = look.one_pip if value == 1 else look.pips
        rim = tuple(c * 0.55 for c in look.body)
        centre = (round(cx * 16), round(cy * 16))
        cv2.circle(tex, centre, round(r * scale * 1.12 * 16), rim, -1, cv2.LINE_AA, 4)
        cv2.circle(tex, (centre[0] + 8, centre[1] + 8), round(r * scale * 16), colour, -1,
                   cv2.LINE_AA, 4)
    return tex


@lru_cache(maxsize=64)
def die_mesh(look: DieLook) -> Mesh:
    """A cube with chamfered (rounded-looking) edges and corners, centred on the origin (it is
    turned about its centre; placing it lifts it by half its size)."""
    half = look.size / 2
    inner = half * (1 - 2 * look.round)
    px = 96
    faces: list[Face] = []
    centre = np.zeros(3)
    normals = {k: np.array(v, dtype=np.float64) for k, v in DIE_NORMALS.items()}
    for value, n in normals.items():
        u = np.array(DIE_AXES[value][0], dtype=np.float64)
        v = np.array(DIE_AXES[value][1], dtype=np.float64)
        c = centre + n * half
        corners = np.array([c - inner * u - inner * v, c + inner * u - inner * v,
                            c + inner * u + inner * v, c - inner * u + inner * v])
        faces.append(face(corners, look.body, normal=n, texture=_pip_texture(look, value, px),
                          tex_points=corners))
    # Rounded edges and corners: the cube is an inner box grown by a sphere of radius r.
    # Each edge is two facets (normals at 22.5° and 67.5°), each corner an octant of the
    # sphere cut into four triangles, so a highlight runs along part of an edge only.
    r = half - inner
    for a, b in itertools.combinations(normals.values(), 2):
        if abs(float(a @ b)) > 0.5:
            continue
        w = np.cross(a, b)
        base = centre + inner * (a + b)
        arc = [a, (a + b) / math.sqrt(2), b]
        for n0, n1 in itertools.pairwise(arc):
            pts = [base + r * n + w * t * inner for n in (n0, n1) for t in (-1, 1)]
            faces.append(face(np.array(pts), look.body, normal=n0 + n1))
    for signs in itertools.product((1, -1), repeat=3):
        s = np.array(signs, dtype=np.float64)
        corner = centre + s * inner
        ex, ey, ez = (np.eye(3)[i] * s[i] for i in range(3))
        mid = {k: v / np.linalg.norm(v) for k, v in
               {"xy": ex + ey, "yz": ey + ez, "zx": ez + ex}.items()}
        for tri in ((ex, mid["xy"], mid["zx"]), (mid["xy"], ey, mid["yz"]),
                    (mid["zx"], mid["yz"], ez), (mid["xy"], mid["yz"], mid["zx"])):
            normal = tri[0] + tri[1] + tri[2]
            faces.append(face(np.array([corner + r * n for n in tri]), look.body,
                              normal=normal))
    return Mesh(tuple(faces), gloss=look.gloss, shininess=40.0, alpha=look.alpha)


def _polygon_prism(top: FloatArray, height: float, bevel: float, colour: Colour,
                   texture: Image | None, tex_points: FloatArray | None) -> list[Face]:
    """A prism over the convex polygon `top` (N x 2, CCW), with a bevelled top edge."""
    centre = top.mean(axis=0)
    rel = top - centre
    inset = centre + rel * (1 - bevel / np.linalg.norm(rel, axis=1).mean())
    faces = [face(np.column_stack([inset, np.full(len(inset), height)]), colour,
                  normal=np.array([0.0, 0.0, 1.0]), texture=texture, tex_points=tex_points)]
    n = len(top)
    for i in range(n):
        j = (i + 1) % n
        edge = top[j] - top[i]
        out = np.array([edge[1], -edge[0], 0.0])
        out /= np.linalg.norm(out)
        low = height - bevel
        side = np.array([[*top[i], 0.0], [*top[j], 0.0], [*top[j], low], [*top[i], low]])
        faces.append(face(side, colour, normal=out))
        bev = np.array([[*top[i], low], [*top[j], low], [*inset[j], height], [*inset[i], height]])
        faces.append(face(bev, colour, normal=out + np.array([0.0, 0.0, 1.0])))
    return faces


def painted_wood(colour: Colour, px: int, variant: int) -> Image:
    """Stained wood: the body colour over a wood grain that shows through."""
    from referee_lab.synth.textures import BANK_SIZE, BANK_VARIANTS, _bank

    grain = _bank("wood", variant % BANK_VARIANTS)
    y0 = (variant * 97) % (BANK_SIZE - px)
    patch = grain[y0:y0 + px, :px]
    shade = (0.8 + 0.3 * patch)[..., None]
    return np.asarray(np.clip(np.array(colour, np.float32) * shade, 0, 255), dtype=np.uint8)


@lru_cache(maxsize=32)
def penta_mesh(look: PentaLook) -> Mesh:
    r, px = look.radius, 128
    corners = penta_corners(r)  # reversed to CCW for the prism
    tex = penta_face(r, look.body, look.ink, look.signs, px)
    h = look.height
    tex_points = np.array([[-r, r, h], [r, r, h], [r, -r, h], [-r, -r, h]])
    faces = _polygon_prism(corners, h, min(1.2, h * 0.2), look.body, tex, tex_points)
    return Mesh(tuple(faces), gloss=look.gloss, shininess=20.0)


@lru_cache(maxsize=32)
def zensu_mesh(look: BlockLook, number: int) -> Mesh:
    """A square block: large forward number, small numbers on the other edges (RULES.md
    §4 defaults: "1": forward 1, left 2, right 3, back 4; "2": forward 2, left 1, right 3)."""
    a, px = look.size / 2, 128
    tex = painted_wood(look.body, px, variant=number + round(look.size * 10))
    draw_zensu_numbers(tex, renderer_edges(number), look.ink)
    top = np.array([[-a, -a], [a, -a], [a, a], [-a, a]])
    tex_points = np.array([[-a, a, look.height], [a, a, look.height], [a, -a, look.height],
                           [-a, -a, look.height]])
    faces = _polygon_prism(top, look.height, 1.0, look.body, tex, tex_points)
    return Mesh(tuple(faces), gloss=look.gloss, shininess=15.0)


def tile_mesh(cells: tuple[tuple[int, int], ...], square: float, height: float,
              colour: Colour, gap: float, gloss: float) -> Mesh:
    """A polyomino over `cells` (file, rank offsets from its first cell): raised, with a
    bevel and a seam gap along its outer edges; origin at the first cell's lower-left."""
    cellset = set(cells)
    bevel = min(1.0, height * 0.4)
    faces: list[Face] = []
    outline = []
    for f, r in cells:
        x0, y0, x1, y1 = f * square, r * square, (f + 1) * square, (r + 1) * square
        g = {d: (0.0 if n in cellset else gap)
             for d, n in {"w": (f - 1, r), "e": (f + 1, r), "s": (f, r - 1),
                          "n": (f, r + 1)}.items()}
        ox0, oy0, ox1, oy1 = x0 + g["w"], y0 + g["s"], x1 - g["e"], y1 - g["n"]
        b = {d: (bevel if g[d] else -0.2) for d in g}  # slight overlap hides inner seams
        top = np.array([[ox0 + b["w"], oy0 + b["s"], height], [ox1 - b["e"], oy0 + b["s"], height],
                        [ox1 - b["e"], oy1 - b["n"], height], [ox0 + b["w"], oy1 - b["n"], height]])
        faces.append(face(top, colour, normal=np.array([0.0, 0.0, 1.0])))
        sides = {"w": ((ox0, oy0), (ox0, oy1), (-1, 0)), "e": ((ox1, oy1), (ox1, oy0), (1, 0)),
                 "s": ((ox1, oy0), (ox0, oy0), (0, -1)), "n": ((ox0, oy1), (ox1, oy1), (0, 1))}
        for d, (p, q, (nx, ny)) in sides.items():
            if not g[d]:
                continue
            low = height - bevel
            pin = (p[0] - nx * bevel, p[1] - ny * bevel)
            qin = (q[0] - nx * bevel, q[1] - ny * bevel)
            normal = np.array([nx, ny, 0.0])
            faces.append(face(np.array([[*p, 0.0], [*q, 0.0], [*q, low], [*p, low]]), colour,
                              normal=normal))
            faces.append(face(np.array([[*p, low], [*q, low], [*qin, height], [*pin, height]]),
                              colour, normal=normal + np.array([0.0, 0.0, 1.0])))
            outline += [[*p, height], [*q, height]]
    return Mesh(tuple(faces), gloss=gloss, shininess=25.0, convex=False,
                outline=np.array(outline))


@lru_cache(maxsize=8)
def marker_mesh(radius: float, height: float, colour: Colour, metal: float) -> Mesh:
    """A round metal-look counter: a 24-sided prism."""
    n = 24
    angles = np.arange(n) * (2 * math.pi / n)
    ring = np.column_stack([radius * np.cos(angles), radius * np.sin(angles)])
    faces = _polygon_prism(ring, height, min(0.6, height * 0.3), colour, None, None)
    return Mesh(tuple(faces), gloss=0.9, shininess=60.0, metal=metal)
