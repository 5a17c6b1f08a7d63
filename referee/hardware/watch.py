"""Frames that survive a camera glitch.

On `CameraLost` the players are told at once (red steady, an alarm), before anything is
done with the lost camera (closing one may take its adapter seconds); then it is closed and
opened again after 1 s, then 2, 4 … at most every `max_retry_s`, and the frames carry on
with the next index and a later timestamp; only a camera still gone after `give_up_s` ends
the game loop, with one clear `CameraLost` (the caller exits; a service manager may start it
afresh, which a camera that needs a new process to be found again may need). With
`wait_at_start`, a camera missing at the start is waited for the same way (a Pi that boots
before its USB camera is ready); footage that is missing fails at once.

Black frames (a lens cap, the lights off) lasting a second are shown the same way, and are
not passed on while the picture stays black: there is nothing in them to referee, and the
referee would only add "no board in view" to the players' red light."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator
from dataclasses import replace

from referee.errors import CameraLost, SourceError
from referee.hardware.cues import Cue
from referee.hardware.frames import Frame, FrameSource
from referee.hardware.signals import Clock, Signals
from referee.hardware.sources import Picture, PictureWatch

log = logging.getLogger(__name__)


def watched_frames(open_source: Callable[[], FrameSource], signals: Signals, *,
                   clock: Clock = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                   retry_s: float = 1.0, max_retry_s: float = 30.0, give_up_s: float = 60.0,
                   wait_at_start: bool = False, time_offset_s: float = 0.0,
                   picture: PictureWatch | None = None) -> Generator[Frame, None, None]:
    """Every frame of the source but the black ones, opened again after each loss; times
    start at `time_offset_s`. Without `wait_at_start`, a source that cannot be opened at the
    start raises its `SourceError` at once."""
    picture = picture if picture is not None else PictureWatch()
    backoff = _Backoff(clock, sleep, retry_s, max_retry_s, give_up_s)
    start = clock()
    try:
        source = open_source()
    except SourceError as missing:
        if not wait_at_start:
            raise
        source = backoff.reopen(open_source, signals, missing, backoff.alarm(signals, missing))
    index, offset = 0, time_offset_s
    try:
        while True:
            try:
                for frame in source:
                    change = picture.update(frame)
                    if change is not None:
                        signals.show(Cue.NO_PICTURE if change is Picture.DARK else Cue.CAMERA_BACK,
                                     clock())
                    if picture.state is Picture.OK:
                        yield replace(frame, index=index, timestamp_s=offset + frame.timestamp_s)
                    index += 1
                return  # the footage ended
            except CameraLost as lost:
                lost_at = backoff.alarm(signals, lost)  # the players first
                _close(source)
                source = backoff.reopen(open_source, signals, lost, lost_at)
                offset = time_offset_s + clock() - start
    finally:
        _close(source)


def _close(source: FrameSource) -> None:
    """Close a source (twice is fine); a lost camera that fails to close is only logged."""
    try:
        source.close()
    except Exception as error:
        log.warning("closing %s: %s", source.description, error or type(error).__name__)


class _Backoff:
    """Opens a lost camera again: waits `retry_s`, doubling up to `max_retry_s`, and gives up
    `give_up_s` after the loss. The players see "camera lost" until it is back."""

    def __init__(self, clock: Clock, sleep: Callable[[float], None], retry_s: float,
                 max_retry_s: float, give_up_s: float) -> None:
        self.clock, self.sleep = clock, sleep
        self.retry_s, self.max_retry_s, self.give_up_s = retry_s, max_retry_s, give_up_s

    def alarm(self, signals: Signals, lost: SourceError) -> float:
        """Tell the players the camera is lost; the time it was."""
        lost_at = self.clock()
        signals.show(Cue.CAMERA_LOST, lost_at)
        log.warning("camera lost: %s; trying again for %g s", lost, self.give_up_s)
        return lost_at

    def reopen(self, open_source: Callable[[], FrameSource], signals: Signals,
               lost: SourceError, lost_at: float) -> FrameSource:
        """The camera opened again, tried until `give_up_s` after `lost_at`."""
        delay, error = self.retry_s, lost
        while (left := self.give_up_s - (self.clock() - lost_at)) > 0:
            self.sleep(min(delay, left))
            try:
                source = open_source()
            except SourceError as again:
                error = again
                log.info("camera not back yet: %s", again)
                delay = min(2 * delay, self.max_retry_s)
                continue
            log.warning("camera back after %.0f s", self.clock() - lost_at)
            signals.show(Cue.CAMERA_BACK, self.clock())
            return source
        why = f" ({error})" if str(error) != str(lost) else ""
        raise CameraLost(f"{lost}; still gone after {self.give_up_s:g} s{why}")
