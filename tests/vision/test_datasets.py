from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.errors import ImageError, ModelError
from referee.vision.crops import CropSpec, crop_square, square_quad
from referee.vision.images import read_image
from referee_lab.augment import Augment, augmented_crop, jitter_quad, synthetic_square
from referee_lab.datasets import (
    EMPTY,
    Sample,
    crop_samples,
    fixed_crops,
    folder_samples,
)

SPEC = CropSpec(48, 0.12)


def _die_image() -> np.ndarray:
    """A white die with three black pips on a grey ground."""
    image = np.full((120, 120, 3), 150, np.uint8)
    image[40:80, 40:80] = 245
    for x, y in ((48, 48), (60, 60), (72, 72)):
        cv2.circle(image, (x, y), 4, (20, 20, 20), -1)
    return image


def test_augmented_crops_are_seeded_and_vary() -> None:
    sample = Sample(_die_image(), square_quad((60.0, 60.0), 56.0), 3)
    first = [augmented_crop(sample, SPEC, np.random.default_rng(5), Augment()) for _ in range(2)]
    np.testing.assert_array_equal(first[0], first[1])  # same seed, same crop
    rng = np.random.default_rng(6)
    crops = np.stack([augmented_crop(sample, SPEC, rng, Augment()) for _ in range(20)])
    assert crops.shape == (20, 48, 48, 3) and crops.dtype == np.uint8
    assert crops.reshape(20, -1).std(axis=0).mean() > 10  # really different crops


def test_jitter_keeps_the_square_near_its_place() -> None:
    quad = square_quad((60.0, 60.0), 50.0)
    rng = np.random.default_rng(0)
    aug = Augment()
    for _ in range(50):
        moved = jitter_quad(quad, rng, aug)
        shift = np.abs(moved.mean(axis=0) - 60.0)
        assert (shift <= 50 * (aug.shift + 4 * aug.skew)).all()
        side = np.linalg.norm(moved[1] - moved[0])
        assert 50 * aug.scale[0] * 0.8 < side < 50 * aug.scale[1] * 1.2


def test_synthetic_squares_are_empty_and_varied() -> None:
    rng = np.random.default_rng(1)
    samples = [synthetic_square(rng, 48) for _ in range(12)]
    assert all(s.label == EMPTY and s.image.dtype == np.uint8 for s in samples)
    means = [s.image.mean() for s in samples]
    assert np.std(means) > 15


def test_crop_samples_and_folder(tmp_path: Path) -> None:
    crop = np.zeros((62, 62, 3), np.uint8)
    (sample,) = crop_samples([(crop, 2)], margin=0.12)
    inset = 62 * 0.12 / 1.24
    np.testing.assert_allclose(sample.quad[0], [inset, inset], atol=1e-4)
    cv2.imwrite(str(tmp_path / "a.png"), _die_image())
    (tmp_path / "labels.csv").write_text("file,label\na.png,3\n")
    (loaded,) = folder_samples(tmp_path, margin=0.12)
    assert loaded.label == 3 and loaded.image.shape == (120, 120, 3)
    (tmp_path / "labels.csv").write_text("file,label\na.png,seven\n")
    with pytest.raises(ImageError, match="unknown label"):
        folder_samples(tmp_path, margin=0.12)


def test_read_image_errors(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="not found"):
        read_image(tmp_path / "none.png")
    (tmp_path / "bad.png").write_text("text")
    with pytest.raises(ImageError, match="not a readable image"):
        read_image(tmp_path / "bad.png")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_training_runs_and_exports_a_loadable_model(real_dice: Path, tmp_path: Path) -> None:
    """A few steps of the real recipe: data, augmentation, export check, card."""
    from referee.vision.classifier import Classifier
    from referee_lab.training import TrainConfig, train_dice

    extra = list(crop_samples([(_die_image(), 3)], margin=0.12, group="render"))
    config = TrainConfig(steps=4, batch=8, eval_every=2, tray_empties_per_photo=1)
    result = train_dice(tmp_path, config=config, data_dir=real_dice, extra=extra)
    classifier = Classifier.load(tmp_path / "dice.onnx")
    assert classifier.card.recipe["steps"] == 4 and classifier.card.seed == config.seed
    assert classifier.card.recipe["train_dice"] == result.card.recipe["train_dice"]
    probs = classifier.predict(np.zeros((2, 48, 48, 3), np.uint8))
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)


