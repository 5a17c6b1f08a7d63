"""What the referee tells the players and the log: one frozen value per happening."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Any


class EventKind(enum.Enum):
    SET_UP = "set up the board"
    STARTED = "game started"
    ACCEPTED = "move accepted"
    ILLEGAL = "illegal move"
    RESTORED = "position restored"
    UNREADABLE = "unreadable"
    PROMOTE = "promote the piece"
    ROLL_PENDING = "roll pending"
    INCOMPLETE = "move incomplete"
    TAKE_BACK = "move taken back"
    GAME_OVER = "game over"
    NO_BOARD = "no board in view"


@dataclass(frozen=True)
class Event:
    kind: EventKind
    frame_index: int
    time_s: float
    ply: int  # plies recorded after this event
    move: str | None = None  # the move in the designer's notation, where one is involved
    detail: str = ""  # a human sentence: why, which squares, the result
    confidence: float = 0.0  # log-likelihood lead of the accepted explanation

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["kind"] = self.kind.name
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        return cls(**{**data, "kind": EventKind[data["kind"]]})

    def line(self) -> str:
        """One line for a terminal."""
        parts = [f"{self.time_s:7.1f}s", self.kind.value]
        if self.move:
            parts.append(self.move)
        if self.detail:
            parts.append(f"({self.detail})")
        return " ".join(parts)
