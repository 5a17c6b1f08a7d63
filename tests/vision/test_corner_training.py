from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.errors import ModelError
from referee.vision.corner_net import STRIDE, CornerNet, decode, shrink
from referee_lab.cli import main
from referee_lab.corner_data import (
    FIRST_SEED,
    RECIPES,
    HandRule,
    frame_plan,
    has_hand,
    load_shards,
    render_shards,
)
from referee_lab.stills import render_still
from referee_lab.tasks import default_models_dir

# the frames of commit 1cbf3a4's corner_data.GAMES, which corners-big was trained on
GAMES_1CBF3A4 = ("flipflop-3x3", "rinne", "flipflop-3x3", "rinne-5x5", "flipflop-3x3", "tensei",
                 "flipflop-3x3", "flipflop-5x5", "flipflop-3x3", "tensei-5x5")


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corner-frames")
    _render(folder)
    return folder


def _render(folder: Path) -> None:
    render_shards(folder, 3, ("flipflop-3x3",), width=320, height=192, jobs=1, shard=2,
                  progress=lambda _: None)


@pytest.fixture(scope="module")
def big_shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corner-big-frames")
    big = RECIPES["corners-big"]
    render_shards(folder, 3, big.games, hand=big.hand, width=320, height=192, jobs=1, shard=2,
                  progress=lambda _: None)
    return folder


def test_the_corners_recipe_draws_the_frames_it_always_has() -> None:
    """FlipFlop 3x3 only, a hand where seed % 3 == 0, 4,000 frames from FIRST_SEED, 5,000
    steps: what the committed corners.onnx was trained on before the recipes were named."""
    recipe = RECIPES["corners"]
    assert (recipe.model, recipe.games, recipe.hand) == ("corners", ("flipflop-3x3",), HandRule.THIRD)
    assert (recipe.frames, recipe.steps, recipe.boards, recipe.use) == (4000, 5000, None, None)
    assert recipe.command == "referee-lab train-corners"
    plan = frame_plan(recipe.games, recipe.hand, 0, recipe.frames)
    assert [f.seed for f in plan] == list(range(5_000_000, 5_004_000))
    assert {f.game for f in plan} == {"flipflop-3x3"}
    assert [f.hand for f in plan] == [(5_000_000 + i) % 3 == 0 for i in range(4000)]
    assert [int(f.hand) for f in plan[:7]] == [0, 1, 0, 0, 1, 0, 0] and sum(f.hand for f in plan) == 1333
    # a later start plans the same frames (a stopped render goes on with them)
    assert frame_plan(recipe.games, recipe.hand, 1000, 1010) == plan[1000:1010]


def test_the_corners_big_recipe_draws_session_16s_frames() -> None:
    """1cbf3a4's frames: every other one FlipFlop 3x3, the rest the five bigger Rinne-family
    boards in turn; a hand where default_rng([seed, 7]).random() < 0.5; 8,000 frames; 7,000
    steps; the card names 5x5 and 5x6."""
    recipe = RECIPES["corners-big"]
    assert (recipe.model, recipe.games, recipe.hand) == ("corners-big", GAMES_1CBF3A4, HandRule.HALF)
    assert (recipe.frames, recipe.steps, recipe.boards) == (8000, 7000, ("5x5", "5x6"))
    assert recipe.command == "referee-lab train-corners --model corners-big"
    plan = frame_plan(recipe.games, recipe.hand, 0, recipe.frames)
    assert [f.seed for f in plan] == list(range(5_000_000, 5_008_000))
    assert [f.game for f in plan] == [GAMES_1CBF3A4[i % 10] for i in range(8000)]
    assert Counter(f.game for f in plan) == {"flipflop-3x3": 4000, "rinne": 800, "rinne-5x5": 800,
                                             "tensei": 800, "flipflop-5x5": 800, "tensei-5x5": 800}
    assert [f.hand for f in plan] == [bool(np.random.default_rng([f.seed, 7]).random() < 0.5) for f in plan]
    assert [int(f.hand) for f in plan[:10]] == [1, 1, 0, 0, 1, 1, 1, 1, 0, 1]
    assert sum(f.hand for f in plan) == 3989
    # the two rules differ (a corners-big frame is not a corners frame with other games)
    assert [f.hand for f in plan[:4000]] != [has_hand(f.seed, HandRule.THIRD) for f in plan[:4000]]


def test_a_hand_rule_is_read_back_from_its_text_and_an_unknown_one_refused() -> None:
    assert [HandRule(rule.value) for rule in HandRule] == list(HandRule)
    with pytest.raises(ValueError, match="not a valid HandRule"):
        HandRule("seed % 2 == 0")


