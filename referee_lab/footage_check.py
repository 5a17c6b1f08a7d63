"""Checking a replay against the renderer's ground truth: every ply read right, the result
right, and no move recorded while a hand was in view. Used by the footage tests and the
whole-game benchmark."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.app.events import Event, EventKind


@dataclass(frozen=True)
class Expected:
    """What a footage file shows, in a few lines of JSON (the renderer's sidecar, cut down)."""

    game: str
    plies: tuple[str, ...]  # accepted plies in order, numbered as in a record
    hand_frames: tuple[tuple[int, int], ...]  # frame ranges with a hand over the board
    events: tuple[str, ...] = ()  # event kinds the footage must raise (faults)
    corners: tuple[tuple[tuple[float, float], ...], ...] = ()  # the grid's corners, per frame
    pieces: str = "dice"
    result: str = ""  # how the game ended (`White wins`), empty if it did not

    @classmethod
    def from_sidecar(cls, path: str | Path, events: tuple[str, ...] = ()) -> Expected:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        # A ply's first trip: a move, or one made without its promotion (turned after).
        plies = tuple(p["text"] for p in data["plies"]
                      if p.get("kind", "move") in ("move", "forgotten"))
        corners = tuple(tuple((round(x, 1), round(y, 1)) for x, y in f["corners"])
                        for f in data["frames"])
        covering = [f["index"] for f in data["frames"] if f["hand"] and f["occluded"]]
        return cls(data["game"], plies, _ranges(covering), events, corners)

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "pieces": self.pieces, "result": self.result,
                "plies": list(self.plies),
                "hand_frames": [list(r) for r in self.hand_frames], "events": list(self.events),
                "corners": [[list(c) for c in frame] for frame in self.corners]}

    @classmethod
    def load(cls, path: str | Path) -> Expected:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(data["game"], tuple(data["plies"]),
                   tuple((int(a), int(b)) for a, b in data["hand_frames"]),
                   tuple(data.get("events", ())),
                   tuple(tuple((float(x), float(y)) for x, y in frame)
                         for frame in data.get("corners", ())),
                   data.get("pieces", "dice"), data.get("result", ""))

    def hand_in_view(self, frame: int) -> bool:
        return any(a <= frame <= b for a, b in self.hand_frames)


def _ranges(frames: list[int]) -> tuple[tuple[int, int], ...]:
    ranges: list[tuple[int, int]] = []
    for frame in sorted(frames):
        if ranges and frame == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], frame)
        else:
            ranges.append((frame, frame))
    return tuple(ranges)


def accepted_plies(events: tuple[Event, ...] | list[Event]) -> list[str]:
    """The plies as the log has them at the end (take-backs remove theirs), numbered."""
    plies: list[str] = []
    for event in events:
        if event.kind is EventKind.ACCEPTED and event.move is not None:
            plies.append(f"{len(plies) // 2 + 1}. {event.move}")
        elif event.kind is EventKind.TAKE_BACK and plies:
            plies.pop()
    return plies


def moves_during_hands(events: tuple[Event, ...] | list[Event], expected: Expected) -> list[Event]:
    return [e for e in events if e.kind is EventKind.ACCEPTED and expected.hand_in_view(e.frame_index)]
