"""The 3x3 boards' corner refiner (`referee/data/models/corners-refine.onnx`): its canvas geometry, its
training views, the committed model reading a rendered board from a guess a square off, and
how the finder keeps or replaces its answer with the refiner's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.errors import ModelError, NoBoardError
from referee.vision.classifier import default_models_dir, sha256_of
from referee.vision.corner_guesses import with_refiner
from referee.vision.corner_net import Canvas, CornerNet
from referee.vision.lattice import canonical
from referee.vision.pose import BoardPose, board_corners
from referee.vision.settings import LocaliseSettings
from referee_lab.corner_data import RECIPES, guessed_quads, load_shards, render_view_shards
from referee_lab.stills import render_still

CANVAS = Canvas(3, 3, square_px=32, margin=1.0)
SETTINGS = LocaliseSettings()


def _quad_pose(quad: np.ndarray) -> BoardPose:
    h = cv2.getPerspectiveTransform(board_corners(3, 3).astype(np.float32), np.asarray(quad, np.float32))
    return canonical(h.astype(np.float64), 3, 3)


def test_the_canvas_puts_the_guessed_corners_at_its_grid_corners() -> None:
    quad = np.array([[100.0, 120.0], [400.0, 90.0], [430.0, 380.0], [90.0, 360.0]])
    assert (CANVAS.width, CANVAS.height) == (160, 160)
    to_canvas = CANVAS.homography(quad)
    at = cv2.perspectiveTransform(quad[None], to_canvas)[0]
    assert at == pytest.approx(np.array([[32, 32], [128, 32], [128, 128], [32, 128]]), abs=1e-6)
    frame = np.zeros((480, 640, 3), np.uint8)
    cv2.fillConvexPoly(frame, quad.astype(np.int32), (255, 255, 255))
    image, _ = CANVAS.view(frame, quad)
    assert image.shape == (160, 160, 3)
    assert image[80, 80].tolist() == [255, 255, 255] and image[5, 5].tolist() == [0, 0, 0]


def test_the_guesses_lie_about_the_true_corners_some_a_square_off() -> None:
    truth = np.array([[100.0, 100.0], [400.0, 100.0], [400.0, 400.0], [100.0, 400.0]])
    quads = guessed_quads(np.random.default_rng(3), truth, CANVAS, 200)
    worst = [np.linalg.norm(q[:, None] - truth[None], axis=2).min(axis=0).max() / 100 for q in quads]
    assert 0.05 < np.median(worst) < 0.6  # in squares
    assert 0.1 < np.mean(np.array(worst) > 0.8) < 0.35  # about one in five a square off


def test_training_views_hold_the_true_corners_in_canvas_pixels(tmp_path: Path) -> None:
    recipe = RECIPES["corners-refine"]
    render_view_shards(tmp_path, recipe, 2, jobs=1, progress=lambda _: None)
    views = load_shards(tmp_path)
    assert views.images.shape == (2 * recipe.views, 160, 160, 3)
    with np.load(tmp_path / "0000000.npz") as shard:
        assert list(shard["seeds"]) == [recipe.first_seed] * 3 + [recipe.first_seed + 1] * 3
    truth = render_still(recipe.first_seed, "flipflop-3x3", hand=bool(
        np.random.default_rng([recipe.first_seed, 99]).random() < 0.6), distortion=0.0).corners
    corners = views.corners[0]
    assert np.all((corners > -40) & (corners < 200))  # within the canvas's reach
    # each view's truth, taken back to the frame by its own guess, is the frame's truth: the
    # guesses are those `guessed_quads` draws after the hand's draw
    rng = np.random.default_rng([recipe.first_seed, 99])
    rng.random()
    hull = cv2.convexHull(truth.astype(np.float32), clockwise=False).reshape(-1, 2).astype(np.float64)
    for quad, view_corners in zip(guessed_quads(rng, hull, CANVAS, 3), views.corners[:3], strict=True):
        to_frame = np.linalg.inv(CANVAS.homography(quad))
        back = cv2.perspectiveTransform(view_corners[None].astype(np.float64), to_frame)[0]
        assert back == pytest.approx(hull, abs=1e-2)


def test_the_committed_refiner_matches_its_card_and_recipe() -> None:
    path = default_models_dir() / "corners-refine.onnx"
    net = CornerNet.load("corners-refine")
    assert net.canvas == CANVAS and net.card["boards"] == ["3x3"]
    assert net.trained_on(3, 3) and not net.trained_on(5, 5)
    assert net.card["onnx"]["sha256"] == sha256_of(path) and path.stat().st_size < 2 * 1024 * 1024
    recipe = RECIPES["corners-refine"]
    assert net.card["recipe"]["steps"] == recipe.steps
    assert net.card["recipe"]["training_frames"] == recipe.frames * recipe.views - 100
    assert net.card["rebuild"] == "referee-lab train-corners --model corners-refine"
    assert net.card["recipe"]["frames"]["first_seed"] == recipe.first_seed


def test_the_refiner_reads_a_rendered_board_from_a_guess_off_by_a_square() -> None:
    still = render_still(321, "flipflop-3x3", hand=False, distortion=0.0)  # a seed no recipe draws
    hull = cv2.convexHull(still.corners.astype(np.float32), clockwise=False)
    truth = hull.reshape(-1, 2).astype(np.float64)
    to_frame = cv2.getPerspectiveTransform(board_corners(3, 3).astype(np.float32), truth.astype(np.float32))
    net = CornerNet.load("corners-refine")
    for moved in (np.array([[0.15, -0.1], [0.1, 0.2], [-0.2, 0.1], [0.0, -0.15]]),  # a rough guess
                  np.array([[1.0, 0.05], [1.0, 0.0], [1.0, -0.05], [1.0, 0.0]])):  # a square off
        quad = cv2.perspectiveTransform((board_corners(3, 3) + moved)[None], to_frame.astype(np.float64))[0]
        for _ in range(3):
            guess = net.refine(still.frame, quad)
            quad = guess.points
        worst = np.linalg.norm(quad - truth, axis=1).max()
        assert worst < 0.01 * still.diagonal, f"{moved.tolist()}: {worst:.1f} px off"
        assert guess.heat.min() > SETTINGS.corner_refiner_overrule_heat


def test_four_turned_views_read_the_same_whichever_corner_the_guess_starts_from() -> None:
    still = render_still(322, "flipflop-3x3", hand=True, distortion=0.0)
    hull = cv2.convexHull(still.corners.astype(np.float32), clockwise=False)
    truth = hull.reshape(-1, 2).astype(np.float64)
    quad = truth + np.array([[6.0, -4.0], [-5.0, 7.0], [3.0, 5.0], [-6.0, -3.0]])
    net = CornerNet.load("corners-refine")
    read = net.refine(still.frame, quad, turns=4)
    for start in (1, 2, 3):
        turned = net.refine(still.frame, np.roll(quad, start, axis=0), turns=4)
        assert turned.points == pytest.approx(np.roll(read.points, start, axis=0), abs=1e-6)
        assert turned.heat == pytest.approx(np.roll(read.heat, start), abs=1e-6)
    assert np.linalg.norm(read.points - truth, axis=1).max() < 0.01 * still.diagonal
    one = [net.refine(still.frame, np.roll(quad, start, axis=0)) for start in range(4)]
    mean = np.mean([np.roll(g.points, -start, axis=0) for start, g in enumerate(one)], axis=0)
    assert read.points == pytest.approx(mean, abs=1e-6)  # the four single views, averaged


def test_a_quarter_turn_needs_a_square_canvas() -> None:
    net = CornerNet.load("corners-refine")
    oblong = CornerNet({**net.card, "canvas": {"files": 5, "ranks": 6, "square_px": 32, "margin": 1.0}},
                       net._runtime, net.path)
    quad = board_corners(5, 6) * 40 + 50
    with pytest.raises(ValueError, match="square"):
        oblong.refine(np.zeros((480, 640, 3), np.uint8), quad, turns=4)
    with pytest.raises(ValueError, match="not 3"):
        net.refine(np.zeros((480, 640, 3), np.uint8), board_corners(3, 3) * 40 + 50, turns=3)


def test_a_network_without_a_canvas_refines_nothing() -> None:
    with pytest.raises(ModelError, match="not a corner refiner"):
        CornerNet.load("corners").refine(np.zeros((192, 320, 3), np.uint8), board_corners(3, 3) * 40 + 50)


def test_a_canvas_that_is_not_the_input_is_refused(tmp_path: Path) -> None:
    for suffix in (".onnx", ".json"):
        shutil.copy(default_models_dir() / f"corners-refine{suffix}", tmp_path / f"corners-refine{suffix}")
    card_path = tmp_path / "corners-refine.json"
    card = json.loads(card_path.read_text())
    card["canvas"]["margin"] = 0.5
    card_path.write_text(json.dumps(card))
    with pytest.raises(ModelError, match="canvas"):
        CornerNet.load(tmp_path / "corners-refine.onnx")


def test_the_finder_keeps_its_answer_unless_the_refiner_reads_the_board_apart_and_sure() -> None:
    square = np.array([[100.0, 100.0], [400.0, 100.0], [400.0, 400.0], [100.0, 400.0]])
    answer = _quad_pose(square)
    near = _quad_pose(square + 3.0)  # 0.7% of the diagonal
    apart = _quad_pose(square + np.array([15.0, 0.0]))  # 3.5%: past corner_refiner_apart, not far
    far = _quad_pose(square + np.array([100.0, 0.0]))  # a square off: past corner_refiner_far
    refused = NoBoardError("no board: something over it")
    sure, fair, faint = 0.9, 0.75, 0.5  # heats about the settings' 0.85 and 0.7
    assert with_refiner(answer, (near, sure), SETTINGS) is answer
    assert with_refiner(answer, (apart, sure), SETTINGS) is apart
    assert with_refiner(answer, (apart, fair), SETTINGS) is answer  # overruling asks more
    assert with_refiner(answer, (far, fair), SETTINGS) is far  # ... but not of a grid this far off
    assert with_refiner(answer, (far, faint), SETTINGS) is answer
    assert with_refiner(refused, (near, fair), SETTINGS) is near
    assert with_refiner(answer, None, SETTINGS) is answer
    for refined in (None, (near, faint)):
        with pytest.raises(NoBoardError, match="something over it"):
            with_refiner(refused, refined, SETTINGS)


def test_train_corners_renders_a_refiners_views_and_trains_on_its_canvas(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import referee_lab.corner_data as corner_data
    import referee_lab.corner_training as corner_training
    from referee_lab.tasks import train_corners_model

    calls: dict[str, object] = {}

    def render(folder: Path, recipe: object, count: int, **_: object) -> None:
        calls["render"] = (folder, recipe, count)

    def train(folder: Path, out: Path, config: object, progress: object, *, recipe: object) -> Path:
        calls["train"] = (config, recipe)
        return out / "corners-refine.onnx"

    monkeypatch.setattr(corner_data, "render_view_shards", render)
    monkeypatch.setattr(corner_training, "train_corners", train)
    recipe = RECIPES["corners-refine"]
    train_corners_model(model="corners-refine", data=str(tmp_path / "d"), out=str(tmp_path),
                        progress=lambda _: None)
    assert calls["render"] == (tmp_path / "d", recipe, recipe.frames)
    config, trained = calls["train"]  # type: ignore[misc]
    assert trained is recipe
    assert (config.width, config.height, config.steps) == (160, 160, recipe.steps)  # type: ignore[attr-defined]
