"""Training frames for the board-corner network (`corner_net`): rendered whole frames, shrunk to
the network's input, with the grid's outer corners as truth.

Frames come from the renderer (`referee.synth`) as the finder's benchmark draws them (no lens
distortion, as after undistorting; a hand over the board in a third of them), from seeds of
their own (`FIRST_SEED` on) so that no benchmark frame is trained on. Each shard is one
`.npz` of `images` (N, H, W, 3 uint8, BGR) and `corners` (N, 4, 2 float32, in the shrunk
image's pixels), so a long render can stop and go on.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.corner_net import shrink

FIRST_SEED = 5_000_000  # far from the finder's development and held-out sets (20000-260000)
SHARD = 200


@dataclass(frozen=True)
class CornerFrames:
    images: NDArray[np.uint8]  # (N, H, W, 3) BGR
    corners: NDArray[np.float32]  # (N, 4, 2) in the images' pixels
    games: tuple[str, ...]


def _render_one(args: tuple[int, str, int, int]) -> tuple[NDArray[np.uint8], NDArray[np.float32], str]:
    from referee.stills import render_still

    seed, game, width, height = args
    r = render_still(seed, game, hand=seed % 3 == 0, distortion=0.0)
    h, w = r.frame.shape[:2]
    corners = r.corners * np.array([width / w, height / h])
    return shrink(r.frame, width, height), corners.astype(np.float32), game


def _init_worker() -> None:
    cv2.setNumThreads(1)


def render_shards(folder: Path, count: int, games: Sequence[str], *, width: int, height: int,
                  jobs: int = 2, shard: int = SHARD, progress: Callable[[str], None] = print) -> None:
    """Render `count` frames (games in turn) into shards of `shard` frames in `folder`; shards
    already there are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    # spawned, not forked: a parent that has run onnxruntime or torch holds threads whose
    # locks a forked child inherits held (a test run hung so)
    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_init_worker) if jobs > 1 else None
    try:
        for start in range(0, count, shard):
            path = folder / f"{start:07d}.npz"
            if path.exists():
                continue
            tasks = [(FIRST_SEED + i, games[i % len(games)], width, height)
                     for i in range(start, min(start + shard, count))]
            rows = pool.map(_render_one, tasks, chunksize=4) if pool else [_render_one(t) for t in tasks]
            partial = path.with_suffix(".part.npz")
            np.savez(partial, images=np.stack([r[0] for r in rows]), corners=np.stack([r[1] for r in rows]),
                     games=np.array([r[2] for r in rows]))
            partial.rename(path)  # a stopped render leaves no half shard behind
            progress(f"{path.name}: frames {start}-{start + len(rows) - 1}")
    finally:
        if pool is not None:
            pool.close()
            pool.join()


def load_shards(folder: Path) -> CornerFrames:
    shards = sorted(p for p in folder.glob("*.npz") if not p.name.endswith(".part.npz"))
    if not shards:
        raise FileNotFoundError(f"{folder}: no rendered shards")
    parts = [np.load(p) for p in shards]
    return CornerFrames(np.concatenate([p["images"] for p in parts]),
                        np.concatenate([p["corners"] for p in parts]).astype(np.float32),
                        tuple(str(g) for p in parts for g in p["games"]))

