"""Pure game logic: no numpy, no OpenCV. `find_game(name)` is the registry; `load_ruleset(path)`
builds a game from a user's ruleset file (Zensū, Renaissance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.errors import RulesetError, UnknownGameError
from referee.rules.core import Color, Game, Geometry, Match, Outcome, Termination
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_ruleset import renaissance_from_toml
from referee.rules.rinne import GAMES as _RINNE_FAMILY
from referee.rules.ruleset import read_toml
from referee.rules.zensu import default_zensu, zensu_from_toml

__all__ = [
    "Color", "Game", "Geometry", "Match", "Outcome", "Termination", "find_game", "game_names",
    "game_with_ruleset", "load_ruleset",
]

_REGISTRY: dict[str, Game[Any, Any]] = {game.name: game for game in _RINNE_FAMILY}
_REGISTRY["zensu"] = default_zensu()
_REGISTRY["renaissance"] = RenaissanceRules()


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


def load_ruleset(path: str | Path) -> Game[Any, Any]:
    """The game a ruleset file describes (its `game = "…"` line says which); every field is
    validated and a bad one raises RulesetError naming the file and the key."""
    data = read_toml(path)
    game = data.get("game")
    if game == "zensu":
        return zensu_from_toml(data, str(path))
    if game == "renaissance":
        return RenaissanceRules(renaissance_from_toml(data, str(path)))
    raise RulesetError(f"{path}: game must be \"zensu\" or \"renaissance\", not {game!r}")


def game_with_ruleset(name: str, ruleset: str | Path | None) -> Game[Any, Any]:
    """The game `name`, or the one a ruleset file describes (which must be that game)."""
    game = find_game(name)
    if ruleset is None:
        return game
    custom = load_ruleset(ruleset)
    if custom.name != game.name:
        raise RulesetError(f"{ruleset} is a ruleset for {custom.name}, not {game.name}")
    return custom
