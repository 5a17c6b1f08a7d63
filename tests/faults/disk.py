"""A disk that fills up or turns read-only under one folder, in-process: `os.open` (creating
a file), `os.write`, `os.fsync`, `os.ftruncate` and `os.replace` on paths under it raise
OSError as Linux does (ENOSPC, EROFS) while `error` is set (a full disk still lets a file
shrink); everything else is untouched.
A full disk first takes part of a write, as a real one does at its last free block."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest


class FailingDisk:
    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder = str(folder.resolve())
        self.error: int | None = None
        self.refused = 0  # calls that failed
        self._short_write_done = False
        real = {name: getattr(os, name) for name in ("open", "write", "fsync", "ftruncate",
                                                      "replace")}
        self._real = real

        def failing(name: str, check: Any) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                if self.error is not None and check(*args, **kwargs):
                    if name == "write" and self.error == errno.ENOSPC \
                            and not self._short_write_done and len(args[1]) > 1:
                        self._short_write_done = True  # the last free block takes some
                        return real["write"](args[0], args[1][:len(args[1]) // 2])
                    self.refused += 1
                    path = args[0] if name == "open" else args[1] if name == "replace" else None
                    raise OSError(self.error, os.strerror(self.error), *([path] if path else []))
                return real[name](*args, **kwargs)
            return call

        monkeypatch.setattr(os, "open", failing("open", lambda path, flags, *_, **__: bool(
            flags & os.O_CREAT) and self._ours(str(path))))
        monkeypatch.setattr(os, "write", failing("write", lambda fd, data: self._fd_ours(fd)))
        monkeypatch.setattr(os, "fsync", failing("fsync", self._fd_ours))
        # (Shrinking a file needs no room: only a read-only file system refuses it.)
        monkeypatch.setattr(os, "ftruncate", failing("ftruncate", lambda fd, size: self._fd_ours(
            fd) and self.error == errno.EROFS))
        monkeypatch.setattr(os, "replace", failing("replace", lambda a, b, **_: self._ours(str(b))))

    def fail(self, error: int | None) -> None:
        """ENOSPC, EROFS, or None: the disk takes writes again."""
        self.error = error
        self._short_write_done = False

    def _ours(self, path: str) -> bool:
        return os.path.abspath(path).startswith(self.folder)

    def _fd_ours(self, fd: int) -> bool:
        try:
            return self._ours(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            return False
