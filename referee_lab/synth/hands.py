"""Hands and arms: a player's arm reaching in from their side of the table, drawn as shaded
3D capsules (upper arm and forearm in a sleeve, palm, four fingers and a thumb) in depth
order, with a soft cast shadow. What the hand covers is recorded per square."""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from referee_lab.synth.camera import Canvas
from referee_lab.synth.mesh import Light
from referee_lab.synth.textures import Colour

FloatArray = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]
SKINS: tuple[Colour, ...] = ((165, 190, 235), (135, 165, 215), (110, 145, 200),
                             (80, 115, 170), (55, 80, 130), (40, 60, 95))
SLEEVES: tuple[Colour, ...] = ((40, 40, 40), (120, 60, 30), (40, 40, 150), (200, 200, 200),
                               (60, 110, 60), (150, 150, 160), (30, 90, 160), (90, 60, 110))


@dataclass(frozen=True)
class HandLook:
    skin: Colour
    sleeve: Colour
    bare: float  # share of the forearm left bare by the sleeve (0 = sleeve to the wrist)
    scale: float


@dataclass(frozen=True)
class HandPose:
    """A hand whose pinching fingertips are at `grip`, its arm reaching from `shoulder`."""

    grip: tuple[float, float, float]
    shoulder: tuple[float, float, float]
    look: HandLook
    pinch: float = 1.0  # 1 = fingers closed on a piece, 0 = open
    motion: tuple[float, float, float] = (0.0, 0.0, 0.0)  # grip travel during the exposure, mm


def sample_hand_look(rng: np.random.Generator) -> HandLook:
    skin = SKINS[int(rng.integers(len(SKINS)))]
    tone = float(rng.uniform(0.93, 1.05))
    skin = (skin[0] * tone, skin[1] * tone, skin[2] * tone)
    sleeve = SLEEVES[int(rng.integers(len(SLEEVES)))]
    return HandLook(skin, sleeve, float(rng.choice([0.0, 0.4, 1.0])), float(rng.uniform(0.9, 1.1)))


# Nested fills that shade a capsule like a cylinder lit from one side: (width share,
# brightness, shift toward the light as a share of the radius). Blurred afterwards.
BANDS = tuple((1.0 - 0.85 * i / 7, 0.6 + 0.55 * (i / 7) ** 0.8, 0.45 * i / 7) for i in range(8))

Capsule = tuple[FloatArray, FloatArray, float, float, Colour]  # a, b, radius a, radius b, colour


def capsules(pose: HandPose) -> list[Capsule]:
    """The arm and hand as capsules in world millimetres."""
    k = pose.look.scale
    grip = np.array(pose.grip, dtype=np.float64)
    shoulder = np.array(pose.shoulder, dtype=np.float64)
    back = shoulder[:2] - grip[:2]
    back = back / (np.linalg.norm(back) + 1e-9)
    back3 = np.array([back[0], back[1], 0.0])
    side = np.array([-back[1], back[0], 0.0])
    wrist = grip + back3 * 118 * k + np.array([0, 0, 42.0 * k])
    knuckles = grip + back3 * 52 * k + np.array([0, 0, 30.0 * k])
    elbow = wrist + (shoulder - wrist) * 0.5
    elbow[2] = min(elbow[2], wrist[2] + 90)
    skin, sleeve = pose.look.skin, pose.look.sleeve
    bare = pose.look.bare
    cuff = wrist + (elbow - wrist) * max(bare, 0.05)
    out: list[Capsule] = [
        (elbow, shoulder, 44 * k, 52 * k, sleeve),
        (cuff, elbow, 33 * k, 42 * k, sleeve),
    ]
    if bare > 0.05:
        out.append((wrist, cuff, 24 * k, 31 * k, skin))
    # The back of the hand is flat: three thin capsules side by side, not one thick one.
    for offset in (-1.0, 0.0, 1.0):
        out.append((wrist + side * offset * 12 * k, knuckles + side * offset * 22 * k,
                    15 * k, 13 * k, skin))
    spread = 1 - 0.6 * pose.pinch
    for offset in (-1.5, -0.5, 0.5, 1.5):
        base = knuckles + side * offset * 15 * k * (0.8 + 0.2 * spread)
        tip = grip + side * offset * (4 + 10 * spread) * k + back3 * abs(offset) * 6 * k
        tip = tip + np.array([0, 0, 4.0 + 6 * (1 - pose.pinch)])
        middle = base + (tip - base) * 0.55 + np.array([0, 0, 10.0 * k])
        radius = (8.5 - abs(offset) * 0.6) * k
        out.append((base, middle, radius, radius * 0.95, skin))
        out.append((middle, tip, radius * 0.95, radius * 0.85, skin))
    thumb_base = wrist + side * (-30 * k) + back3 * (-20 * k) + np.array([0, 0, -14.0 * k])
    thumb_mid = thumb_base + (grip - thumb_base) * 0.5 + side * (-14 * k)
    thumb_tip = grip + side * (-14 * k) * (0.5 + spread) + back3 * 8 * k
    out.append((thumb_base, thumb_mid, 11.5 * k, 10 * k, skin))
    out.append((thumb_mid, thumb_tip, 10 * k, 8.5 * k, skin))
    return out


