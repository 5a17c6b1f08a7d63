"""What the players see and hear: the cue vocabulary, light patterns, tunes, and `Panel`, the
pure state machine that turns cues and the time into the lights and the tone of the moment.

Everything here is a function of (cues so far, now): no devices, no threads, no sleeps. The
gpiozero and terminal front ends (`signals.py`) only render what `Panel` says.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from referee.rules.core import Color

T = TypeVar("T")


class Cue(enum.Enum):
    """Something the referee tells the players. TURN and WIN need a `player`."""

    ACCEPTED = "move accepted"
    ILLEGAL = "illegal move: put the pieces back"
    UNREADABLE = "board unreadable: clear the view"
    PROMOTE = "promote the piece"
    MOVE_INCOMPLETE = "finish the move (the referee says what is still to change)"
    ROLL_PENDING = "roll pending: roll the die"
    SET_UP = "set up the board"
    RESTORED = "all clear"  # what was wrong is put right: red and amber go out
    TURN = "to move"
    TAKEN_BACK = "last move taken back"
    WIN = "wins"
    DRAW = "draw"
    NEW_GAME = "new game"
    CAMERA_LOST = "camera lost"
    NO_PICTURE = "camera sees nothing: black frames"
    CAMERA_BACK = "camera back"  # clears CAMERA_LOST or NO_PICTURE, and nothing else
    LOG_FAILED = "the game cannot be saved: disk full or read-only"
    LOG_BACK = "the game is saved again"  # clears LOG_FAILED, and nothing else


@dataclass(frozen=True)
class Timeline(Generic[T]):
    """Steps of (value, seconds) from the moment a cue starts; `repeat` loops them forever.

    Step ends are kept in whole microseconds so that a step boundary is exact: the value at
    t is that of the step with start <= t < end."""

    steps: tuple[tuple[T, float], ...]
    repeat: bool = False

    @property
    def duration_s(self) -> float:
        return math.inf if self.repeat else sum(seconds for _, seconds in self.steps)

    def at(self, elapsed_s: float) -> T | None:
        """The value `elapsed_s` after the start, or None before the start and after the end."""
        if elapsed_s < 0:
            return None
        now_us = round(elapsed_s * 1e6)
        ends: list[float] = []
        for _, seconds in self.steps:
            ends.append((ends[-1] if ends else 0) + (math.inf if math.isinf(seconds)
                                                     else round(seconds * 1e6)))
        if self.repeat and math.isfinite(ends[-1]):
            now_us %= int(ends[-1])
        for (value, _), end in zip(self.steps, ends, strict=True):
            if now_us < end:
                return value
        return None


Lamp = Timeline[bool]
Tune = Timeline[str | None]  # a gpiozero Tone name ("E6", "C#6") or None for a rest

STEADY = Lamp(((True, math.inf),))
FLASH = Lamp(((True, 1.0),))
LAMP_TEST = Lamp(((True, 0.5),))
BLINK_FAST = Lamp(((True, 0.2), (False, 0.2)), repeat=True)
BLINK_SLOW = Lamp(((True, 0.5), (False, 0.5)), repeat=True)
WINK = Lamp(((True, 0.1), (False, 0.9)), repeat=True)
DOUBLE_BLINK = Lamp(((True, 0.15), (False, 0.15), (True, 0.15), (False, 0.55)), repeat=True)
BLINK_WIN = Lamp(((True, 0.25), (False, 0.25)), repeat=True)
# A draw alternates the two turn lights (first, second), so an RGB LED alternates colours.
DRAW_FIRST = Lamp(((True, 0.5), (False, 0.5)), repeat=True)
DRAW_SECOND = Lamp(((False, 0.5), (True, 0.5)), repeat=True)

# Each tune has its own rhythm, so the cues stay distinct on an active buzzer that cannot
# change pitch (it sounds wherever the tune has a note).
TUNES: dict[str, Tune] = {
    "accepted": Tune((("E6", 0.08),)),
    "illegal": Tune((("A3", 0.4), (None, 0.1), ("A3", 0.4))),
    "unreadable": Tune((("C5", 0.25),)),
    "attention": Tune((("A5", 0.06), (None, 0.06), ("C#6", 0.06), (None, 0.06), ("E6", 0.06))),
    "win": Tune((("C6", 0.1), (None, 0.04), ("E6", 0.1), (None, 0.04), ("G6", 0.1), (None, 0.04),
                 ("C7", 0.5))),
    "draw": Tune((("G5", 0.25), (None, 0.25), ("G5", 0.25))),
    "alarm": Tune((("A5", 0.15), ("A4", 0.15)) * 3),
    "undo": Tune((("E6", 0.1), (None, 0.05), ("A5", 0.1))),
}

_TUNE_OF: dict[Cue, str] = {
    Cue.ACCEPTED: "accepted", Cue.ILLEGAL: "illegal", Cue.UNREADABLE: "unreadable",
    Cue.NO_PICTURE: "unreadable", Cue.PROMOTE: "attention", Cue.ROLL_PENDING: "attention",
    Cue.MOVE_INCOMPLETE: "attention",
    Cue.SET_UP: "attention", Cue.WIN: "win", Cue.DRAW: "draw", Cue.CAMERA_LOST: "alarm",
    Cue.TAKEN_BACK: "undo", Cue.NEW_GAME: "accepted", Cue.CAMERA_BACK: "accepted",
    Cue.LOG_FAILED: "alarm", Cue.LOG_BACK: "accepted",
}
_ALERT: dict[Cue, Lamp] = {Cue.ILLEGAL: BLINK_FAST, Cue.UNREADABLE: WINK,
                           Cue.NO_PICTURE: BLINK_SLOW, Cue.CAMERA_LOST: STEADY,
                           Cue.LOG_FAILED: STEADY}
# A cue that clears only the alerts it names, and sounds only when it clears one.
_CLEARS: dict[Cue, tuple[Cue, ...]] = {Cue.CAMERA_BACK: (Cue.CAMERA_LOST, Cue.NO_PICTURE),
                                       Cue.LOG_BACK: (Cue.LOG_FAILED,)}
_ATTENTION: dict[Cue, Lamp] = {Cue.PROMOTE: BLINK_SLOW, Cue.MOVE_INCOMPLETE: BLINK_SLOW,
                               Cue.ROLL_PENDING: DOUBLE_BLINK,
                               Cue.SET_UP: STEADY}


@dataclass(frozen=True)
class Lights:
    """The LEDs at one moment. `first`/`second` are the turn lights (or the RGB LED's colour)."""

    green: bool = False
    red: bool = False
    amber: bool = False
    first: bool = False
    second: bool = False


@dataclass(frozen=True)
class Started(Generic[T]):
    """A timeline and when it started."""

    timeline: Timeline[T]
    since: float

    def at(self, now: float) -> T | None:
        return self.timeline.at(now - self.since)


@dataclass(frozen=True)
class Result:
    winner: Color | None  # None: a draw
    since: float


@dataclass(frozen=True)
class Panel:
    """The state of every light and the buzzer, as a value: `show` returns the next panel.

    Layers: `alert` (red: illegal, unreadable, camera trouble) and `attention` (amber: promote,
    roll pending, set up) last until a move is accepted or the position is restored; `flash`
    (green) is momentary; `turn` shows the side to move until the game ends, when `result`
    takes over the turn lights; `lamp` lights everything for a moment at a new game."""

    turn: Color | None = None
    alert: Started[bool] | None = None
    alert_cue: Cue | None = None  # the cue that set `alert`
    attention: Started[bool] | None = None
    flash: Started[bool] | None = None
    lamp: Started[bool] | None = None
    result: Result | None = None
    tune: Started[str | None] | None = None

    def show(self, cue: Cue, now: float, *, player: Color | None = None) -> Panel:
        if (cue in (Cue.TURN, Cue.WIN)) != (player is not None):
            raise ValueError(f"{cue.name} {'needs' if player is None else 'takes no'} player")
        panel = self
        clears = self.alert_cue in _CLEARS.get(cue, ())
        if cue in _TUNE_OF and (cue not in _CLEARS or clears):
            panel = replace(panel, tune=Started(TUNES[_TUNE_OF[cue]], now))
        if cue in _ALERT:
            panel = replace(panel, alert=Started(_ALERT[cue], now), alert_cue=cue)
        elif clears:
            panel = replace(panel, alert=None, alert_cue=None)
        elif cue in _ATTENTION:
            panel = replace(panel, attention=Started(_ATTENTION[cue], now))
        elif cue in (Cue.ACCEPTED, Cue.RESTORED, Cue.WIN, Cue.DRAW, Cue.TAKEN_BACK):
            panel = replace(panel, alert=None, alert_cue=None, attention=None)
        if cue is Cue.ACCEPTED:
            panel = replace(panel, flash=Started(FLASH, now))
        elif cue is Cue.TURN:
            panel = replace(panel, turn=player)
        elif cue in (Cue.WIN, Cue.DRAW):
            panel = replace(panel, result=Result(player, now), flash=None)
        elif cue is Cue.TAKEN_BACK:
            panel = replace(panel, result=None, flash=None)
        elif cue is Cue.NEW_GAME:
            panel = Panel(lamp=Started(LAMP_TEST, now), tune=panel.tune)
        return panel

    def lights(self, now: float) -> Lights:
        if self.lamp is not None and self.lamp.at(now):
            return Lights(True, True, True, True, True)
        green = bool(self.flash and self.flash.at(now)) or self.result is not None
        red = bool(self.alert and self.alert.at(now))
        amber = bool(self.attention and self.attention.at(now))
        if self.result is None:
            first, second = self.turn is Color.FIRST, self.turn is Color.SECOND
        elif self.result.winner is None:
            elapsed = now - self.result.since
            first, second = bool(DRAW_FIRST.at(elapsed)), bool(DRAW_SECOND.at(elapsed))
        else:
            blink = bool(BLINK_WIN.at(now - self.result.since))
            first, second = (blink, False) if self.result.winner is Color.FIRST else (False, blink)
        return Lights(green, red, amber, first, second)

    def tone(self, now: float) -> str | None:
        """The note sounding now, or None for silence."""
        return self.tune.at(now) if self.tune is not None else None


def cue_line(cue: Cue, *, player: Color | None = None,
             names: tuple[str, str] = ("White", "Black")) -> str:
    """One terminal line for a cue, tagged with the light that shows it: `[green] move accepted`."""
    if cue is Cue.TURN and player is not None:
        return f"[turn] {names[player]} to move"
    if cue is Cue.WIN and player is not None:
        return f"[win] {names[player]} wins"
    tag = ("green" if cue is Cue.ACCEPTED else "red" if cue in _ALERT
           else "amber" if cue in _ATTENTION else _TAGS.get(cue, cue.name.lower()))
    return f"[{tag}] {cue.value}"


_TAGS = {Cue.RESTORED: "ok", Cue.CAMERA_BACK: "ok", Cue.LOG_BACK: "ok", Cue.TAKEN_BACK: "undo",
         Cue.NEW_GAME: "new"}
