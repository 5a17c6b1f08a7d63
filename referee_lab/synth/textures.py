"""Procedural material textures: noise, wood grain, paper, cloth, stone. All take a seeded
`numpy.random.Generator` and return BGR uint8 images (or float fields in 0..1)."""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
Field = npt.NDArray[np.float32]
Colour = tuple[float, float, float]  # BGR, 0..255


def noise(rng: np.random.Generator, shape: tuple[int, int], scale: float,
          octaves: int = 4, stretch: float = 1.0) -> Field:
    """Fractal value noise in 0..1 over `shape` (h, w); `scale` is the size in pixels of the
    coarsest features; `stretch` > 1 elongates features along x (fibres, grain)."""
    h, w = shape
    total = np.zeros((h, w), np.float32)
    amplitude, weight = 1.0, 0.0
    size = scale
    for _ in range(octaves):
        gh = max(2, int(h / size) + 2)
        gw = max(2, int(w / (size * stretch)) + 2)
        grid = rng.random((gh, gw), dtype=np.float32)
        total += amplitude * cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
        weight += amplitude
        amplitude *= 0.5
        size /= 2
        if size < 1.5:
            break
    total /= weight
    lo, hi = float(total.min()), float(total.max())
    return (total - lo) / max(hi - lo, 1e-6)


def mix(a: Colour, b: Colour, t: Field) -> Image:
    """Blend two colours by a 0..1 field (cv2 per channel: fast)."""
    channels = [cv2.convertScaleAbs(t, alpha=float(cb - ca), beta=float(ca))
                for ca, cb in zip(a, b, strict=True)]
    return np.asarray(cv2.merge(channels), dtype=np.uint8)


def jitter(rng: np.random.Generator, colour: Colour, amount: float) -> Colour:
    c = np.clip(np.array(colour) * jitter_factors(rng, amount), 0, 255)
    return (float(c[0]), float(c[1]), float(c[2]))


def jitter_factors(rng: np.random.Generator, amount: float) -> np.ndarray:
    """The factors `jitter` scales a colour's channels by (the same draws)."""
    return 1 + rng.uniform(-amount, amount, 3)


def wood(rng: np.random.Generator, shape: tuple[int, int], px_per_mm: float,
         light: Colour, dark: Colour, *, angle: float = 0.0, planks: int = 0) -> Image:
    """Wood grain: growth rings warped by noise, fine fibres along the grain, and optional
    planks (table tops) with slightly different tones and dark seams."""
    h, w = shape
    diag = int(math.hypot(h, w)) + 2
    grain_mm = rng.uniform(8.0, 16.0) / px_per_mm  # rings 8–16 texture pixels apart
    warp = noise(rng, (diag, diag), 60 * px_per_mm, 3, stretch=10.0)
    yy = np.arange(diag, dtype=np.float32)[:, None] / px_per_mm
    stretch_field = noise(rng, (diag, diag), 150 * px_per_mm, 2, stretch=6.0)
    rings = (yy * (0.8 + 0.4 * stretch_field) + warp * rng.uniform(6, 22)
             + np.float32(rng.uniform(0, 100)))
    phase = (rings / grain_mm) % 1.0
    ring = np.clip(np.abs(phase - 0.5) * 2, 0, 1) ** np.float32(rng.uniform(2.0, 5.0))
    fibres = noise(rng, (diag, diag), 1.2 * px_per_mm, 2, stretch=25.0)
    blotch = noise(rng, (diag, diag), 40 * px_per_mm, 3, stretch=3.0)
    t = np.clip(0.3 * ring + 0.25 * fibres + 0.55 * blotch - 0.05, 0, 1)
    tex = mix(light, dark, t.astype(np.float32))
    if planks > 1:
        width = diag / planks
        tones = rng.uniform(0.85, 1.12, planks)
        for i in range(planks):
            y0, y1 = int(i * width), int((i + 1) * width)
            tex[y0:y1] = np.clip(tex[y0:y1].astype(np.float32) * tones[i], 0, 255).astype(np.uint8)
            tex[max(y0 - 1, 0):y0 + 1] = (tex[max(y0 - 1, 0):y0 + 1] * 0.45).astype(np.uint8)
    rot = cv2.getRotationMatrix2D((diag / 2, diag / 2), angle, 1.0)
    rot[:, 2] -= np.array([(diag - w) / 2, (diag - h) / 2])
    return np.asarray(cv2.warpAffine(tex, rot, (w, h), borderMode=cv2.BORDER_REFLECT))


def paper(rng: np.random.Generator, shape: tuple[int, int], px_per_mm: float,
          colour: Colour) -> Image:
    """Paper or card: a near-flat colour with fine fibres and faint blotches."""
    fine = noise(rng, shape, 0.8 * px_per_mm, 2, stretch=3.0)
    blotch = noise(rng, shape, 30 * px_per_mm, 3)
    t = 0.5 * fine + 0.5 * blotch
    base = np.array(colour, np.float32)
    out = base * (0.94 + 0.09 * t[..., None])
    return np.clip(out, 0, 255).astype(np.uint8)


