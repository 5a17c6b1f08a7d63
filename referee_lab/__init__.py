"""The lab: the renderer, the data sets, training, evaluation and quantising of the referee's
models, and the `referee-lab` command. The referee (`referee`) never imports it.

`LAB_DATA` holds what the lab learns from and starts from: the real dice photographs
(`real-dice-byler/`, BSD 3-Clause, credited in its README and LICENSE) and the float weights
of the quantised models (`float/`)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

LAB_DATA = Path(str(files(__name__).joinpath("data")))
FLOAT_MODELS = LAB_DATA / "float"