_ANGLES = np.linspace(0, 2 * math.pi, 16, endpoint=False)
RING = np.stack([np.cos(_ANGLES), np.sin(_ANGLES)], axis=1)  # a capsule's end as 16 points


def _capsule_polygon(a: FloatArray, b: FloatArray, ra: float, rb: float) -> npt.NDArray[np.int32]:
    pts = np.concatenate([a + RING * ra, b + RING * rb])
    hull = cv2.convexHull(pts.astype(np.float32))
    return np.asarray(np.round(hull.reshape(-1, 2) * 16), dtype=np.int32)


NEAR = 80.0  # mm: parts of the arm nearer the lens than this are cut off


def _clip_near(canvas: Canvas, cap: Capsule) -> Capsule | None:
    """The part of a capsule in front of the near plane (an arm may reach past the camera),
    or None if it is all behind it."""
    a, b, ra, rb, colour = cap
    da, db = canvas.camera.to_camera(np.stack([a, b]))[:, 2]
    if da < NEAR and db < NEAR:
        return None
    if da < NEAR:
        t = (NEAR - da) / (db - da)
        a, ra = a + (b - a) * t, ra + (rb - ra) * t
    elif db < NEAR:
        t = (NEAR - db) / (da - db)
        b, rb = b + (a - b) * t, rb + (ra - rb) * t
    return a, b, ra, rb, colour


def _project_capsule(canvas: Canvas, cap: Capsule) -> tuple[FloatArray, FloatArray, float, float,
                                                            float]:
    a, b, ra, rb, _ = cap
    px, depth = canvas.project(np.stack([a, b]))
    f = canvas.camera.fx
    return px[0], px[1], f * ra / depth[0], f * rb / depth[1], float(depth.mean())


def draw_hand(image: Image, canvas: Canvas, pose: HandPose, light: Light) -> npt.NDArray[np.uint8]:
    """Draw the hand on the canvas image (in place); returns its coverage mask (0/255)."""
    clipped = [c for c in (_clip_near(canvas, cap) for cap in capsules(pose)) if c is not None]
    h, w = image.shape[:2]
    projected = [(cap, *_project_capsule(canvas, cap)) for cap in clipped]
    # Never draw absurdly large shapes: clamp projected radii to the canvas size.
    projected = [(cap, a, b, min(ra, 2.0 * w), min(rb, 2.0 * w), d)
                 for cap, a, b, ra, rb, d in projected]
    mask = np.zeros((h, w), np.uint8)
    if not projected:
        return mask
    projected.sort(key=lambda item: -item[5])  # far first
    pts = np.concatenate([np.stack([p[1], p[2]]) for p in projected])
    pad = max(max(p[3], p[4]) for p in projected) + 6
    x0, y0 = max(int(pts[:, 0].min() - pad), 0), max(int(pts[:, 1].min() - pad), 0)
    x1, y1 = min(int(pts[:, 0].max() + pad), w), min(int(pts[:, 1].max() + pad), h)
    if x1 <= x0 or y1 <= y0:
        return mask
    layer = image[y0:y1, x0:x1].copy()
    alpha = np.zeros((y1 - y0, x1 - x0), np.uint8)
    origin = np.array([x0, y0], dtype=np.float64)
    # Light direction across the image, for the cylinder shading.
    grip = np.array(pose.grip)
    lp, _ = canvas.project(np.stack([grip, grip + light.vector * 60]))
    ldir = lp[1] - lp[0]
    ldir = ldir / (np.linalg.norm(ldir) + 1e-9)
    tone = light.ambient + light.diffuse * max(0.2, light.vector[2])
    gain = np.array(light.colour) * tone
    for cap, a, b, ra, rb, _ in projected:
        _shade_capsule(layer, alpha, np.array(cap[4]) * gain, a - origin, b - origin, ra, rb,
                       ldir)
    soft = np.asarray(cv2.GaussianBlur(layer, (0, 0), 0.8), dtype=np.float32)
    soft *= _grain(soft.shape[0], soft.shape[1], pose)[..., None]
    cover = np.asarray(cv2.GaussianBlur(alpha, (0, 0), 0.8), dtype=np.float32)
    kernel = _motion_kernel(canvas, pose)
    if kernel is not None:  # a moving hand smears during the exposure
        soft = np.asarray(cv2.filter2D(soft, -1, kernel), dtype=np.float32)
        cover = np.asarray(cv2.filter2D(cover, -1, kernel), dtype=np.float32)
    cover = cover[..., None] / 255.0
    roi = image[y0:y1, x0:x1]
    roi[...] = np.clip(roi * (1 - cover) + soft * cover, 0, 255).astype(np.uint8)
    mask[y0:y1, x0:x1] = np.where(alpha > 127, 255, 0).astype(np.uint8)
    return mask


