"""Printable calibration patterns at true size: SVG and PDF (vector, exact millimetres)
and PNG (raster at a chosen DPI, with the DPI recorded in the file).

A pattern is first laid out as black rectangles in millimetres on a white page, with a
quiet zone round the board (OpenCV's chessboard finder needs a white border), then
written by one of three small writers. The ChArUco layout is taken from OpenCV's own
`CharucoBoard` (marker positions, ids and bits), so printouts match its detector.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from referee.calibration.intrinsics import Charuco, Chessboard, Pattern
from referee.errors import CalibrationError
from referee.pdf import pdf_file

MM_PER_INCH = 25.4
PT_PER_MM = 72.0 / MM_PER_INCH
LABEL_MM = 4.0  # height of the caption strip under the board
A4_MM = (210.0, 297.0)


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class Layout:
    """Black rectangles on a white page, everything in millimetres, y pointing down."""

    width_mm: float
    height_mm: float
    rects: tuple[Rect, ...]
    caption: str

    def fits(self, paper_mm: tuple[float, float] = A4_MM) -> bool:
        short, long = sorted((self.width_mm, self.height_mm))
        return short <= paper_mm[0] and long <= paper_mm[1]


def layout(pattern: Pattern, *, margin_mm: float | None = None) -> Layout:
    """The page for `pattern` with a quiet zone of `margin_mm` (default one square, ≥ 8 mm)."""
    s = pattern.square_mm
    margin = max(s, 8.0) if margin_mm is None else margin_mm
    if isinstance(pattern, Chessboard):
        cols, rows = pattern.cols + 1, pattern.rows + 1  # squares round the inner corners
        rects = [
            Rect(margin + c * s, margin + r * s, s, s)
            for r in range(rows)
            for c in range(cols)
            if (r + c) % 2 == 0
        ]
        what = f"chessboard {pattern.cols}x{pattern.rows} inner corners"
    else:
        cols, rows = pattern.cols, pattern.rows
        rects = _charuco_rects(pattern, margin)
        what = (
            f"ChArUco {pattern.cols}x{pattern.rows} squares, {pattern.dictionary}, "
            f"markers {pattern.marker_mm:g} mm"
        )
    caption = f"referee: {what}, squares {s:g} mm. Print at 100% and check one square."
    return Layout(cols * s + 2 * margin, rows * s + 2 * margin + LABEL_MM, tuple(rects), caption)


def _charuco_rects(pattern: Charuco, margin: float) -> list[Rect]:
    board = pattern.board()
    s = pattern.square_mm
    markers = [np.asarray(p, np.float64)[:, :2] for p in board.getObjPoints()]
    ids = np.asarray(board.getIds()).ravel().tolist()
    dictionary = board.getDictionary()
    n = dictionary.markerSize
    # The squares that hold no marker are the black ones.
    holders = {(int(m[0, 0] // s), int(m[0, 1] // s)) for m in markers}
    rects = [
        Rect(margin + c * s, margin + r * s, s, s)
        for r in range(pattern.rows)
        for c in range(pattern.cols)
        if (c, r) not in holders
    ]
    for corners, marker_id in zip(markers, ids, strict=True):
        x0, y0 = corners[0]
        cell = pattern.marker_mm / (n + 2)  # one black cell of border on each side
        byte_row = dictionary.bytesList[marker_id : marker_id + 1]
        bits = cv2.aruco.Dictionary.getBitsFromByteList(byte_row, n)
        for r in range(n + 2):
            for c in range(n + 2):
                inner = 0 < r <= n and 0 < c <= n
                if not inner or bits[r - 1, c - 1] == 0:  # bit 1 is white
                    rects.append(Rect(margin + x0 + c * cell, margin + y0 + r * cell, cell, cell))
    return rects


# ---------------------------------------------------------------- writers


def write_pattern(pattern: Pattern, path: str | Path, *, dpi: int = 300) -> Layout:
    """Write the printable pattern; the suffix of `path` chooses SVG, PDF or PNG."""
    path = Path(path)
    page = layout(pattern)
    suffix = path.suffix.lower()
    data: bytes
    if suffix == ".svg":
        data = to_svg(page).encode("utf-8")
    elif suffix == ".pdf":
        data = to_pdf(page)
    elif suffix == ".png":
        data = to_png(page, dpi=dpi)
    else:
        raise CalibrationError(f"{path}: write a pattern as .svg, .pdf or .png")
    try:
        path.write_bytes(data)
    except OSError as error:
        raise CalibrationError(f"{path}: cannot write ({error.strerror})") from None
    return page


def to_svg(page: Layout) -> str:
    w, h = page.width_mm, page.height_mm
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:g}mm" height="{h:g}mm" '
        f'viewBox="0 0 {w:g} {h:g}" shape-rendering="crispEdges">',
        f'<rect x="0" y="0" width="{w:g}" height="{h:g}" fill="#ffffff"/>',
        '<g fill="#000000">',
    ]
    lines += [
        f'<rect x="{r.x:.4f}" y="{r.y:.4f}" width="{r.w:.4f}" height="{r.h:.4f}"/>'
        for r in page.rects
    ]
    lines.append("</g>")
    lines.append(
        f'<text x="{page.width_mm / 2:g}" y="{h - 1.2:g}" font-family="sans-serif" '
        f'font-size="2.5" text-anchor="middle" fill="#555555">{_xml(page.caption)}</text>'
    )
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_pdf(page: Layout) -> bytes:
    """A one-page PDF whose MediaBox is the page's true size in points."""
    w, h = page.width_mm * PT_PER_MM, page.height_mm * PT_PER_MM
    ops = ["0 g"]
    for r in page.rects:  # PDF's y axis points up
        ops.append(
            f"{r.x * PT_PER_MM:.3f} {(page.height_mm - r.y - r.h) * PT_PER_MM:.3f} "
            f"{r.w * PT_PER_MM:.3f} {r.h * PT_PER_MM:.3f} re f"
        )
    caption = page.caption.encode("latin-1", "replace").decode("latin-1")
    caption = caption.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    ops.append(f"0.33 g BT /F1 7 Tf {3 * PT_PER_MM:.2f} {1.2 * PT_PER_MM:.2f} Td ({caption}) Tj ET")
    content = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w:.3f} {h:.3f}] "
            "/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
        ).encode(),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return pdf_file(objects)


