"""Rendered stills of a game's start position with their truth: the board finder's benchmark
frames (`benchmarks/rendered.py`) and the corner network's training frames
(`vision/corner_data.py`) are drawn by the same function, so the two differ only by seed."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from referee_lab.synth import RenderOptions
from referee_lab.synth.games import game_spec, start_contents
from referee_lab.synth.hands import HandPose, sample_hand_look
from referee_lab.synth.placement import place_all
from referee_lab.synth.scene import FrameState, Scene, tilt_of
from referee_lab.synth.truth import FrameTruth


@dataclass(frozen=True)
class Rendered:
    frame: NDArray[np.uint8]
    truth: FrameTruth
    game: str
    tilt: float
    hand: bool

    @property
    def corners(self) -> NDArray[np.float64]:
        return np.array(self.truth.corners, dtype=np.float64)

    @property
    def diagonal(self) -> float:
        c = self.corners
        return float(max(np.linalg.norm(c[2] - c[0]), np.linalg.norm(c[3] - c[1])))


def render_still(seed: int, game: str, *, hand: bool, distortion: float = 1.0,
                 options: RenderOptions | None = None) -> Rendered:
    """A game's start position on a board of a random look, camera (0-40 degrees from
    vertical, any turn), light and clutter, with a hand reaching over it if `hand`: the
    finder's benchmark frames (`benchmarks/rendered.py`) and the corner network's training
    frames (`vision/corner_data.py`). Truth: the grid's outer corners and the rest."""
    options = replace(options or RenderOptions(), distortion=distortion)
    spec = game_spec(game)
    scene = Scene(spec, seed, options)
    rng = np.random.default_rng([seed, 5])
    contents = start_contents(spec, rng, scene.style.pieces)
    poses = place_all(contents, rng, scene.style, scene.layout)
    pose = None
    if hand:
        layout = scene.layout
        mover = int(rng.integers(2))
        grip = (float(rng.uniform(0, layout.width_mm)), float(rng.uniform(0, layout.height_mm)),
                float(rng.uniform(15, 60)))
        y = -layout.margin_mm - 330 if mover == 0 else layout.height_mm + layout.margin_mm + 330
        shoulder = (layout.width_mm / 2 + float(rng.uniform(-200, 200)), y, 380.0)
        pose = HandPose(grip, shoulder, sample_hand_look(rng), float(rng.uniform(0, 1)))
    frame, truth = scene.render(FrameState(contents, poses, hand=pose), rng)
    return Rendered(frame, truth, game, tilt_of(scene.camera), hand)
