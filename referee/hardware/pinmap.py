"""The pin map: which GPIO drives which LED, the buzzer and the button.

Read from a TOML file (`hardware/pins.toml` is the default wiring) and validated before any
device is made, so a typo ends in one clear line instead of a half-built board. Pins are BCM
GPIO numbers (`17` or `"GPIO17"`); `"BOARD11"` names a pin by its place on the 40-pin header.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import PinMapError

# The 40-pin header of every Raspberry Pi since the B+ (the Pi 5 included): header pin →
# BCM GPIO number, or the name of a power/ground pin.
HEADER: dict[int, int | str] = {
    1: "3V3", 2: "5V", 3: 2, 4: "5V", 5: 3, 6: "GND", 7: 4, 8: 14, 9: "GND", 10: 15,
    11: 17, 12: 18, 13: 27, 14: "GND", 15: 22, 16: 23, 17: "3V3", 18: 24, 19: 10, 20: "GND",
    21: 9, 22: 25, 23: 11, 24: 8, 25: "GND", 26: 7, 27: 0, 28: 1, 29: 5, 30: "GND",
    31: 6, 32: 12, 33: 13, 34: "GND", 35: 19, 36: 16, 37: 26, 38: 20, 39: "GND", 40: 21,
}
# GPIO 0 and 1 (ID_SD, ID_SC) belong to the HAT identification EEPROM; 28+ are not on the header.
USABLE_GPIOS = frozenset(range(2, 28))

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (1, 0, 0), "green": (0, 1, 0), "blue": (0, 0, 1), "yellow": (1, 1, 0),
    "cyan": (0, 1, 1), "magenta": (1, 0, 1), "white": (1, 1, 1),
}


def header_pin(gpio: int) -> int:
    """The header pin (1–40) that carries BCM `gpio`."""
    return next(pin for pin, name in HEADER.items() if name == gpio)


@dataclass(frozen=True)
class TurnLeds:
    """One LED per player, lit for the side to move."""

    first: int
    second: int


@dataclass(frozen=True)
class TurnRgb:
    """One common-cathode RGB LED showing the colour of the side to move."""

    red: int
    green: int
    blue: int
    first_colour: str = "white"
    second_colour: str = "blue"


@dataclass(frozen=True)
class BuzzerPin:
    """`tonal`: a passive piezo that plays any tone (TonalBuzzer); else an active buzzer (Buzzer)."""

    pin: int
    tonal: bool = True


@dataclass(frozen=True)
class ButtonPin:
    """A push button from `pin` to ground (the internal pull-up is used)."""

    pin: int
    hold_s: float = 2.0
    double_s: float = 0.5


@dataclass(frozen=True)
class PinMap:
    green: int
    red: int
    amber: int
    turn: TurnLeds | TurnRgb | None = None
    buzzer: BuzzerPin | None = None
    button: ButtonPin | None = None

    def roles(self) -> dict[str, int]:
        """Every pin in use, by role (`leds.green`, `turn.first`, `buzzer.pin`, …)."""
        roles = {"leds.green": self.green, "leds.red": self.red, "leds.amber": self.amber}
        if isinstance(self.turn, TurnLeds):
            roles |= {"turn.first": self.turn.first, "turn.second": self.turn.second}
        elif isinstance(self.turn, TurnRgb):
            roles |= {"turn.red": self.turn.red, "turn.green": self.turn.green,
                      "turn.blue": self.turn.blue}
        if self.buzzer is not None:
            roles["buzzer.pin"] = self.buzzer.pin
        if self.button is not None:
            roles["button.pin"] = self.button.pin
        return roles


_SECTIONS: dict[str, tuple[set[str], set[str]]] = {  # section: (required keys, optional keys)
    "leds": ({"green", "red", "amber"}, set()),
    "turn": ({"kind"}, {"first", "second", "red", "green", "blue", "first_colour",
                        "second_colour"}),
    "buzzer": ({"pin"}, {"kind"}),
    "button": ({"pin"}, {"hold_s", "double_s"}),
}
_TURN_KEYS = {"leds": {"kind", "first", "second"},
              "rgb": {"kind", "red", "green", "blue", "first_colour", "second_colour"}}


# The default wiring, the same as `hardware/pins.toml` (a test holds them equal), so that an
# installed referee needs no file to run on the documented wiring.
DEFAULT_PINS = PinMap(green=17, red=27, amber=22, turn=TurnLeds(first=23, second=24),
                      buzzer=BuzzerPin(18, tonal=True), button=ButtonPin(25, hold_s=2.0, double_s=0.5))


def load_pin_map(path: str | Path | None = None) -> PinMap:
    """Read and validate a pin map file (None: the default wiring); any fault is a
    `PinMapError` naming the file and the key."""
    if path is None:
        return DEFAULT_PINS
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PinMapError(f"{path}: no such pin map") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PinMapError(f"{path}: cannot read the pin map ({error})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PinMapError(f"{path}: not valid TOML ({error})") from None
    try:
        return parse_pin_map(data)
    except PinMapError as error:
        raise PinMapError(f"{path}: {error}") from None


def parse_pin_map(data: Mapping[str, Any]) -> PinMap:
    """Validate a pin map already read from TOML."""
    for name, section in data.items():
        if name not in _SECTIONS:
            raise PinMapError(f"unknown section [{name}] (known: {', '.join(_SECTIONS)})")
        if not isinstance(section, Mapping):
            raise PinMapError(f"{name} must be a [section] of keys")
        required, optional = _SECTIONS[name]
        for key in section:
            if key not in required | optional:
                raise PinMapError(f"unknown key {name}.{key} (known: "
                                  f"{', '.join(sorted(required | optional))})")
        missing = sorted(required - set(section))
        if missing:
            raise PinMapError(f"{name}.{missing[0]} is missing")
    if "leds" not in data:
        raise PinMapError("the [leds] section (green, red, amber) is missing")
    leds = data["leds"]
    pin_map = PinMap(
        green=parse_pin(leds["green"], "leds.green"),
        red=parse_pin(leds["red"], "leds.red"),
        amber=parse_pin(leds["amber"], "leds.amber"),
        turn=_turn(data["turn"]) if "turn" in data else None,
        buzzer=_buzzer(data["buzzer"]) if "buzzer" in data else None,
        button=_button(data["button"]) if "button" in data else None,
    )
    used: dict[int, str] = {}
    for role, pin in pin_map.roles().items():
        if pin in used:
            raise PinMapError(f"{role}: GPIO{pin} is already used by {used[pin]}")
        used[pin] = role
    return pin_map


def parse_pin(value: object, where: str) -> int:
    """A BCM GPIO number from `17`, `"GPIO17"` or `"BOARD11"`, checked to be a usable GPIO."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise PinMapError(f"{where}: {value!r} is not a pin (write a BCM number such as 17)")
    gpio: int | str
    if isinstance(value, int):
        gpio = value
    elif match := re.fullmatch(r"(?:GPIO|BCM)?(\d+)", value.strip(), re.IGNORECASE):
        gpio = int(match.group(1))
    elif match := re.fullmatch(r"BOARD(\d+)", value.strip(), re.IGNORECASE):
        place = int(match.group(1))
        if place not in HEADER:
            raise PinMapError(f"{where}: the header has pins 1–40, not {place}")
        gpio = HEADER[place]
        if isinstance(gpio, str):
            raise PinMapError(f"{where}: header pin {place} is {gpio}, not a GPIO")
    else:
        raise PinMapError(f"{where}: {value!r} is not a pin name (use 17, \"GPIO17\" or \"BOARD11\")")
    if gpio not in USABLE_GPIOS:
        why = " (reserved for the HAT EEPROM)" if gpio in (0, 1) else ""
        raise PinMapError(f"{where}: GPIO{gpio} is not a usable GPIO{why}; use GPIO2–GPIO27")
    return gpio


