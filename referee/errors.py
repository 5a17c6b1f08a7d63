"""The project's exceptions: one root, specific subclasses that also subclass the builtin
they refine, so callers may catch either."""

from __future__ import annotations


class RefereeError(Exception):
    """Root of every error the referee raises on purpose. Its message is one clear line."""


class UnknownGameError(RefereeError, KeyError):
    """A game name that the registry does not know."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class IllegalMoveError(RefereeError, ValueError):
    """A move that the rules do not allow in the position."""


class NotationError(RefereeError, ValueError):
    """Text that is not a move, square or record line in any known notation."""


class RecordError(RefereeError, ValueError):
    """A game record file that cannot be read: missing, binary, malformed or illegal."""


class RulesetError(RefereeError, ValueError):
    """A ruleset file or option that is invalid."""


class ModelError(RefereeError, ValueError):
    """A model file or its card that is missing, corrupt, or does not match the other."""


class ImageError(RefereeError, ValueError):
    """An image file that is missing or cannot be decoded."""
