"""The wiring diagram, drawn from a pin map so that it cannot drift from it.

    python -m referee.hardware.wiring [PINS.toml] > hardware/wiring.svg

The Pi's 40-pin header sits in the middle, seen from above with pin 1 (square) at the top
left; parts on odd (left-column) pins are drawn on the left, the others on the right, each
wired from its GPIO through its resistor to a ground rail fed by a GND pin.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from xml.sax.saxutils import escape

from referee.hardware.pinmap import HEADER, PinMap, TurnLeds, TurnRgb, header_pin, load_pin_map

WIDTH, HEIGHT = 1100, 680
HEADER_X = {1: 500, 0: 540}  # x of the odd and even column
ROW_Y0, ROW_STEP = 110, 24
# The GND pins feeding the left and the right rail: above the parts' pins, so that the ground
# wires cross none of theirs.
GROUND_PINS = {1: 9, 0: 6}
RAIL_X = {1: 40, 0: 1060}
FIRST_ROW = 240  # y of the first part on each side, below the ground wires
TAG_W = 92


@dataclass(frozen=True)
class Part:
    gpio: int
    kind: str  # "led", "buzzer" or "button"
    colour: str
    label: str
    note: str
    ohms: str = "330 Ω"  # 3.3 V less ~2 V for red, amber and yellow-green LEDs: ~4 mA


BRIGHT = "100 Ω"  # white, blue and true-green LEDs drop ~3 V: 330 Ω would leave them dim


def parts(pins: PinMap, names: tuple[str, str] = ("White", "Black")) -> list[Part]:
    found = [Part(pins.green, "led", "#2ca02c", "green LED", "move accepted"),
             Part(pins.red, "led", "#d62728", "red LED", "illegal / unreadable / camera"),
             Part(pins.amber, "led", "#ff9f1c", "amber LED", "promote / roll / set up")]
    if isinstance(pins.turn, TurnLeds):
        found += [Part(pins.turn.first, "led", "#f2f2f2", "first player's LED", f"{names[0]} to move",
                       BRIGHT),
                  Part(pins.turn.second, "led", "#3b5bdb", "second player's LED", f"{names[1]} to move",
                       BRIGHT)]
    elif isinstance(pins.turn, TurnRgb):
        found += [Part(pin, "led", colour, f"RGB LED, {leg} leg", "whose turn (common cathode)", ohms)
                  for pin, colour, leg, ohms in ((pins.turn.red, "#d62728", "red", "330 Ω"),
                                                 (pins.turn.green, "#2ca02c", "green", BRIGHT),
                                                 (pins.turn.blue, "#3b5bdb", "blue", BRIGHT))]
    if pins.buzzer is not None:
        found.append(Part(pins.buzzer.pin, "buzzer", "#555555",
                          "passive piezo" if pins.buzzer.tonal else "active buzzer",
                          "TonalBuzzer: tunes" if pins.buzzer.tonal else "Buzzer: beeps", "100 Ω"))
    if pins.button is not None:
        found.append(Part(pins.button.pin, "button", "#555555", "push button",
                          "confirm / hold: new game / double: take back", ""))
    return found


def _pin_xy(place: int) -> tuple[int, int]:
    return HEADER_X[place % 2], ROW_Y0 + (place - 1) // 2 * ROW_STEP


def _text(x: float, y: float, text: str, *, size: int = 12, anchor: str = "start",
          weight: str = "normal", fill: str = "#222") -> str:
    return (f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}">{escape(text)}</text>')


def _line(points: list[tuple[float, float]], colour: str = "#333", width: float = 2) -> str:
    path = " ".join(f"{x:g},{y:g}" for x, y in points)
    return f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="{width}"/>'


def _header() -> list[str]:
    out = ['<rect x="480" y="92" width="80" height="492" rx="6" fill="#1b1b1b"/>',
           _text(520, 80, "Raspberry Pi 40-pin header", size=13, anchor="middle", weight="bold"),
           _text(520, 604, "seen from above; pin 1 is square", size=11, anchor="middle", fill="#666"),
           _text(520, 620, "gold GPIO · red 5 V · orange 3.3 V · black GND", size=11, anchor="middle",
                 fill="#666")]
    for place, name in HEADER.items():
        x, y = _pin_xy(place)
        colour = {"GND": "#222", "3V3": "#e67700", "5V": "#c92a2a"}.get(str(name), "#d4af37")
        shape = (f'<rect x="{x - 7}" y="{y - 7}" width="14" height="14" fill="{colour}" stroke="#eee"/>'
                 if place == 1 else
                 f'<circle cx="{x}" cy="{y}" r="7" fill="{colour}" stroke="#eee" stroke-width="1"/>')
        out.append(shape)
        out.append(_text(x, y + 3.5, str(place), size=8, anchor="middle", fill="#fff" if name == "GND" or
                         place == 1 else "#000"))
    return out


def _tag(place: int, text: str, colour: str) -> tuple[list[str], float]:
    """A label on a used pin, joined to it; returns the drawing and the x where wires start."""
    x, y = _pin_xy(place)
    left = place % 2 == 1
    start = x - 16 if left else x + 16
    outer = start - TAG_W if left else start + TAG_W
    box_x = outer if left else start
    return ([_line([(x, y), (start, y)], "#333", 2),
             f'<rect x="{box_x}" y="{y - 9}" width="{TAG_W}" height="18" rx="3" fill="{colour}" '
             f'stroke="#333"/>',
             _text((start + outer) / 2, y + 4, text, size=11, anchor="middle", weight="bold",
                   fill="#000" if colour not in ("#222", "#3b5bdb", "#d62728", "#2ca02c") else "#fff")],
            outer)


def _led(x: float, y: float, colour: str, towards_ground: int) -> list[str]:
    """An LED symbol at (x, y), conducting towards the ground side (-1 left, +1 right)."""
    d = towards_ground
    tip, base = x + 12 * d, x - 12 * d
    return [f'<polygon points="{base:g},{y - 11:g} {base:g},{y + 11:g} {tip:g},{y:g}" fill="{colour}" '
            f'stroke="#222" stroke-width="1.5"/>',
            _line([(tip, y - 11), (tip, y + 11)], "#222", 2.5),
            _line([(x - 2, y - 14), (x + 4, y - 22)], "#e8a000", 1.5),
            _line([(x + 5, y - 12), (x + 11, y - 20)], "#e8a000", 1.5)]


def _resistor(x: float, y: float, ohms: str) -> list[str]:
    return [f'<rect x="{x - 20:g}" y="{y - 7:g}" width="40" height="14" fill="#f4e3c1" stroke="#222"/>',
            _text(x, y + 24, ohms, size=11, anchor="middle", fill="#444")]


def _buzzer(x: float, y: float) -> list[str]:
    return [f'<circle cx="{x:g}" cy="{y:g}" r="15" fill="#333"/>',
            f'<circle cx="{x:g}" cy="{y:g}" r="4" fill="#999"/>']


def _button(x: float, y: float) -> list[str]:
    return [f'<circle cx="{x - 16:g}" cy="{y:g}" r="3" fill="#222"/>',
            f'<circle cx="{x + 16:g}" cy="{y:g}" r="3" fill="#222"/>',
            _line([(x - 16, y - 4), (x + 14, y - 14)], "#222", 2),
            _line([(x, y - 9), (x, y - 22)], "#222", 2),
            _line([(x - 8, y - 22), (x + 8, y - 22)], "#222", 2)]


def _part(part: Part, y: float, wire_from: tuple[float, float], lane: float, *,
          compact: bool) -> list[str]:
    place = header_pin(part.gpio)
    left = place % 2 == 1
    d = -1 if left else 1  # the direction away from the header, towards the ground rail
    rail = RAIL_X[place % 2]
    near = 330 if left else 710  # where the part's chain begins
    r_x, s_x = near + 50 * d, near + 160 * d  # resistor, symbol
    ohms = part.ohms
    out = [_line([wire_from, (lane, wire_from[1]), (lane, y), (near, y)], "#333", 2)]
    out.append(_line([(near, y), (rail, y)], "#333", 2))
    if ohms:
        out += _resistor(r_x, y, ohms)
    if part.kind == "led":
        out += _led(s_x, y, part.colour, d)
    elif part.kind == "buzzer":
        out += _buzzer(s_x, y)
    else:
        out += _button(s_x, y)
    out.append(f'<circle cx="{rail}" cy="{y:g}" r="4" fill="#222"/>')
    label_x = (near + rail) / 2
    title = f"{part.label}: GPIO{part.gpio} (pin {place})"
    if compact:  # parts close together: one line above each
        out.append(_text(label_x, y - 26, f"{title} · {part.note}", size=10, anchor="middle"))
    else:
        out.append(_text(label_x, y - 30, title, size=12, anchor="middle", weight="bold"))
        out.append(_text(label_x, y + 40, part.note, size=11, anchor="middle", fill="#555"))
    return out


def wiring_svg(pins: PinMap) -> str:
    body = [f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
            _text(WIDTH / 2, 34, "referee wiring: BCM GPIO numbers, header pin in brackets",
                  size=17, anchor="middle", weight="bold")]
    body += _header()
    for column, ground in GROUND_PINS.items():
        drawing, outer = _tag(ground, f"GND (pin {ground})", "#222")
        body += drawing
        rail = RAIL_X[column]
        _, ground_y = _pin_xy(ground)
        lane = outer - 12 if column else outer + 12
        body.append(_line([(outer, ground_y), (lane, ground_y), (lane, 62), (rail, 62),
                           (rail, HEIGHT - 30)], "#111", 3))
        body.append(_text(rail, HEIGHT - 14, "GND", size=12, anchor="middle", weight="bold"))
    sides: dict[int, list[Part]] = {1: [], 0: []}
    for part in parts(pins):
        sides[header_pin(part.gpio) % 2].append(part)
    for column, side in sides.items():
        side.sort(key=lambda part: header_pin(part.gpio))
        spacing = min(110.0, (HEIGHT - 110 - FIRST_ROW) / (len(side) - 1)) if len(side) > 1 else 0.0
        for k, part in enumerate(side):
            place = header_pin(part.gpio)
            drawing, outer = _tag(place, f"GPIO{part.gpio}", part.colour)
            body += drawing
            y = FIRST_ROW + k * spacing
            # the topmost pin takes the lane farthest out, so that no two wires cross
            step = 8 * (len(side) - 1 - k)
            lane = outer - 14 - step if column else outer + 14 + step
            body += _part(part, y, (outer, _pin_xy(place)[1]), lane, compact=0 < spacing < 100)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Arial, sans-serif">\n'
            + "\n".join(body) + "\n</svg>\n")


if __name__ == "__main__":
    sys.stdout.write(wiring_svg(load_pin_map(sys.argv[1] if len(sys.argv) > 1 else None)))
