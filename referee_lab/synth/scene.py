"""A scene: one table, board, style and camera, rendered frame by frame.

Drawing order on the undistorted canvas: the table (a textured plane warped through its
homography), the board's edge faces and top, soft cast shadows and contact shadows, the
flat tiles, the pieces far to near, the carried piece and the hand; then the lens
(`cv2.remap`), then the sensor. The ground truth is computed from the same camera and
board pose with `cv2.projectPoints`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypeVar

import cv2
import numpy as np
import numpy.typing as npt

import referee_lab.synth.textures as tx
from referee.errors import RenderError
from referee_lab.synth.board import BoardLayout, draw_board, sample_layout
from referee_lab.synth.camera import (
    Camera,
    CameraSpec,
    Canvas,
    Lens,
    make_canvas,
    sample_camera,
    through_lens,
    turned_about_centre,
    turned_lens_map,
)
from referee_lab.synth.clutter import draw_flat_clutter, spare_dice
from referee_lab.synth.games import GameSpec
from referee_lab.synth.hands import HandPose, draw_hand, shadow_polygons
from referee_lab.synth.mesh import (
    Light,
    Mesh,
    Placed,
    draw_mesh,
    face,
    footprint,
    shadow_polygon,
)
from referee_lab.synth.placement import (
    BoardPose,
    PiecePose,
    flat_placed,
    piece_height,
    piece_placed,
)
from referee_lab.synth.sensor import Exposure, apply_sensor, channels_of
from referee_lab.synth.style import DIE_SIZE, STYLES, Style, sample_style
from referee_lab.synth.truth import EMPTY, Contents, FrameTruth

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True)
class RenderOptions:
    """What a caller may fix; everything else the seed draws."""

    width: int = 1280
    height: int = 720
    tilt: tuple[float, float] = (0.0, 40.0)
    style: str = "random"
    pieces: str | None = None  # "dice" or "penta" (Rinne family); None: drawn
    distortion: float = 1.0
    effects: bool = True  # the sensor model (noise, blur, JPEG …); off for exact tests
    clutter: bool = True
    shadows: bool = True
    hands: float = 0.0  # chance that a single frame shows a hand over the board
    lens: Lens | None = None  # a real camera's lens at width x height (else one is drawn)
    aruco: bool = False  # the printable board's four ArUco markers round the grid (board.ARUCO)
    die_size: tuple[float, float] = DIE_SIZE  # dice this share of a square wide, drawn between

    def validate(self) -> None:
        if not (64 <= self.width <= 4096 and 64 <= self.height <= 4096):
            raise RenderError(f"frame size {self.width}x{self.height} is out of range 64..4096")
        lo, hi = self.tilt
        if not (0 <= lo <= hi <= 60):
            raise RenderError(f"tilt {lo}..{hi} must lie within 0..60 degrees from vertical")
        if self.style not in STYLES:
            raise RenderError(f"unknown style {self.style!r}; known styles: {', '.join(STYLES)}")
        if not 0 <= self.hands <= 1:
            raise RenderError(f"hands {self.hands} is a chance: it must lie within 0..1")
        if not 0.2 <= self.die_size[0] <= self.die_size[1] <= 0.95:
            raise RenderError(f"die size {self.die_size[0]}..{self.die_size[1]} must lie within "
                              "0.2..0.95 of a square")
        if self.pieces not in (None, "dice", "penta"):
            raise RenderError(f"unknown pieces {self.pieces!r}; known: dice, penta")
        if self.lens is not None:
            if (self.lens.width, self.lens.height) != (self.width, self.height):
                raise RenderError(f"the lens is for {self.lens.width}x{self.lens.height} "
                                  f"frames, not {self.width}x{self.height}")
            if self.lens.folds_back():
                raise RenderError("the camera's distortion folds back inside the frame: "
                                  "no picture can be drawn through it")


@dataclass(frozen=True, eq=False)
class FrameState:
    """What changes from frame to frame."""

    contents: Contents  # the truth: what each square holds
    poses: dict[str, PiecePose]  # the pieces standing on squares
    carried: PiecePose | None = None
    hand: HandPose | None = None
    board: BoardPose = field(default_factory=BoardPose)
    camera: Camera | None = None  # a shaken camera, else the scene's own
    exposure: Exposure = field(default_factory=Exposure)
    steady: bool = True
    extras: tuple[Placed, ...] = ()  # loose things on the table: captured pieces


class Placements:
    """What footage keeps from frame to frame where the frame's inputs are the same objects
    or equal values: the placed tiles and markers of the same square contents, the placed
    pieces of the same poses, a placed thing's cast shadow and footprint on the table (world
    polygons: the shaking camera does not move them). Each entry is what the same call
    would compute again; the dictionaries are emptied when they grow (a carried piece or a
    thing in the hand is new every frame)."""

    LIMIT = 4096

    def __init__(self) -> None:
        self._flat: dict[object, tuple[list[Placed], list[Placed]]] = {}
        self._pieces: dict[tuple[PiecePose, BoardPose], Placed] = {}
        self._shadows: dict[Placed, tuple[FloatArray, FloatArray]] = {}

    def flat(self, state: FrameState, style: Style, layout: BoardLayout, seed: int,
             ) -> tuple[list[Placed], list[Placed]]:
        key = (tuple(state.contents.items()), state.board)
        found = self._flat.get(key)
        if found is None:
            found = flat_placed(state.contents, style, layout, state.board, seed)
            _keep(self._flat, key, found)
        return list(found[0]), list(found[1])

    def pieces(self, state: FrameState, style: Style, layout: BoardLayout) -> list[Placed]:
        out = []
        for pose in state.poses.values():
            key = (pose, state.board)
            placed = self._pieces.get(key)
            if placed is None:
                placed = piece_placed(pose, style, layout, state.board)
                _keep(self._pieces, key, placed)
            out.append(placed)
        return out

    def shadow(self, placed: Placed, light: Light) -> tuple[FloatArray, FloatArray]:
        """The cast shadow and the footprint (`footprint(placed, 0.8)`) of `placed`."""
        found = self._shadows.get(placed)
        if found is None:
            found = shadow_polygon(placed, light), footprint(placed, 0.8)
            _keep(self._shadows, placed, found)
        return found


def _keep(cache: dict[K, V], key: K, value: V) -> None:
    """Store `value`, emptying `cache` first once it holds `Placements.LIMIT` entries."""
    if len(cache) >= Placements.LIMIT:
        cache.clear()
    cache[key] = value


class Scene:
    """The parts of a render that stay the same through footage."""

    def __init__(self, spec: GameSpec, seed: int, options: RenderOptions) -> None:
        options.validate()
        self.spec, self.seed, self.options = spec, seed, options
        rng = np.random.default_rng([seed, 1])
        pieces = options.pieces if spec.family == "rinne" else "dice"
        family = options.style
        material = None if family == "random" else family
        probe = np.random.default_rng([seed, 2])
        layout = sample_layout(probe, spec.files, spec.ranks, material or "paper",
                               goals=spec.goals, blocked=spec.blocked, aruco=options.aruco)
        self.style: Style = sample_style(rng, family, square_mm=layout.square_mm, pieces=pieces,
                                         die_size=options.die_size)
        self.layout: BoardLayout = sample_layout(probe, spec.files, spec.ranks,
                                                 self.style.board.material, goals=spec.goals,
                                                 blocked=spec.blocked,
                                                 square_mm=layout.square_mm,
                                                 aruco=options.aruco)
        cam_spec = CameraSpec(options.width, options.height, tilt=options.tilt,
                              distortion=options.distortion, lens=options.lens)
        extent = np.concatenate([self.layout.outline(0.0), self.layout.outline(30.0)])
        self.camera: Camera = sample_camera(np.random.default_rng([seed, 3]), cam_spec, extent)
        self.canvas: Canvas = make_canvas(self.camera)
        self._tex_rng = np.random.default_rng([seed, 4])
        self._build_textures()
        self._bg_key: tuple[object, ...] | None = None
        self._bg: Image | None = None
        self._kept = Placements()
        self._still: tuple[tuple[object, ...], FrameState, Image] | None = None

    # --- static parts ----------------------------------------------------------------

    def _visible_region(self, z: float) -> tuple[float, float, float, float]:
        """The table area the canvas sees, clipped to 1.5 m around the board."""
        cam, m = self.camera, self.canvas.margin
        w, h = self.canvas.size
        corners = np.array([[0, 0], [w, 0], [w, h], [0, h], [w / 2, 0], [w / 2, h], [0, h / 2],
                            [w, h / 2]], dtype=np.float64)
        rays = np.column_stack([(corners[:, 0] - cam.cx - m) / cam.fx,
                                (corners[:, 1] - cam.cy - m) / cam.fy, np.ones(len(corners))])
        world = rays @ cam.R
        pos = cam.position
        t = (z - pos[2]) / np.minimum(world[:, 2], -1e-3)
        pts = pos[:2] + world[:, :2] * t[:, None]
        cx, cy = self.layout.width_mm / 2, self.layout.height_mm / 2
        lim = 1500.0
        x0, y0 = np.clip(pts.min(axis=0) - 40, [cx - lim, cy - lim], [cx + lim, cy + lim])
        x1, y1 = np.clip(pts.max(axis=0) + 40, [cx - lim, cy - lim], [cx + lim, cy + lim])
        return float(x0), float(y0), float(x1), float(y1)

    def _build_textures(self) -> None:
        rng, style, layout = self._tex_rng, self.style, self.layout
        floor = -layout.thickness_mm
        self.region = self._visible_region(floor)
        x0, y0, x1, y1 = self.region
        self.table_ppm = min(2.5, 1400 / max(x1 - x0, y1 - y0))
        ppm = self.table_ppm
        shape = (max(8, round((y1 - y0) * ppm)), max(8, round((x1 - x0) * ppm)))
        light, dark = style.table_colours
        kinds = {"wood": "planks", "cloth": "cloth", "stone": "stone", "laminate": "paper"}
        kind = kinds[style.table]
        self.table_tex = tx.material(rng, kind, shape, self.table_ppm, light, dark)
        clutter = style.clutter if self.options.clutter else 0
        draw_flat_clutter(rng, self.table_tex, layout, self.region, self.table_ppm, clutter)
        self.clutter: list[Placed] = []
        if clutter and self.spec.family == "rinne" and style.pieces == "dice":
            self.clutter = spare_dice(rng, layout, self.region, style.dice,
                                      int(rng.integers(0, 3)), floor)
        # Board texture at a little above the finest resolution the camera sees it at.
        depth = float(self.camera.to_camera(layout.outline()).min(axis=0)[2])
        self.board_ppm = float(np.clip(1.3 * self.camera.fx / max(depth, 1.0), 1.0, 6.0))
        self.board_tex = draw_board(rng, layout, style.board, self.board_ppm)
        t = layout.thickness_mm
        side_faces = []
        top, bottom = layout.outline(0.0), layout.outline(-t)
        for i in range(4):
            j = (i + 1) % 4
            quad = np.array([top[i], top[j], bottom[j], bottom[i]])
            mid = (top[i] + top[j]) / 2 - np.array([layout.width_mm / 2, layout.height_mm / 2, 0])
            normal = np.array([mid[0], mid[1], 0.0])
            normal = normal / np.linalg.norm(normal)
            side_faces.append(face(quad, style.board.side, normal=normal))
        self.sides = Mesh(tuple(side_faces), gloss=0.1, shininess=10.0,
                          outline=np.concatenate([top, bottom]))

    def _background(self, board: BoardPose, camera: Camera) -> tuple[Canvas, Image]:
        """Table and board on the canvas: cached while the board and camera stay put."""
        key = (board.dx, board.dy, board.angle, camera.rvec, camera.tvec)
        canvas = Canvas(camera, self.canvas.margin)
        if self._bg_key == key and self._bg is not None:
            return canvas, self._bg
        layout, floor = self.layout, -self.layout.thickness_mm
        w, h = canvas.size
        x0, y0, x1, y1 = self.region
        th, tw = self.table_tex.shape[:2]
        world = np.array([[x0, y1, floor], [x1, y1, floor], [x1, y0, floor], [x0, y0, floor]])
        tex_pts = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], dtype=np.float64)
        hom = canvas.homography(world, tex_pts)
        image = np.asarray(cv2.warpPerspective(self.table_tex, hom, (w, h), flags=cv2.INTER_LINEAR,
                                               borderMode=cv2.BORDER_REFLECT), dtype=np.uint8)
        light = self.style.light
        # Both planes face up: the light gives them the same tone and colour.
        tone = light.ambient + light.diffuse * light.vector[2]
        gain = np.diag([float(c * tone) for c in light.colour])  # per channel, via transform
        image = np.asarray(cv2.transform(image, gain), dtype=np.uint8)
        # The board's own shadow on the table, then its edges and top.
        rotation, shift = board.transform(layout)
        if self.options.shadows and layout.thickness_mm > 1:
            slab = Placed(self.sides, rotation, shift, base_z=floor)
            self._shade(image, canvas, [shadow_polygon(slab, light)], [], [], softness=1.5)
        draw_mesh(image, canvas, Placed(self.sides, rotation, shift), light, camera.position)
        bh, bw = self.board_tex.shape[:2]
        outline = board.apply(layout, layout.outline(0.0))
        corners_tex = np.array([[0, bh], [bw, bh], [bw, 0], [0, 0]], dtype=np.float64)
        px, _ = canvas.project(outline)
        rx0, ry0 = max(int(px[:, 0].min()) - 2, 0), max(int(px[:, 1].min()) - 2, 0)
        rx1, ry1 = min(int(px[:, 0].max()) + 3, w), min(int(px[:, 1].max()) + 3, h)
        if rx1 > rx0 and ry1 > ry0:
            hom = canvas.homography(outline, corners_tex)
            hom = np.array([[1, 0, -rx0], [0, 1, -ry0], [0, 0, 1]]) @ hom
            top = cv2.warpPerspective(self.board_tex, hom, (rx1 - rx0, ry1 - ry0),
                                      flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            cover = np.zeros((ry1 - ry0, rx1 - rx0), np.uint8)
            poly = np.round((px - [rx0, ry0]) * 16).astype(np.int32)
            cv2.fillConvexPoly(cover, poly, 255, cv2.LINE_AA, 4)
            lit = np.asarray(cv2.transform(top.astype(np.float32), gain), dtype=np.float32)
            shaded = cv2.add(lit, self._gloss(canvas, (rx0, ry0), top.shape[:2]),
                             dtype=cv2.CV_8U)
            a = cover.astype(np.float32) / 255.0
            roi = image[ry0:ry1, rx0:rx1]
            roi[...] = cv2.blendLinear(shaded, roi, a, 1 - a)
        self._bg_key, self._bg = key, image
        return canvas, image

    def _gloss(self, canvas: Canvas, origin: tuple[int, int], shape: tuple[int, ...],
               ) -> npt.NDArray[np.float32]:
        """A varnished or laminated board mirrors the lamp: a soft bright patch where the
        light's reflection meets the eye."""
        gloss = self.style.board.gloss
        light = self.style.light
        lv = light.vector
        eye = canvas.camera.position
        t = eye[2] / max(lv[2], 0.05)
        spot = np.array([eye[0] + t * lv[0], eye[1] + t * lv[1], 0.0])
        px, depth = canvas.project(spot[None])
        radius = canvas.camera.fx * 140 / max(float(depth[0]), 1.0)
        h, w = shape[0], shape[1]
        k = 8  # the glow is smooth: compute it coarsely, then enlarge
        ys = (np.arange(h // k + 2, dtype=np.float32) * k + origin[1] - px[0, 1]) / radius
        xs = (np.arange(w // k + 2, dtype=np.float32) * k + origin[0] - px[0, 0]) / radius
        small = np.exp(-(ys[:, None] ** 2 + xs[None, :] ** 2)) * np.float32(0.35 * gloss * 255)
        glow = cv2.resize(small, ((w // k + 2) * k, (h // k + 2) * k),
                          interpolation=cv2.INTER_LINEAR)[:h, :w]
        colour = np.array(light.colour, np.float32)
        return channels_of(glow, colour)

    # --- per frame -----------------------------------------------------------------------

    def _shade(self, image: Image, canvas: Canvas, casts: list[FloatArray],
               contacts: list[FloatArray], hand: list[npt.NDArray[np.int32]],
               softness: float = 1.0) -> None:
        """Darken the image under cast shadows (soft) and contact shadows (tight)."""
        light = self.style.light
        if not (casts or contacts or hand):
            return
        w, h = canvas.size
        k = 2  # shadows are soft: draw them at half resolution
        polys = [np.round(canvas.project(poly)[0] / k * 16).astype(np.int32) for poly in casts]
        polys += [(poly // k).astype(np.int32) for poly in hand]
        near = [np.round(canvas.project(poly)[0] / k * 16).astype(np.int32) for poly in contacts]
        scale = canvas.camera.width / 1280
        sigma = max(0.6, light.softness * scale * softness / k)
        every = np.concatenate(polys + near) / 16
        pad = int(3 * sigma) + 3
        x0, y0 = max(int(every[:, 0].min()) - pad, 0), max(int(every[:, 1].min()) - pad, 0)
        x1 = min(int(every[:, 0].max()) + pad, w // k)
        y1 = min(int(every[:, 1].max()) + pad, h // k)
        if x1 <= x0 or y1 <= y0:
            return
        shift = np.array([x0 * 16, y0 * 16], np.int32)
        mask = np.zeros((y1 - y0, x1 - x0), np.float32)
        for i, poly in enumerate(polys):
            value = 1.0 if i < len(casts) else 0.8
            cv2.fillConvexPoly(mask, poly - shift, value, cv2.LINE_AA, 4)
        mask = cv2.GaussianBlur(mask, (0, 0), sigma) * np.float32(light.shadow)
        if near:
            contact = np.zeros_like(mask)
            for poly in near:
                cv2.fillConvexPoly(contact, poly - shift, 1.0, cv2.LINE_AA, 4)
            contact = np.asarray(cv2.GaussianBlur(contact, (0, 0), max(0.6, 1.5 * scale)),
                                 dtype=np.float32)
            mask = np.maximum(mask, contact * np.float32(0.45))
        fx0, fy0 = x0 * k, y0 * k
        fx1, fy1 = min(x1 * k, w), min(y1 * k, h)
        full = cv2.resize(mask, ((x1 - x0) * k, (y1 - y0) * k), interpolation=cv2.INTER_LINEAR)
        full = 1 - np.clip(full[:fy1 - fy0, :fx1 - fx0], 0, 0.9)
        roi = image[fy0:fy1, fx0:fx1]
        roi[...] = cv2.multiply(roi, cv2.merge([full] * 3), dtype=cv2.CV_8U)

    def render(self, state: FrameState, rng: np.random.Generator, index: int = 0,
               ) -> tuple[Image, FrameTruth]:
        camera = state.camera or self.camera
        # A trembling camera turns about its own centre: its view is the steady camera's
        # through a homography, so the scene is drawn from the steady camera (and kept while
        # nothing on the table moves) and turned on its way through the lens.
        drawn_from = self.camera if turned_about_centre(self.camera, camera) else camera
        image, hand_mask = self._drawn(state, drawn_from)
        margin = self.canvas.margin
        turned = turned_lens_map(drawn_from, camera, margin)
        frame = through_lens(image, Canvas(drawn_from, margin), turned)
        occluded: tuple[str, ...] = ()
        if hand_mask is not None:
            seen_mask = through_lens(hand_mask, Canvas(drawn_from, margin), turned)
            occluded = self._occluded(Canvas(camera, margin), seen_mask, state)
        if self.options.effects:
            frame = apply_sensor(frame, self.style, rng, state.exposure)
        return frame, self.truth(index, camera, state, occluded)

    def _drawn(self, state: FrameState, camera: Camera) -> tuple[Image, Image | None]:
        """The canvas of `state` drawn from `camera`, depth of field applied, and the hand's
        mask; a frame with no hand and nothing carried, whose pieces, board and loose things
        are those of the last such frame, is that frame's canvas again."""
        key = _still_key(state, camera)
        if key is not None and self._still is not None and self._still[0] == key:
            return self._still[2], None
        canvas, background = self._background(state.board, camera)
        image = background.copy()
        light = self.style.light
        tiles, markers = self._kept.flat(state, self.style, self.layout, self.seed)
        pieces = self._kept.pieces(state, self.style, self.layout)
        pieces += markers
        pieces += self.clutter
        pieces += state.extras
        carried = ([piece_placed(state.carried, self.style, self.layout, state.board)]
                   if state.carried is not None else [])
        if tiles:
            self._layer(image, canvas, tiles, [], None)
        self._layer(image, canvas, pieces, carried, state.hand)
        hand_mask = None
        if state.hand is not None:
            hand_mask = draw_hand(image, canvas, state.hand, light)
        self._defocus(image, canvas)
        if key is not None:
            image.flags.writeable = False
            # (the state is kept with it: the objects its key names by identity stay alive)
            self._still = (key, state, image)
        return image, hand_mask

    def _defocus(self, image: Image, canvas: Canvas) -> None:
        """Depth of field: the lens focuses on the board; what lies nearer or farther (the
        table at a tilted view) blurs with its relative depth difference. The table's depth
        is exact per pixel: 1/depth of a plane is affine in image coordinates."""
        strength = self.style.sensor.dof * canvas.camera.width / 1280
        if strength < 0.5 or not self.options.effects:
            return
        cam = canvas.camera
        w, h = canvas.size
        rot = cam.R
        centre = cam.position
        focus = float(np.mean(cam.to_camera(self.layout.corners())[:, 2]))
        k = 8
        us = (np.arange(w // k + 2) * k - cam.cx - canvas.margin) / cam.fx
        vs = (np.arange(h // k + 2) * k - cam.cy - canvas.margin) / cam.fy
        ray_z = rot[0, 2] * us[None, :] + rot[1, 2] * vs[:, None] + rot[2, 2]
        depth = -(centre[2] + self.layout.thickness_mm) / np.minimum(ray_z, -1e-3)
        sigma = np.abs(1 - focus / depth) * strength
        small = np.clip(sigma / 2.5, 0, 1).astype(np.float32)
        if float(small.max()) < 0.1:
            return
        weight = cv2.resize(small, ((w // k + 2) * k, (h // k + 2) * k),
                            interpolation=cv2.INTER_LINEAR)[:h, :w]
        blurred = cv2.GaussianBlur(image, (0, 0), 2.5)
        weight = np.ascontiguousarray(weight)
        image[...] = cv2.blendLinear(blurred, image, weight, 1 - weight)

    def _layer(self, image: Image, canvas: Canvas, placed: list[Placed], carried: list[Placed],
               hand: HandPose | None) -> None:
        light = self.style.light
        cam_pos = canvas.camera.position
        if self.options.shadows:
            casts = [self._kept.shadow(p, light)[0] for p in placed]
            casts += [shadow_polygon(p, light) for p in carried]
            contacts = [self._kept.shadow(p, light)[1] for p in placed]
            hand_shadow = shadow_polygons(canvas, hand, light) if hand is not None else []
            self._shade(image, canvas, casts, contacts, hand_shadow)
        order = sorted(placed, key=lambda p: -float(np.linalg.norm(p.position - cam_pos)))
        for p in order + carried:
            draw_mesh(image, canvas, p, light, cam_pos)

    def _occluded(self, canvas: Canvas, mask: Image, state: FrameState) -> tuple[str, ...]:
        """Squares whose column (the square up to its piece's top) the hand covers."""
        out = []
        h, w = mask.shape[:2]
        camera = canvas.camera
        for name in self.layout.square_names():
            top = max(piece_height(state.contents.get(name, EMPTY), self.style), 3.0)
            quad = np.concatenate([self.layout.square_quad(name, 0.0),
                                   self.layout.square_quad(name, top)])
            px = camera.project(state.board.apply(self.layout, quad))
            hull = cv2.convexHull(px.astype(np.float32)).reshape(-1, 2)
            x0, y0 = max(int(hull[:, 0].min()), 0), max(int(hull[:, 1].min()), 0)
            x1, y1 = min(int(hull[:, 0].max()) + 2, w), min(int(hull[:, 1].max()) + 2, h)
            if x1 <= x0 or y1 <= y0:
                continue
            cell = np.zeros((y1 - y0, x1 - x0), np.uint8)
            cv2.fillConvexPoly(cell, np.round(hull - [x0, y0]).astype(np.int32), 1)
            covered = int(np.count_nonzero(cell & (mask[y0:y1, x0:x1] > 127)))
            if covered > 0.02 * max(int(cell.sum()), 1):
                out.append(name)
        return tuple(out)

    def truth(self, index: int, camera: Camera, state: FrameState,
              occluded: tuple[str, ...]) -> FrameTruth:
        layout, board = self.layout, state.board
        grid = camera.project(board.apply(layout, layout.grid_points()))
        corners = camera.project(board.apply(layout, layout.corners()))
        edge = camera.project(board.apply(layout, layout.outline(0.0)))

        def pts(a: FloatArray) -> tuple[tuple[float, float], ...]:
            return tuple((float(x), float(y)) for x, y in a)

        squares = tuple((name, state.contents[name]) for name in layout.square_names())
        names = sorted(state.poses)
        tops: tuple[tuple[str, tuple[float, float]], ...] = ()
        if names:
            points = []
            for name in names:
                pose = state.poses[name]
                foot = layout.centre(name) + np.array([*pose.offset, 0.0])
                foot[2] = piece_height(pose.content, self.style)
                points.append(board.apply(layout, foot[None])[0])
            tops = tuple(zip(names, pts(camera.project(np.array(points))), strict=True))
        return FrameTruth(index, camera.truth(), layout.files, layout.ranks, layout.square_mm,
                          pts(corners), pts(grid), pts(edge), squares, occluded,
                          state.steady and state.hand is None, state.hand is not None, tops)



def _still_key(state: FrameState, camera: Camera) -> tuple[object, ...] | None:
    """What a frame with no hand and nothing carried is drawn from: the camera, the board's
    pose, and its pieces and loose things by identity (the director keeps them from frame
    to frame while nothing moves); None for a frame with a hand."""
    if state.hand is not None or state.carried is not None:
        return None
    return (camera, state.board, tuple(state.contents), tuple(map(id, state.contents.values())),
            tuple(state.poses), tuple(map(id, state.poses.values())), tuple(map(id, state.extras)))


def tilt_of(camera: Camera) -> float:
    """The camera's angle from straight down, degrees."""
    axis = camera.R[2]
    return math.degrees(math.acos(max(-1.0, min(1.0, -float(axis[2])))))