def rasterise(page: Layout, *, dpi: int) -> np.ndarray:
    """The page as a grey image at `dpi`; edges are rounded to whole pixels."""
    scale = dpi / MM_PER_INCH
    image = np.full((round(page.height_mm * scale), round(page.width_mm * scale)), 255, np.uint8)
    for r in page.rects:
        x0, y0 = round(r.x * scale), round(r.y * scale)
        x1, y1 = round((r.x + r.w) * scale), round((r.y + r.h) * scale)
        image[y0:y1, x0:x1] = 0
    return image


def to_png(page: Layout, *, dpi: int) -> bytes:
    if not 72 <= dpi <= 2400:
        raise CalibrationError(f"--dpi {dpi} is out of range (72 to 2400)")
    ok, encoded = cv2.imencode(".png", rasterise(page, dpi=dpi))
    if not ok:
        raise CalibrationError("could not encode the pattern as PNG")
    return _with_dpi(encoded.tobytes(), dpi)


def _with_dpi(png: bytes, dpi: int) -> bytes:
    """Insert a pHYs chunk after IHDR so that printers and viewers know the true size."""
    per_metre = round(dpi / 0.0254)
    body = b"pHYs" + struct.pack(">IIB", per_metre, per_metre, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    ihdr_end = 8 + 4 + 4 + 13 + 4  # signature, length, type, IHDR data, CRC
    return png[:ihdr_end] + chunk + png[ihdr_end:]
