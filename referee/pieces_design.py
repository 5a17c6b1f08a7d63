"""The look of the Penta-pieces' and Zensū pieces' top faces, in one place: the renderer
(`referee_lab.synth.pieces`) textures the pieces the `penta` and `zensu` models learnt from
with these functions, and `referee pieces` prints the same faces, so a printed set shows the
models what they were trained on.

Images are BGR, uint8, square; a face's texture covers the square round the piece's top,
its up the owner's forward direction. Colours are BGR tuples (0..255)."""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
Colour = tuple[float, float, float]

STATE_LETTERS = "KNBRQ"  # King, Knight, Bishop, Rook, Queen: states 1..5
# Each state's drawn sign as strokes in a unit box (y down): King a crown, Knight a knight's
# L, Bishop a diagonal cross, Rook a tower, Queen an eight-pointed star.
SYMBOL_STROKES: dict[int, tuple[tuple[tuple[float, float], ...], ...]] = {
    1: (((-0.8, 0.5), (-0.8, -0.5), (-0.4, 0.0), (0.0, -0.7), (0.4, 0.0), (0.8, -0.5),
         (0.8, 0.5), (-0.8, 0.5)),),
    2: (((-0.3, 0.8), (-0.3, -0.8), (0.6, -0.8)), ((-0.3, 0.8), (0.3, 0.8))),
    3: (((-0.7, -0.7), (0.7, 0.7)), ((-0.7, 0.7), (0.7, -0.7))),
    4: (((-0.6, 0.8), (-0.6, -0.8), (-0.3, -0.8), (-0.3, -0.5), (0.0, -0.5), (0.0, -0.8),
         (0.3, -0.8), (0.3, -0.5), (0.6, -0.5), (0.6, 0.8), (-0.6, 0.8)),),
    5: (((-0.8, 0.0), (0.8, 0.0)), ((0.0, -0.8), (0.0, 0.8)), ((-0.6, -0.6), (0.6, 0.6)),
        ((-0.6, 0.6), (0.6, -0.6))),
}
SIGNS = ("letters", "symbols")
# A Penta-piece's signs, as shares of its radius (centre to corner): each sign's centre
# this far from the middle toward its corner, a letter this tall, a symbol this half-wide.
SIGN_DISTANCE, LETTER_HEIGHT, SYMBOL_SIZE = 0.56, 0.36, 0.16
# A Zensū piece's numbers: where (shares of the face, from its top left), the turn of the
# number's up, and its height (share of the face); the forward number large.
ZENSU_PLACES: dict[str, tuple[tuple[float, float], float, float]] = {
    "forward": ((0.5, 0.25), 0.0, 0.36), "back": ((0.5, 0.82), math.pi, 0.16),
    "left": ((0.18, 0.5), math.pi / 2, 0.16), "right": ((0.82, 0.5), -math.pi / 2, 0.16)}
ZENSU_EDGE_ORDER = ("forward", "left", "right", "back")

# The colours printed: the renderer's first Penta-piece pair (style.PENTA_COLOURS[0]) with
# its usual inks, and its Zensū turquoise and red with the usual white numbers.
PENTA_PRINT: tuple[tuple[Colour, Colour], tuple[Colour, Colour]] = (
    ((150, 195, 230), (30, 30, 30)), ((45, 60, 85), (225, 230, 235)))
ZENSU_PRINT: tuple[tuple[Colour, Colour], tuple[Colour, Colour]] = (
    ((190, 180, 60), (240, 245, 245)), ((50, 45, 185), (240, 245, 245)))
# The face sizes the models saw, as shares of the square: the diameter of a Penta-piece's
# circle through its corners, a Zensū piece's side (style._penta_pair, style._zensu_pair).
PENTA_FACE_RANGE = (0.72, 0.88)
ZENSU_FACE_RANGE = (0.72, 0.84)


