"""Heavy augmentation for square classifiers, and synthetic empty board squares.

Training crops go through `crops.crop_square` like run-time crops, but from a jittered
square: turned by any angle (a die turns freely in its square), scaled, shifted off-centre
and slightly skewed (camera tilt). Then the photometric changes a camera and a room bring:
white balance, hue, brightness and contrast, uneven light and shadows, blur and lower
resolution, sensor noise, JPEG artefacts, and the board's grid line at the square's border.
All randomness comes from the `numpy.random.Generator` passed in.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.crops import CropSpec, ImageBGR, Quad, as_quad, crop_square
from referee_lab.datasets import Sample

Rng = np.random.Generator


@dataclass(frozen=True)
class Augment:
    """Ranges of the random changes; the defaults are the dice model's recipe."""

    max_angle: float = 180.0  # degrees either way
    scale: tuple[float, float] = (0.8, 1.2)  # of the square's side
    shift: float = 0.12  # of the side, each axis
    skew: float = 0.03  # corner jitter, of the side
    p_grid: float = 0.4
    p_hue: float = 0.5
    p_gray: float = 0.08
    p_light: float = 0.35
    p_blur: float = 0.35
    p_lowres: float = 0.2
    p_noise: float = 0.5
    p_jpeg: float = 0.4
    p_flip: float = 0.5  # mirror image: pips read the same, so the label holds

    @classmethod
    def mild(cls) -> Augment:
        """The last stretch of training: still any turn, gentler camera and light, closer to
        the real photographs (fine-tuning on their train split)."""
        return cls(
            scale=(0.9, 1.1),
            shift=0.08,
            skew=0.015,
            p_grid=0.25,
            p_hue=0.15,
            p_gray=0.03,
            p_light=0.15,
            p_blur=0.15,
            p_lowres=0.05,
            p_noise=0.3,
            p_jpeg=0.25,
        )

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def jitter_quad(quad: Quad, rng: Rng, aug: Augment, *, turn: bool = True) -> Quad:
    center = quad.mean(axis=0)
    side = float(np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1).mean())
    limit = aug.max_angle if turn else min(aug.max_angle, 4.0)
    angle = np.deg2rad(rng.uniform(-limit, limit))
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    scale = float(np.exp(rng.uniform(np.log(aug.scale[0]), np.log(aug.scale[1]))))
    shift = rng.uniform(-aug.shift, aug.shift, size=2) * side
    skew = rng.normal(0.0, aug.skew, size=(4, 2)) * side
    moved = (quad - center) @ rotation.T * scale + center + shift + skew
    if rng.random() < aug.p_flip:
        moved = moved[[1, 0, 3, 2]]  # corners listed mirror-wise: the crop comes out mirrored
    return as_quad(moved)


def augmented_crop(sample: Sample, spec: CropSpec, rng: Rng, aug: Augment) -> ImageBGR:
    # A synthetic square keeps its checker aligned with the crop, as a warped board does.
    turn = sample.group != "synthetic"
    crop = crop_square(sample.image, jitter_quad(sample.quad, rng, aug, turn=turn), spec)
    return photometric(crop, spec, rng, aug)


def photometric(crop: ImageBGR, spec: CropSpec, rng: Rng, aug: Augment) -> ImageBGR:
    img = crop.astype(np.float32)
    if rng.random() < aug.p_grid:
        img = _grid_lines(img, spec, rng)
    if rng.random() < aug.p_hue:
        img = _hue_shift(img, rng)
    if rng.random() < aug.p_gray:
        img = np.repeat(img.mean(axis=2, keepdims=True), 3, axis=2)
    img *= rng.uniform(0.8, 1.2, size=3).astype(np.float32)  # white balance
    mean = float(img.mean())
    img = (img - mean) * rng.uniform(0.6, 1.4) + mean + rng.uniform(-45, 45)
    if rng.random() < aug.p_light:
        img *= _light_field(spec.size, rng)[..., None]
    img = np.clip(img, 0, 255)
    if rng.random() < 0.3:  # gamma
        img = 255.0 * (img / 255.0) ** rng.uniform(0.7, 1.4)
    if rng.random() < aug.p_blur:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.0)), np.float32)
    if rng.random() < aug.p_lowres:
        small = max(8, int(spec.size * rng.uniform(0.55, 0.85)))
        shrunk = cv2.resize(img, (small, small), interpolation=cv2.INTER_AREA)
        img = np.asarray(
            cv2.resize(shrunk, (spec.size, spec.size), interpolation=cv2.INTER_LINEAR), np.float32
        )
    if rng.random() < aug.p_noise:
        img = img + rng.normal(0.0, rng.uniform(2, 12), size=img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < aug.p_jpeg:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(25, 90))])
        if ok:
            out = np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR), np.uint8)
    return out


