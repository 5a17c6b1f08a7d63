"""Polygon meshes and their rasterisation: each face is projected through the pinhole canvas,
culled when it faces away, shaded by its normal against the light (Lambert plus a
Blinn–Phong highlight), and filled, or textured through a homography. Cast shadows are the
mesh's outline projected along the light onto the surface it stands on."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import cv2
import numpy as np
import numpy.typing as npt

from referee_lab.synth.camera import Canvas
from referee_lab.synth.textures import Colour, Image

FloatArray = npt.NDArray[np.float64]
SHIFT = 4
ONE = 1 << SHIFT


@dataclass(frozen=True, eq=False)
class Face:
    """A planar convex polygon in the mesh's own coordinates.

    A textured face maps its texture's corners (0,0), (w,0), (w,h), (0,h) to the four points
    `tex_points`; the polygon clips it."""

    points: FloatArray
    normal: FloatArray
    colour: Colour
    texture: Image | None = None
    tex_points: FloatArray | None = None


@dataclass(frozen=True, eq=False)
class Mesh:
    faces: tuple[Face, ...]
    gloss: float = 0.3  # strength of the specular highlight
    shininess: float = 30.0
    alpha: float = 1.0  # < 1 for translucent plastic
    convex: bool = True  # convex meshes need no sorting of their faces
    metal: float = 0.0  # metals tint the highlight with their own colour
    outline: FloatArray = field(default_factory=lambda: np.zeros((0, 3)))  # shadow caster

    @cached_property
    def stacked(self) -> tuple[FloatArray, FloatArray, FloatArray, list[int]]:
        """All faces' points, normals and centres in arrays, and where each face starts:
        one projection per mesh instead of one per face."""
        points = np.concatenate([f.points for f in self.faces])
        normals = np.stack([f.normal for f in self.faces])
        centres = np.stack([f.points.mean(axis=0) for f in self.faces])
        starts = [0, *np.cumsum([len(f.points) for f in self.faces]).tolist()]
        return points, normals, centres, starts

    @cached_property
    def colours(self) -> FloatArray:
        """The faces' colours (N x 3)."""
        return np.array([f.colour for f in self.faces], dtype=np.float64)

    def caster(self) -> FloatArray:
        if len(self.outline):
            return self.outline
        return np.concatenate([f.points for f in self.faces])


