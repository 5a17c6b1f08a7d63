"""Game record files: a header block (`Game:`, `Variant:`, `White:`, `Black:`, `Date:`,
`Result:` and any other `Key: value` lines), a blank line, then one ply a line in the
game's notation, numbered as the designer does (`13. Knight e5 x c6 = Bishop`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.errors import RecordError, RefereeError, UnknownGameError
from referee.rules import find_game, game_names
from referee.rules.core import Game, Match, move_number

HEADER_ORDER = ("Game", "Variant", "White", "Black", "Date", "Result")
_HEADER = re.compile(r"^([A-Za-z][A-Za-z ]*):\s*(.*)$")
_NUMBER = re.compile(r"^\s*(\d+)\s*\.\s*(.*)$")
UNFINISHED = "unfinished"


@dataclass(frozen=True)
class RecordLine:
    """One ply as written: its line number in the file and its text without the number."""

    line_number: int
    number: int | None
    text: str


@dataclass(frozen=True)
class Record:
    """A parsed record file: headers and ply lines, not yet replayed."""

    headers: dict[str, str] = field(default_factory=dict)
    plies: tuple[RecordLine, ...] = ()

    def game(self) -> Game[Any, Any]:
        return game_from_headers(self.headers)


def game_from_headers(headers: dict[str, str]) -> Game[Any, Any]:
    """The game a record names: `Game: rinne-5x5`, or a title plus a variant as the designer
    writes them (`Game: Rinne`, `Variant: 5x5`). No `Variant:` means the standard game."""
    title = headers.get("Game", "").strip()
    if not title:
        raise RecordError("the record has no 'Game:' header")
    variant = headers.get("Variant", "").strip().lower()
    titled = [find_game(name) for name in game_names()
              if find_game(name).title.lower() == title.lower()]
    if not titled:
        try:
            return find_game(title)
        except UnknownGameError:
            raise RecordError(
                f"unknown game {title!r}; known games: {', '.join(game_names())}"
            ) from None
    candidates = [
        game for game in titled
        if (variant and game.variant.split()[0].lower() in variant)
        or (not variant and "standard" in game.variant)
    ]
    if len(candidates) != 1:
        raise RecordError(
            f"unknown variant {headers.get('Variant', '')!r} of {title}; known: "
            + ", ".join(repr(game.variant) for game in titled)
        )
    return candidates[0]


def parse_record(text: str) -> Record:
    """Split a record into headers and ply lines; raises RecordError with the line number."""
    headers: dict[str, str] = {}
    plies: list[RecordLine] = []
    for line_number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        header = _HEADER.match(line)
        if header and not plies:
            headers[header.group(1).strip()] = header.group(2).strip()
            continue
        number = _NUMBER.match(line)
        if number:
            plies.append(RecordLine(line_number, int(number.group(1)), number.group(2).strip()))
        elif header:
            raise RecordError(f"line {line_number}: header {line!r} after the first ply")
        else:
            plies.append(RecordLine(line_number, None, line))
    return Record(headers, tuple(plies))


def read_record(path: str | Path) -> Record:
    """Read a record file; a missing, unreadable or binary file raises RecordError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise RecordError(f"{path}: is a folder, not a record file") from None
    except OSError as error:
        raise RecordError(f"{path}: cannot be read ({error.strerror})") from None
    if b"\0" in data:
        raise RecordError(f"{path}: a binary file, not a game record")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not UTF-8 text, not a game record") from None
    return parse_record(text)


@dataclass(frozen=True)
class ReplayedPly:
    line_number: int
    number: int
    text: str  # in the designer's notation


def replay(record: Record, game: Game[Any, Any] | None = None
           ) -> tuple[Match[Any, Any], list[ReplayedPly]]:
    """Replay every ply, validating each; raises RecordError `line N: why` at the first bad
    one. A record that goes on after the game has ended is bad too. `game` (from a user's
    ruleset file) replaces the registry's game of the same name."""
    named = record.game()
    if game is None:
        game = named
    elif game.name != named.name:
        raise RecordError(f"the record is a game of {named.name}, but the ruleset is for "
                          f"{game.name}")
    match: Match[Any, Any] = Match(game)
    replayed = []
    for index, ply in enumerate(record.plies):
        expected = move_number(index)
        if ply.number is not None and ply.number != expected:
            raise RecordError(
                f"line {ply.line_number}: move number {ply.number}, expected {expected}"
            )
        before = match.position
        try:
            move = match.push_text(ply.text)
        except RefereeError as error:
            raise RecordError(f"line {ply.line_number}: {error}") from None
        replayed.append(ReplayedPly(ply.line_number, expected, game.move_text(before, move)))
    return match, replayed


def result_text(match: Match[Any, Any]) -> str:
    if match.outcome is None:
        return UNFINISHED
    return match.outcome.result(match.game.player_names)


def check_result(record: Record, match: Match[Any, Any]) -> None:
    """A `Result:` header must agree with the replayed game (a truncated record claiming a
    win is caught here)."""
    claimed = record.headers.get("Result")
    if claimed is None:
        return
    actual = result_text(match)
    if claimed.strip().lower() != actual.lower():
        raise RecordError(f"the record says 'Result: {claimed}', but the game is {actual}")


def format_record(match: Match[Any, Any], headers: dict[str, str] | None = None,
                  *, compact: bool = False) -> str:
    """The record file text of `match`; `Game`, `Variant` and `Result` are filled in."""
    game = match.game
    merged = {"Game": game.title, "Variant": game.variant, **(headers or {})}
    merged["Result"] = result_text(match)
    ordered = [k for k in HEADER_ORDER if k in merged] + [k for k in merged if k not in HEADER_ORDER]
    lines = [f"{key}: {merged[key]}" for key in ordered]
    lines.append("")
    lines.extend(_numbered(match.ply_texts(compact=compact)))
    return "\n".join(lines) + "\n"


def _numbered(texts: Iterator[str] | Sequence[str]) -> Iterator[str]:
    for index, text in enumerate(texts):
        yield f"{move_number(index)}. {text}"
