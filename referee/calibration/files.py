"""Calibration files: camera intrinsics and board profiles as plain YAML (or TOML) under
`calibration/`.

Files are read with safe loaders only (`yaml.safe_load`, `tomllib`) and validated
strictly: a missing field, an unknown key, a wrong type or a wrong shape ends in one
`CalibrationError` line that names the file and the field. Values are frozen dataclasses
holding tuples, so they are hashable and cannot change under a running pipeline.

A camera file::

    kind: camera
    version: 1
    image_size: [640, 480]          # width, height in pixels
    camera_matrix:                  # K, pixels; principal point in OpenCV's convention
      - [533.1, 0.0, 342.2]         # (pixel centres at integer coordinates)
      - [0.0, 533.2, 234.0]
      - [0.0, 0.0, 1.0]
    dist_coeffs: [-0.28, 0.07, 0.001, -0.0002, 0.09]   # k1 k2 p1 p2 [k3 [k4 k5 k6 ...]]
    rms_px: 0.18                    # reprojection error of the calibration, or null
    source: "13 photos ..."         # where the numbers came from

A board profile::

    kind: board
    version: 1
    game: rinne
    files: 5
    ranks: 6
    square_mm: 30.0                 # or null while unmeasured
    corners_px: null                # or 4 [x, y] image points, clockwise from top-left
    first_player_edge: bottom       # image edge nearest rank 1: bottom|right|top|left
    camera: ../pi-camera-module-3-1280x720.yaml   # relative to this file, or null
    pieces:
      first: {name: white, body: "#f2f2ee", marks: "#1a1a1a"}
      second: {name: black, body: "#1e1e1e", marks: "#f0f0f0"}
    piece_head: {...}               # optional: `referee calibrate pieces` (vision/adapt.py)
"""

from __future__ import annotations

import math
import os.path
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import yaml

from referee.errors import CalibrationError
from referee.vision.adapt import Head

FORMAT_VERSION = 1
# The lengths cv2 accepts for a distortion vector (rational, thin-prism, tilted models).
DIST_LENGTHS = (4, 5, 8, 12, 14)
EDGES = ("bottom", "right", "top", "left")
_HEX_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")

T = TypeVar("T")


@dataclass(frozen=True)
class CameraCalibration:
    """A pinhole camera with lens distortion at one image size (pixels)."""

    image_size: tuple[int, int]  # (width, height)
    camera_matrix: tuple[tuple[float, ...], ...]  # 3 rows of 3
    dist_coeffs: tuple[float, ...]
    rms_px: float | None  # reprojection error of the calibration; None for computed defaults
    source: str

    @property
    def K(self) -> np.ndarray:
        return np.array(self.camera_matrix, dtype=np.float64)

    @property
    def dist(self) -> np.ndarray:
        return np.array(self.dist_coeffs, dtype=np.float64)

    @property
    def has_distortion(self) -> bool:
        return any(c != 0.0 for c in self.dist_coeffs)

    def fov_deg(self) -> tuple[float, float]:
        """Horizontal and vertical field of view of the pinhole model, in degrees."""
        (fx, _, cx), (_, fy, cy), _ = self.camera_matrix
        w, h = self.image_size
        # Edges of the outer pixels lie half a pixel beyond the pixel centres.
        hfov = math.atan((cx + 0.5) / fx) + math.atan((w - 0.5 - cx) / fx)
        vfov = math.atan((cy + 0.5) / fy) + math.atan((h - 0.5 - cy) / fy)
        return math.degrees(hfov), math.degrees(vfov)

    def scaled_to(self, width: int, height: int) -> CameraCalibration:
        """The same camera delivering frames resized to `width` x `height` (same aspect)."""
        w, h = self.image_size
        sx, sy = width / w, height / h
        if abs(sx - sy) > 1e-3 * max(sx, sy):
            raise CalibrationError(
                f"cannot scale a {w}x{h} calibration to {width}x{height}: the aspect differs"
            )
        (fx, s, cx), (_, fy, cy), _ = self.camera_matrix
        # Pixel centres: x' + 0.5 = (x + 0.5) * scale.
        k = (
            (fx * sx, s * sx, (cx + 0.5) * sx - 0.5),
            (0.0, fy * sy, (cy + 0.5) * sy - 0.5),
            (0.0, 0.0, 1.0),
        )
        return CameraCalibration(
            (width, height), k, self.dist_coeffs, self.rms_px, f"{self.source}; scaled"
        )


@dataclass(frozen=True)
class PlayerPieces:
    """How one player's pieces look: a name and two sRGB colours (#rrggbb)."""

    name: str
    body: str  # the piece's main colour (die body, disc, tile)
    marks: str  # pips, engravings, symbols