def test_flip_mirrors_the_crop() -> None:
    """A mirrored die shows the same pips: the flip is a free, label-keeping augmentation."""
    image = _die_image()
    image[44:52, 66:74] = (0, 0, 255)  # a red mark top right: mirrored, it lands top left
    quad = square_quad((60.0, 60.0), 56.0)
    still = Augment(max_angle=0.0, scale=(1.0, 1.0), shift=0.0, skew=0.0, p_flip=0.0)
    flipped = jitter_quad(quad, np.random.default_rng(0), dataclasses.replace(still, p_flip=1.0))
    plain = crop_square(image, quad, SPEC)
    # The crop maps the quad's corners to 0 and size, so column x mirrors to size - x.
    mirrored = np.roll(plain[:, ::-1], 1, axis=1)
    np.testing.assert_array_equal(crop_square(image, flipped, SPEC)[:, 1:], mirrored[:, 1:])
    np.testing.assert_array_equal(jitter_quad(quad, np.random.default_rng(0), still), quad)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_rendered_empties_get_their_own_share() -> None:
    """With `p_extra_empty`, rendered empties are drawn at that share however few they are."""
    from referee_lab.training import BatchMaker, TrainConfig

    die = Sample(_die_image(), square_quad((60.0, 60.0), 56.0), 3, "real")
    tray = [Sample(_die_image(), square_quad((60.0, 60.0), 56.0), EMPTY, "tray")] * 99
    rendered = [Sample(_die_image(), square_quad((60.0, 60.0), 56.0), EMPTY, "render")]
    config = TrainConfig(p_empty=1.0, p_synthetic=0.0, p_extra_empty=0.5)
    maker = BatchMaker([die], tray, config, np.random.default_rng(3), [], rendered)
    groups = [maker.sample(0.5).group for _ in range(400)]
    assert 150 < groups.count("render") < 250
    pooled = BatchMaker([die], tray, dataclasses.replace(config, p_extra_empty=None),
                        np.random.default_rng(3), [], rendered)
    assert [pooled.sample(0.5).group for _ in range(400)].count("render") < 20


def _float_model(folder: Path, size: int = 48) -> Path:
    """A float dice net as a training run exports it (the committed model is int8): seeded
    weights, batch-norm statistics moved off the identity by a few training-mode passes."""
    import torch

    from referee_lab.training import TrainConfig, build_net, export_onnx

    torch.manual_seed(0)
    net = build_net(TrainConfig().arch, 7)
    net.train()
    with torch.no_grad():
        for _ in range(3):
            net(torch.rand(16, 3, size, size) * 4 - 2)
    path = folder / "float.onnx"
    export_onnx(net.eval(), path, size, check=torch.rand(4, 3, size, size) * 4 - 2)
    return path


