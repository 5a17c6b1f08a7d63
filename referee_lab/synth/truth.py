"""Ground truth of renders: what each frame shows, as frozen values with a JSON round trip.

The vision code trains and is tested against these values, so they are recorded exactly as
the image shows them: image points are the *distorted* projections (what the lens does),
in pixels of the output frame, x to the right and y down."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import RenderError

KINDS = ("empty", "die", "penta", "zensu", "tile", "monomino", "blocked")
MARKERS = ("gold", "silver")

Point = tuple[float, float]


@dataclass(frozen=True)
class SquareContent:
    """What stands on one square.

    `kind` is one of KINDS. `owner` is 0 (first player: White, Turquoise, Gold) or 1, None
    for neutral things. `value` is the die's top face (1–6, 6 = Tensei's roll pending), the
    Penta-piece's state (1 King … 5 Queen), the Zensū piece's number (1 or 2), or the tile's
    id on the board (squares with the same id belong to one polyomino). `marker` is a
    Renaissance marker ("gold" or "silver") lying on the square, if any."""

    kind: str = "empty"
    owner: int | None = None
    value: int = 0
    marker: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise RenderError(f"unknown square content {self.kind!r}; known: {', '.join(KINDS)}")
        if self.marker is not None and self.marker not in MARKERS:
            raise RenderError(f"unknown marker {self.marker!r}; known: {', '.join(MARKERS)}")

    @property
    def is_piece(self) -> bool:
        return self.kind in ("die", "penta", "zensu")

    def label(self) -> str:
        """A short class label, e.g. `die/0/3`, `empty`, `tile/-/4/gold`."""
        if self.kind in ("empty", "blocked") and self.marker is None:
            return self.kind
        owner = "-" if self.owner is None else str(self.owner)
        text = f"{self.kind}/{owner}/{self.value}"
        return text + (f"/{self.marker}" if self.marker else "")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "owner": self.owner, "value": self.value,
                "marker": self.marker}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SquareContent:
        return cls(str(data["kind"]), data.get("owner"), int(data.get("value", 0)),
                   data.get("marker"))


EMPTY = SquareContent()
BLOCKED = SquareContent("blocked")

Contents = dict[str, SquareContent]  # square name -> what stands there


@dataclass(frozen=True)
class CameraTruth:
    """A pinhole camera in OpenCV's conventions: x_img = K · distort(R·X + t)."""

    width: int
    height: int
    K: tuple[tuple[float, float, float], ...]
    dist: tuple[float, ...]  # k1, k2, p1, p2, k3
    rvec: tuple[float, float, float]
    tvec: tuple[float, float, float]

    def to_json(self) -> dict[str, Any]:
        return {"width": self.width, "height": self.height, "K": [list(r) for r in self.K],
                "dist": list(self.dist), "rvec": list(self.rvec), "tvec": list(self.tvec)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CameraTruth:
        k = tuple((float(r[0]), float(r[1]), float(r[2])) for r in data["K"])
        rv, tv = data["rvec"], data["tvec"]
        return cls(int(data["width"]), int(data["height"]), k,
                   tuple(float(d) for d in data["dist"]),
                   (float(rv[0]), float(rv[1]), float(rv[2])),
                   (float(tv[0]), float(tv[1]), float(tv[2])))


def _points(data: Any) -> tuple[Point, ...]:
    return tuple((float(p[0]), float(p[1])) for p in data)


def _round(points: tuple[Point, ...]) -> list[list[float]]:
    return [[round(x, 3), round(y, 3)] for x, y in points]


@dataclass(frozen=True)
class FrameTruth:
    """One frame: the camera, where the board is in the image, and what is on it.

    `grid` holds the (files+1) x (ranks+1) intersections of the playing grid, rank-major
    from a1's outer corner (index = r * (files+1) + f); `corners` the grid's four outer
    corners in the order a1, e1-side, far right, far left (counter-clockwise on the board);
    `edge` the board's physical outline. `squares` maps every square name to its content;
    `occluded` lists the squares a hand or arm covers; `steady` is True when nothing moves
    and no hand is in view."""

    index: int
    camera: CameraTruth
    files: int
    ranks: int
    square_mm: float
    corners: tuple[Point, ...]
    grid: tuple[Point, ...]
    edge: tuple[Point, ...]
    squares: tuple[tuple[str, SquareContent], ...]
    occluded: tuple[str, ...] = ()
    steady: bool = True
    hand: bool = False
    tops: tuple[tuple[str, Point], ...] = ()  # image point of each standing piece's top centre

    def contents(self) -> Contents:
        return dict(self.squares)

    def grid_point(self, file: int, rank: int) -> Point:
        return self.grid[rank * (self.files + 1) + file]

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index, "camera": self.camera.to_json(), "files": self.files,
            "ranks": self.ranks, "square_mm": self.square_mm,
            "corners": _round(self.corners), "grid": _round(self.grid), "edge": _round(self.edge),
            "squares": {name: content.to_json() for name, content in self.squares},
            "occluded": list(self.occluded), "steady": self.steady, "hand": self.hand,
            "tops": {name: [round(x, 3), round(y, 3)] for name, (x, y) in self.tops},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FrameTruth:
        return cls(
            int(data["index"]), CameraTruth.from_json(data["camera"]), int(data["files"]),
            int(data["ranks"]), float(data["square_mm"]), _points(data["corners"]),
            _points(data["grid"]), _points(data["edge"]),
            tuple((k, SquareContent.from_json(v)) for k, v in data["squares"].items()),
            tuple(data.get("occluded", ())), bool(data.get("steady", True)),
            bool(data.get("hand", False)),
            tuple((k, (float(v[0]), float(v[1]))) for k, v in data.get("tops", {}).items()),
        )


@dataclass(frozen=True)
class PlyTruth:
    """A ply in footage: its text, the frames from the hand's entry to its exit (inclusive),
    and what kind of act it is: `move`, or a fault such as `illegal` or `forgotten`."""

    index: int
    text: str
    start_frame: int
    end_frame: int
    kind: str = "move"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "text": self.text, "start_frame": self.start_frame,
                "end_frame": self.end_frame, "kind": self.kind}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PlyTruth:
        return cls(int(data["index"]), str(data["text"]), int(data["start_frame"]),
                   int(data["end_frame"]), str(data.get("kind", "move")))


