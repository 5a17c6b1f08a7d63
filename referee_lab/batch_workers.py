"""Training batches made ahead by worker processes.

Cutting and augmenting crops costs about 0.7 ms a crop on one core: on a GPU the net waits
for its batches, not the other way round. With `workers`, each step's batch is made in a
worker process from a generator seeded by (seed, step), so the batches are the same
whatever the number of workers (but not those of `workers=0`, which draws every batch from
the one generator a recipe has always used, so that earlier recipes still repeat exactly).
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

Batch = tuple[NDArray[np.uint8], NDArray[np.int64]]


class DrawsAtRandom(Protocol):
    """A batch maker: every random draw it makes comes from its `rng`."""

    rng: np.random.Generator


# The job of the worker processes: forked after it is set, so they inherit it (the samples
# are read-only in them: copy-on-write shares them with the parent).
_job: tuple[Callable[[int], Batch], DrawsAtRandom, int] | None = None


def _made(step: int) -> Batch:
    assert _job is not None
    next_batch, maker, seed = _job
    maker.rng = np.random.default_rng((seed, step))
    return next_batch(step)


def batch_stream(next_batch: Callable[[int], Batch], steps: int, *, workers: int = 0,
                 maker: DrawsAtRandom | None = None, seed: int = 0) -> Iterator[Batch]:
    """The batches of steps 1..`steps`: `next_batch(step)` in this process (`workers` 0), or
    in `workers` forked processes, each step's drawn by `maker` from its own generator,
    at most `4 * workers` made ahead."""
    if workers <= 0:
        yield from (next_batch(step) for step in range(1, steps + 1))
        return
    if maker is None:
        raise ValueError("batches made by workers need the maker whose generator to seed")
    global _job
    _job = (next_batch, maker, seed)
    pending: deque[Any] = deque()
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for step in range(1, steps + 1):
            pending.append(pool.apply_async(_made, (step,)))
            if len(pending) >= 4 * workers:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()