@dataclass(frozen=True)
class BoardProfile:
    """One physical board as seen by one camera: what the board finder and the warper need.

    `corners_px` are the four outer corners of the playing area in the image, clockwise
    from the top-left one; `first_player_edge` says which image edge rank 1 lies along,
    so that squares get their names. Both come from `referee calibrate board`; until then
    `corners_px` is None and the board is searched for."""

    game: str
    files: int
    ranks: int
    square_mm: float | None
    corners_px: tuple[tuple[float, float], ...] | None
    first_player_edge: str
    camera: Path | None  # a camera file, resolved against the profile's folder
    first: PlayerPieces
    second: PlayerPieces
    # The players' own pieces learnt on a model's features (`referee calibrate pieces`)
    head: Head | None = None
    # The squares' crops scaled about their centres so that the pieces fill them as the model
    # learnt (`referee calibrate pieces`, vision/piece_size.py): 1 the model's own cut
    crop_scale: float = 1.0


# ---------------------------------------------------------------- reading and writing


def load_camera(path: str | Path) -> CameraCalibration:
    """Read and validate a camera calibration file (.yaml, .yml or .toml)."""
    path = Path(path)
    return camera_from_mapping(_read_mapping(path), where=str(path))


def load_board(path: str | Path) -> BoardProfile:
    """Read and validate a board profile; a relative `camera` path is made absolute."""
    path = Path(path)
    profile = board_from_mapping(_read_mapping(path), where=str(path), base=path.parent)
    if profile.camera is not None and not profile.camera.is_file():
        raise CalibrationError(f"{path}: camera file {profile.camera} does not exist")
    return profile


def read_kind(path: str | Path) -> str:
    """The `kind` field of a calibration file ('camera' or 'board'), before validation."""
    path = Path(path)
    kind = _read_mapping(path).get("kind")
    if kind not in ("camera", "board"):
        raise CalibrationError(f"{path}: field 'kind' must be 'camera' or 'board'")
    return str(kind)


def load_board_camera(profile: BoardProfile) -> CameraCalibration | None:
    """The camera calibration a board profile names, or None where it names none."""
    return None if profile.camera is None else load_camera(profile.camera)


def save_camera(
    calibration: CameraCalibration, path: str | Path, *, header: Sequence[str] = ()
) -> None:
    """Write a camera file; `header` lines become YAML comments at the top."""
    _write_yaml(camera_to_mapping(calibration), Path(path), "camera calibration", header)


def save_board(profile: BoardProfile, path: str | Path, *, header: Sequence[str] = ()) -> None:
    path = Path(path)
    _write_yaml(board_to_mapping(profile, base=path.parent), path, "board profile", header)


def camera_to_mapping(c: CameraCalibration) -> dict[str, Any]:
    return {
        "kind": "camera",
        "version": FORMAT_VERSION,
        "image_size": list(c.image_size),
        "camera_matrix": [[float(v) for v in row] for row in c.camera_matrix],
        "dist_coeffs": [float(v) for v in c.dist_coeffs],
        "rms_px": c.rms_px,
        "source": c.source,
    }


def board_to_mapping(p: BoardProfile, *, base: Path | None = None) -> dict[str, Any]:
    camera: str | None = None
    if p.camera is not None:
        camera = str(_relative(p.camera, base) if base is not None else p.camera)
    mapping = {
        "kind": "board",
        "version": FORMAT_VERSION,
        "game": p.game,
        "files": p.files,
        "ranks": p.ranks,
        "square_mm": p.square_mm,
        "corners_px": None if p.corners_px is None else [list(pt) for pt in p.corners_px],
        "first_player_edge": p.first_player_edge,
        "camera": camera,
        "pieces": {
            side: {"name": pp.name, "body": pp.body, "marks": pp.marks}
            for side, pp in (("first", p.first), ("second", p.second))
        },
    }
    if p.crop_scale != 1.0:
        mapping["crop_scale"] = p.crop_scale
    return mapping if p.head is None else {**mapping, "piece_head": p.head.to_mapping()}


def _relative(target: Path, base: Path) -> Path:
    try:
        return Path(os.path.relpath(target, base))
    except ValueError:  # another drive on Windows
        return target


