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


class CalibrationError(RefereeError, ValueError):
    """A calibration that cannot be made or read: no photos, no pattern in them, too few
    views, or a calibration file with a missing, unknown or wrong-typed field."""


class SourceError(RefereeError, OSError):
    """A frame source that cannot be opened or read: a missing camera, an unreadable video."""

    def __str__(self) -> str:  # OSError would prefix an errno
        return str(self.args[0]) if self.args else ""


class CameraLost(SourceError):
    """A camera that delivered frames and then stopped: unplugged, crashed or timed out."""


class PinMapError(RefereeError, ValueError):
    """A pin map (hardware/pins.toml) that is missing, malformed, or names a pin badly."""


class SignalsError(RefereeError, RuntimeError):
    """The LEDs, buzzer or button cannot be driven: a pin in use, no GPIO access."""


class NoBoardError(RefereeError, LookupError):
    """No board grid of the wanted size in the frame: blank, black, noise, another board, or
    too much of it hidden. Never a guess."""


class VisionSettingsError(RefereeError, ValueError):
    """A vision settings file (referee/data/vision.toml) with an unknown key or a bad value."""


class RenderError(RefereeError, ValueError):
    """A render request that cannot be met: unknown style or game, bad options, bad content."""


class OutputError(RefereeError, OSError):
    """An output file that cannot be written."""


class ModelError(RefereeError, ValueError):
    """A model file or its card that is missing, corrupt, or does not match the other."""


class ImageError(RefereeError, ValueError):
    """An image file that is missing or cannot be decoded."""


class FootageError(RefereeError, ValueError):
    """Footage that cannot be refereed: no board in it, or never the start position."""