def _shade_capsule(layer: Image, alpha: npt.NDArray[np.uint8], colour: FloatArray,
                   a: FloatArray, b: FloatArray, ra: float, rb: float, ldir: FloatArray) -> None:
    """Paint one capsule shaded like a lit cylinder: nested fills, blurred in proportion to
    the capsule's own width (so thick arms and thin fingers are both smooth)."""
    h, w = alpha.shape
    pad = max(ra, rb) + 4
    x0 = max(int(min(a[0], b[0]) - pad), 0)
    y0 = max(int(min(a[1], b[1]) - pad), 0)
    x1 = min(int(max(a[0], b[0]) + pad) + 1, w)
    y1 = min(int(max(a[1], b[1]) + pad) + 1, h)
    if x1 <= x0 or y1 <= y0:
        return
    shift = np.array([x0, y0], dtype=np.float64)
    a, b = a - shift, b - shift
    patch = layer[y0:y1, x0:x1]
    paint = patch.copy()
    for share, bright, offset in BANDS:
        off = ldir * offset * (ra + rb) / 2
        poly = _capsule_polygon(a + off, b + off, ra * share, rb * share)
        c = np.clip(colour * bright, 0, 255)
        cv2.fillConvexPoly(paint, poly, (float(c[0]), float(c[1]), float(c[2])), cv2.LINE_AA, 4)
    paint = _soften(paint, max(0.8, 0.22 * (ra + rb) / 2))
    cover = np.zeros(patch.shape[:2], np.uint8)
    cv2.fillConvexPoly(cover, _capsule_polygon(a, b, ra, rb), 255, cv2.LINE_AA, 4)
    weight = cover.astype(np.float32) / 255.0
    patch[...] = cv2.blendLinear(paint, patch, weight, 1 - weight)
    np.maximum(alpha[y0:y1, x0:x1], cover, out=alpha[y0:y1, x0:x1])


def _soften(image: Image, sigma: float) -> Image:
    """A Gaussian blur; wide ones are done at a reduced size (same look, far cheaper)."""
    if sigma <= 4:
        return np.asarray(cv2.GaussianBlur(image, (0, 0), sigma), dtype=np.uint8)
    k = sigma / 3
    h, w = image.shape[:2]
    small = cv2.resize(image, (max(1, round(w / k)), max(1, round(h / k))),
                       interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), 3.0)
    return np.asarray(cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), dtype=np.uint8)


def _grain(h: int, w: int, pose: HandPose) -> npt.NDArray[np.float32]:
    """Fine irregular grain (cloth fibres, skin) so the arm is not a smooth plastic tube."""
    from referee_lab.synth.textures import BANK_SIZE, _bank

    field = _bank("paper", int(abs(pose.shoulder[0])) % 4)
    if h > BANK_SIZE or w > BANK_SIZE:
        field = np.asarray(cv2.resize(field, (max(w, BANK_SIZE), max(h, BANK_SIZE))),
                           dtype=np.float32)
    y0 = int(abs(pose.grip[1]) * 3) % (field.shape[0] - h + 1)
    x0 = int(abs(pose.grip[0]) * 3) % (field.shape[1] - w + 1)
    return np.asarray(0.9 + 0.2 * field[y0:y0 + h, x0:x0 + w], dtype=np.float32)


def _motion_kernel(canvas: Canvas, pose: HandPose) -> npt.NDArray[np.float32] | None:
    grip = np.array(pose.grip)
    ends, _ = canvas.project(np.stack([grip, grip + np.array(pose.motion)]))
    step = ends[1] - ends[0]
    length = float(np.hypot(*step))
    if length < 1.0:
        return None
    size = int(length) | 1
    kernel = np.zeros((size + 2, size + 2), np.float32)
    c = (size + 2) / 2 - 0.5
    half = step / 2
    cv2.line(kernel, (round((c - half[0]) * 16), round((c - half[1]) * 16)),
             (round((c + half[0]) * 16), round((c + half[1]) * 16)), 1.0, 1, cv2.LINE_AA, 4)
    return kernel / max(float(kernel.sum()), 1e-6)


def shadow_polygons(canvas: Canvas, pose: HandPose, light: Light) -> list[npt.NDArray[np.int32]]:
    """The hand's shadow on the board plane, as canvas polygons (16x sub-pixel)."""
    lv = light.vector
    out = []
    for a, b, ra, rb, _ in capsules(pose):
        ends = []
        for p in (a, b):
            t = p[2] / max(lv[2], 0.05)
            ends.append(np.array([p[0] - t * lv[0], p[1] - t * lv[1], 0.0]))
        cap = _clip_near(canvas, (ends[0], ends[1], ra, rb, (0.0, 0.0, 0.0)))
        if cap is None:
            continue
        px, depth = canvas.project(np.stack([cap[0], cap[1]]))
        f = canvas.camera.fx
        out.append(_capsule_polygon(px[0], px[1], f * cap[2] / depth[0], f * cap[3] / depth[1]))
    return out
