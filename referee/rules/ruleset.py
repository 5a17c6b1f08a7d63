"""Ruleset files: TOML tables that hold a game's settings (board size, setup, every
**[assumption]** of RULES.md), read with the standard library's `tomllib` and validated field
by field, so that a wrong file ends in one clear `RulesetError` line, never a traceback.

The defaults ship inside the package (`referee/rules/rulesets/*.toml`); a user with the real
box copies one, corrects it and passes it with `--ruleset FILE`."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from referee.errors import RulesetError

T = TypeVar("T")


def read_toml(path: str | Path) -> dict[str, Any]:
    """A ruleset file's tables; a missing or malformed file raises RulesetError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RulesetError(f"{path}: no such ruleset file") from None
    except IsADirectoryError:
        raise RulesetError(f"{path}: is a folder, not a ruleset file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise RulesetError(f"{path}: cannot be read ({error})") from None
    return parse_toml(text, str(path))


def parse_toml(text: str, origin: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RulesetError(f"{origin}: not a valid TOML file ({error})") from None


def packaged_toml(filename: str) -> dict[str, Any]:
    """A ruleset shipped with the package (the defaults of RULES.md)."""
    text = resources.files("referee.rules").joinpath("rulesets", filename).read_text("utf-8")
    return parse_toml(text, f"referee/rules/rulesets/{filename}")


@dataclass(frozen=True)
class Table:
    """One TOML table of a ruleset, read with typed getters that name the file and the key
    in every error. Call `done()` after reading to reject unknown keys (a typo must not be
    silently ignored)."""

    origin: str  # the file name, for messages
    path: str  # e.g. "[phase1]"
    data: dict[str, Any]

    def where(self, key: str) -> str:
        return f"{self.origin}: " + " ".join(part for part in (self.path, key) if part)

    def fail(self, key: str, why: str) -> RulesetError:
        return RulesetError(f"{self.where(key)} {why}")

    def _get(self, key: str, kind: type[T], kind_name: str, default: T | None) -> T:
        if key not in self.data:
            if default is None:
                raise self.fail(key, "is missing")
            return default
        value = self.data[key]
        # bool is an int in Python; a ruleset must not accept `true` for a number
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(key, f"must be {kind_name}, not {value!r}")
        return value

    def integer(self, key: str, default: int | None = None, *, low: int | None = None,
                high: int | None = None) -> int:
        value = self._get(key, int, "a whole number", default)
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"{low}..{high}" if high is not None else f"at least {low}"
            raise self.fail(key, f"must be {bounds}, not {value}")
        return value

    def boolean(self, key: str, default: bool | None = None) -> bool:
        return self._get(key, bool, "true or false", default)

    def string(self, key: str, default: str | None = None) -> str:
        return self._get(key, str, "a text in quotes", default)

    def choice(self, key: str, choices: Sequence[str], default: str | None = None) -> str:
        value = self.string(key, default)
        if value not in choices:
            allowed = ", ".join(repr(c) for c in choices)
            raise self.fail(key, f"must be one of {allowed}, not {value!r}")
        return value

    def strings(self, key: str, default: Sequence[str] | None = None) -> tuple[str, ...]:
        value = self._get(key, list, "a list of texts", None if default is None else list(default))
        if not all(isinstance(item, str) for item in value):
            raise self.fail(key, f"must be a list of texts, not {value!r}")
        return tuple(value)

    def table(self, key: str, *, required: bool = True) -> Table:
        value = self.data.get(key, None if required else {})
        if value is None:
            raise RulesetError(f"{self.origin}: the table [{key}] is missing")
        if not isinstance(value, dict):
            raise RulesetError(f"{self.origin}: [{key}] must be a table, not {value!r}")
        return Table(self.origin, f"[{key}]", value)

    def tables(self, key: str) -> list[Table]:
        """An array of tables (`[[hands]]`)."""
        value = self.data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            raise RulesetError(f"{self.origin}: [[{key}]] must be an array of tables")
        return [Table(self.origin, f"[[{key}]] #{i + 1}", item) for i, item in enumerate(value)]

    def done(self, known: Sequence[str]) -> None:
        unknown = sorted(set(self.data) - set(known))
        if unknown:
            allowed = ", ".join(known)
            raise self.fail(unknown[0], f"is not a known setting (known: {allowed})")


def root_table(data: dict[str, Any], origin: str, game: str) -> Table:
    """The file's top level, which must say which game it is for."""
    root = Table(origin, "", data)
    named = root.string("game")
    if named != game:
        raise root.fail("game", f"is {named!r}, but this is a ruleset for {game!r}")
    return root
