"""Bench checks for setting up a Pi: read a few frames from a camera and report what came
(size, rate, brightness, a snapshot to check the colour order by eye), and play every cue on
the LEDs and buzzer or watch the button. Behind `referee camera` and `referee signals`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2

from referee.errors import SignalsError, SourceError
from referee.hardware.cues import Cue
from referee.hardware.frames import Frame
from referee.hardware.signals import Clock, GpioSignals, Signals, Ticker
from referee.hardware.sources import DARK_LEVEL, frame_level, open_source
from referee.rules.core import Color


@dataclass(frozen=True)
class CameraReport:
    description: str
    frames: int
    width: int
    height: int
    seconds: float  # from the first frame to the last, by the frames' own timestamps
    level: float  # mean brightness of the last frame, 0–255
    details: tuple[str, ...] = ()  # a camera's set-up: sensor mode, field of view, focus, exposure

    def line(self) -> str:
        """One line, then one indented line per detail."""
        rate = (self.frames - 1) / self.seconds if self.seconds > 0 else 0.0
        text = (f"{self.description}: {self.frames} frames of {self.width}x{self.height}, "
                f"{rate:.1f} fps, brightness {self.level:.0f}/255")
        text += " (black: lens cap on, or no light?)" if self.level < DARK_LEVEL else ""
        return "\n".join((text, *(f"  {detail}" for detail in self.details)))


def check_camera(spec: str, *, frames: int = 30, snapshot: str | Path | None = None) -> CameraReport:
    """Read up to `frames` frames from `spec`; write the last one to `snapshot` if given."""
    if frames < 1:
        raise SourceError("--frames must be 1 or more")
    last: Frame | None = None
    first_time = 0.0
    count = 0
    with open_source(spec) as source:
        for frame in source:
            if last is None:
                first_time = frame.timestamp_s
            last, count = frame, count + 1
            if count >= frames:
                break
        description = source.description
        details = getattr(source, "details", None)
        set_up = tuple(details()) if callable(details) else ()
    if last is None:
        raise SourceError(f"{spec}: no frames")
    if snapshot is not None and not cv2.imwrite(str(snapshot), last.frame_bgr):
        raise SourceError(f"{snapshot}: cannot write the snapshot (use .png or .jpg)")
    height, width = last.frame_bgr.shape[:2]
    return CameraReport(description, count, width, height, last.timestamp_s - first_time,
                        frame_level(last.frame_bgr), set_up)


def parse_cues(names: Sequence[str]) -> list[Cue]:
    """Cue names as typed (`accepted`, `roll-pending`); none means every cue."""
    if not names:
        return list(Cue)
    cues = []
    for name in names:
        key = name.upper().replace("-", "_")
        if key not in Cue.__members__:
            known = ", ".join(cue.name.lower().replace("_", "-") for cue in Cue)
            raise SignalsError(f"unknown cue {name!r} (known: {known})")
        cues.append(Cue[key])
    return cues


def play_cues(signals: Signals, cues: Sequence[Cue], *, seconds: float = 2.0,
              clock: Clock = time.monotonic, sleep: Callable[[float], None] = time.sleep,
              say: Callable[[str], None] = print) -> None:
    """Show each cue in turn for `seconds` (real time on GPIO; at once on a terminal)."""
    live = isinstance(signals, GpioSignals)
    ticker = Ticker(signals, clock=clock) if live else None
    try:
        for cue in cues:
            player = Color.FIRST if cue in (Cue.TURN, Cue.WIN) else None
            if live:
                say(f"{cue.name.lower()}: {cue.value}")
            signals.show(cue, clock(), player=player)
            if live:
                sleep(seconds)
                signals.show(Cue.RESTORED, clock())  # start the next cue from a clean panel
    finally:
        if ticker is not None:
            ticker.close()
