"""The players' side of the referee: LEDs, a buzzer and a button through gpiozero, or one
line per cue in a terminal on a machine without GPIO.

Time is always passed in (`show(cue, now)`, `tick(now)`): the devices change only inside
those calls, so tests step an injected clock and assert exact pin states at exact times.
On the Pi a `Ticker` thread calls `tick` every 10 ms, so tunes keep their rhythm however
slow a frame is. Button edges are queued by gpiozero's callback thread with the clock's
time and decoded in `tick`, so all decisions happen on one thread.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TextIO

from referee.errors import SignalsError
from referee.hardware.button import ButtonAction, ButtonDecoder
from referee.hardware.closing import Closing
from referee.hardware.cues import Cue, Lights, Panel, cue_line
from referee.hardware.pinmap import COLOURS, PinMap, TurnLeds, TurnRgb, load_pin_map
from referee.rules.core import Color

log = logging.getLogger(__name__)

Clock = Callable[[], float]
# A passive piezo is loudest around 2–4 kHz: centre the TonalBuzzer on A5 (880 Hz) with two
# octaves either side (A3 220 Hz to A7 3.5 kHz), which holds every note of every tune.
MID_TONE, OCTAVES = "A5", 2


class Signals(Protocol):
    """What the referee drives; `GpioSignals` and `TerminalSignals` implement it."""

    def show(self, cue: Cue, now: float, *, player: Color | None = None) -> None: ...

    def tick(self, now: float) -> None: ...

    def take_actions(self) -> list[ButtonAction]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Signals: ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None: ...


class TerminalSignals(Closing):
    """Signals for a laptop: one line per cue (`[green] move accepted`); no button."""

    def __init__(self, stream: TextIO | None = None, *,
                 names: tuple[str, str] = ("White", "Black")) -> None:
        self._stream = stream if stream is not None else sys.stdout
        self._names = names

    def show(self, cue: Cue, now: float, *, player: Color | None = None) -> None:
        Panel().show(cue, now, player=player)  # the same argument checks as on the Pi
        print(cue_line(cue, player=player, names=self._names), file=self._stream, flush=True)

    def tick(self, now: float) -> None:
        """Nothing moves on a terminal."""

    def take_actions(self) -> list[ButtonAction]:
        return []

    def close(self) -> None:
        """Nothing to release."""


class GpioSignals(Closing):
    """LEDs, buzzer and button on gpiozero devices built from a pin map.

    Every device is made with `pin_factory` (None: gpiozero's default, lgpio on a Pi 5). If
    one cannot be made, those already made are closed and `SignalsError` says which pin."""

    def __init__(self, pins: PinMap, *, pin_factory: Any = None,
                 clock: Clock = time.monotonic) -> None:
        import gpiozero

        self._pins, self._factory, self._clock = pins, pin_factory, clock
        self._devices: list[Any] = []
        self._lock = threading.RLock()
        self._panel = Panel()
        self._shown: Lights | None = None
        self._sounding: str | None = None
        self._edges: queue.SimpleQueue[tuple[bool, float]] = queue.SimpleQueue()
        self._actions: list[ButtonAction] = []
        self._decoder: ButtonDecoder | None = None
        try:
            self._green = self._make(gpiozero.LED, "the green LED", pins.green)
            self._red = self._make(gpiozero.LED, "the red LED", pins.red)
            self._amber = self._make(gpiozero.LED, "the amber LED", pins.amber)
            self._turn: tuple[Any, Any] | Any | None = None
            if isinstance(pins.turn, TurnLeds):
                self._turn = (self._make(gpiozero.LED, "the first player's LED", pins.turn.first),
                              self._make(gpiozero.LED, "the second player's LED", pins.turn.second))
            elif isinstance(pins.turn, TurnRgb):
                self._turn = self._make(gpiozero.RGBLED, "the RGB turn LED", pins.turn.red,
                                        pins.turn.green, pins.turn.blue, pwm=False)
            self._buzzer: Any = None
            self._tonal = pins.buzzer is not None and pins.buzzer.tonal
            if pins.buzzer is not None and pins.buzzer.tonal:
                self._buzzer = self._tonal_buzzer(gpiozero, pins.buzzer.pin)
            elif pins.buzzer is not None:
                self._buzzer = self._make(gpiozero.Buzzer, "the buzzer", pins.buzzer.pin)
            if pins.button is not None:
                button = self._make(gpiozero.Button, "the button", pins.button.pin,
                                    pull_up=True, bounce_time=None)
                self._decoder = ButtonDecoder(hold_s=pins.button.hold_s,
                                              double_s=pins.button.double_s)
                button.when_pressed = lambda: self._edges.put((True, self._clock()))
                button.when_released = lambda: self._edges.put((False, self._clock()))
        except BaseException:
            self.close()
            raise

    def _make(self, kind: Any, what: str, *pins: int, **options: Any) -> Any:
        try:
            device = kind(*pins, pin_factory=self._factory, **options)
        except Exception as error:
            where = "/".join(f"GPIO{pin}" for pin in pins)
            raise SignalsError(f"cannot drive {what} on {where}: {why(error)}") from error
        self._devices.append(device)
        return device

    def _tonal_buzzer(self, gpiozero: Any, pin: int) -> Any:
        """A TonalBuzzer plays the tunes with PWM. A pin factory without PWM (gpiozero's
        MockFactory with its default pins, or a native factory) gets a plain on/off buzzer
        instead, which beeps each tune's rhythm on one pitch, and the log says so."""
        from gpiozero.exc import PinPWMUnsupported
        from gpiozero.tones import Tone

        try:
            return self._make(gpiozero.TonalBuzzer, "the buzzer", pin, mid_tone=Tone(MID_TONE),
                              octaves=OCTAVES)
        except SignalsError as error:
            if not isinstance(error.__cause__, PinPWMUnsupported):
                raise
        log.warning("the buzzer on GPIO%d: this pin factory (%s) has no PWM, so the tunes are "
                    "beeped on and off at one pitch", pin, type(self._factory).__name__)
        self._tonal = False
        return self._make(gpiozero.Buzzer, "the buzzer", pin)

    @property
    def panel(self) -> Panel:
        return self._panel

    def show(self, cue: Cue, now: float, *, player: Color | None = None) -> None:
        with self._lock:
            self._panel = self._panel.show(cue, now, player=player)
            self._render(now)

    def tick(self, now: float) -> None:
        with self._lock:
            if self._decoder is not None:
                while not self._edges.empty():
                    pressed, at = self._edges.get_nowait()
                    self._actions += self._decoder.edge(pressed, at)
                self._actions += self._decoder.poll(now)
            self._render(now)

    def take_actions(self) -> list[ButtonAction]:
        """The button actions decoded so far, oldest first; each is returned once."""
        with self._lock:
            actions, self._actions = self._actions, []
            return actions

    def _render(self, now: float) -> None:
        lights = self._panel.lights(now)
        if lights != self._shown:
            self._shown = lights
            self._green.value, self._red.value, self._amber.value = (
                lights.green, lights.red, lights.amber)
            if isinstance(self._turn, tuple):
                self._turn[0].value, self._turn[1].value = lights.first, lights.second
            elif self._turn is not None and isinstance(self._pins.turn, TurnRgb):
                self._turn.value = _rgb(lights, self._pins.turn)
        tone = self._panel.tone(now)
        if tone != self._sounding and self._buzzer is not None:
            self._sounding = tone
            if self._tonal:
                self._buzzer.stop() if tone is None else self._buzzer.play(tone)
            else:
                self._buzzer.value = tone is not None

    def close(self) -> None:
        """Switch everything off and release the pins (safe to call twice)."""
        while self._devices:
            device = self._devices.pop()
            try:
                device.close()
            except Exception as error:  # closing must release every other pin too
                log.warning("closing %r: %s", device, error)


def _rgb(lights: Lights, turn: TurnRgb) -> tuple[int, int, int]:
    colours = [COLOURS[turn.first_colour]] * lights.first + [COLOURS[turn.second_colour]] * lights.second
    return (max((c[0] for c in colours), default=0), max((c[1] for c in colours), default=0),
            max((c[2] for c in colours), default=0))


def open_signals(pins: PinMap | str | Path | None = None, *, pin_factory: Any = None,
                 clock: Clock = time.monotonic, stream: TextIO | None = None,
                 names: tuple[str, str] = ("White", "Black"), require_gpio: bool = False,
                 say: Callable[[str], None] | None = None) -> Signals:
    """GPIO signals from a pin map (a path, a `PinMap`, or None for the default wiring).

    Without a pin factory, gpiozero's default is tried (`GPIOZERO_PIN_FACTORY`, else lgpio
    on a Pi); where there is no GPIO at all (a laptop), the cues go to the terminal instead,
    which `say` is told in one line, unless `require_gpio`: then one `SignalsError` line."""
    pin_map = pins if isinstance(pins, PinMap) else load_pin_map(pins)
    if pin_factory is None:
        try:
            pin_factory = _default_factory()
        except Exception as error:
            if require_gpio:
                raise SignalsError(f"no GPIO here ({why(error)}): on a Raspberry Pi, install "
                                   "python3-lgpio (hardware/setup-pi.sh) and add the user to "
                                   "the gpio group") from error
            line = f"no GPIO here ({why(error)}): the cues are shown in this terminal"
            if say is not None:
                say(line)
            else:
                log.info("%s", line)
            return TerminalSignals(stream, names=names)
    return GpioSignals(pin_map, pin_factory=pin_factory, clock=clock)


def why(error: BaseException) -> str:
    """An exception in words, also where it has none (gpiozero raises some bare)."""
    name = type(error).__name__
    return str(error).strip() or _BARE.get(name, name)


_BARE = {"PinPWMUnsupported": "this pin factory has no PWM on it (PinPWMUnsupported)",
         "BadPinFactory": "no pin factory could be loaded (BadPinFactory)"}


def _default_factory() -> Any:
    from gpiozero import Device

    with warnings.catch_warnings():  # gpiozero warns once per factory it cannot load
        warnings.simplefilter("ignore")
        Device.ensure_pin_factory()
    return Device.pin_factory


class Ticker(Closing):
    """Calls `signals.tick(clock())` every `period_s` on a daemon thread until closed."""

    def __init__(self, signals: Signals, *, clock: Clock = time.monotonic,
                 period_s: float = 0.01) -> None:
        self._signals, self._clock, self._period = signals, clock, period_s
        self._stop = threading.Event()
        self._failed = False
        self._thread = threading.Thread(target=self._run, name="signals-ticker", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            try:
                self._signals.tick(self._clock())
            except Exception as error:  # a GPIO fault must not kill the referee; say it once
                if not self._failed:
                    log.error("signals: %s", error)
                self._failed = True

    def close(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)
