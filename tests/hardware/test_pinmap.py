"""The pin map: the default file, and every way a hand-edited one goes wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.errors import PinMapError
from referee.hardware.pinmap import (
    DEFAULT_PINS,
    HEADER,
    PinMap,
    TurnLeds,
    TurnRgb,
    header_pin,
    load_pin_map,
    parse_pin,
)
from tests import ROOT

DEFAULT_FILE = ROOT / "hardware" / "pins.toml"

GOOD = """
[leds]
green = 17
red = 27
amber = 22
[turn]
kind = "leds"
first = 23
second = 24
[buzzer]
pin = 18
[button]
pin = 25
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pins.toml"
    path.write_text(text)
    return path


def test_the_default_file_is_the_default_wiring():
    assert load_pin_map(DEFAULT_FILE) == DEFAULT_PINS
    assert load_pin_map(None) == DEFAULT_PINS
    roles = DEFAULT_PINS.roles()
    assert len(set(roles.values())) == len(roles) == 7


def test_the_header_table_is_the_40_pin_header():
    gpios = sorted(name for name in HEADER.values() if isinstance(name, int))
    assert gpios == list(range(28))
    assert [place for place, name in HEADER.items() if name == "GND"] == [6, 9, 14, 20, 25, 30, 34, 39]
    assert header_pin(17) == 11 and header_pin(18) == 12 and header_pin(25) == 22


def test_names_and_numbers_of_pins():
    assert parse_pin(17, "x") == 17
    assert parse_pin("GPIO17", "x") == 17
    assert parse_pin("gpio5", "x") == 5
    assert parse_pin("BOARD11", "x") == 17
    assert parse_pin("BOARD40", "x") == 21


def test_an_rgb_turn_led(tmp_path: Path):
    text = GOOD.replace('kind = "leds"\nfirst = 23\nsecond = 24',
                        'kind = "rgb"\nred = 5\ngreen = 6\nblue = "BOARD33"\nsecond_colour = "magenta"')
    pins = load_pin_map(write(tmp_path, text))
    assert pins.turn == TurnRgb(5, 6, 13, first_colour="white", second_colour="magenta")


def test_optional_parts_may_be_left_out(tmp_path: Path):
    pins = load_pin_map(write(tmp_path, "[leds]\ngreen = 2\nred = 3\namber = 4\n"))
    assert pins == PinMap(2, 3, 4)


def test_an_active_buzzer_and_button_times(tmp_path: Path):
    text = GOOD.replace("[buzzer]\n", '[buzzer]\nkind = "active"\n').replace(
        "pin = 25", "pin = 25\nhold_s = 3\ndouble_s = 0.4")
    pins = load_pin_map(write(tmp_path, text))
    assert pins.buzzer is not None and not pins.buzzer.tonal
    assert pins.button is not None and (pins.button.hold_s, pins.button.double_s) == (3.0, 0.4)
    assert isinstance(pins.turn, TurnLeds)


@pytest.mark.parametrize(("change", "message"), [
    (("[button]", "[buttons]"), r"unknown section \[buttons\] \(known: leds, turn, buzzer, button\)"),
    (("amber = 22", "amber = 22\nblue = 5"), r"unknown key leds\.blue \(known: amber, green, red\)"),
    (("second = 24", "second = 17"), r"turn\.second: GPIO17 is already used by leds\.green"),
    (("pin = 25", "pin = 18"), r"button\.pin: GPIO18 is already used by buzzer\.pin"),
    (("red = 27", 'red = "BOARD11"'), r"leds\.red: GPIO17 is already used by leds\.green"),
    (("pin = 25", "pin = 1"), r"button\.pin: GPIO1 is not a usable GPIO \(reserved for the HAT EEPROM\)"),
    (("pin = 25", "pin = 28"), r"button\.pin: GPIO28 is not a usable GPIO; use GPIO2–GPIO27"),
    (("pin = 25", "pin = -3"), r"GPIO-3 is not a usable GPIO"),
    (("pin = 25", 'pin = "GPIO40"'), r"GPIO40 is not a usable GPIO"),
    (("pin = 25", 'pin = "BOARD6"'), r"button\.pin: header pin 6 is GND, not a GPIO"),
    (("pin = 25", 'pin = "BOARD41"'), r"the header has pins 1–40, not 41"),
    (("pin = 25", 'pin = "the blue one"'), r"button\.pin: 'the blue one' is not a pin name"),
    (("pin = 25", "pin = true"), r"button\.pin: True is not a pin"),
    (("pin = 25", "pin = 25.0"), r"button\.pin: 25\.0 is not a pin"),
    (("green = 17\n", ""), r"leds\.green is missing"),
    (('kind = "leds"', 'kind = "lamps"'), r"turn\.kind: 'lamps' is not \"leds\" or \"rgb\""),
    (('kind = "leds"', 'kind = "rgb"'), r"turn\.first does not apply to kind = \"rgb\""),
    (("second = 24\n", ""), r"turn\.second is missing"),
    (("[buzzer]\n", '[buzzer]\nkind = "loud"\n'), r"buzzer\.kind: 'loud' is not \"tonal\""),
    (("pin = 25", "pin = 25\nhold_s = 0.3"), r"button\.double_s must be shorter than button\.hold_s"),
    (("pin = 25", "pin = 25\nhold_s = 100"), r"button\.hold_s: 100 is not a time in seconds"),
    (("[leds]", "leds = 3\n[lights]"), r"leds must be a \[section\] of keys"),
    (("[turn]", "[leds]"), r"not valid TOML"),
])
def test_a_bad_pin_map_is_one_clear_line(tmp_path: Path, change: tuple[str, str], message: str):
    assert change[0] in GOOD
    path = write(tmp_path, GOOD.replace(change[0], change[1], 1))
    with pytest.raises(PinMapError, match=message) as caught:
        load_pin_map(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and "\n" not in text


def test_rgb_colours_must_be_known_and_differ(tmp_path: Path):
    rgb = GOOD.replace('kind = "leds"\nfirst = 23\nsecond = 24',
                       'kind = "rgb"\nred = 5\ngreen = 6\nblue = 13')
    with pytest.raises(PinMapError, match=r"turn\.first_colour: 'pink' is not one of red, green"):
        load_pin_map(write(tmp_path, rgb.replace("blue = 13", 'blue = 13\nfirst_colour = "pink"')))
    with pytest.raises(PinMapError, match="must differ"):
        load_pin_map(write(tmp_path, rgb.replace("blue = 13", 'blue = 13\nfirst_colour = "blue"')))
    with pytest.raises(PinMapError, match=r"turn\.blue is missing"):
        load_pin_map(write(tmp_path, rgb.replace("blue = 13", "")))


def test_a_missing_or_unreadable_file(tmp_path: Path):
    with pytest.raises(PinMapError, match=r"nope\.toml: no such pin map"):
        load_pin_map(tmp_path / "nope.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(PinMapError, match=r"bin\.toml: cannot read the pin map"):
        load_pin_map(tmp_path / "bin.toml")