@pytest.mark.parametrize("model", ["corners", "corners-big"])
def test_each_committed_card_agrees_with_its_recipe(model: str) -> None:
    recipe = RECIPES[model]
    card = json.loads((default_models_dir() / f"{model}.json").read_text())
    assert card["onnx"]["file"] == f"{model}.onnx"
    assert card["recipe"]["steps"] == recipe.steps
    assert card["recipe"]["training_frames"] == recipe.frames - 100  # the first 100 held out
    assert card.get("boards") == (None if recipe.boards is None else list(recipe.boards))
    assert card.get("use") == recipe.use
    assert card["rebuild"].startswith(recipe.command + " ") or card["rebuild"] == recipe.command
    assert (model == "corners") == ("--model" not in card["rebuild"])


def test_frames_are_rendered_into_shards_with_their_corners_shrunk(shards: Path) -> None:
    assert sorted(p.name for p in shards.glob("*.npz")) == ["0000000.npz", "0000002.npz"]
    frames = load_shards(shards)
    assert frames.images.shape == (3, 192, 320, 3) and frames.corners.shape == (3, 4, 2)
    truth = render_still(FIRST_SEED + 2, "flipflop-3x3", hand=False, distortion=0.0)
    expected = truth.corners * np.array([320 / 1280, 192 / 720])
    assert frames.corners[2] == pytest.approx(expected, abs=1e-3)


def test_a_stopped_render_goes_on_where_it_stopped(shards: Path) -> None:
    before = (shards / "0000000.npz").stat().st_mtime_ns
    _render(shards)
    assert (shards / "0000000.npz").stat().st_mtime_ns == before


def test_no_shards_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no rendered shards"):
        load_shards(tmp_path)


def test_the_heat_target_peaks_at_each_corner_and_decodes_back() -> None:
    pytest.importorskip("torch")
    from referee_lab.corner_training import targets

    points = np.array([[10.3, 20.7], [100.0, 21.0], [101.5, 90.2], [12.0, 88.8]], np.float32)
    heat, offset, mask = targets(points, 40, 40, sigma=0.8)
    assert mask.sum() == 4 and heat.max() == 1.0
    guess = decode(np.concatenate([heat[None], offset]), min_heat=0.5)
    assert guess is not None
    found = guess.points[np.argsort(guess.points[:, 0] * 1000 + guess.points[:, 1])]
    want = points[np.argsort(points[:, 0] * 1000 + points[:, 1])]
    assert found == pytest.approx(want, abs=1e-3)
    assert STRIDE == 4


