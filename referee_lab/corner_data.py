"""Training frames for the board-corner network (`corner_net`): rendered whole frames, shrunk to
the network's input, with the grid's outer corners as truth.

Frames come from the renderer (`referee_lab.synth`) as the finder's benchmark draws them (no lens
distortion, as after undistorting), from seeds of their own (`FIRST_SEED` on) so that no
benchmark frame is trained on. Which game each frame shows and whether a hand lies over the
board is each committed network's recipe (`RECIPES`): `corners`, FlipFlop 3x3 only with a
hand where `seed % 3 == 0`; `corners-big`, every other frame 3x3 and the rest the
five bigger Rinne-family boards in turn, a hand over half, drawn apart from the game (as at
commit 1cbf3a4). Each shard is one `.npz` of `images` (N, H, W, 3 uint8, BGR), `corners`
(N, 4, 2 float32, in the shrunk image's pixels), `games` and `hands`, so a long render can
stop and go on; a shard whose frames another recipe drew is refused, not mixed in.

A corner refiner's recipe (`corners-refine`) has a `canvas`: each rendered frame gives `views`
canvases (`corner_net.Canvas.view`) of the board guessed at its true corners moved at random
(`guessed_quads`: each corner off by a normal spread of 0.05, 0.12 or 0.25 square; one guess in
five a whole square off along a side, one in ten scaled 0.8-1.2), the truth being the true
corners in the canvas. A grid reader's recipe (`corners-grid`) has the same views with `points`
"grid": its truth is every intersection of the board's lines (`grid_points`), which the trainer
takes from the corners, so it reads the refiner's shards.
"""

from __future__ import annotations

import enum
import multiprocessing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.vision.corner_net import Canvas, shrink
from referee.vision.pose import apply_homography, board_corners, board_lattice, grid_through

FIRST_SEED = 5_000_000  # far from the finder's development and held-out sets (20000-260000)
SHARD = 200

class HandRule(enum.Enum):
    """Which training frames get a hand over the board. Each value is the rule as the cards
    of the networks trained that way record it."""

    THIRD = "seed % 3 == 0"  # `corners`
    HALF = "np.random.default_rng([seed, 7]).random() < 0.5"  # `corners-big`
    SIXTY = "np.random.default_rng([seed, 99]).random() < 0.6"  # `corners-refine`, `corners-grid`

    def applies(self, seed: int) -> bool:
        """Whether the training frame of `seed` has a hand over the board."""
        if self is HandRule.THIRD:
            return seed % 3 == 0
        if self is HandRule.HALF:  # drawn apart from the game, which follows the seed in turn
            return bool(np.random.default_rng([seed, 7]).random() < 0.5)
        # the first draw of the generator that then moves the guesses
        return bool(_view_generator(seed).random() < 0.6)


@dataclass(frozen=True)
class CornerRecipe:
    """How one committed corner network is rebuilt: its frames (frame i is of seed
    `FIRST_SEED + i`, game `games[i % len(games)]`, a hand over the board by `hand`), how
    long it trains, the files it writes and what its card says of it."""

    model: str  # <model>.onnx and <model>.json; also its frames' default cache folder
    games: tuple[str, ...]
    hand: HandRule
    frames: int
    steps: int
    boards: tuple[str, ...] | None = None  # the card's `boards` (CornerNet.trained_on); None: no list
    use: str | None = None  # the card's `use`
    first_seed: int = FIRST_SEED
    canvas: Canvas | None = None  # a refiner's: its views, `views` a frame
    views: int = 1
    points: str = "corners"  # what the heat marks: the grid's four outer "corners", or every
    # intersection of its lines, "grid" (a grid reader's)

    @property
    def command(self) -> str:
        """The command that rebuilds it (the card's `rebuild`)."""
        return "referee-lab train-corners" + ("" if self.model == "corners" else f" --model {self.model}")


RECIPES: Mapping[str, CornerRecipe] = MappingProxyType({
    "corners": CornerRecipe(model="corners", games=("flipflop-3x3",), hand=HandRule.THIRD, frames=4000,
                            steps=5000),
    "corners-big": CornerRecipe(
        model="corners-big",
        games=("flipflop-3x3", "rinne", "flipflop-3x3", "rinne-5x5", "flipflop-3x3", "tensei",
               "flipflop-3x3", "flipflop-5x5", "flipflop-3x3", "tensei-5x5"),
        hand=HandRule.HALF, frames=8000, steps=7000, boards=("5x5", "5x6"),
        use="find_board on 5x5 and 5x6 boards (corner_net_big); 3x3 boards use corners.onnx"),
    "corners-refine": CornerRecipe(
        model="corners-refine", games=("flipflop-3x3",), hand=HandRule.SIXTY, frames=6800, steps=8000,
        boards=("3x3",), first_seed=6_000_000, canvas=Canvas(3, 3, square_px=32, margin=1.0), views=3,
        use="find_board on 3x3 boards (corner_refiner): the board's corners from the corner "
            "network's guess, read again in a view rectified by it"),
    # The refiner's views (its frames, then 3,400 more of the same draw), every intersection marked
    "corners-grid": CornerRecipe(
        model="corners-grid", games=("flipflop-3x3",), hand=HandRule.SIXTY, frames=10200, steps=8000,
        boards=("3x3",), first_seed=6_000_000, canvas=Canvas(3, 3, square_px=32, margin=1.0), views=3,
        points="grid",
        use="find_board on 3x3 boards (corner_grid): the 16 intersections of the board's lines "
            "in a view rectified by a grid found, to check that grid and fit one to them"),
})


