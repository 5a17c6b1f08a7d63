"""One context-manager base for what holds a device or a file: `with x:` closes it."""

from __future__ import annotations

from types import TracebackType
from typing import Any


class Closing:
    """`__enter__` returns the object; `__exit__` calls `close`, which subclasses define."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        raise NotImplementedError
