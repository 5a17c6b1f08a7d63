"""Pure game logic: no numpy, no OpenCV. `find_game(name)` is the registry."""

from __future__ import annotations

from typing import Any

from referee.errors import UnknownGameError
from referee.rules.core import Color, Game, Geometry, Match, Outcome, Termination
from referee.rules.rinne import GAMES as _RINNE_FAMILY

__all__ = [
    "Color", "Game", "Geometry", "Match", "Outcome", "Termination", "find_game", "game_names",
]

_REGISTRY: dict[str, Game[Any, Any]] = {game.name: game for game in _RINNE_FAMILY}


def game_names() -> list[str]:
    return sorted(_REGISTRY)


def find_game(name: str) -> Game[Any, Any]:
    """The game registered as `name` (case and spaces ignored)."""
    key = name.strip().lower().replace(" ", "-").replace("_", "-")
    try:
        return _REGISTRY[key]
    except KeyError:
        raise UnknownGameError(
            f"unknown game {name!r}; known games: {', '.join(game_names())}"
        ) from None