def grid_points(corners: NDArray[np.floating], files: int, ranks: int) -> NDArray[np.float32]:
    """Every intersection of a `files` x `ranks` board's lines, rank-major from the first
    corner, for corners (0, 0), (files, 0), (files, ranks), (0, ranks) in turn (N, 4, 2 ->
    N, (files + 1) * (ranks + 1), 2): the homography through the corners, as a flat board
    seen without lens distortion maps them."""
    lattice = board_lattice(files, ranks)
    out = [apply_homography(grid_through(quad, files, ranks), lattice) for quad in corners]
    return np.asarray(out, np.float32).reshape(len(out), len(lattice), 2)


@dataclass(frozen=True)
class CornerFrames:
    images: NDArray[np.uint8]  # (N, H, W, 3) BGR
    corners: NDArray[np.float32]  # (N, 4, 2) in the images' pixels
    games: tuple[str, ...]


def has_hand(seed: int, rule: HandRule) -> bool:
    """Whether the training frame of `seed` has a hand over the board, by `rule`."""
    return rule.applies(seed)


@dataclass(frozen=True)
class PlannedFrame:
    seed: int
    game: str
    hand: bool


def frame_plan(games: Sequence[str], hand: HandRule, start: int, stop: int,
               first_seed: int = FIRST_SEED) -> list[PlannedFrame]:
    """Frames `start` to `stop - 1` of a render: seed, game and hand of each."""
    return [PlannedFrame(first_seed + i, games[i % len(games)], has_hand(first_seed + i, hand))
            for i in range(start, stop)]


def _view_generator(seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, 99])


def guessed_quads(rng: np.random.Generator, truth: NDArray[np.floating], canvas: Canvas,
                  count: int) -> list[NDArray[np.float64]]:
    """`count` guesses of a board whose corners lie at `truth` (frame pixels, in turn round
    the board): each true corner moved in the board's plane (a normal spread of 0.05, 0.12
    or 0.25 square), one guess in five a whole square off along a side, one in ten scaled
    0.8-1.2 about its middle; each begun at a random corner (the canvas's turn)."""
    corners = board_corners(canvas.files, canvas.ranks)
    to_frame = cv2.getPerspectiveTransform(corners.astype(np.float32),
                                           np.asarray(truth, np.float32)).astype(np.float64)
    out = []
    for _ in range(count):
        spread = rng.choice([0.05, 0.12, 0.25])
        moved = corners + rng.normal(0, spread, corners.shape)
        draw = rng.random()
        if draw < 0.2:
            axis = int(rng.integers(2))
            moved[:, axis] += rng.choice([-1.0, 1.0])
        elif draw < 0.3:
            middle = moved.mean(axis=0)
            moved = middle + (moved - middle) * rng.uniform(0.8, 1.2)
        quad = cv2.perspectiveTransform(moved[None], to_frame)[0]
        out.append(np.roll(quad, int(rng.integers(4)), axis=0))
    return out


def _render_views(args: tuple[PlannedFrame, Canvas, int]
                  ) -> list[tuple[NDArray[np.uint8], NDArray[np.float32]]]:
    """A refiner's training views of one rendered frame, each with the true corners in it."""
    from referee_lab.stills import render_still

    frame, canvas, views = args
    rng = _view_generator(frame.seed)
    rng.random()  # the draw HandRule.SIXTY took for the plan's hand; the guesses follow from here
    rendered = render_still(frame.seed, frame.game, hand=frame.hand, distortion=0.0)
    hull = cv2.convexHull(rendered.corners.astype(np.float32), clockwise=False).reshape(-1, 2)
    if len(hull) != 4:  # a board seen edge-on: no guesses to read
        return []
    truth = hull.astype(np.float64)
    out = []
    for quad in guessed_quads(rng, truth, canvas, views):
        image, to_canvas = canvas.view(rendered.frame, quad)
        out.append((image, cv2.perspectiveTransform(truth[None], to_canvas)[0].astype(np.float32)))
    return out


def _render_one(args: tuple[int, str, bool, int, int]) -> tuple[NDArray[np.uint8], NDArray[np.float32], str]:
    from referee_lab.stills import render_still

    seed, game, hand, width, height = args
    r = render_still(seed, game, hand=hand, distortion=0.0)
    h, w = r.frame.shape[:2]
    corners = r.corners * np.array([width / w, height / h])
    return shrink(r.frame, width, height), corners.astype(np.float32), game


def _init_worker() -> None:
    cv2.setNumThreads(1)


