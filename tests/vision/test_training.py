"""Training on other devices and with batches made by worker processes: the same batches
whatever the number of workers, a clear error for a device there is not, and a real
training run whose batches come from workers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from referee.errors import ModelError
from referee_lab import FLOAT_MODELS
from referee_lab.augment import Augment
from referee_lab.batch_workers import Batch, batch_stream
from referee_lab.renders import write_crop_folder
from referee_lab.training import Schedule, build_net, fit, normalise


class Noise:
    """A batch maker drawing from its own generator, as the real ones do."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)

    def batch(self, step: int) -> Batch:
        crops = self.rng.integers(0, 256, (4, 8, 8, 3), dtype=np.uint8)
        return crops, np.full(4, step % 7, np.int64)


def _stream(workers: int, steps: int = 9) -> list[Batch]:
    maker = Noise()
    return list(batch_stream(maker.batch, steps, workers=workers, maker=maker, seed=5))


def test_batches_are_the_same_whatever_the_number_of_workers() -> None:
    one, three = _stream(1), _stream(3)
    assert len(one) == len(three) == 9
    for (a, labels_a), (b, labels_b) in zip(one, three, strict=True):
        assert np.array_equal(a, b) and np.array_equal(labels_a, labels_b)
    assert [int(labels[0]) for _, labels in one] == [s % 7 for s in range(1, 10)]  # in order
    assert len({crops.tobytes() for crops, _ in one}) == 9  # each step drawn afresh


def test_without_workers_the_one_generator_draws_every_batch() -> None:
    maker, reference = Noise(), Noise()
    expected = [reference.batch(s) for s in range(1, 4)]
    got = list(batch_stream(maker.batch, 3))  # one stream...
    for (a, _), (b, _) in zip(got, expected, strict=True):
        assert np.array_equal(a, b)
    assert not np.array_equal(got[0][0], _stream(1, 1)[0][0])  # ...not the workers' seeds


def test_workers_need_the_maker_to_seed() -> None:
    with pytest.raises(ValueError, match="maker"):
        next(batch_stream(Noise().batch, 3, workers=2))


def test_a_device_that_is_not_there_is_a_clear_error() -> None:
    torch = pytest.importorskip("torch")
    net = build_net("c4,p", 7)
    schedule = Schedule(2, 1e-3, 0.0, 0.0, 1, device="tpu")
    with pytest.raises(ModelError, match="device 'tpu'"):
        fit(net, schedule, Noise().batch, torch.zeros(1, 3, 8, 8), np.zeros(1, np.int64),
            print, 0.0)
    if not torch.cuda.is_available():
        with pytest.raises(ModelError, match="CUDA GPU"):
            fit(net, dataclasses.replace(schedule, device="cuda"), Noise().batch,
                torch.zeros(1, 3, 8, 8), np.zeros(1, np.int64), print, 0.0)


def test_a_model_trains_on_batches_made_by_workers(tmp_path: Path) -> None:
    """`referee-lab train --set workers=2`: a real (tiny) zensu run whose batches two worker
    processes make; the card records the workers and the device."""
    pytest.importorskip("torch")
    from referee_lab.tasks import train_pieces

    crops = tmp_path / "crops"
    write_crop_folder(str(crops), range(0, 3), size=40, margin=0.3, pieces="zensu")
    said: list[str] = []
    train_pieces("zensu", out=str(tmp_path / "out"), data=str(crops), steps=4, seed=3,
                 settings=["workers=2", "eval_every=2", "batch=16"], frames=3,
                 progress=said.append)
    card = json.loads((tmp_path / "out" / "zensu.json").read_text())
    assert card["recipe"]["workers"] == 2 and card["recipe"]["device"] == "cpu"
    assert card["recipe"]["steps"] == 4
    assert any("step 4/4" in line for line in said)
    assert (tmp_path / "out" / "zensu.onnx").stat().st_size > 1000


@pytest.mark.parametrize("name", ["dice", "tiles", "tiles-seam"])
def test_the_committed_models_float_weights_are_kept_to_fine_tune_from(name: str) -> None:
    """`referee_lab/data/float/<name>.onnx` is the shipped int8 model before `referee-lab quantize`: the
    same training run (its recipe to the second), and a fine-tuning can start from it."""
    torch = pytest.importorskip("torch")
    from referee.vision.classifier import Classifier
    from referee_lab.training import load_onnx_weights

    path = FLOAT_MODELS / f"{name}.onnx"
    start, committed = Classifier.load(path).card, Classifier.load(name).card
    assert not start.quantization and committed.quantization
    assert start.recipe == committed.recipe and start.labels == committed.labels
    recipe = start.recipe
    arch = recipe["arch"] if recipe.get("head", "pool") == "pool" else None
    if arch is None:
        pytest.skip("a grid-head model: render_training.make_net builds it")
    net = build_net(arch, len(start.labels))
    size = start.input_size
    load_onnx_weights(net, path, torch.rand(8, 3, size, size))
    crops = np.random.default_rng(1).integers(0, 256, (4, size, size, 3), dtype=np.uint8)
    with torch.no_grad():
        ours = torch.softmax(net.eval()(torch.from_numpy(normalise(crops))), dim=1).numpy()
    assert np.allclose(ours, Classifier.load(path).predict(crops), atol=1e-4)


