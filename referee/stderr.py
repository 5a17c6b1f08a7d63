"""Keeping C libraries' own messages off the process's stderr, where the referee says what
went wrong in one line of its own. Here, below every layer, so that both the image reader
(vision) and the frame sources (hardware) may use it."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence what C libraries print on the process's stderr while inside: libpng's
    "libpng error: IDAT: CRC error" and OpenCV's own "[ERROR:0] ..." lines for a broken
    image, which no log level of OpenCV's reaches. The caller's error says it in one line."""
    if sys.stderr is not None:
        sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr (a closed descriptor): nothing to silence
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
