"""What the camera and its image pipeline do to the light: uneven lamp light and vignetting,
white balance and exposure, defocus and motion blur, sharpening, tone curve, noise (shot
and read, with blotchy chroma as after a real ISP's denoiser), and JPEG compression."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from referee_lab.synth.style import SensorStyle, Style

Image = npt.NDArray[np.uint8]


def _u8(image: object) -> Image:
    return np.asarray(image, dtype=np.uint8)


@dataclass(frozen=True)
class Exposure:
    """Per-frame changes on top of the style: a light change or flicker, and motion."""

    gain: float = 1.0
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)
    motion: float = 0.0  # extra motion blur, pixels (camera shake)
    motion_angle: float = 0.0
    noise: float = 1.0  # scale of the style's sensor noise (footage: temporal noise)


@lru_cache(maxsize=8)
def _gain_map(width: int, height: int, lamp: tuple[float, float, float],
              vignette: float) -> npt.NDArray[np.float32]:
    """Low-frequency illumination: a lamp's falloff toward one side, and lens vignetting.
    Kept (read-only): footage asks for the same map every frame."""
    small_w, small_h = 64, 36
    xs = (np.arange(small_w, dtype=np.float32) + 0.5) / small_w * 2 - 1
    ys = (np.arange(small_h, dtype=np.float32) + 0.5) / small_h * 2 - 1
    x, y = np.meshgrid(xs, ys * (height / width))
    lx, ly, strength = lamp
    falloff = 1 - strength * np.clip(np.hypot(x - lx, y - ly) / 2.4, 0, 1) ** 1.5
    r2 = (x * x + (y * height / width) ** 2) / (1 + (height / width) ** 2)
    vig = 1 - vignette * r2 ** 1.2
    gain = (falloff * vig / max(float((falloff * vig).max()), 1e-6)).astype(np.float32)
    out = np.asarray(cv2.resize(gain, (width, height), interpolation=cv2.INTER_LINEAR),
                     dtype=np.float32)
    out.flags.writeable = False
    return out


def channels_of(plane: npt.NDArray[np.floating[Any]], factors: npt.NDArray[np.float32],
                ) -> npt.NDArray[np.float32]:
    """A float32 image whose channel i is `plane * factors[i]`, each product taken at the
    precision of its operands and then rounded to float32: the same numbers as
    `cv2.merge` of the three products, at half the cost."""
    out = np.empty((*plane.shape, 3), np.float32)
    for i in range(3):
        np.multiply(plane, factors[i], out=out[..., i], casting="same_kind")
    return out


def _motion_kernel(length: float, angle: float) -> npt.NDArray[np.float32]:
    size = max(3, math.ceil(length) | 1)
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    dx, dy = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    half = length / 2
    cv2.line(kernel, (round((c - dx * half) * 16), round((c - dy * half) * 16)),
             (round((c + dx * half) * 16), round((c + dy * half) * 16)), 1.0, 1, cv2.LINE_AA, 4)
    return kernel / max(float(kernel.sum()), 1e-6)


def apply_sensor(image: Image, style: Style, rng: np.random.Generator,
                 exposure: Exposure | None = None, *, jpeg: bool = True) -> Image:
    """The finished frame as the camera would deliver it."""
    s: SensorStyle = style.sensor
    ex = exposure or Exposure()
    h, w = image.shape[:2]
    scale = w / 1280.0
    gain = _gain_map(w, h, style.lamp, s.vignette) * np.float32(s.exposure * ex.gain)
    channel = np.array(s.wb, np.float32) * np.array(ex.tint, np.float32)
    gains = channels_of(gain, channel)
    out = _u8(cv2.multiply(image, gains, dtype=cv2.CV_8U))
    if s.blur * scale > 0.3:
        out = _u8(cv2.GaussianBlur(out, (0, 0), s.blur * scale))
    motion = s.motion + ex.motion
    if motion * scale >= 1.0:
        angle = s.motion_angle if ex.motion == 0 else ex.motion_angle
        out = _u8(cv2.filter2D(out, -1, _motion_kernel(motion * scale, angle)))
    if s.sharpen > 0.05:
        soft = cv2.GaussianBlur(out, (0, 0), 1.6 * max(scale, 0.5))
        out = _u8(cv2.addWeighted(out, 1 + s.sharpen, soft, -s.sharpen, 0))
    out = _u8(cv2.LUT(out, tone_curve(s)))
    out = _noise(out, s, rng, ex.noise)
    if jpeg and s.jpeg:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, s.jpeg])
        if ok:
            out = _u8(cv2.imdecode(data, cv2.IMREAD_COLOR))
    return np.asarray(out, dtype=np.uint8)


@lru_cache(maxsize=4)
def _noise_bank(height: int, width: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Fixed fields of luma and (blotchy) chroma noise, a little larger than the frame;
    each frame takes a random window of them: cheap, and still different every frame."""
    rng = np.random.default_rng([height, width, 11])
    h, w = height + 64, width + 64
    luma = rng.standard_normal((h, w), dtype=np.float32)
    chroma = rng.standard_normal((h // 4 + 1, w // 4 + 1, 3), dtype=np.float32)
    chroma = cv2.resize(chroma, (w, h), interpolation=cv2.INTER_LINEAR) * np.float32(0.6)
    return cv2.merge([luma] * 3) + chroma, cv2.merge([luma] * 3) - chroma


def tone_curve(s: SensorStyle) -> Image:
    """The camera's tone curve as a lookup table: gamma, an S-shaped contrast (cameras
    lift mid-tone contrast) and a lifted black level (flare, a cheap sensor)."""
    x = np.linspace(0, 1, 256) ** (1 / s.gamma)
    s_curve = x + s.contrast * x * (1 - x) * (2 * x - 1) * 2
    black = s.black / 255.0
    y = black + (1 - black) * np.clip(s_curve, 0, 1)
    return np.asarray(np.round(y * 255), dtype=np.uint8)


def _noise(image: Image, s: SensorStyle, rng: np.random.Generator, scale: float = 1.0,
           ) -> Image:
    """Shot noise grows with the square root of the signal; read noise is constant. Luma
    noise is fine-grained, chroma noise blotchy (demosaicing and denoising smear it)."""
    h, w = image.shape[:2]
    banks = _noise_bank(h, w)
    bank = banks[int(rng.integers(2))]
    y, x = int(rng.integers(0, 64)), int(rng.integers(0, 64))
    field = bank[y:y + h, x:x + w]
    levels = np.arange(256, dtype=np.float32)
    lut = np.sqrt(np.float32(s.noise**2) + np.float32(s.shot**2) * levels) * np.float32(scale)
    sigma = cv2.LUT(image, lut)
    return np.asarray(cv2.add(image, cv2.multiply(sigma, field), dtype=cv2.CV_8U), dtype=np.uint8)