def _read_mapping(path: Path) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError(f"{path}: no such calibration file") from None
    except IsADirectoryError:
        raise CalibrationError(f"{path}: is a folder, not a calibration file") from None
    except UnicodeDecodeError:
        raise CalibrationError(f"{path}: not a text file") from None
    except OSError as error:
        raise CalibrationError(f"{path}: cannot read ({error.strerror})") from None
    data: Any
    if path.suffix.lower() == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise CalibrationError(f"{path}: not valid TOML ({error})") from None
    else:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            at = f" at line {mark.line + 1}" if mark is not None else ""
            raise CalibrationError(f"{path}: not valid YAML{at}") from None
    if not isinstance(data, dict):
        raise CalibrationError(f"{path}: expected a mapping of fields, found {_kind(data)}")
    return data


def _write_yaml(data: Mapping[str, Any], path: Path, what: str, header: Sequence[str]) -> None:
    text = yaml.safe_dump(dict(data), sort_keys=False, default_flow_style=None, width=100)
    text = "".join(f"# {line}\n" for line in header) + text
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CalibrationError(f"{path}: cannot write the {what} ({error.strerror})") from None


# ---------------------------------------------------------------- validation

_CAMERA_FIELDS = ("kind", "version", "image_size", "camera_matrix", "dist_coeffs", "source")
_CAMERA_OPTIONAL = ("rms_px",)
_BOARD_FIELDS = ("kind", "version", "game", "files", "ranks", "first_player_edge", "pieces")
_BOARD_OPTIONAL = ("square_mm", "corners_px", "camera", "piece_head", "crop_scale")
CROP_SCALE_RANGE = (0.3, 2.0)


def camera_from_mapping(data: Mapping[str, Any], *, where: str) -> CameraCalibration:
    _check_keys(data, _CAMERA_FIELDS, _CAMERA_OPTIONAL, where)
    _check_header(data, "camera", where)
    size = _int_list(data["image_size"], 2, f"{where}: image_size")
    if min(size) <= 0:
        raise CalibrationError(f"{where}: image_size must be two positive integers")
    width, height = size
    k = _matrix(data["camera_matrix"], 3, 3, f"{where}: camera_matrix")
    fx, fy, cx, cy = k[0][0], k[1][1], k[0][2], k[1][2]
    if fx <= 0 or fy <= 0:
        raise CalibrationError(f"{where}: camera_matrix focal lengths must be positive")
    if k[1][0] != 0 or k[2] != (0.0, 0.0, 1.0):
        raise CalibrationError(f"{where}: camera_matrix must have rows [fx s cx] [0 fy cy] [0 0 1]")
    if not (0 <= cx <= width and 0 <= cy <= height):
        raise CalibrationError(f"{where}: camera_matrix principal point lies outside the image")
    dist = _float_list(data["dist_coeffs"], None, f"{where}: dist_coeffs")
    if len(dist) not in DIST_LENGTHS:
        lengths = ", ".join(map(str, DIST_LENGTHS))
        raise CalibrationError(f"{where}: dist_coeffs must have {lengths} values, not {len(dist)}")
    rms = data.get("rms_px")
    if rms is not None:
        rms = _number(rms, f"{where}: rms_px")
        if rms < 0:
            raise CalibrationError(f"{where}: rms_px must not be negative")
    source = _typed(data["source"], str, "a string", f"{where}: source")
    return CameraCalibration((width, height), k, dist, rms, source)


def board_from_mapping(
    data: Mapping[str, Any], *, where: str, base: Path | None = None
) -> BoardProfile:
    _check_keys(data, _BOARD_FIELDS, _BOARD_OPTIONAL, where)
    _check_header(data, "board", where)
    game = _typed(data["game"], str, "a string", f"{where}: game")
    files = _positive_int(data["files"], f"{where}: files")
    ranks = _positive_int(data["ranks"], f"{where}: ranks")
    square_mm = data.get("square_mm")
    if square_mm is not None:
        square_mm = _number(square_mm, f"{where}: square_mm")
        if square_mm <= 0:
            raise CalibrationError(f"{where}: square_mm must be positive")
    corners_raw = data.get("corners_px")
    corners: tuple[tuple[float, float], ...] | None = None
    if corners_raw is not None:
        rows = _matrix(corners_raw, 4, 2, f"{where}: corners_px")
        corners = tuple((r[0], r[1]) for r in rows)
        if not _is_convex_clockwise(corners):
            raise CalibrationError(
                f"{where}: corners_px must be a convex quadrilateral, clockwise from top-left"
            )
    edge = _typed(data["first_player_edge"], str, "a string", f"{where}: first_player_edge")
    if edge not in EDGES:
        raise CalibrationError(f"{where}: first_player_edge must be one of {', '.join(EDGES)}")
    camera_raw = data.get("camera")
    camera: Path | None = None
    if camera_raw is not None:
        camera = Path(_typed(camera_raw, str, "a string", f"{where}: camera"))
        if base is not None and not camera.is_absolute():
            camera = base / camera
    pieces = _typed(data["pieces"], dict, "a mapping", f"{where}: pieces")
    _check_keys(pieces, ("first", "second"), (), f"{where}: pieces")
    first = _player(pieces["first"], f"{where}: pieces.first")
    second = _player(pieces["second"], f"{where}: pieces.second")
    head = None
    if data.get("piece_head") is not None:
        try:
            head = Head.from_mapping(data["piece_head"], where=where)
        except ValueError as error:
            raise CalibrationError(str(error)) from None
    crop_scale = _number(data.get("crop_scale", 1.0), f"{where}: crop_scale")
    if not CROP_SCALE_RANGE[0] <= crop_scale <= CROP_SCALE_RANGE[1]:
        raise CalibrationError(f"{where}: crop_scale {crop_scale:g} is not within "
                               f"{CROP_SCALE_RANGE[0]:g}..{CROP_SCALE_RANGE[1]:g}")
    return BoardProfile(game, files, ranks, square_mm, corners, edge, camera, first, second, head,
                        crop_scale)


