"""`referee pieces`: a game's set of Penta-pieces or Zensū pieces to print at true size, cut
out and glue onto wood or card. Each face is drawn by `referee.pieces_design`, the functions
the renderer textures the models' training pieces with, in the colours it draws most.

A page (A4 or Letter) holds a header (game, sizes, how thick to make the pieces), a ruler
"this line is 50 mm", and each side's pieces: the face as an image clipped to its outline,
a 1 mm bleed of the body colour round it (a cut a little outside the line shows no white)
and the cut line. SVG writes one file a page, PDF one file."""

from __future__ import annotations

import base64
import math
import unicodedata
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee import pieces_design as design
from referee.errors import OutputError, RefereeError
from referee.pdf import pdf_file
from referee.rules import Game

PX_PER_MM = 12.0  # the faces' images: about 300 dpi
BLEED_MM = 1.0
GAP_MM = 4.0
MARGIN_MM = 12.0
RULER_MM = 50.0
CUT_GREY = 0.5
SQUARE_RANGE = (20.0, 100.0)
PAPERS = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
_HEADER_MM = 30.0
_SIDE_LABEL_MM = 7.0
Point = tuple[float, float]


@dataclass(frozen=True)
class PieceKind:
    """One kind of piece of one side, and how many the set needs."""

    side: int  # 0: the first player
    count: int
    number: int | None = None  # a Zensū piece's forward number; None: a Penta-piece
    edges: tuple[int, int, int, int] | None = None  # Zensū: forward, left, right, back


@dataclass(frozen=True)
class PieceSet:
    """A game's pieces, both sides'."""

    game: str  # registry name
    title: str
    model: str  # the classifier that reads them: penta or zensu
    players: tuple[str, str]
    kinds: tuple[PieceKind, ...]

    def count(self, side: int, number: int | None = None) -> int:
        return sum(k.count for k in self.kinds if k.side == side and k.number == number)


def piece_set(game: Game[Any, Any]) -> PieceSet:
    """The pieces each side sets up at the start (the rules' setup): the Rinne family's
    Penta-pieces, Zensū's numbered pieces. Renaissance's tiles are refused."""
    from referee.rules.renaissance import RenaissanceRules
    from referee.rules.rinne import RinneRules
    from referee.rules.zensu import ZensuRules

    players = (game.player_names[0], game.player_names[1])
    if isinstance(game, RinneRules):
        kinds = tuple(PieceKind(side, len(game.setup)) for side in (0, 1))
        return PieceSet(game.name, f"{game.title} {game.variant}", "penta", players, kinds)
    if isinstance(game, ZensuRules):
        numbers = sorted({number for _, number in game.setup})
        edges = dict(game.edges)
        kinds = tuple(PieceKind(side, sum(1 for _, n in game.setup if n == number), number, edges[number])
                      for side in (0, 1) for number in numbers)
        return PieceSet(game.name, f"{game.title} {game.variant}", "zensu", players, kinds)
    if isinstance(game, RenaissanceRules):
        raise RefereeError("Renaissance's polyomino tiles and markers are not printable yet: "
                           "only Penta-pieces (the Rinne family) and Zensū pieces are")
    raise RefereeError(f"{game.name} has no printable pieces")


@dataclass(frozen=True)
class Sizes:
    """A set's sizes in mm: the square, the face (the diameter of a Penta-piece's circle
    through its corners, a Zensū piece's side) and the height the referee expects the face
    at."""

    square: float
    face: float
    height: float


def check_sizes(model: str, square_mm: float, face_share: float) -> Sizes:
    """The sizes for `model`'s pieces, or one line saying why not."""
    low, high = SQUARE_RANGE
    if not low <= square_mm <= high:
        raise RefereeError(f"--square-mm {square_mm:g} is out of range {low:g}..{high:g}")
    lo, hi = design.PENTA_FACE_RANGE if model == "penta" else design.ZENSU_FACE_RANGE
    if not lo <= face_share <= hi:
        raise RefereeError(f"--face {face_share:g} is outside {lo:g}..{hi:g}, the face sizes "
                           f"(shares of the square) the {model} model was trained on")
    return Sizes(square_mm, face_share * square_mm, face_height(model) * square_mm)


def face_height(model: str) -> float:
    """How far above the board the referee cuts `model`'s squares (its card's piece_height,
    in squares): the pieces' tops should stand there."""
    from referee.vision.classifier import read_model_card

    _, _, card = read_model_card(model)
    return float(card["input"]["piece_height"])


# ---- the faces -------------------------------------------------------------------------


