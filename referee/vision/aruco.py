"""Boards with four ArUco markers outside the grid's corners: the most robust set-up (no
line finding at all, and the marker ids say which corner is a1), plus a printable board at
true size (SVG or PDF) and the same drawing as an image for tests.

Marker k (ids[k]) sits diagonally outside grid corner k: a1's outer corner, then along rank 1,
the far corner, then along the a-file. Markers are printed upright as seen from White's side,
so a detected marker's corners (clockwise from its top-left) map to known board points."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import NoBoardError, OutputError
from referee.vision.pose import BoardPose, FloatArray
from referee.vision.settings import ArucoSettings, default_settings

_CORNER_SIGNS = ((-1, -1), (1, -1), (1, 1), (-1, 1))  # outward from each grid corner


@dataclass(frozen=True)
class ArucoLayout:
    """Where the markers are, in board units (one square = 1)."""

    files: int
    ranks: int
    ids: tuple[int, ...] = (0, 1, 2, 3)
    marker: float = 0.8      # marker side (squares)
    gap: float = 0.25        # from the grid corner to the marker, along both axes (squares)
    dictionary: str = "DICT_4X4_50"

    @classmethod
    def for_board(cls, files: int, ranks: int, settings: ArucoSettings | None = None) -> ArucoLayout:
        s = settings or default_settings().aruco
        if len(s.ids) != 4 or len(set(s.ids)) != 4:
            raise ValueError(f"an ArUco board needs four different marker ids, not {s.ids}")
        return cls(files, ranks, tuple(s.ids), s.marker_squares, s.gap_squares, s.dictionary)

    @property
    def border(self) -> float:
        """Paper around the grid on each side (squares): gap, marker and a quiet zone."""
        return self.gap + self.marker + 0.25

    def marker_corners(self, k: int) -> FloatArray:
        """Board points of marker k's corners, in ArUco's order (top-left, clockwise, as
        printed upright: top = towards rank `ranks`)."""
        cx = 0.0 if k in (0, 3) else float(self.files)
        cy = 0.0 if k in (0, 1) else float(self.ranks)
        sx, sy = _CORNER_SIGNS[k]
        xs = sorted((cx + sx * self.gap, cx + sx * (self.gap + self.marker)))
        ys = sorted((cy + sy * self.gap, cy + sy * (self.gap + self.marker)))
        return np.array([[xs[0], ys[1]], [xs[1], ys[1]], [xs[1], ys[0]], [xs[0], ys[0]]])


def _dictionary(name: str) -> cv2.aruco.Dictionary:
    code = getattr(cv2.aruco, name, None)
    if not isinstance(code, int):
        raise ValueError(f"unknown ArUco dictionary {name!r}")
    return cv2.aruco.getPredefinedDictionary(code)


def find_board_aruco(frame_bgr: NDArray[np.uint8], layout: ArucoLayout, *,
                     min_markers: int | None = None) -> BoardPose:
    """The board's pose from its corner markers, a1 where marker ids[0] says. Needs at least
    `min_markers` of the four (a hand may cover one); NoBoardError otherwise."""
    need = default_settings().aruco.min_markers if min_markers is None else min_markers
    if not isinstance(frame_bgr, np.ndarray) or frame_bgr.size == 0 or frame_bgr.dtype != np.uint8:
        raise NoBoardError("no board: the frame is empty or not an 8-bit image")
    grey = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY) if frame_bgr.ndim == 3 else frame_bgr
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(_dictionary(layout.dictionary), params)
    corners, ids, _ = detector.detectMarkers(grey)
    board_pts: list[FloatArray] = []
    image_pts: list[FloatArray] = []
    seen: set[int] = set()
    if ids is not None:
        for quad, marker_id in zip(corners, ids.ravel(), strict=True):
            if int(marker_id) in layout.ids and int(marker_id) not in seen:
                seen.add(int(marker_id))
                k = layout.ids.index(int(marker_id))
                board_pts.append(layout.marker_corners(k))
                image_pts.append(np.asarray(quad, dtype=np.float64).reshape(4, 2))
    if len(seen) < need:
        raise NoBoardError(f"no board: {len(seen)} of its 4 ArUco markers in view, {need} needed")
    h, _ = cv2.findHomography(np.vstack(board_pts), np.vstack(image_pts), 0)
    if h is None:
        raise NoBoardError("no board: the markers found do not fit one board")
    return BoardPose.from_homography(np.asarray(h, dtype=np.float64), layout.files, layout.ranks)


# ---------------------------------------------------------------- printable board


@dataclass(frozen=True)
class _Drawing:
    width_mm: float
    height_mm: float
    rects: tuple[tuple[float, float, float, float], ...]        # black: x, y, w, h (mm, y down)
    lines: tuple[tuple[float, float, float, float, float], ...]  # x1, y1, x2, y2, width (mm)


def _drawing(layout: ArucoLayout, square_mm: float) -> _Drawing:
    b = layout.border
    width = (layout.files + 2 * b) * square_mm
    height = (layout.ranks + 2 * b) * square_mm

    def paper(x: float, y: float) -> tuple[float, float]:
        return (x + b) * square_mm, (layout.ranks + b - y) * square_mm

    line_w = max(0.3, 0.025 * square_mm)
    lines = []
    for f in range(layout.files + 1):
        lines.append((*paper(f, 0), *paper(f, layout.ranks), line_w))
    for r in range(layout.ranks + 1):
        lines.append((*paper(0, r), *paper(layout.files, r), line_w))
    rects = []
    dictionary = _dictionary(layout.dictionary)
    bits = dictionary.markerSize + 2
    for k, marker_id in enumerate(layout.ids):
        cells = cv2.aruco.generateImageMarker(dictionary, marker_id, bits)
        x0, y0 = paper(*layout.marker_corners(k)[0])  # top-left on paper
        cell = layout.marker * square_mm / bits
        for row in range(bits):
            for col in range(bits):
                if cells[row, col] < 128:
                    rects.append((x0 + col * cell, y0 + row * cell, cell, cell))
    return _Drawing(width, height, tuple(rects), tuple(lines))


def _svg(d: _Drawing) -> str:
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{d.width_mm:.3f}mm" height="{d.height_mm:.3f}mm" '
           f'viewBox="0 0 {d.width_mm:.3f} {d.height_mm:.3f}">',
           f'<rect x="0" y="0" width="{d.width_mm:.3f}" height="{d.height_mm:.3f}" fill="white"/>']
    for x1, y1, x2, y2, w in d.lines:
        out.append(f'<line x1="{x1:.3f}" y1="{y1:.3f}" x2="{x2:.3f}" y2="{y2:.3f}" stroke="black" '
                   f'stroke-width="{w:.3f}" stroke-linecap="square"/>')
    for x, y, w, h in d.rects:  # a hair wider so neighbouring cells print without seams
        out.append(f'<rect x="{x:.3f}" y="{y:.3f}" width="{w + 0.01:.3f}" height="{h + 0.01:.3f}" '
                   'fill="black"/>')
    out.append("</svg>\n")
    return "\n".join(out)


def _pdf(d: _Drawing) -> bytes:
    pt = 72.0 / 25.4
    w, h = d.width_mm * pt, d.height_mm * pt
    ops = ["0 g 0 G 2 J"]
    for x1, y1, x2, y2, lw in d.lines:
        ops.append(f"{lw * pt:.3f} w {x1 * pt:.3f} {h - y1 * pt:.3f} m {x2 * pt:.3f} {h - y2 * pt:.3f} l S")
    for x, y, rw, rh in d.rects:
        ops.append(f"{x * pt:.3f} {h - (y + rh) * pt:.3f} {rw * pt + 0.02:.3f} {rh * pt + 0.02:.3f} re f")
    stream = "\n".join(ops).encode("ascii")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w:.3f} {h:.3f}] /Contents 4 0 R >>".encode(),
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def write_printable_board(files: int, ranks: int, square_mm: float, out: str | Path, *,
                          settings: ArucoSettings | None = None) -> Path:
    """Write the grid and its four markers at true size to `out` (.svg or .pdf)."""
    if not 5.0 <= square_mm <= 200.0:
        raise ValueError(f"square size {square_mm} mm is out of range 5..200")
    path = Path(out)
    layout = ArucoLayout.for_board(files, ranks, settings)
    drawing = _drawing(layout, square_mm)
    suffix = path.suffix.lower()
    try:
        if suffix == ".svg":
            path.write_text(_svg(drawing), encoding="utf-8")
        elif suffix == ".pdf":
            path.write_bytes(_pdf(drawing))
        else:
            raise OutputError(f"cannot write {path}: a printable board is .svg or .pdf")
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def board_image(files: int, ranks: int, px_per_mm: float, square_mm: float = 40.0, *,
                settings: ArucoSettings | None = None) -> NDArray[np.uint8]:
    """The printable board drawn as a BGR image (the same shapes as the SVG and PDF)."""
    d = _drawing(ArucoLayout.for_board(files, ranks, settings), square_mm)
    img = np.full((round(d.height_mm * px_per_mm), round(d.width_mm * px_per_mm), 3), 255, np.uint8)
    shift = 4
    one = 1 << shift

    def p(x: float, y: float) -> tuple[int, int]:
        return round((x * px_per_mm - 0.5) * one), round((y * px_per_mm - 0.5) * one)

    for x1, y1, x2, y2, w in d.lines:
        cv2.line(img, p(x1, y1), p(x2, y2), (0, 0, 0), max(1, round(w * px_per_mm)), cv2.LINE_AA, shift)
    for x, y, w, h in d.rects:
        x0, y0 = round(x * px_per_mm), round(y * px_per_mm)
        x1, y1 = round((x + w) * px_per_mm), round((y + h) * px_per_mm)
        img[y0:y1, x0:x1] = 0
    return img


def board_image_to_board(files: int, ranks: int, px_per_mm: float, square_mm: float = 40.0, *,
                         settings: ArucoSettings | None = None) -> FloatArray:
    """The homography from board units to pixels of `board_image` (for tests)."""
    b = ArucoLayout.for_board(files, ranks, settings).border
    k = square_mm * px_per_mm
    return np.array([[k, 0, b * k - 0.5], [0, -k, (ranks + b) * k - 0.5], [0, 0, 1.0]])