def _player(raw: Any, where: str) -> PlayerPieces:
    data = _typed(raw, dict, "a mapping", where)
    _check_keys(data, ("name", "body", "marks"), (), where)
    name = _typed(data["name"], str, "a string", f"{where}.name")
    colours = []
    for key in ("body", "marks"):
        value = _typed(data[key], str, "a colour string", f"{where}.{key}")
        if not _HEX_COLOUR.match(value):
            raise CalibrationError(f"{where}.{key} must be a colour like '#1a2b3c', not {value!r}")
        colours.append(value.lower())
    return PlayerPieces(name, colours[0], colours[1])


def _is_convex_clockwise(points: tuple[tuple[float, float], ...]) -> bool:
    """Clockwise on screen (y down) means a positive cross product at every corner."""
    n = len(points)
    for i in range(n):
        (x0, y0), (x1, y1), (x2, y2) = points[i], points[(i + 1) % n], points[(i + 2) % n]
        if (x1 - x0) * (y2 - y1) - (y1 - y0) * (x2 - x1) <= 0:
            return False
    return True


def _check_keys(
    data: Mapping[str, Any], required: tuple[str, ...], optional: tuple[str, ...], where: str
) -> None:
    for key in required:
        if key not in data:
            raise CalibrationError(f"{where}: missing field '{key}'")
    for key in data:
        if key not in required and key not in optional:
            raise CalibrationError(f"{where}: unknown field '{key}'")


def _check_header(data: Mapping[str, Any], kind: str, where: str) -> None:
    if data["kind"] != kind:
        raise CalibrationError(f"{where}: kind is {data['kind']!r}, expected '{kind}'")
    version = data["version"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise CalibrationError(f"{where}: version {version!r} is not supported (expected 1)")


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "text",
        list: "a list",
        dict: "a mapping",
    }
    return names.get(type(value), type(value).__name__)


def _typed(value: Any, kind: type[T], expected: str, where: str) -> T:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise CalibrationError(f"{where} must be {expected}, not {_kind(value)}")
    return value


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalibrationError(f"{where} must be a number, not {_kind(value)}")
    if not math.isfinite(value):
        raise CalibrationError(f"{where} must be a finite number")
    return float(value)


def _positive_int(value: Any, where: str) -> int:
    number = _typed(value, int, "an integer", where)
    if number <= 0:
        raise CalibrationError(f"{where} must be positive")
    return number


def _seq(
    value: Any, length: int | None, where: str, parse: Callable[[Any, str], T]
) -> tuple[T, ...]:
    items = _typed(value, list, "a list", where)
    if length is not None and len(items) != length:
        raise CalibrationError(f"{where} must have {length} values, not {len(items)}")
    return tuple(parse(item, f"{where}[{i}]") for i, item in enumerate(items))


def _float_list(value: Any, length: int | None, where: str) -> tuple[float, ...]:
    return _seq(value, length, where, _number)


def _int_list(value: Any, length: int, where: str) -> tuple[int, ...]:
    return _seq(value, length, where, lambda v, w: _typed(v, int, "an integer", w))


def _matrix(value: Any, rows: int, cols: int, where: str) -> tuple[tuple[float, ...], ...]:
    items = _typed(value, list, f"a list of {rows} rows", where)
    if len(items) != rows:
        raise CalibrationError(f"{where} must be {rows}x{cols}, not {len(items)} rows")
    return tuple(_float_list(row, cols, f"{where}[{i}]") for i, row in enumerate(items))