def test_a_short_training_run_writes_a_model_its_reader_accepts(shards: Path, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from referee_lab.corner_training import CornerTrainConfig, train_corners

    config = CornerTrainConfig(steps=2, batch=2, window=96, eval_every=2, threads=1)
    path = train_corners(shards, tmp_path, config, progress=lambda _: None)
    net = CornerNet.load(path)
    assert net.card["recipe"]["steps"] == 2 and net.card["recipe"]["training_frames"] == 2
    assert set(net.card["metrics"]["validation"]) >= {"found", "median_px", "step"}
    assert not (tmp_path / "corners.pt").exists()
    assert net.card["rebuild"] == "referee-lab train-corners" and "boards" not in net.card
    assert net.card["recipe"]["model"] == "corners"
    assert net.card["recipe"]["frames"] == {"first_seed": FIRST_SEED, "games": ["flipflop-3x3"],
                                            "hand": HandRule.THIRD.value}


def test_the_bigger_boards_frames_follow_their_recipe(big_shards: Path) -> None:
    frames = load_shards(big_shards)
    assert frames.games == ("flipflop-3x3", "rinne", "flipflop-3x3")
    truth = render_still(FIRST_SEED + 1, "rinne", hand=has_hand(FIRST_SEED + 1, HandRule.HALF),
                         distortion=0.0)
    # frame 0 has a hand under this recipe's rule (none under corners'): the image shows it
    assert has_hand(FIRST_SEED, HandRule.HALF) and not has_hand(FIRST_SEED, HandRule.THIRD)
    with_hand, without = (
        shrink(render_still(FIRST_SEED, "flipflop-3x3", hand=h, distortion=0.0).frame, 320, 192)
        for h in (True, False))
    assert np.array_equal(frames.images[0], with_hand) and not np.array_equal(frames.images[0], without)
    assert frames.corners[1] == pytest.approx(truth.corners * np.array([320 / 1280, 192 / 720]), abs=1e-3)
    with np.load(big_shards / "0000000.npz") as shard:
        assert shard["hands"].tolist() == [True, True]


def test_a_short_corners_big_training_run_writes_a_model_for_its_boards(big_shards: Path,
                                                                       tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from referee_lab.corner_training import CornerTrainConfig, train_corners

    config = CornerTrainConfig(steps=2, batch=2, window=96, eval_every=2, threads=1)
    path = train_corners(big_shards, tmp_path, config, progress=lambda _: None, recipe=RECIPES["corners-big"])
    assert path == tmp_path / "corners-big.onnx" and (tmp_path / "corners-big.json").is_file()
    assert not (tmp_path / "corners-big.pt").exists() and not (tmp_path / "corners.onnx").exists()
    net = CornerNet.load(path)
    assert net.card["onnx"]["file"] == "corners-big.onnx"
    assert net.card["boards"] == ["5x5", "5x6"] and net.card["use"] == RECIPES["corners-big"].use
    assert net.trained_on(5, 5) and net.trained_on(5, 6) and net.trained_on(6, 5)
    assert not net.trained_on(3, 3) and not net.trained_on(7, 7)
    assert net.card["rebuild"] == "referee-lab train-corners --model corners-big"
    assert net.card["recipe"]["steps"] == 2 and net.card["recipe"]["model"] == "corners-big"
    assert net.card["recipe"]["frames"] == {"first_seed": FIRST_SEED, "games": list(GAMES_1CBF3A4),
                                            "hand": HandRule.HALF.value}
    # the committed card's keys, less its hand-written figures, are those a rebuild writes
    committed = json.loads((default_models_dir() / "corners-big.json").read_text())
    assert set(committed) == set(net.card)
    assert set(committed["recipe"]) | {"model", "frames"} == set(net.card["recipe"])


def test_frames_of_another_recipe_are_refused_not_mixed(shards: Path, tmp_path: Path) -> None:
    """corners' frames (FlipFlop 3x3 only) in the folder a corners-big rebuild is told to use:
    refused before anything is rendered or trained."""
    from referee_lab.tasks import train_corners_model

    folder = tmp_path / "frames"
    shutil.copytree(shards, folder)
    before = sorted(p.name for p in folder.iterdir())
    big = RECIPES["corners-big"]
    with pytest.raises(ValueError, match="another recipe"):
        render_shards(folder, 4, big.games, hand=big.hand, width=320, height=192, jobs=1, shard=2,
                      progress=lambda _: None)
    with pytest.raises(ModelError, match="another recipe"):
        train_corners_model(model="corners-big", frames=400, data=str(folder), jobs=1,
                            progress=lambda _: None)
    assert sorted(p.name for p in folder.iterdir()) == before
    # the same frames under the other hand rule are refused too
    with pytest.raises(ValueError, match="another recipe"):
        render_shards(folder, 3, ("flipflop-3x3",), hand=HandRule.HALF, width=320, height=192,
                      jobs=1, shard=2, progress=lambda _: None)


@pytest.mark.parametrize("model", ["corners", "corners-big"])
def test_train_corners_model_follows_the_recipe_into_a_folder_of_its_own(
        model: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import referee_lab.corner_data as corner_data
    import referee_lab.corner_training as corner_training
    from referee_lab.tasks import train_corners_model

    calls: dict[str, Any] = {}

    def render(folder: Path, count: int, games: tuple[str, ...], **kw: Any) -> None:
        calls["render"] = (folder, count, games, kw["hand"])

    def train(folder: Path, out: Path, config: Any, progress: Any, *, recipe: Any) -> Path:
        calls["train"] = (folder, out, config.steps, config.seed, recipe)
        return out / f"{recipe.model}.onnx"

    monkeypatch.setattr(corner_data, "render_shards", render)
    monkeypatch.setattr(corner_training, "train_corners", train)
    monkeypatch.setenv("REFEREE_RENDER_CROPS", str(tmp_path))
    recipe = RECIPES[model]
    path = train_corners_model(model=model, out=str(tmp_path / "out"), progress=lambda _: None)
    assert path == tmp_path / "out" / f"{model}.onnx"
    assert calls["render"] == (tmp_path / model, recipe.frames, recipe.games, recipe.hand)
    assert calls["train"] == (tmp_path / model, tmp_path / "out", recipe.steps, 11, recipe)
    train_corners_model(model=model, frames=500, steps=3, seed=4, data=str(tmp_path / "d"),
                        progress=lambda _: None)
    assert calls["render"][:2] == (tmp_path / "d", 500) and calls["train"][2:4] == (3, 4)


def test_train_corners_command_passes_the_model_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import referee_lab.tasks as tasks

    seen: list[dict[str, Any]] = []

    def fake(**kw: Any) -> Path:
        seen.append(kw)
        return tmp_path / f"{kw['model']}.onnx"

    monkeypatch.setattr(tasks, "train_corners_model", fake)
    assert main(["train-corners", "--model", "corners-big"]) == 0
    assert main(["train-corners"]) == 0
    assert [(k["model"], k["frames"], k["steps"], k["data"]) for k in seen] == [
        ("corners-big", None, None, None), ("corners", None, None, None)]
    assert "corners-big.onnx" in capsys.readouterr().out


def test_an_unknown_corner_model_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train-corners", "--model", "corners-huge", "--frames", "400"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("referee-lab: --model: ")
    assert "'corners-huge'" in captured.err and "corners, corners-big" in captured.err
