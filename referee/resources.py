"""The files that ship inside the package (`referee/data/`): the models and their cards, the
camera defaults and board profiles, the vision settings and the demo footage. They are found
through `importlib.resources`, so an installed wheel finds them as a source checkout does."""

from __future__ import annotations

import atexit
from contextlib import ExitStack
from importlib.resources import as_file, files
from pathlib import Path

_extracted = ExitStack()
atexit.register(_extracted.close)


def data_path(*parts: str) -> Path:
    """The path of `referee/data/<parts>` on the file system (extracted once for the process
    where the package is imported from an archive)."""
    resource = files("referee").joinpath("data", *parts)
    if isinstance(resource, Path):
        return resource
    return _extracted.enter_context(as_file(resource))


def models_dir() -> Path:
    return data_path("models")


def calibration_dir() -> Path:
    return data_path("calibration")


DEMO_GAMES = {"rinne": "the designer's sample game of Rinne",
              "zensu": "a constructed game of Zensū, Red winning with a double capture",
              "renaissance": "a constructed game of Renaissance through every phase, Gold winning "
                             "on points"}


def demo_footage(game: str = "rinne") -> Path:
    """The bundled footage of a whole game of `game` (one of `DEMO_GAMES`)."""
    return data_path("demo", f"{game}-sample.mp4")


def vision_settings_file() -> Path:
    return data_path("vision.toml")
