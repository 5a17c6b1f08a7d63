"""Frames that survive a camera glitch: on `CameraLost` the players are told (red steady, an
alarm), the camera is opened again every `retry_s`, and frames carry on with the next index
and a later timestamp; only a camera still gone after `give_up_s` ends the game loop, with a
clear `CameraLost`. Black frames (a lens cap, the lights off) are shown the same way."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

from referee.errors import CameraLost, SourceError
from referee.hardware.cues import Cue
from referee.hardware.signals import Clock, Signals
from referee.hardware.sources import Frame, FrameSource, Picture, PictureWatch

log = logging.getLogger(__name__)


def watched_frames(open_source: Callable[[], FrameSource], signals: Signals, *,
                   clock: Clock = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                   retry_s: float = 3.0, give_up_s: float = 60.0,
                   picture: PictureWatch | None = None) -> Iterator[Frame]:
    """Every frame of the source, opened again after each loss. A source that cannot be
    opened at the start raises `SourceError` at once: there is nothing to resume."""
    picture = picture if picture is not None else PictureWatch()
    source = open_source()
    start = clock()
    index, offset = 0, 0.0
    try:
        while True:
            try:
                for frame in source:
                    change = picture.update(frame)
                    if change is not None:
                        signals.show(Cue.NO_PICTURE if change is Picture.DARK else Cue.CAMERA_BACK,
                                     clock())
                    yield replace(frame, index=index, timestamp_s=offset + frame.timestamp_s)
                    index += 1
                return  # the footage ended
            except CameraLost as lost:
                lost_at = clock()
                log.warning("%s; opening it again every %g s", lost, retry_s)
                signals.show(Cue.CAMERA_LOST, lost_at)
                source.close()
                source = _reopen(open_source, lost, lost_at, clock=clock, sleep=sleep,
                                 retry_s=retry_s, give_up_s=give_up_s)
                offset = clock() - start
                signals.show(Cue.CAMERA_BACK, clock())
    finally:
        source.close()


def _reopen(open_source: Callable[[], FrameSource], lost: CameraLost, lost_at: float, *,
            clock: Clock, sleep: Callable[[float], None], retry_s: float,
            give_up_s: float) -> FrameSource:
    while True:
        sleep(retry_s)
        try:
            return open_source()
        except SourceError as error:
            if clock() - lost_at >= give_up_s:
                raise CameraLost(f"{lost}; still gone after {give_up_s:g} s ({error})") from None
            log.info("camera not back yet: %s", error)
