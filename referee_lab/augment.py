"""Heavy augmentation for square classifiers, and synthetic empty board squares.

Training crops go through `crops.crop_square` like run-time crops, but from a jittered
square: turned by any angle (a die turns freely in its square), scaled, shifted off-centre
and slightly skewed (camera tilt). Then the photometric changes a camera and a room bring:
white balance, hue, brightness and contrast, uneven light and shadows, blur and lower
resolution, sensor noise, JPEG artefacts, and the board's grid line at the square's border.
The dice recipe adds what a Pi camera and real sets bring: dice of any size in their square
(`die_widths`: a 12 mm die on a 40 mm square to a 30 mm one filling it), motion blur,
specular highlights, stronger white-balance casts and light-for-dark bodies (an inverted
white die is a black one). Those are off by default (the render-trained recipes leave them
out), and a change that is off draws nothing from the generator, so their batches repeat.
All randomness comes from the `numpy.random.Generator` passed in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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
    # Die width as a share of its square, drawn uniformly for `p_size` of the crops in place
    # of `scale` (from the sample's own `width`, as far as its `room` allows).
    die_widths: tuple[float, float] | None = None
    p_size: float = 0.0
    p_motion: float = 0.0  # a hand or the board moved while the shutter was open
    p_specular: float = 0.0  # glare of a lamp on a glossy die or board
    p_cast: float = 0.0  # a stronger white-balance cast than the default gains
    p_invert: float = 0.0  # light for dark: a white die with black pips becomes a black one

    @classmethod
    def any_size(cls) -> Augment:
        """The dice recipe: the defaults and the real sets' sizes and a Pi camera's faults."""
        return cls(die_widths=(0.3, 0.95), p_size=0.75, p_motion=0.15, p_specular=0.2,
                   p_cast=0.25, p_invert=0.1)

    def milder(self) -> Augment:
        """`mild()` keeping this recipe's sizes and camera faults."""
        gentle = Augment.mild()
        kept = ("die_widths", "p_size", "p_motion", "p_specular", "p_cast", "p_invert")
        return replace(gentle, **{k: getattr(self, k) for k in kept})

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


NOMINAL_WIDTH = 0.55  # the die width a sample of no known `width` (an empty square) stands for


def jitter_quad(quad: Quad, rng: Rng, aug: Augment, *, turn: bool = True, width: float = 0.0,
                room: float = 1.0) -> Quad:
    """`quad` turned, scaled, shifted and skewed at random. With `aug.die_widths`, `width`
    (the die's width as a share of `quad`'s side; 0: none or unknown) and `room` (how many
    times `quad` may grow and still show only its own die) set the scale instead, for
    `aug.p_size` of the draws: the square grown or shrunk to show the die that wide."""
    center = quad.mean(axis=0)
    side = float(np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1).mean())
    limit = aug.max_angle if turn else min(aug.max_angle, 4.0)
    angle = np.deg2rad(rng.uniform(-limit, limit))
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    scale = float(np.exp(rng.uniform(np.log(aug.scale[0]), np.log(aug.scale[1]))))
    grow = 1.0
    if aug.die_widths is not None and rng.random() < aug.p_size:
        wanted = float(rng.uniform(*aug.die_widths))
        scale = min((width or NOMINAL_WIDTH) / wanted, max(room, 1.0))
        grow = max(scale, 1.0)  # a small die strays further in its big square
    shift = rng.uniform(-aug.shift, aug.shift, size=2) * side * grow
    skew = rng.normal(0.0, aug.skew, size=(4, 2)) * side
    moved = (quad - center) @ rotation.T * scale + center + shift + skew
    if rng.random() < aug.p_flip:
        moved = moved[[1, 0, 3, 2]]  # corners listed mirror-wise: the crop comes out mirrored
    return as_quad(moved)


def augmented_crop(sample: Sample, spec: CropSpec, rng: Rng, aug: Augment) -> ImageBGR:
    # A synthetic square keeps its checker aligned with the crop, as a warped board does.
    turn = sample.group != "synthetic"
    quad = jitter_quad(sample.quad, rng, aug, turn=turn, width=sample.width, room=sample.room)
    return photometric(crop_square(sample.image, quad, spec), spec, rng, aug)


def photometric(crop: ImageBGR, spec: CropSpec, rng: Rng, aug: Augment) -> ImageBGR:
    img = crop.astype(np.float32)
    if rng.random() < aug.p_grid:
        img = _grid_lines(img, spec, rng)
    if rng.random() < aug.p_hue:
        img = _hue_shift(img, rng)
    if rng.random() < aug.p_gray:
        img = np.repeat(img.mean(axis=2, keepdims=True), 3, axis=2)
    if aug.p_invert and rng.random() < aug.p_invert:
        img = 255.0 - img
    img *= rng.uniform(0.8, 1.2, size=3).astype(np.float32)  # white balance
    if aug.p_cast and rng.random() < aug.p_cast:  # warm lamp or cold daylight, uncorrected
        warm = rng.uniform(0.0, 0.35)
        sign = 1.0 if rng.random() < 0.5 else -1.0
        img *= np.array([1 - sign * warm, 1.0, 1 + sign * warm], np.float32)
    mean = float(img.mean())
    img = (img - mean) * rng.uniform(0.6, 1.4) + mean + rng.uniform(-45, 45)
    if rng.random() < aug.p_light:
        img *= _light_field(spec.size, rng)[..., None]
    img = np.clip(img, 0, 255)
    if rng.random() < 0.3:  # gamma
        img = 255.0 * (img / 255.0) ** rng.uniform(0.7, 1.4)
    if aug.p_specular and rng.random() < aug.p_specular:
        img = _specular(img, rng)
    if rng.random() < aug.p_blur:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.0)), np.float32)
    if aug.p_motion and rng.random() < aug.p_motion:
        img = _motion_blur(img, rng)
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


def _specular(img: NDArray[np.float32], rng: Rng) -> NDArray[np.float32]:
    """One or two soft white glints: a lamp mirrored in a glossy face or the board."""
    size = img.shape[0]
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    glare = np.zeros((size, size), np.float32)
    for _ in range(int(rng.integers(1, 3))):
        cx, cy = rng.uniform(0.2, 0.8, size=2) * size
        sx, sy = rng.uniform(0.02, 0.12, size=2) * size
        glare += rng.uniform(60, 200) * np.exp(-((xs - cx) / sx) ** 2 / 2 - ((ys - cy) / sy) ** 2 / 2)
    return img + glare[..., None]


def _motion_blur(img: NDArray[np.float32], rng: Rng) -> NDArray[np.float32]:
    """A straight smear of 3 to 9% of the crop along a random direction."""
    length = max(2, round(img.shape[0] * rng.uniform(0.03, 0.09)))
    kernel = np.zeros((length, length), np.float32)
    kernel[length // 2, :] = 1.0 / length
    turn = cv2.getRotationMatrix2D((length / 2 - 0.5, length / 2 - 0.5), rng.uniform(0, 180), 1.0)
    kernel = cv2.warpAffine(kernel, turn, (length, length))
    kernel = np.asarray(kernel / max(float(kernel.sum()), 1e-6), np.float32)
    return np.asarray(cv2.filter2D(img, -1, kernel), np.float32)


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
    return Sample(square, quad, 0, "synthetic", room=2.0)