def _hue_shift(img: NDArray[np.float32], rng: Rng) -> NDArray[np.float32]:
    hsv = cv2.cvtColor(np.clip(img, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + int(rng.integers(0, 180))) % 180
    if rng.random() < 0.5:
        hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.5, 1.5), 0, 255).astype(np.int16)
    bgr = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR)
    return np.asarray(bgr, np.float32)


def _light_field(size: int, rng: Rng) -> NDArray[np.float32]:
    """A gain over the crop: a linear ramp of light, sometimes a hard-edged shadow."""
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32) / size - 0.5
    angle = rng.uniform(0, 2 * np.pi)
    along = xs * np.cos(angle) + ys * np.sin(angle)
    if rng.random() < 0.5:
        field = 1.0 + along * rng.uniform(-0.6, 0.6)
    else:
        edge = rng.uniform(-0.4, 0.4)
        field = np.where(along > edge, rng.uniform(0.45, 0.85), 1.0)
        field = cv2.GaussianBlur(field.astype(np.float32), (0, 0), rng.uniform(0.5, 3.0))
    return np.asarray(field, np.float32)


def _grid_lines(img: NDArray[np.float32], spec: CropSpec, rng: Rng) -> NDArray[np.float32]:
    """The board's lines along the square's borders (each side drawn or not)."""
    out = img.copy()
    size = spec.size
    colour = rng.uniform(0, 70, size=3) if rng.random() < 0.75 else rng.uniform(170, 255, size=3)
    width = int(rng.integers(1, 3))
    base = spec.border
    for side in range(4):
        if rng.random() < 0.2:
            continue
        pos = round(base + rng.normal(0, 1.2))
        pos = pos if side < 2 else size - 1 - pos
        lo, hi = max(0, pos - width // 2), min(size, pos - width // 2 + width)
        if side % 2 == 0:
            out[lo:hi, :, :] = colour
        else:
            out[:, lo:hi, :] = colour
    return out


def synthetic_square(rng: Rng, size: int) -> Sample:
    """An empty board square made from nothing: a plain, wood-like, paper-like or checkered
    surface (label 0), as a sample whose quad is the inner part of a larger patch."""
    patch = size * 2
    kind = int(rng.integers(0, 4))
    colour = rng.uniform(0, 255, size=3).astype(np.float32)
    ys, xs = np.mgrid[0:patch, 0:patch].astype(np.float32)
    if kind == 0:  # plain
        img = np.broadcast_to(colour, (patch, patch, 3)).copy()
    elif kind == 1:  # wood: stretched noise with a grain of rings along one direction
        angle = rng.uniform(0, np.pi)
        along = xs * np.cos(angle) + ys * np.sin(angle)
        across = -xs * np.sin(angle) + ys * np.cos(angle)
        noise = cv2.resize(rng.normal(0, 1, (patch // 8, 2)).astype(np.float32), (patch, patch))
        rings = np.sin(across * rng.uniform(0.15, 0.6) + noise * 2.0 + along * 0.01)
        tone = 1.0 + rings * rng.uniform(0.05, 0.2)
        img = colour * tone[..., None]
    elif kind == 2:  # paper or cloth: fine noise on a colour
        grain = cv2.GaussianBlur(rng.normal(0, 1, (patch, patch)).astype(np.float32), (0, 0), 1.0)
        img = colour + grain[..., None] * rng.uniform(3, 20)
    else:  # a checker corner: the neighbours' colour shows in the margin
        other = rng.uniform(0, 255, size=3).astype(np.float32)
        quarter = patch // 4
        cell = ((xs - quarter) // (patch // 2) + (ys - quarter) // (patch // 2)) % 2
        img = np.where(cell[..., None] > 0, other, colour)
    square = np.clip(img, 0, 255).astype(np.uint8)
    q = patch / 4
    quad = as_quad([[q, q], [patch - q, q], [patch - q, patch - q], [q, patch - q]])
    return Sample(square, quad, 0, "synthetic")
