from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from referee.stills import render_still
from referee.vision.corner_data import FIRST_SEED, load_shards, render_shards
from referee.vision.corner_net import STRIDE, CornerNet, decode


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corner-frames")
    _render(folder)
    return folder


def _render(folder: Path) -> None:
    render_shards(folder, 3, ("flipflop-3x3",), width=320, height=192, jobs=1, shard=2,
                  progress=lambda _: None)


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
    from referee.vision.corner_training import targets

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
    from referee.vision.corner_training import CornerTrainConfig, train_corners

    config = CornerTrainConfig(steps=2, batch=2, window=96, eval_every=2, threads=1)
    path = train_corners(shards, tmp_path, config, progress=lambda _: None)
    net = CornerNet.load(path)
    assert net.card["recipe"]["steps"] == 2 and net.card["recipe"]["training_frames"] == 2
    assert set(net.card["metrics"]["validation"]) >= {"found", "median_px", "step"}
    assert not (tmp_path / "corners.pt").exists()