def _turn(section: Mapping[str, Any]) -> TurnLeds | TurnRgb:
    kind = section["kind"]
    if kind not in _TURN_KEYS:
        raise PinMapError(f"turn.kind: {kind!r} is not \"leds\" or \"rgb\"")
    for key in section:
        if key not in _TURN_KEYS[kind]:
            raise PinMapError(f"turn.{key} does not apply to kind = \"{kind}\"")
    if kind == "leds":
        missing = sorted({"first", "second"} - set(section))
        if missing:
            raise PinMapError(f"turn.{missing[0]} is missing")
        return TurnLeds(parse_pin(section["first"], "turn.first"),
                        parse_pin(section["second"], "turn.second"))
    missing = sorted({"red", "green", "blue"} - set(section))
    if missing:
        raise PinMapError(f"turn.{missing[0]} is missing")
    colours = {key: section.get(key, default) for key, default in
               (("first_colour", "white"), ("second_colour", "blue"))}
    for key, colour in colours.items():
        if colour not in COLOURS:
            raise PinMapError(f"turn.{key}: {colour!r} is not one of {', '.join(COLOURS)}")
    if colours["first_colour"] == colours["second_colour"]:
        raise PinMapError("turn.first_colour and turn.second_colour must differ")
    return TurnRgb(parse_pin(section["red"], "turn.red"), parse_pin(section["green"], "turn.green"),
                   parse_pin(section["blue"], "turn.blue"), **colours)


def _buzzer(section: Mapping[str, Any]) -> BuzzerPin:
    kind = section.get("kind", "tonal")
    if kind not in ("tonal", "active"):
        raise PinMapError(f"buzzer.kind: {kind!r} is not \"tonal\" (passive piezo) or \"active\"")
    return BuzzerPin(parse_pin(section["pin"], "buzzer.pin"), tonal=kind == "tonal")


def _button(section: Mapping[str, Any]) -> ButtonPin:
    times = {key: _seconds(section.get(key, default), f"button.{key}")
             for key, default in (("hold_s", 2.0), ("double_s", 0.5))}
    if times["double_s"] >= times["hold_s"]:
        raise PinMapError("button.double_s must be shorter than button.hold_s")
    return ButtonPin(parse_pin(section["pin"], "button.pin"), **times)


def _seconds(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.05 <= value <= 10:
        raise PinMapError(f"{where}: {value!r} is not a time in seconds between 0.05 and 10")
    return float(value)