def cloth(rng: np.random.Generator, shape: tuple[int, int], px_per_mm: float,
          colour: Colour) -> Image:
    """Woven cloth: a fine crossing weave with uneven threads and soft folds."""
    h, w = shape
    period = max(2.0, rng.uniform(0.6, 1.6) * px_per_mm)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    weave = 0.5 + 0.25 * np.sin(xx * (2 * np.pi / period)) * np.sin(yy * (2 * np.pi / period))
    threads = noise(rng, shape, 4 * px_per_mm, 2, stretch=6.0)
    folds = noise(rng, shape, 120 * px_per_mm, 3)
    t = 0.8 + 0.12 * weave + 0.1 * threads + 0.25 * (folds - 0.5)
    out = np.clip(np.array(colour, np.float32) * t[..., None], 0, 255)
    return np.asarray(out, dtype=np.uint8)


def stone(rng: np.random.Generator, shape: tuple[int, int], px_per_mm: float,
          base: Colour, vein: Colour) -> Image:
    """Stone or laminate: mottled colour with faint veins."""
    mottle = noise(rng, shape, 15 * px_per_mm, 4)
    veins = noise(rng, shape, 80 * px_per_mm, 4)
    v = np.clip(1 - np.abs(veins - 0.5) * rng.uniform(40, 80), 0, 1)
    speckle = noise(rng, shape, 1.5 * px_per_mm, 2)
    t = np.clip(0.5 * mottle + 0.12 * v + 0.38 * speckle, 0, 1)
    return mix(base, vein, t)


def grime(rng: np.random.Generator, image: Image, px_per_mm: float, amount: float) -> Image:
    """Wear: low-frequency darkening and lightening, the look of a used object."""
    h, w = image.shape[:2]
    small = noise(rng, (max(2, h // 8), max(2, w // 8)), 50 * px_per_mm / 8, 3)
    field = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    gain = cv2.merge([field * np.float32(amount) + np.float32(1 - amount / 2)] * 3)
    return np.asarray(cv2.multiply(image, gain, dtype=cv2.CV_8U), dtype=np.uint8)


# --- a bank of cached grain fields, so that each render only crops and colours one ------

BANK_SIZE = 1024
BANK_VARIANTS = 8
BANK_PPM = {"wood": 2.0, "planks": 1.0, "paper": 2.0, "cloth": 2.0, "stone": 1.0}


@lru_cache(maxsize=64)
def _bank(kind: str, variant: int) -> Field:
    """A grain field in 0..1 of BANK_SIZE² pixels at BANK_PPM[kind]; deterministic."""
    rng = np.random.default_rng([sum(map(ord, kind)), variant])
    shape = (BANK_SIZE, BANK_SIZE)
    ppm = BANK_PPM[kind]
    white, black = (255.0, 255.0, 255.0), (0.0, 0.0, 0.0)
    if kind in ("wood", "planks"):
        planks = int(rng.integers(4, 8)) if kind == "planks" else 0
        img = wood(rng, shape, ppm, white, black, planks=planks)
    elif kind == "paper":
        img = paper(rng, shape, ppm, white)
    elif kind == "cloth":
        img = cloth(rng, shape, ppm, white)
    else:
        img = stone(rng, shape, ppm, white, black)
    return np.asarray(img[..., 1].astype(np.float32) / 255.0, dtype=np.float32)


def warm_up() -> None:
    """Make every cached grain field now (about 10 s once per process) rather than on the
    first renders that need them."""
    for kind in BANK_PPM:
        for variant in range(BANK_VARIANTS):
            _bank(kind, variant)


def material(rng: np.random.Generator, kind: str, shape: tuple[int, int], ppm: float,
             light: Colour, dark: Colour) -> Image:
    """A texture of `shape` at `ppm` pixels/mm: a random crop of a cached grain field
    (turned by a multiple of 90°), coloured from `light` (field 1) to `dark` (field 0).
    For paper and cloth `dark` is ignored: the field modulates `light`."""
    h, w = shape
    field = _bank(kind, int(rng.integers(BANK_VARIANTS)))
    field = np.rot90(field, int(rng.integers(4)))
    scale = BANK_PPM[kind] / ppm
    ch, cw = max(2, round(h * scale)), max(2, round(w * scale))
    if ch > BANK_SIZE or cw > BANK_SIZE:
        shrink = max(ch, cw) / BANK_SIZE
        ch, cw = max(2, int(ch / shrink)), max(2, int(cw / shrink))
    y0 = int(rng.integers(0, BANK_SIZE - ch + 1))
    x0 = int(rng.integers(0, BANK_SIZE - cw + 1))
    crop = np.ascontiguousarray(field[y0:y0 + ch, x0:x0 + cw])
    t = np.asarray(cv2.resize(crop, (w, h), interpolation=cv2.INTER_LINEAR), dtype=np.float32)
    if kind in ("paper", "cloth"):
        return mix((0.0, 0.0, 0.0), light, t)
    return mix(dark, light, t)