@dataclass(frozen=True)
class Light:
    """A directional light (toward the light: `direction`) plus ambient light."""

    direction: tuple[float, float, float]
    colour: tuple[float, float, float]  # BGR gains of the light
    diffuse: float
    ambient: float
    shadow: float  # 0 no cast shadows … 1 black shadows
    softness: float  # penumbra blur, in pixels at 1280 px width

    @cached_property
    def vector(self) -> FloatArray:
        v = np.array(self.direction, dtype=np.float64)
        return np.asarray(v / np.linalg.norm(v), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class Placed:
    """A mesh placed in the world: x_world = rotation · x_local + position."""

    mesh: Mesh
    rotation: FloatArray
    position: FloatArray
    base_z: float = 0.0  # the surface its shadow falls on

    def world(self, points: FloatArray) -> FloatArray:
        return np.asarray(points @ self.rotation.T + self.position, dtype=np.float64)


def rot_z(angle: float) -> FloatArray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rot_x(angle: float) -> FloatArray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def order_polygon(points: FloatArray, normal: FloatArray) -> FloatArray:
    """The points of a planar convex polygon sorted counter-clockwise about `normal`."""
    centre = points.mean(axis=0)
    u = points[0] - centre
    u = u / (np.linalg.norm(u) + 1e-12)
    v = np.cross(normal, u)
    rel = points - centre
    angles = np.arctan2(rel @ v, rel @ u)
    return np.asarray(points[np.argsort(angles)], dtype=np.float64)


def face(points: FloatArray, colour: Colour, *, normal: FloatArray | None = None,
         texture: Image | None = None, tex_points: FloatArray | None = None) -> Face:
    """A face whose normal is given or taken from its first three points (CCW = outward)."""
    pts = np.asarray(points, dtype=np.float64)
    if normal is None:
        normal = np.cross(pts[1] - pts[0], pts[2] - pts[0])
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    return Face(order_polygon(pts, n), n, colour, texture, tex_points)


def shade(colour: Colour, normal: FloatArray, view: FloatArray, light: Light, mesh: Mesh,
          ) -> tuple[float, FloatArray]:
    """(diffuse factor, specular BGR) of a face."""
    lv = light.vector
    diffuse = light.ambient + light.diffuse * max(0.0, float(normal @ lv))
    half = lv + view
    half = half / (np.linalg.norm(half) + 1e-12)
    spec = mesh.gloss * max(0.0, float(normal @ half)) ** mesh.shininess
    tint = np.array(light.colour) * 255.0
    if mesh.metal:
        tint = tint * (1 - mesh.metal) + np.array(colour) * mesh.metal * 1.3
    return diffuse, np.asarray(spec * tint, dtype=np.float64)


def face_shades(mesh: Mesh, colours: FloatArray, normals: FloatArray, views: FloatArray,
                light: Light) -> tuple[FloatArray, FloatArray]:
    """`shade` for many faces at once (colours, world normals and unit views, N x 3): the gains
    (N x 3, light colour times diffuse factor) and specular BGR (N x 3). One numpy pass per
    mesh instead of a Python call per face; it agrees with `shade` to the last bits or so,
    far below what rounding a colour to 8 bits can show."""
    lv = light.vector
    diffuse = light.ambient + light.diffuse * np.maximum(0.0, normals @ lv)
    half = lv + views
    half = half / (np.sqrt((half * half).sum(axis=1)) + 1e-12)[:, None]
    spec = mesh.gloss * np.maximum(0.0, (normals * half).sum(axis=1)) ** mesh.shininess
    tint = np.array(light.colour) * 255.0
    if mesh.metal:
        tint = tint * (1 - mesh.metal) + colours * mesh.metal * 1.3
    gains = np.array(light.colour)[None, :] * diffuse[:, None]
    return gains, spec[:, None] * tint


def draw_mesh(image: Image, canvas: Canvas, placed: Placed, light: Light,
              cam_pos: FloatArray, mask: npt.NDArray[np.uint8] | None = None) -> None:
    """Rasterise one placed mesh onto the canvas image (in place). `mask`, if given, receives
    the mesh's silhouette (255)."""
    mesh = placed.mesh
    points, normals, centres, starts = mesh.stacked
    world_n = normals @ placed.rotation.T
    views = cam_pos - placed.world(centres)
    dists = np.sqrt((views * views).sum(axis=1))
    views = views / dists[:, None]
    facing = np.nonzero((world_n * views).sum(axis=1) > 1e-4)[0]
    if len(facing) == 0:
        return
    if not mesh.convex:
        facing = facing[np.argsort(-dists[facing], kind="stable")]
    all_px, _ = canvas.project(placed.world(points))
    polys = np.round(all_px * ONE).astype(np.int32)
    base = mesh.colours[facing]
    gains, specs = face_shades(mesh, base, world_n[facing], views[facing], light)
    colours = np.clip(base * gains + specs, 0, 255).tolist()
    for k, i in enumerate(facing.tolist()):
        f = mesh.faces[i]
        a, b = starts[i], starts[i + 1]
        if f.texture is None or f.tex_points is None:
            _fill(image, all_px[a:b], polys[a:b], colours[k], mesh.alpha)
        else:
            _textured(image, canvas, placed, f, all_px[a:b], gains[k], specs[k], mesh.alpha)
        if mask is not None:
            cv2.fillConvexPoly(mask, polys[a:b], 255, cv2.LINE_8, SHIFT)


def _fill(image: Image, px: FloatArray, poly: npt.NDArray[np.int32], colour: list[float],
          alpha: float) -> None:
    c = (colour[0], colour[1], colour[2])
    if alpha >= 0.999:
        cv2.fillConvexPoly(image, poly, c, cv2.LINE_AA, SHIFT)
        return
    x0, y0, x1, y1 = _roi(px, image.shape)
    if x1 <= x0 or y1 <= y0:
        return
    roi = image[y0:y1, x0:x1]
    layer = roi.copy()
    cv2.fillConvexPoly(layer, poly - np.array([x0 * ONE, y0 * ONE], np.int32), c, cv2.LINE_AA,
                       SHIFT)
    cv2.addWeighted(layer, alpha, roi, 1 - alpha, 0, dst=roi)


def _roi(px: FloatArray, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    x0 = max(math.floor(px[:, 0].min()) - 1, 0)
    y0 = max(math.floor(px[:, 1].min()) - 1, 0)
    x1 = min(math.ceil(px[:, 0].max()) + 2, shape[1])
    y1 = min(math.ceil(px[:, 1].max()) + 2, shape[0])
    return x0, y0, x1, y1


def _textured(image: Image, canvas: Canvas, placed: Placed, f: Face, px: FloatArray,
              gain: FloatArray, spec: FloatArray, alpha: float) -> None:
    assert f.texture is not None and f.tex_points is not None
    x0, y0, x1, y1 = _roi(px, image.shape)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    th, tw = f.texture.shape[:2]
    src = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float32)
    dst, _ = canvas.project(placed.world(f.tex_points))
    dst = (dst - np.array([x0, y0])).astype(np.float32)
    hom = cv2.getPerspectiveTransform(src, dst)
    tex = cv2.warpPerspective(f.texture, hom, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    cover = np.zeros((y1 - y0, x1 - x0), np.uint8)
    poly = np.round((px - np.array([x0, y0])) * ONE).astype(np.int32)
    cv2.fillConvexPoly(cover, poly, 255, cv2.LINE_AA, SHIFT)
    a = cover.astype(np.float32)[..., None] * (alpha / 255.0)
    shaded = tex.astype(np.float32) * gain.astype(np.float32) + spec.astype(np.float32)
    roi = image[y0:y1, x0:x1]
    out = roi.astype(np.float32) * (1 - a) + np.clip(shaded, 0, 255) * a
    roi[...] = out.astype(np.uint8)


def shadow_polygon(placed: Placed, light: Light) -> FloatArray:
    """The mesh's cast shadow on the plane z = base_z, as world points of its convex hull."""
    pts = placed.world(placed.mesh.caster())
    lv = light.vector
    t = (pts[:, 2] - placed.base_z) / max(lv[2], 0.05)
    ground = pts[:, :2] - t[:, None] * lv[None, :2]
    hull = cv2.convexHull(ground.astype(np.float32)).reshape(-1, 2).astype(np.float64)
    return np.column_stack([hull, np.full(len(hull), placed.base_z)])


def footprint(placed: Placed, grow: float) -> FloatArray:
    """The hull of the mesh's lowest points, grown by `grow` mm: where it touches down."""
    pts = placed.world(placed.mesh.caster())
    low = pts[pts[:, 2] <= pts[:, 2].min() + 1.0]
    if len(low) < 3:
        low = pts
    centre = low[:, :2].mean(axis=0)
    rel = low[:, :2] - centre
    norm = np.linalg.norm(rel, axis=1, keepdims=True) + 1e-9
    grown = centre + rel + rel / norm * grow
    hull = cv2.convexHull(grown.astype(np.float32)).reshape(-1, 2).astype(np.float64)
    return np.column_stack([hull, np.full(len(hull), placed.base_z)])