@contextmanager
def _rendering(jobs: int) -> Iterator[Callable[[Callable[[Any], Any], list[Any]], list[Any]]]:
    """A map over render tasks: `jobs` spawned processes (not forked: a parent that has run
    onnxruntime or torch holds threads whose locks a forked child inherits held; a test run
    hung so), or this process alone."""
    if jobs <= 1:
        yield lambda work, tasks: [work(task) for task in tasks]
        return
    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_init_worker)
    try:
        yield lambda work, tasks: pool.map(work, tasks, chunksize=4)
    finally:
        pool.close()
        pool.join()


def render_shards(folder: Path, count: int, games: Sequence[str], *, width: int, height: int,
                  hand: HandRule = HandRule.THIRD, jobs: int = 2, shard: int = SHARD,
                  progress: Callable[[str], None] = print) -> None:
    """Render `count` frames (games in turn, a hand by the rule `hand`) into shards of `shard`
    frames in `folder`; shards already there are kept if they hold the frames planned for
    them (ValueError if not: frames of another recipe or shard size)."""
    folder.mkdir(parents=True, exist_ok=True)
    with _rendering(jobs) as render:
        for start in range(0, count, shard):
            path = folder / f"{start:07d}.npz"
            plan = frame_plan(games, hand, start, min(start + shard, count))
            if path.exists():
                _check_shard(path, plan)
                continue
            rows = render(_render_one, [(f.seed, f.game, f.hand, width, height) for f in plan])
            _save_shard(path, images=np.stack([r[0] for r in rows]), corners=np.stack([r[1] for r in rows]),
                        games=np.array([r[2] for r in rows]), hands=np.array([f.hand for f in plan]))
            progress(f"{path.name}: frames {start}-{start + len(rows) - 1}")


def _save_shard(path: Path, **arrays: Any) -> None:
    partial = path.with_suffix(".part.npz")
    np.savez(partial, **arrays)
    partial.rename(path)  # a stopped render leaves no half shard behind


def render_view_shards(folder: Path, recipe: CornerRecipe, count: int, *, jobs: int = 2,
                       shard: int = SHARD, progress: Callable[[str], None] = print) -> None:
    """A refiner's training views (`recipe.canvas`): `count` frames rendered, `recipe.views`
    views of each, in shards of `shard` frames' views in `folder` (kept if they hold the
    frames planned for them, as `render_shards` keeps its own; `seeds` names each view's)."""
    assert recipe.canvas is not None
    folder.mkdir(parents=True, exist_ok=True)
    with _rendering(jobs) as render:
        for start in range(0, count, shard):
            path = folder / f"{start:07d}.npz"
            plan = frame_plan(recipe.games, recipe.hand, start, min(start + shard, count),
                              recipe.first_seed)
            if path.exists():
                _check_view_shard(path, plan)
                continue
            rows = render(_render_views, [(f, recipe.canvas, recipe.views) for f in plan])
            views = [(f, image, corners)
                     for f, row in zip(plan, rows, strict=True) for image, corners in row]
            frames = [v[0] for v in views]
            _save_shard(path, images=np.stack([v[1] for v in views]), corners=np.stack([v[2] for v in views]),
                        games=np.array([f.game for f in frames]), hands=np.array([f.hand for f in frames]),
                        seeds=np.array([f.seed for f in frames]))
            progress(f"{path.name}: frames {start}-{start + len(plan) - 1}, {len(views)} views")


def _check_view_shard(path: Path, plan: Sequence[PlannedFrame]) -> None:
    """Refuse a view shard already rendered whose games or seeds are not among those planned
    for its frames (shards rendered before views kept their seeds, the first `corners-refine`
    shards, are checked by their games alone)."""
    with np.load(path) as shard:
        seeds = {int(s) for s in shard["seeds"]} if "seeds" in shard.files else None
        games = {str(g) for g in shard["games"]}
    if games - {f.game for f in plan} or (seeds is not None and seeds - {f.seed for f in plan}):
        raise ValueError(f"{path}: rendered by another recipe (games {', '.join(sorted(games))}); "
                         "render into another folder")


def _check_shard(path: Path, plan: Sequence[PlannedFrame]) -> None:
    """Refuse a shard already rendered whose games (and hands, where it keeps them: shards
    rendered before the recipes were named do not) are not those planned for its frames."""
    with np.load(path) as shard:
        games = [str(g) for g in shard["games"]]
        hands = [bool(h) for h in shard["hands"]] if "hands" in shard.files else None
    n = min(len(games), len(plan))  # a shorter or longer shard (another --frames) is kept as before
    if games[:n] != [f.game for f in plan[:n]] or (
            hands is not None and hands[:n] != [f.hand for f in plan[:n]]):
        raise ValueError(f"{path}: rendered by another recipe (games {', '.join(sorted(set(games)))}); "
                         "render into another folder")


def load_shards(folder: Path) -> CornerFrames:
    shards = sorted(p for p in folder.glob("*.npz") if not p.name.endswith(".part.npz"))
    if not shards:
        raise FileNotFoundError(f"{folder}: no rendered shards")
    parts = [np.load(p) for p in shards]
    return CornerFrames(np.concatenate([p["images"] for p in parts]),
                        np.concatenate([p["corners"] for p in parts]).astype(np.float32),
                        tuple(str(g) for p in parts for g in p["games"]))

