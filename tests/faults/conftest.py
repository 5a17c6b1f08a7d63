"""One uninterrupted `referee live` run of a whole committed Rinne game, shared by the
campaign's tests: its log is what the power cuts cut."""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from referee.app.live import LiveOptions, run_live
from referee.hardware.signals import TerminalSignals
from tests import DATA

# A whole game of Rinne (penta pieces, 6 plies, 24 s): its last reading accepts the winning
# ply and ends the game in one write of two lines.
GAME = DATA / "footage" / "rinne-penta-whole.mp4"
PIECES = "penta"


@dataclass(frozen=True)
class LiveRun:
    out: Path
    log: bytes
    record: str
    lines: list[str]  # the printed lines

    @property
    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.decode().splitlines()[1:]]


def live_options(out: Path, *, resume: bool = False, footage: Path = GAME) -> LiveOptions:
    return LiveOptions("rinne", camera=str(footage), pieces=PIECES, out=out, resume=resume,
                       speed=0)


def referee_live(out: Path, *, resume: bool = False, footage: Path = GAME) -> LiveRun:
    """`referee live --game rinne --pieces penta --camera FOOTAGE --speed 0 [--resume]`."""
    lines: list[str] = []
    assert run_live(live_options(out, resume=resume, footage=footage), print_line=lines.append,
                    signals=TerminalSignals(io.StringIO())) == 0
    return LiveRun(out, (out / "game.jsonl").read_bytes(), (out / "game.txt").read_text(), lines)


@pytest.fixture(scope="package")
def whole_game(tmp_path_factory: pytest.TempPathFactory) -> LiveRun:
    return referee_live(tmp_path_factory.mktemp("whole") / "game")


def copy_game(run: LiveRun, to: Path) -> Path:
    shutil.copytree(run.out, to)
    return to