@dataclass(frozen=True)
class SteadyTruth:
    """A steady moment: frames in which the board holds still with no hand in view."""

    start_frame: int
    end_frame: int
    squares: tuple[tuple[str, SquareContent], ...]
    note: str = ""  # e.g. "start", "after ply 3", "roll pending"

    def contents(self) -> Contents:
        return dict(self.squares)

    def to_json(self) -> dict[str, Any]:
        return {"start_frame": self.start_frame, "end_frame": self.end_frame,
                "squares": {k: v.to_json() for k, v in self.squares}, "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SteadyTruth:
        return cls(int(data["start_frame"]), int(data["end_frame"]),
                   tuple((k, SquareContent.from_json(v)) for k, v in data["squares"].items()),
                   str(data.get("note", "")))


@dataclass(frozen=True)
class FootageTruth:
    """The sidecar of a footage file: per-frame truth, plies, steady moments and faults."""

    game: str
    seed: int
    fps: float
    width: int
    height: int
    style: str
    frames: tuple[FrameTruth, ...]
    plies: tuple[PlyTruth, ...]
    steady: tuple[SteadyTruth, ...]
    faults: dict[str, Any] = field(default_factory=dict)
    record: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game, "seed": self.seed, "fps": self.fps, "width": self.width,
            "height": self.height, "style": self.style, "record": self.record,
            "faults": self.faults, "frame_count": len(self.frames),
            "plies": [p.to_json() for p in self.plies],
            "steady": [s.to_json() for s in self.steady],
            "frames": [f.to_json() for f in self.frames],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FootageTruth:
        return cls(
            str(data["game"]), int(data["seed"]), float(data["fps"]), int(data["width"]),
            int(data["height"]), str(data["style"]),
            tuple(FrameTruth.from_json(f) for f in data["frames"]),
            tuple(PlyTruth.from_json(p) for p in data["plies"]),
            tuple(SteadyTruth.from_json(s) for s in data["steady"]),
            dict(data.get("faults", {})), str(data.get("record", "")),
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), separators=(",", ":")))

    @classmethod
    def load(cls, path: str | Path) -> FootageTruth:
        return cls.from_json(json.loads(Path(path).read_text()))