def rotated_text(tex: Image, text: str, centre: tuple[float, float], angle: float,
                 height_px: float, colour: Colour, weight: float = 0.12) -> None:
    """Draw `text` centred at `centre`, its up direction turned by `angle` radians
    (counter-clockwise in the texture) from the texture's up."""
    font = cv2.FONT_HERSHEY_DUPLEX
    scale = height_px / 22.0
    thick = max(1, round(height_px * weight))
    (tw, th), base = cv2.getTextSize(text, font, scale, thick)
    size = int(max(tw, th + base) * 1.6) + 4
    glyph = np.zeros((size, size), np.uint8)
    org = ((size - tw) // 2, (size + th) // 2)
    cv2.putText(glyph, text, org, font, scale, 255, thick, cv2.LINE_AA)
    rot = cv2.getRotationMatrix2D((size / 2, size / 2), math.degrees(angle), 1.0)
    rot[:, 2] += np.array([centre[0] - size / 2, centre[1] - size / 2])
    h, w = tex.shape[:2]
    alpha = cv2.warpAffine(glyph, rot, (w, h)).astype(np.float32)[..., None] / 255.0
    tex[...] = (tex * (1 - alpha) + np.array(colour, np.float32) * alpha).astype(np.uint8)


def draw_symbol(tex: Image, state: int, centre: tuple[float, float], angle: float, size: float,
                colour: Colour) -> None:
    """State `state`'s drawn sign (SYMBOL_STROKES), `size` pixels from its middle to its
    box's edge, its up turned by `angle`."""
    c, s = math.cos(angle), math.sin(angle)
    thick = max(1, round(size * 0.22))
    for line in SYMBOL_STROKES[state]:
        pts = []
        for x, y in line:
            rx, ry = c * x + s * y, -s * x + c * y
            pts.append([round((centre[0] + rx * size) * 16), round((centre[1] + ry * size) * 16)])
        cv2.polylines(tex, [np.array(pts, np.int32)], False, colour, thick, cv2.LINE_AA, 4)


def penta_corners(radius: float) -> npt.NDArray[np.float64]:
    """The pentagon's corners; corner k (the sign of state k+1) at 90° - 72°·k, so the states
    run clockwise seen from above, corner 0 pointing forward (+y). Returned counter-clockwise
    (from corner 4), as a prism's top wants them."""
    angles = [math.radians(90 - 72 * k) for k in range(5)]
    return np.array([[radius * math.cos(a), radius * math.sin(a)] for a in angles])[::-1]


def penta_face(radius: float, body: Colour, ink: Colour, signs: str, px: int) -> Image:
    """A Penta-piece's top, px x px over the square [-radius, radius]² round its centre: the
    body colour, each state's sign near its corner pointing at it, a dot in the middle."""
    tex = np.zeros((px, px, 3), np.uint8)
    tex[:] = [int(c) for c in body]
    r, scale = radius, px / (2 * radius)
    for k in range(5):
        a = math.radians(90 - 72 * k)
        dist = SIGN_DISTANCE * r
        cx, cy = (r + dist * math.cos(a)) * scale, (r - dist * math.sin(a)) * scale
        up = a - math.pi / 2  # the sign's up points toward its corner
        if signs == "letters":
            rotated_text(tex, STATE_LETTERS[k], (cx, cy), up, LETTER_HEIGHT * r * scale, ink)
        else:
            draw_symbol(tex, k + 1, (cx, cy), up, SYMBOL_SIZE * r * scale, ink)
    cv2.circle(tex, (px // 2, px // 2), max(1, px // 40), ink, -1, cv2.LINE_AA)
    return tex


def renderer_edges(number: int) -> tuple[int, int, int, int]:
    """The edge numbers (forward, left, right, back) the renderer paints on a Zensū piece:
    the default ruleset's (RULES.md §4)."""
    return number, 2 if number == 1 else 1, 3, 4


def draw_zensu_numbers(tex: Image, edges: tuple[int, int, int, int], ink: Colour) -> None:
    """A Zensū piece's numbers on its face `tex` (square): the large forward number at the
    top, the others small along their edges, each upright seen from outside its edge."""
    px = tex.shape[0]
    for edge, number in zip(ZENSU_EDGE_ORDER, edges, strict=True):
        (x, y), angle, size = ZENSU_PLACES[edge]
        rotated_text(tex, str(number), (px * x, px * y), angle, size * px, ink, 0.14)
