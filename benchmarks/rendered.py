"""Rendered test frames for the localisation benchmarks: the renderer (referee_lab.synth) draws a
game's board in a random look, camera (0-40 degrees from vertical, any turn), light and
clutter; some frames get a hand reaching over the board. Truth: the grid's outer corners.
The drawing is `referee_lab.stills.render_still`, which the corner network's training frames
share."""

from __future__ import annotations

from referee_lab.stills import Rendered
from referee_lab.stills import render_still as render

GAMES = ("rinne", "rinne-5x5", "flipflop-3x3", "tensei", "flipflop-5x5", "tensei-5x5")

__all__ = ["GAMES", "Rendered", "render"]
