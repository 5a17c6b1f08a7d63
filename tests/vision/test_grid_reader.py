"""The grid reader (`referee/data/models/corners-grid.onnx`, `vision/grid_reader.py`): its training truth
(every intersection of a 3x3 board), the committed model seeing and fitting rendered boards
(one under a hand; bigger boards a 3x3 window at a time), how the finder chooses among its
grids by it, and the grid fitted again through the marks that stay put under a hand."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.errors import ModelError, NoBoardError
from referee.vision.classifier import default_models_dir, sha256_of
from referee.vision.corner_guesses import grid_reader, settle_on_steady_marks, with_grid_reader
from referee.vision.corner_net import STRIDE, CornerNet, peak_near
from referee.vision.grid_reader import GridReader, windows
from referee.vision.lattice import canonical
from referee.vision.pose import (
    BoardPose,
    apply_homography,
    board_corners,
    board_lattice,
    corner_error,
    grid_through,
)
from referee.vision.settings import LocaliseSettings
from referee_lab.corner_data import RECIPES, grid_points, load_shards, render_view_shards
from referee_lab.stills import Rendered, render_still

SETTINGS = LocaliseSettings()


def _reader() -> GridReader:
    return grid_reader(SETTINGS)


@lru_cache(maxsize=8)
def _still(seed: int, hand: bool, game: str = "flipflop-3x3") -> Rendered:
    """A rendered start position (a seed no recipe draws), rendered once for every test of it."""
    return render_still(seed, game, hand=hand, distortion=0.0)


def _truth(seed: int, hand: bool, game: str = "flipflop-3x3") -> tuple[np.ndarray, np.ndarray, float]:
    """A rendered start position, its true corners in turn round the board, and its diagonal."""
    still = _still(seed, hand, game)
    hull = cv2.convexHull(still.corners.astype(np.float32), clockwise=False)
    return still.frame, hull.reshape(-1, 2).astype(np.float64), still.diagonal


def _moved(truth: np.ndarray, squares: np.ndarray, files: int = 3) -> np.ndarray:
    """The corners of a square board moved by `squares` (board squares a corner)."""
    to_frame = grid_through(truth, files, files)
    moved = (board_corners(files, files) + squares)[None].astype(np.float64)
    return np.asarray(cv2.perspectiveTransform(moved, to_frame)[0], np.float64)


def _pose(quad: np.ndarray) -> BoardPose:
    return canonical(grid_through(quad, 3, 3), 3, 3)


def test_grid_points_are_every_intersection_through_the_corners() -> None:
    square = np.array([[[10.0, 20.0], [40.0, 20.0], [40.0, 50.0], [10.0, 50.0]]])
    points = grid_points(square, 3, 3)
    assert points.shape == (1, 16, 2)
    lattice = np.array([[10 + 10 * f, 20 + 10 * r] for r in range(4) for f in range(4)])
    assert points[0] == pytest.approx(lattice)
    tilted = np.array([[[100.0, 300.0], [400.0, 310.0], [350.0, 120.0], [150.0, 110.0]]])
    corners = grid_points(tilted, 3, 3)[0][[0, 3, 15, 12]]
    assert corners == pytest.approx(tilted[0], abs=1e-3)


def test_peak_near_finds_the_strongest_mark_round_a_point_with_its_offset() -> None:
    maps = np.zeros((3, 40, 40), np.float32)
    maps[0, 10, 12], maps[1, 10, 12], maps[2, 10, 12] = 0.9, 0.25, 0.75
    maps[0, 30, 30] = 1.0  # far away: not this point's
    found = peak_near(maps, np.array([50.0, 42.0]), radius=2)
    assert found is not None
    point, heat = found
    assert heat == pytest.approx(0.9)
    assert point == pytest.approx([(12 + 0.25) * STRIDE - 0.5, (10 + 0.75) * STRIDE - 0.5])
    assert peak_near(maps, np.array([-30.0, 10.0]), radius=2) is None


def test_the_grid_recipe_reads_the_refiners_views_with_every_intersection_marked(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from referee_lab.corner_training import _marked

    grid, refine = RECIPES["corners-grid"], RECIPES["corners-refine"]
    same = ("games", "hand", "first_seed", "canvas", "views", "boards")
    assert all(getattr(grid, name) == getattr(refine, name) for name in same)
    assert grid.points == "grid" and refine.points == "corners" and grid.frames >= refine.frames
    render_view_shards(tmp_path, grid, 1, jobs=1, progress=lambda _: None)
    views = load_shards(tmp_path)
    marked = _marked(views, grid)
    assert marked.corners.shape == (grid.views, 16, 2)
    assert marked.corners[:, [0, 3, 15, 12]] == pytest.approx(views.corners, abs=1e-3)
    assert _marked(views, refine) is views


def test_a_short_grid_training_run_writes_a_grid_readers_card(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from referee_lab.corner_training import CornerTrainConfig, train_corners

    recipe = RECIPES["corners-grid"]
    render_view_shards(tmp_path / "views", recipe, 2, jobs=1, progress=lambda _: None)
    config = CornerTrainConfig(steps=2, batch=2, window=96, eval_every=2, threads=2, width=160, height=160)
    path = train_corners(tmp_path / "views", tmp_path, config, progress=lambda _: None, recipe=recipe)
    net = CornerNet.load(path)
    assert net.card["points"] == "grid" and net.card["boards"] == ["3x3"]
    assert net.card["rebuild"] == "referee-lab train-corners --model corners-grid --threads 2"
    assert set(net.card["metrics"]["validation"]) == {"step", "found", "median_px", "p95_px"}
    GridReader(net, 0.3, 1.5)  # a grid reader's card


def test_the_committed_grid_reader_matches_its_card_and_recipe() -> None:
    path = default_models_dir() / "corners-grid.onnx"
    net = _reader().net
    recipe = RECIPES["corners-grid"]
    assert net.card["points"] == "grid" and net.canvas == recipe.canvas and net.trained_on(3, 3)
    assert net.card["onnx"]["sha256"] == sha256_of(path) and path.stat().st_size < 2 * 1024 * 1024
    assert net.card["recipe"]["steps"] == recipe.steps
    assert net.card["recipe"]["training_frames"] == recipe.frames * recipe.views - 100
    assert net.card["rebuild"].startswith(recipe.command)


def test_a_network_that_marks_only_corners_is_no_grid_reader() -> None:
    with pytest.raises(ValueError, match="not a grid reader"):
        GridReader(CornerNet.load("corners-refine"), 0.3, 1.5)
    settings = dataclasses.replace(SETTINGS, corner_grid="corners-refine")
    with pytest.raises(ModelError, match="not a grid reader"):
        grid_reader(settings)


def test_the_reader_sees_the_true_grid_not_one_a_third_of_a_square_off() -> None:
    frame, truth, _ = _truth(321, hand=False)
    reader = _reader()
    seen = reader.support(frame, grid_through(truth, 3, 3), 3, 3)
    assert seen.read == 16 and seen.seen >= 15 and seen.median_px < 0.5
    off = grid_through(_moved(truth, np.full((4, 2), [0.33, 0.0])), 3, 3)
    assert reader.support(frame, off, 3, 3).share() < SETTINGS.corner_grid_seen
    black = reader.support(np.zeros_like(frame), grid_through(truth, 3, 3), 3, 3)
    assert black.seen == 0  # a black frame marks nothing on the grid


@pytest.mark.parametrize("seed, hand", [(321, False), (323, True)])
def test_a_grid_fitted_to_the_marks_lands_on_the_board(seed: int, hand: bool) -> None:
    frame, truth, diagonal = _truth(seed, hand)
    rough = _moved(truth, np.array([[0.15, -0.1], [0.1, 0.2], [-0.2, 0.1], [0.0, -0.15]]))
    fitted = _reader().fit(frame, rough)
    assert fitted is not None
    worst = np.linalg.norm(fitted - truth, axis=1).max() / diagonal
    assert worst < (0.01 if hand else 0.005), f"{worst:.2%} of the diagonal off"
    turned = _reader().fit(frame, np.roll(rough, 1, axis=0))  # any corner first: the same fit
    assert turned == pytest.approx(np.roll(fitted, 1, axis=0), abs=1e-6)


def test_the_finder_keeps_the_grid_best_seen_or_refuses() -> None:
    frame, truth, diagonal = _truth(321, hand=False)
    right = _pose(truth)
    canonical_truth = right.corners_array
    off = _pose(_moved(truth, np.full((4, 2), [0.33, 0.0])))
    refused = NoBoardError("no board: something over it")
    for chosen, refined in ((off, (right, 0.5)), (right, (off, 0.9)), (refused, (off, 0.9)), (off, None)):
        found = with_grid_reader(frame, chosen, refined, 3, 3, SETTINGS)
        assert corner_error(found, canonical_truth) < 0.005 * diagonal  # the right grid, or one fitted
    with pytest.raises(NoBoardError, match="something over it"):
        with_grid_reader(frame, refused, None, 3, 3, SETTINGS)
    with pytest.raises(NoBoardError, match="intersections"):
        with_grid_reader(np.zeros_like(frame), right, (off, 0.9), 3, 3, SETTINGS)


@pytest.mark.parametrize("files, ranks, starts", [
    (3, 3, [(0, 0)]), (5, 5, [(0, 0), (2, 0), (0, 2), (2, 2)]), (5, 6, [(0, 0), (2, 0), (0, 3), (2, 3)]),
    (7, 7, [(i, j) for j in (0, 3, 4) for i in (0, 3, 4)]),
])
def test_a_board_is_read_in_3x3_windows_that_hold_every_intersection(
        files: int, ranks: int, starts: list[tuple[int, int]]) -> None:
    found = windows(files, ranks)
    assert [tuple(w[0]) for w in found] == starts
    assert all(w == pytest.approx(board_corners(3, 3) + w[0]) for w in found)
    held = {tuple(p) for w in found for p in board_lattice(3, 3) + w[0]}
    assert held == {tuple(p) for p in board_lattice(files, ranks)}


def test_the_reader_sees_a_5x5_boards_grid_a_window_at_a_time() -> None:
    frame, truth, _ = _truth(325, hand=False, game="flipflop-5x5")
    reader = _reader()
    seen = reader.support(frame, grid_through(truth, 5, 5), 5, 5)
    assert seen.read == 64 and seen.share() >= 0.9 and seen.median_px < 0.5
    off = grid_through(_moved(truth, np.full((4, 2), [0.33, 0.0]), files=5), 5, 5)
    assert reader.support(frame, off, 5, 5).share() < SETTINGS.corner_grid_seen


@pytest.mark.parametrize("seed, hand", [(325, False), (327, True)])
def test_a_5x5_grid_fitted_to_the_marks_lands_on_the_board(seed: int, hand: bool) -> None:
    frame, truth, diagonal = _truth(seed, hand, game="flipflop-5x5")
    rough = _moved(truth, np.array([[0.15, -0.1], [0.1, 0.2], [-0.2, 0.1], [0.0, -0.15]]), files=5)
    fitted = _reader().fit_board(frame, grid_through(rough, 5, 5), 5, 5)
    assert fitted is not None
    worst = np.linalg.norm(apply_homography(fitted, board_corners(5, 5)) - truth, axis=1).max() / diagonal
    assert worst < (0.01 if hand else 0.005), f"{worst:.2%} of the diagonal off"
    assert _reader().fit_board(np.zeros_like(frame), grid_through(rough, 5, 5), 5, 5) is None


def test_marks_in_view_stay_put_and_those_under_a_hand_move_with_the_guess() -> None:
    settings = (SETTINGS.corner_grid_settle, SETTINGS.corner_grid_settle_spread)
    frame, truth, diagonal = _truth(321, hand=False)
    board, image = _reader().settled_marks(frame, grid_through(truth, 3, 3), 3, 3, *settings)
    assert len(board) == 16  # no hand: every intersection stays, where the board has it
    on_board = apply_homography(grid_through(truth, 3, 3), board)
    assert np.linalg.norm(on_board - image, axis=1).max() < 0.005 * diagonal
    frame, truth, diagonal = _truth(341, hand=True)
    fitted = _reader().fit(frame, truth)
    assert fitted is not None
    board, image = _reader().settled_marks(frame, grid_through(fitted, 3, 3), 3, 3, *settings)
    assert 5 <= len(board) < 12  # the hand hides the rest
    in_view = apply_homography(grid_through(truth, 3, 3), board)
    assert np.linalg.norm(in_view - image, axis=1).max() < 0.005 * diagonal
    black = _reader().settled_marks(np.zeros_like(frame), grid_through(truth, 3, 3), 3, 3, *settings)
    assert len(black[0]) == 0


@pytest.mark.parametrize("seed", [329, 341, 349])
def test_the_grid_fitted_through_the_marks_in_view_places_the_corner_under_a_hand(seed: int) -> None:
    frame, truth, diagonal = _truth(seed, hand=True)
    rough = _moved(truth, np.array([[0.15, -0.1], [0.1, 0.2], [-0.2, 0.1], [0.0, -0.15]]))
    fitted = _reader().fit(frame, rough)
    assert fitted is not None
    right = _pose(truth).corners_array
    assert corner_error(_pose(fitted), right) > 0.01 * diagonal  # the hidden marks hold it near its start
    assert corner_error(settle_on_steady_marks(frame, _pose(fitted), SETTINGS), right) < 0.0075 * diagonal
    camera = np.array(_still(seed, hand=True).truth.camera.K)
    known = settle_on_steady_marks(frame, _pose(fitted), SETTINGS, camera_matrix=camera)  # a calibrated lens
    assert corner_error(known, right) < 0.0075 * diagonal
    off = dataclasses.replace(SETTINGS, corner_grid_settle=0.0)
    assert settle_on_steady_marks(frame, _pose(fitted), off) == _pose(fitted)
    too_few = dataclasses.replace(SETTINGS, corner_grid_settle_share=1.0)
    assert settle_on_steady_marks(frame, _pose(fitted), too_few) == _pose(fitted)


def test_a_bigger_boards_marks_settle_a_window_at_a_time() -> None:
    settings = (SETTINGS.corner_grid_settle, SETTINGS.corner_grid_settle_spread)
    frame, truth, diagonal = _truth(325, hand=False, game="flipflop-5x5")
    board, image = _reader().settled_marks(frame, grid_through(truth, 5, 5), 5, 5, *settings)
    assert len(board) >= 30  # of 36
    on_board = apply_homography(grid_through(truth, 5, 5), board)
    assert np.linalg.norm(on_board - image, axis=1).max() < 0.005 * diagonal
    frame, truth, diagonal = _truth(383, hand=True, game="flipflop-5x5")
    rough = _moved(truth, np.array([[0.15, -0.1], [0.1, 0.2], [-0.2, 0.1], [0.0, -0.15]]), files=5)
    fitted = _reader().fit_board(frame, grid_through(rough, 5, 5), 5, 5)
    assert fitted is not None
    right = canonical(grid_through(truth, 5, 5), 5, 5).corners_array
    assert corner_error(canonical(fitted, 5, 5), right) > 0.01 * diagonal
    settled = settle_on_steady_marks(frame, canonical(fitted, 5, 5), SETTINGS)
    assert corner_error(settled, right) < 0.0075 * diagonal