def _grey_die(size: int = 64) -> np.ndarray:
    image = np.full((size, size, 3), 120, np.uint8)
    image[16:48, 16:48] = 235
    image[30:34, 30:34] = 20
    return image


def test_the_camera_faults_change_a_crop_and_off_draw_nothing() -> None:
    """Each Pi-camera change of the dice recipe does what it says; switched off (the
    render-trained recipes) it draws nothing, so their batches are those they always were."""
    from referee.vision.crops import CropSpec
    from referee_lab.augment import Augment, photometric

    spec, crop = CropSpec(64, 0.12), _grey_die()
    plain = Augment(p_grid=0, p_hue=0, p_gray=0, p_light=0, p_blur=0, p_lowres=0, p_noise=0,
                    p_jpeg=0)
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    photometric(crop, spec, a, plain)
    photometric(crop, spec, b, dataclasses.replace(plain, die_widths=(0.3, 0.95)))
    assert a.random() == b.random()  # the same draws
    changed = {name: photometric(crop, spec, np.random.default_rng(4),
                                 dataclasses.replace(plain, **{name: 1.0})).astype(float)
               for name in ("p_motion", "p_specular", "p_invert", "p_cast")}
    base = photometric(crop, spec, np.random.default_rng(4), plain).astype(float)
    assert all(np.abs(image - base).mean() > 1.0 for image in changed.values())
    inverted = changed["p_invert"]
    assert inverted[32, 32].mean() > inverted[20, 20].mean()  # the dark pip became light


def test_the_dice_recipe_trains_on_every_size(real_dice: Path, tmp_path: Path) -> None:
    """The card records the size range, and validation reads the held-out photos at the run
    time's cut and at each of `val_cuts` (and the tray's squares at each of `tray_cuts`)."""
    pytest.importorskip("torch")
    from referee.vision.classifier import Classifier
    from referee_lab.datasets import RealDice, split_groups
    from referee_lab.training import TrainConfig, train_dice

    config = TrainConfig(steps=2, batch=8, eval_every=2, tray_empties_per_photo=5, every_size=True,
                         tray_cuts=(1.1, 1.4, 1.8, 2.4, 3.0), val_cuts=(1.05, 1.8, 2.8))
    train_dice(tmp_path, config=config, data_dir=real_dice)
    card = Classifier.load(tmp_path / "dice.onnx").card
    assert card.recipe["augment"]["die_widths"] == [0.3, 0.95]
    assert card.recipe["augment_mild"]["die_widths"] == [0.3, 0.95]
    real = RealDice.load("train", real_dice)
    held = split_groups(real.files, fraction=0.1, seed=7)[1]
    dice = sum(1 for d in real.dice if d.file in held)
    assert card.metrics["val_squares"] >= (1 + len(config.val_cuts)) * dice
    assert card.recipe["train_tray_empties"] == 180 * len(config.tray_cuts)


def test_a_tuple_setting_takes_numbers_joined_by_commas() -> None:
    from referee_lab.tasks import with_settings
    from referee_lab.training import TrainConfig

    config = with_settings(TrainConfig(), ["val_cuts=1.2,2.5", "tray_cuts=", "every_size=1"])
    assert config.val_cuts == (1.2, 2.5) and config.tray_cuts == () and config.every_size
    assert TrainConfig().augmentation == Augment()  # the shipped model's recipe by default
    with pytest.raises(ModelError, match="not a number"):
        with_settings(TrainConfig(), ["val_cuts=1.2,x"])


def test_a_narrower_size_range_joins_the_plain_recipe() -> None:
    """`die_widths` (and `p_size`) draw dice of that range only, on the plain recipe without
    `every_size` (none of the camera faults) or on `Augment.any_size()` with it; the defaults
    stay the shipped recipe's."""
    from referee_lab.tasks import with_settings
    from referee_lab.training import TrainConfig

    plain = with_settings(TrainConfig(), ["die_widths=0.5,0.9", "p_size=0.6"]).augmentation
    assert plain == dataclasses.replace(Augment(), die_widths=(0.5, 0.9), p_size=0.6)
    assert plain.milder().die_widths == (0.5, 0.9) and plain.milder().p_size == 0.6
    every = with_settings(TrainConfig(), ["every_size=1", "die_widths=0.4,0.8"]).augmentation
    assert every == dataclasses.replace(Augment.any_size(), die_widths=(0.4, 0.8))
    assert TrainConfig().augmentation == Augment() and TrainConfig().size_renders
    assert not with_settings(TrainConfig(), ["size_renders=0"]).size_renders
    with pytest.raises(ModelError, match="die_widths"):
        _ = with_settings(TrainConfig(), ["die_widths=0.5"]).augmentation