def face_image(pieces: PieceSet, kind: PieceKind, face_mm: float, signs: str) -> design.Image:
    """The face's image (BGR, PX_PER_MM), up the owner's forward: the square round a
    Penta-piece's pentagon, or a Zensū piece's face."""
    px = max(32, round(face_mm * PX_PER_MM))
    if pieces.model == "penta":
        body, ink = design.PENTA_PRINT[kind.side]
        return design.penta_face(face_mm / 2, body, ink, signs, px)
    body, ink = design.ZENSU_PRINT[kind.side]
    tex = np.zeros((px, px, 3), np.uint8)
    tex[:] = [int(c) for c in body]
    design.draw_zensu_numbers(tex, kind.edges or design.renderer_edges(kind.number or 1), ink)
    return tex


def outline(model: str, face_mm: float, grow: float = 0.0) -> tuple[Point, ...]:
    """The cut line round a face's centre (mm, y down, forward up), grown outward by
    `grow` mm (the bleed)."""
    if model == "penta":
        radius = face_mm / 2 + grow / math.cos(math.pi / 5)
        corners = design.penta_corners(radius)
        return tuple((float(x), float(-y)) for x, y in corners)
    h = face_mm / 2 + grow
    return ((-h, -h), (h, -h), (h, h), (-h, h))


# ---- the pages -------------------------------------------------------------------------


@dataclass(frozen=True)
class Placed:
    """A piece on a page: its kind (index into the set's kinds) and its centre (mm)."""

    kind: int
    centre: Point


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    size: float  # text height, mm
    text: str


@dataclass(frozen=True)
class Page:
    width: float
    height: float
    labels: tuple[Label, ...]
    pieces: tuple[Placed, ...]
    ruler: tuple[Point, Point]


@dataclass(frozen=True)
class Sheet:
    """Everything printed: the set, its sizes, the faces' images (one a kind) and the pages."""

    pieces: PieceSet
    sizes: Sizes
    signs: str
    images: tuple[design.Image, ...]
    pages: tuple[Page, ...]