def _onnx_read(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    runtime = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (out,) = runtime.run(None, {runtime.get_inputs()[0].name: x})
    return np.asarray(out)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_fine_tuning_starts_from_exactly_the_onnx_model(tmp_path: Path, dice_model: Path) -> None:
    """A float model's folded weights, unfolded into the training net, compute what
    onnxruntime computes (eval mode). The committed model is int8: refused, in one line."""
    import torch

    from referee.errors import ModelError
    from referee_lab.training import TrainConfig, build_net, load_onnx_weights, normalise

    path = _float_model(tmp_path)
    rng = np.random.default_rng(0)
    samples = [synthetic_square(rng, 48) for _ in range(32)] + [
        Sample(_die_image(), square_quad((60.0, 60.0), 56.0), 3)]
    x = normalise(np.stack([augmented_crop(s, SPEC, rng, Augment()) for s in samples]))
    net = build_net(TrainConfig().arch, 7)
    load_onnx_weights(net, path, torch.from_numpy(x))
    net.eval()
    with torch.no_grad():
        got = torch.softmax(net(torch.from_numpy(x)), dim=1).numpy()
    np.testing.assert_allclose(got, _onnx_read(path, x), atol=1e-5)
    with pytest.raises(ModelError, match="int8 model; fine-tune from the float model"):
        load_onnx_weights(build_net(TrainConfig().arch, 7), dice_model, torch.from_numpy(x))


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_fine_tuning_at_another_input_size(real_dice: Path, tmp_path: Path) -> None:
    """A 48x48 model's weights start a 64x64 model (the net is fully convolutional); the hard
    real dice are those the starting model finds hard at its own size."""
    from referee.vision.classifier import Classifier
    from referee_lab.datasets import RealDice, split_groups
    from referee_lab.training import TrainConfig, hard_for, normalise, train_dice

    start = _float_model(tmp_path)
    real = RealDice.load("train", real_dice)
    dice = real.die_samples(split_groups(real.files, fraction=0.1, seed=7)[0])
    truth = _onnx_read(start, normalise(fixed_crops(dice, SPEC)))[
        np.arange(len(dice)), [s.label for s in dice]]
    below = float(np.median(truth))  # about half of them: a choice that can be wrong
    hard = hard_for(start, dice, SPEC.margin, below)
    assert [id(s) for s in hard] == [id(d) for d, p in zip(dice, truth, strict=True) if p < below]
    assert 0 < len(hard) < len(dice)

    config = TrainConfig(size=64, steps=2, batch=8, eval_every=2, tray_empties_per_photo=1,
                         init=str(start), p_hard_real=0.5, hard_below=below)
    train_dice(tmp_path / "out", config=config, data_dir=real_dice)
    tuned = Classifier.load(tmp_path / "out" / "dice.onnx")
    assert tuned.card.input_size == 64 and tuned.card.recipe["train_hard_real"] == len(hard)
    probs = tuned.predict(fixed_crops(dice[:4], tuned.card.crop))
    assert probs.shape == (4, 7)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_hard_examples_get_their_share_and_renders_less_shift() -> None:
    from referee_lab.training import BatchMaker, TrainConfig

    die = Sample(_die_image(), square_quad((60.0, 60.0), 56.0), 3, "real")
    hard = [Sample(_die_image(), square_quad((60.0, 60.0), 56.0), EMPTY, "hard")]
    config = TrainConfig(p_hard=0.3, render_shift=0.0)
    maker = BatchMaker([die], [die], config, np.random.default_rng(3), hard=hard)
    assert 90 < [maker.sample(0.5).group for _ in range(400)].count("hard") < 150
    assert id(hard[0]) in maker.rendered and id(die) not in maker.rendered


def test_recipe_settings_parse_as_their_fields() -> None:
    pytest.importorskip("torch")
    from referee.errors import ModelError
    from referee_lab.tasks import with_settings
    from referee_lab.training import TrainConfig

    config = with_settings(TrainConfig(), ["lr=0.001", "steps=300", "render_shift=0.05",
                                           "p_extra_mild=none"])
    assert (config.lr, config.steps, config.render_shift, config.p_extra_mild) == (
        0.001, 300, 0.05, None)
    with pytest.raises(ModelError, match="bad setting"):
        with_settings(TrainConfig(), ["nonsense=1"])


def test_hard_crop_folder_keeps_only_what_the_model_finds_hard(
    dice_model: Path, tmp_path: Path
) -> None:
    from referee_lab.renders import dice_squares, write_hard_crop_folder

    squares = len(dice_squares(500_000).samples)
    assert write_hard_crop_folder(str(tmp_path / "all"), range(500_000, 500_001), dice_model,
                                  below=1.01) == squares
    assert len(folder_samples(tmp_path / "all", margin=0.3)) == squares
    assert write_hard_crop_folder(str(tmp_path / "none"), range(500_000, 500_001), dice_model,
                                  below=0.0) == 0


def test_hard_crop_folder_keeps_squares_in_doubt_at_the_tilt_asked(
    dice_model: Path, tmp_path: Path
) -> None:
    """No lead is 100 nats: with `lead_below=100` every square of the tilted frame is kept,
    however sure the model is of its true label."""
    from referee_lab.renders import dice_squares, write_hard_crop_folder

    tilt = (35.0, 35.0)
    squares = dice_squares(500_000, tilt=tilt).samples
    assert write_hard_crop_folder(str(tmp_path / "doubt"), range(500_000, 500_001), dice_model,
                                  below=0.0, lead_below=100.0, tilt=tilt) == len(squares)
    kept = folder_samples(tmp_path / "doubt", margin=0.3)
    assert [s.label for s in kept] == [s.label for s in squares]


def test_hard_crop_folder_mines_penta_with_the_card_labels(tmp_path: Path) -> None:
    """The piece set comes from the model card: penta squares, penta labels, crops cut as
    `referee-lab train` cuts the render-trained sets' (80 pixels)."""
    from referee.vision.classifier import resolve_model
    from referee_lab.renders import PENTA_LABELS, render_squares, write_hard_crop_folder

    tilt = (30.0, 30.0)
    squares = render_squares("penta", 300_000, tilt=tilt).samples["penta"]
    model = resolve_model("penta")[0]
    assert write_hard_crop_folder(str(tmp_path / "all"), range(300_000, 300_001), model,
                                  below=0.0, lead_below=100.0, tilt=tilt) == len(squares)
    kept = folder_samples(tmp_path / "all", labels=PENTA_LABELS, margin=0.3)
    assert [s.label for s in kept] == [s.label for s in squares]
    assert kept[0].image.shape == (80, 80, 3)
    with pytest.raises(ModelError, match="labels"):
        write_hard_crop_folder(str(tmp_path / "x"), range(1), model, pieces="zensu")


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_penta_fine_tuning_starts_from_exactly_the_committed_model() -> None:
    """The grid head (a flattened feature map into the linear layer) unfolds too: the
    training net computes what onnxruntime computes with the committed penta model."""
    import torch

    from referee.vision.classifier import Classifier, resolve_model
    from referee_lab.render_training import RECIPES, make_net
    from referee_lab.renders import render_squares
    from referee_lab.training import load_onnx_weights, normalise

    classifier = Classifier.load("penta")
    samples = render_squares("penta", 300_001, tilt=(30.0, 30.0)).samples["penta"]
    crops = np.stack([augmented_crop(s, RECIPES["penta"].spec, np.random.default_rng(i),
                                     RECIPES["penta"].augment) for i, s in enumerate(samples)])
    net = make_net(RECIPES["penta"])
    load_onnx_weights(net, resolve_model("penta")[0], torch.from_numpy(normalise(crops)))
    net.eval()
    with torch.no_grad():
        got = torch.softmax(net(torch.from_numpy(normalise(crops))), dim=1).numpy()
    np.testing.assert_allclose(got, classifier.predict(crops), atol=1e-5)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_render_batches_draw_hard_examples_as_their_share() -> None:
    from referee_lab.render_training import RECIPES, BalancedBatches

    plain = [Sample(_die_image(), square_quad((60.0, 60.0), 56.0), k, "plain") for k in range(6)]
    hard = [Sample(_die_image(), square_quad((60.0, 60.0), 56.0), 1, "hard")]
    recipe = dataclasses.replace(RECIPES["penta"], p_hard=0.3)
    batches = BalancedBatches(plain, recipe, np.random.default_rng(3), hard)
    assert 90 < [batches.sample().group for _ in range(400)].count("hard") < 150
    # Without hard examples no draw is spent on them: the stream is the recipe's as before.
    a = BalancedBatches(plain, recipe, np.random.default_rng(4))
    b = BalancedBatches(plain, RECIPES["penta"], np.random.default_rng(4))
    assert [id(a.sample()) for _ in range(50)] == [id(b.sample()) for _ in range(50)]


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs the lab extra")
def test_penta_training_crops_are_ones_the_committed_model_reads() -> None:
    """The penta recipe's augmented crops stay crops of real pieces: the committed model
    reads them as it reads the run time's (with mirror flips, as the dice recipe has, it read
    a third of them wrong: a mirrored piece's signs trade corners)."""
    from referee.vision.classifier import Classifier
    from referee_lab.render_training import RECIPES
    from referee_lab.renders import render_squares

    recipe = RECIPES["penta"]
    assert recipe.augment.p_flip == recipe.augment_mild.p_flip == 0.0
    pieces = [s for seed in range(6) for s in render_squares("penta", seed, hands=0.0)
              .samples["penta"] if s.label != 0]
    rng = np.random.default_rng(5)
    crops = np.stack([augmented_crop(s, recipe.spec, rng, recipe.augment_mild) for s in pieces])
    read = Classifier.load("penta").predict(crops).argmax(axis=1)
    assert (read == [s.label for s in pieces]).mean() > 0.9  # 97% (66 of 68); mirrored: 65%
