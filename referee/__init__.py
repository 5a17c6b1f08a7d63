"""referee: a camera over a real board game that reads the board, knows the rules and keeps
the game record."""

from __future__ import annotations

__version__ = "0.1.0"
