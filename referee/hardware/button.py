"""The one button: short press to confirm, long press for a new game, double press to take
back the last move. Decoded from timestamped edges by a small state machine, so it can be
tested with an injected clock (gpiozero's own `when_held` runs on a real-time thread)."""

from __future__ import annotations

import enum


class ButtonAction(enum.Enum):
    CONFIRM = "confirm"
    NEW_GAME = "new game"
    TAKE_BACK = "take back the last move"


class ButtonDecoder:
    """Turns press/release edges and the passing time into `ButtonAction`s.

    A level counts only once it has been stable for `debounce_s` (contact bounce), and it
    counts from the edge that began it. A press held `hold_s` is a new game (fired while
    still held, so the players get feedback without letting go); a press that starts within
    `double_s` of the previous release is a take-back; a press released and not followed by
    another within `double_s` is a confirm."""

    def __init__(self, *, hold_s: float = 2.0, double_s: float = 0.5,
                 debounce_s: float = 0.02) -> None:
        if not 0 <= debounce_s < double_s < hold_s:
            raise ValueError("need 0 <= debounce_s < double_s < hold_s")
        self.hold_s, self.double_s, self.debounce_s = hold_s, double_s, debounce_s
        self._raw = (False, float("-inf"))  # last raw level and when it began
        self._pressed = False  # the debounced level
        self._pressed_at = 0.0
        self._held = False  # the current press already fired NEW_GAME
        self._second = False  # the current press is the second of a double press
        self._released_at: float | None = None  # a short press waiting to become a confirm

    def edge(self, pressed: bool, t: float) -> list[ButtonAction]:
        """A raw edge seen at `t` (pressed=True when the button went down)."""
        actions = self.poll(t)
        if pressed != self._raw[0]:
            self._raw = (pressed, t)
        return actions

    def poll(self, now: float) -> list[ButtonAction]:
        """Everything decided by `now`; call it often (every tick)."""
        actions: list[ButtonAction] = []
        level, since = self._raw
        if level != self._pressed and now - since >= self.debounce_s:
            actions += self._expire(since)
            actions += self._down(since) if level else self._up(since)
        actions += self._expire(now)
        if self._pressed and not self._held and not self._second \
                and now - self._pressed_at >= self.hold_s:
            self._held = True
            actions.append(ButtonAction.NEW_GAME)
        return actions

    def _expire(self, now: float) -> list[ButtonAction]:
        if self._released_at is not None and now - self._released_at > self.double_s:
            self._released_at = None
            return [ButtonAction.CONFIRM]
        return []

    def _down(self, t: float) -> list[ButtonAction]:
        self._pressed, self._pressed_at, self._held = True, t, False
        if self._released_at is not None:  # within double_s, or _expire would have cleared it
            self._released_at, self._second = None, True
            return [ButtonAction.TAKE_BACK]
        return []

    def _up(self, t: float) -> list[ButtonAction]:
        if self._pressed and not self._held and not self._second \
                and t - self._pressed_at >= self.hold_s:
            self._held = True  # released before a poll saw the hold: still a new game
            self._pressed = False
            return [ButtonAction.NEW_GAME]
        if not (self._held or self._second):
            self._released_at = t
        self._pressed, self._second = False, False
        return []