def layout_sheet(pieces: PieceSet, sizes: Sizes, *, paper: str = "a4", signs: str = "letters") -> Sheet:
    """Each side's pieces in rows on as many pages as they need."""
    if signs not in design.SIGNS:
        raise RefereeError(f"--signs {signs} is not one of: {', '.join(design.SIGNS)}")
    if paper not in PAPERS:
        raise RefereeError(f"--paper {paper} is not one of: {', '.join(PAPERS)}")
    width, height = PAPERS[paper]
    pitch = sizes.face + 2 * BLEED_MM + GAP_MM
    per_row = max(1, int((width - 2 * MARGIN_MM + GAP_MM) // pitch))
    rows: list[tuple[str, list[int]]] = []  # (a side's label or "", kinds of the row's pieces)
    for side in (0, 1):
        queue = [i for i, k in enumerate(pieces.kinds) if k.side == side for _ in range(k.count)]
        rows.append((f"{pieces.players[side]}: {len(queue)} pieces", []))
        rows += [("", queue[i:i + per_row]) for i in range(0, len(queue), per_row)]
    pages = _paginate(rows, pitch, height)
    header = _header(pieces, sizes)
    out = tuple(_page(width, height, header, page, pitch, n + 1, len(pages)) for n, page in enumerate(pages))
    images = tuple(face_image(pieces, k, sizes.face, signs) for k in pieces.kinds)
    return Sheet(pieces, sizes, signs, images, out)


def _paginate(rows: list[tuple[str, list[int]]], pitch: float, height: float
              ) -> list[list[tuple[str, list[int]]]]:
    """The rows on pages of `height` mm, a new page where the next row would not fit."""
    room = height - 2 * MARGIN_MM - _HEADER_MM
    pages: list[list[tuple[str, list[int]]]] = [[]]
    used = 0.0
    for i, row in enumerate(rows):
        need = _SIDE_LABEL_MM if row[0] else pitch
        if row[0] and i + 1 < len(rows):
            need += pitch  # a side's label stays with its first row
        if used + need > room and pages[-1]:
            pages.append([])
            used = 0.0
        pages[-1].append(row)
        used += _SIDE_LABEL_MM if row[0] else pitch
    return pages


def _header(pieces: PieceSet, sizes: Sizes) -> tuple[str, ...]:
    face = (f"Penta-pieces for squares of {sizes.square:g} mm: corners {sizes.face / 2:.1f} mm from the "
            "centre" if pieces.model == "penta" else
            f"pieces for squares of {sizes.square:g} mm: faces {sizes.face:.1f} mm square")
    return (f"{pieces.title}: {face}.",
            "Print at 100% scale on matte paper; glue onto wood or card so that the tops stand about "
            f"{sizes.height:.0f} mm high.",
            "Cut on the grey lines. The top of each face here (its forward corner or edge) faces "
            "the opponent.")


def _page(width: float, height: float, header: tuple[str, ...], rows: list[tuple[str, list[int]]],
          pitch: float, number: int, pages: int) -> Page:
    lines = (header[0] + (f" Page {number} of {pages}." if pages > 1 else ""), *header[1:])
    labels = [Label(MARGIN_MM, MARGIN_MM + 3 + 4.5 * i, 3.0, line) for i, line in enumerate(lines)]
    ruler_y = MARGIN_MM + 4.5 * len(lines) + 4
    labels.append(Label(MARGIN_MM + RULER_MM + 4, ruler_y + 1, 3.0, f"this line is {RULER_MM:g} mm"))
    ruler = ((MARGIN_MM, ruler_y), (MARGIN_MM + RULER_MM, ruler_y))
    y = MARGIN_MM + _HEADER_MM
    placed = []
    for label, kinds in rows:
        if label:
            labels.append(Label(MARGIN_MM, y + 5, 3.5, label))
            y += _SIDE_LABEL_MM
            continue
        for col, kind in enumerate(kinds):
            placed.append(Placed(kind, (MARGIN_MM + (col + 0.5) * pitch, y + pitch / 2)))
        y += pitch
    return Page(width, height, tuple(labels), tuple(placed), ruler)


# ---- SVG and PDF -----------------------------------------------------------------------


def _hex(colour: design.Colour) -> str:
    b, g, r = (round(c) for c in colour)
    return f"#{r:02x}{g:02x}{b:02x}"


def _points(points: tuple[Point, ...]) -> str:
    return " ".join(f"{x:.3f},{y:.3f}" for x, y in points)


def _svg_defs(sheet: Sheet) -> list[str]:
    model, face = sheet.pieces.model, sheet.sizes.face
    out = ["<defs>", f'<clipPath id="face-outline" clipPathUnits="userSpaceOnUse"><polygon '
           f'points="{_points(outline(model, face, BLEED_MM))}"/></clipPath>']
    for i, image in enumerate(sheet.images):
        png = base64.b64encode(cv2.imencode(".png", image)[1].tobytes()).decode("ascii")
        out.append(f'<image id="face-{i}" x="{-face / 2:.3f}" y="{-face / 2:.3f}" width="{face:.3f}" '
                   f'height="{face:.3f}" preserveAspectRatio="none" '
                   f'xlink:href="data:image/png;base64,{png}"/>')
    out.append("</defs>")
    return out


def _svg_piece(sheet: Sheet, placed: Placed) -> str:
    model, face = sheet.pieces.model, sheet.sizes.face
    kind = sheet.pieces.kinds[placed.kind]
    body = (design.PENTA_PRINT if model == "penta" else design.ZENSU_PRINT)[kind.side][0]
    x, y = placed.centre
    return (f'<g class="piece" data-kind="{placed.kind}" transform="translate({x:.3f} {y:.3f})">'
            f'<polygon points="{_points(outline(model, face, BLEED_MM))}" fill="{_hex(body)}"/>'
            f'<use xlink:href="#face-{placed.kind}" clip-path="url(#face-outline)"/>'
            f'<polygon class="cut" points="{_points(outline(model, face))}" fill="none" '
            f'stroke="#808080" stroke-width="0.2"/></g>')


def page_svg(sheet: Sheet, page: Page) -> str:
    """One page as an SVG document, in millimetres."""
    w, h = page.width, page.height
    out = ['<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
           f'width="{w:.3f}mm" height="{h:.3f}mm" viewBox="0 0 {w:.3f} {h:.3f}">',
           f'<rect x="0" y="0" width="{w:.3f}" height="{h:.3f}" fill="white"/>', *_svg_defs(sheet)]
    for label in page.labels:
        text = label.text.replace("&", "&amp;").replace("<", "&lt;")
        out.append(f'<text x="{label.x:.3f}" y="{label.y:.3f}" font-family="Helvetica, Arial, sans-serif" '
                   f'font-size="{label.size:.2f}">{text}</text>')
    (x1, y1), (x2, y2) = page.ruler
    out.append(f'<line class="ruler" x1="{x1:.3f}" y1="{y1:.3f}" x2="{x2:.3f}" y2="{y2:.3f}" '
               'stroke="black" stroke-width="0.3"/>')
    for x in (x1, x2):
        out.append(f'<line x1="{x:.3f}" y1="{y1 - 2:.3f}" x2="{x:.3f}" y2="{y1 + 2:.3f}" stroke="black" '
                   'stroke-width="0.3"/>')
    out += [_svg_piece(sheet, placed) for placed in page.pieces]
    out.append("</svg>\n")
    return "\n".join(out)


def _latin1(text: str) -> str:
    """PDF's standard fonts speak Latin-1: other letters lose their marks (Zensū: Zensu)."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    out = plain.encode("latin-1", "replace").decode("latin-1")
    return out.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _pdf_path(points: tuple[Point, ...], x0: float, y0: float, page_h: float) -> str:
    pt = 72.0 / 25.4
    ops = [f"{(x0 + x) * pt:.3f} {(page_h - y0 - y) * pt:.3f} {'m' if i == 0 else 'l'}"
           for i, (x, y) in enumerate(points)]
    return " ".join(ops) + " h"


def _pdf_page(sheet: Sheet, page: Page) -> str:
    pt, model, face = 72.0 / 25.4, sheet.pieces.model, sheet.sizes.face
    ops = []
    for label in page.labels:
        ops.append(f"BT /F1 {label.size * pt:.2f} Tf {label.x * pt:.3f} {(page.height - label.y) * pt:.3f} "
                   f"Td ({_latin1(label.text)}) Tj ET")
    (x1, y1), (x2, _) = page.ruler
    ops.append(f"0 G {0.3 * pt:.3f} w " + " ".join(
        f"{a * pt:.3f} {(page.height - b) * pt:.3f} m {c * pt:.3f} {(page.height - d) * pt:.3f} l S"
        for a, b, c, d in ((x1, y1, x2, y1), (x1, y1 - 2, x1, y1 + 2), (x2, y1 - 2, x2, y1 + 2))))
    for placed in page.pieces:
        x, y = placed.centre
        kind = sheet.pieces.kinds[placed.kind]
        b, g, r = ((design.PENTA_PRINT if model == "penta" else design.ZENSU_PRINT)[kind.side][0])
        grown = _pdf_path(outline(model, face, BLEED_MM), x, y, page.height)
        corner = ((x - face / 2) * pt, (page.height - y - face / 2) * pt)
        ops.append(f"{r / 255:.3f} {g / 255:.3f} {b / 255:.3f} rg {grown} f")
        ops.append(f"q {grown} W n {face * pt:.3f} 0 0 {face * pt:.3f} {corner[0]:.3f} {corner[1]:.3f} cm "
                   f"/Im{placed.kind} Do Q")
        ops.append(f"{CUT_GREY} G {0.2 * pt:.3f} w {_pdf_path(outline(model, face), x, y, page.height)} S")
    return "\n".join(ops)


def sheet_pdf(sheet: Sheet) -> bytes:
    """Every page in one PDF: the faces as RGB images (deflated), the rest as vectors."""
    pt = 72.0 / 25.4
    images = [_pdf_image(image) for image in sheet.images]
    first_image = 4  # objects: 1 catalog, 2 pages, 3 font, then the images, then each page's two
    first_page = first_image + len(images)
    pages = [f"{first_page + 2 * i} 0 R" for i in range(len(sheet.pages))]
    xobjects = " ".join(f"/Im{i} {first_image + i} 0 R" for i in range(len(images)))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{' '.join(pages)}] /Count {len(pages)} >>".encode(),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
               *images]
    for i, page in enumerate(sheet.pages):
        stream = _pdf_page(sheet, page).encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page.width * pt:.3f} "
                       f"{page.height * pt:.3f}] /Resources << /Font << /F1 3 0 R >> /XObject << "
                       f"{xobjects} >> >> /Contents {first_page + 2 * i + 1} 0 R >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    return pdf_file(objects)


def _pdf_image(image: design.Image) -> bytes:
    data = zlib.compress(np.ascontiguousarray(image[..., ::-1]).tobytes())
    h, w = image.shape[:2]
    return (f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceRGB "
            f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(data)} >>\nstream\n").encode() + data + \
        b"\nendstream"




def write_sheet(sheet: Sheet, out: str | Path) -> tuple[Path, ...]:
    """Write the sheet: .pdf one file; .svg one file a page (`pieces.svg`, `pieces-2.svg` …)."""
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in (".svg", ".pdf"):
        raise OutputError(f"cannot write {path}: printable pieces are .svg or .pdf")
    try:
        if suffix == ".pdf":
            path.write_bytes(sheet_pdf(sheet))
            return (path,)
        paths = tuple(path if i == 0 else path.with_name(f"{path.stem}-{i + 1}{path.suffix}")
                      for i in range(len(sheet.pages)))
        for target, page in zip(paths, sheet.pages, strict=True):
            target.write_text(page_svg(sheet, page), encoding="utf-8")
        return paths
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
