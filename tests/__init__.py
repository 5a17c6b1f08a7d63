"""The referee's tests. `DATA` holds their fixtures: records, footage, calibration photos."""

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
ROOT = DATA.parent.parent  # the source checkout: hardware/, pyproject.toml
