"""Tests marked `hardware` need a Raspberry Pi with its camera, LEDs, buzzer and button wired
as in hardware/pins.toml; they run only where REFEREE_HARDWARE=1 is set."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("REFEREE_HARDWARE") == "1":
        return
    skip = pytest.mark.skip(reason="needs the Raspberry Pi hardware: set REFEREE_HARDWARE=1")
    for item in items:
        if item.get_closest_marker("hardware") is not None:
            item.add_marker(skip)
