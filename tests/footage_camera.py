"""The committed footage as a camera for live-mode tests: stretches of it, with black frames
or a lost connection scripted in, and a clock that only moves when told."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from referee.errors import CameraLost, SourceError
from referee.hardware.frames import BaseSource, Frame, FrameSource
from referee.hardware.sources import open_source
from tests import DATA

FOOTAGE = DATA / "footage" / "rinne-dice-31.mp4"
# When the uninterrupted run accepts each ply of FOOTAGE (its log), and the plies themselves.
PLY_TIMES = (4.433, 8.767, 15.3, 15.3, 19.7, 24.2)
EXPECTED = json.loads(FOOTAGE.with_suffix(".expected.json").read_text())
PLIES = tuple(EXPECTED["plies"])
# When the hand that made each ply has left the view (the footage runs at 30 frames a second)
HANDS_GONE = tuple(last / 30.0 for _, last in EXPECTED["hand_frames"])


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass(frozen=True)
class Stretch:
    """FOOTAGE from `start_s` to `end_s`, black from `black[0]` to `black[1]`; `lost`: the
    camera then stops delivering (else the footage simply ends)."""

    start_s: float
    end_s: float
    black: tuple[float, float] = (0.0, 0.0)
    lost: bool = False


class StretchSource(BaseSource):
    def __init__(self, stretch: Stretch) -> None:
        self.stretch = stretch
        self.description = f"footage {stretch.start_s}-{stretch.end_s} s"
        self._source = open_source(FOOTAGE, start_s=stretch.start_s)

    def __iter__(self) -> Iterator[Frame]:
        s = self.stretch
        for frame in self._source:
            if frame.timestamp_s >= s.end_s:
                break
            if s.black[0] <= frame.timestamp_s < s.black[1]:
                black = np.zeros_like(frame.frame_bgr)
                black.flags.writeable = False
                frame = replace(frame, frame_bgr=black)
            yield frame
        if s.lost:
            raise CameraLost("camera /dev/video0 stopped delivering frames: unplugged?")

    def close(self) -> None:
        self._source.close()


class ScriptedCamera:
    """Each opening plays the next stretch; None: the camera is not there (then or ever
    after, once the script runs out)."""

    def __init__(self, script: Sequence[Stretch | None]) -> None:
        self.script = list(script)
        self.openings = 0

    def __call__(self) -> FrameSource:
        self.openings += 1
        stretch = self.script.pop(0) if self.script else None
        if stretch is None:
            raise SourceError("no camera at /dev/video0: is it plugged in?")
        return StretchSource(stretch)


def write_log(folder: Path, plies: int) -> Path:
    """The log the uninterrupted run of FOOTAGE writes up to `plies` plies."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [{"format": "referee-log/1", "game": "rinne", "headers": {}},
             {"kind": "STARTED", "frame_index": 17, "time_s": 0.567, "ply": 0, "move": None,
              "detail": "White to move", "confidence": 0.0}]
    for ply in range(1, plies + 1):
        move = PLIES[ply - 1].split(". ", 1)[1]
        lines.append({"kind": "ACCEPTED", "frame_index": round(PLY_TIMES[ply - 1] * 30),
                      "time_s": PLY_TIMES[ply - 1], "ply": ply, "move": move, "detail": "",
                      "confidence": 5.0})
    log = folder / "game.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


def logged_events(log: Path) -> list[dict[str, Any]]:
    """The complete event lines of a log (a line cut off by a kill is not one)."""
    text = log.read_text() if log.exists() else ""
    lines = text.split("\n")[:-1]  # the last piece has no newline: cut off, or empty
    return [json.loads(line) for line in lines[1:]]


def accepted_moves(log: Path) -> list[str]:
    return [str(e["move"]) for e in logged_events(log) if e["kind"] == "ACCEPTED"]
