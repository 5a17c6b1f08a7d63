"""The renderer: synthetic photographs and footage of the games, with exact ground truth.

`render_frame` makes one frame; `render_footage` (in `footage`) a video of a game being
played. Everything is drawn from a seed with `numpy.random.Generator`; the same seed gives
the same bytes."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from referee_lab.synth.games import (
    check_contents,
    contents_from_position,
    game_spec,
    start_contents,
)
from referee_lab.synth.hands import HandPose, sample_hand_look
from referee_lab.synth.placement import place_all
from referee_lab.synth.scene import FrameState, RenderOptions, Scene
from referee_lab.synth.truth import Contents, FrameTruth, SquareContent

__all__ = ["FrameTruth", "RenderOptions", "SquareContent", "render_frame"]


def render_frame(game: str, position: Any = None, seed: int = 0,
                 options: RenderOptions | None = None, *, contents: Contents | None = None,
                 ) -> tuple[npt.NDArray[np.uint8], FrameTruth]:
    """One frame of `game` from `seed`: BGR uint8 and its ground truth.

    Show `contents` (square name -> SquareContent) if given, else the rules `position`,
    else the start position (Zensū: its setup; Renaissance: a random board
    in phase 1)."""
    options = options or RenderOptions()
    spec = game_spec(game)
    scene = Scene(spec, seed, options)
    rng = np.random.default_rng([seed, 5])
    if contents is None:
        if position is not None:
            contents = contents_from_position(spec, position, scene.style.pieces)
        else:
            contents = start_contents(spec, rng, scene.style.pieces)
    contents = check_contents(spec, contents)
    poses = place_all(contents, rng, scene.style, scene.layout)
    hand = random_hand(scene, rng) if rng.random() < options.hands else None
    return scene.render(FrameState(contents, poses, hand=hand, steady=hand is None), rng)


def random_hand(scene: Scene, rng: np.random.Generator) -> HandPose:
    """A hand reaching over a random square from either player's side, open or pinching."""
    layout = scene.layout
    name = layout.square_names()[int(rng.integers(layout.files * layout.ranks))]
    grip = layout.centre(name) + np.array([*rng.uniform(-8, 8, 2), rng.uniform(15, 80)])
    side = int(rng.integers(2))
    y = -layout.margin_mm - 330 if side == 0 else layout.height_mm + layout.margin_mm + 330
    x = layout.width_mm / 2 + float(rng.uniform(-250, 250))
    return HandPose((float(grip[0]), float(grip[1]), float(grip[2])), (x, y, 380.0),
                    sample_hand_look(rng), float(rng.uniform(0, 1)))
