"""Finding a die in its square's crop (`vision.locate`): drawn dice of known boxes, dice
beside a neighbour, board with no die, the way back to the image, and the real photographs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from referee.vision.classifier import Classifier
from referee.vision.crops import DIE_TO_SQUARE, CropSpec, crop_square
from referee.vision.locate import find_piece, piece_quad
from referee_lab.datasets import RealDice, fixed_crops
from referee_lab.evaluate import EMPTIES_PER_PHOTO, EVAL_SEED, held_out_photos

SPEC = CropSpec(64, 0.12)
BOARD = (150, 160, 170)  # BGR: a light board


def _crop(die: tuple[int, int, int, int], colour: tuple[int, int, int] = (30, 30, 200),
          noise: float = 4.0, seed: int = 0) -> np.ndarray:
    """A 64-pixel crop of board with a die drawn over x0:x1, y0:y1, a few pips on it, and
    sensor noise."""
    rng = np.random.default_rng(seed)
    crop = np.empty((64, 64, 3), np.float64)
    crop[:] = BOARD
    x0, y0, x1, y1 = die
    crop[y0:y1, x0:x1] = colour
    crop[(y0 + y1) // 2 - 2:(y0 + y1) // 2 + 2, (x0 + x1) // 2 - 2:(x0 + x1) // 2 + 2] = 250
    return np.clip(crop + rng.normal(0, noise, crop.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("die", [(20, 20, 44, 44), (14, 16, 50, 48), (24, 22, 40, 38)])
def test_a_drawn_die_is_found_to_a_pixel(die: tuple[int, int, int, int]) -> None:
    box = find_piece(_crop(die), SPEC)
    assert box is not None
    x0, y0, x1, y1 = die
    assert abs(box.x - (x0 + x1) / 2) <= 1 and abs(box.y - (y0 + y1) / 2) <= 1
    assert abs(box.side - max(x1 - x0, y1 - y0)) <= 2


def test_a_neighbour_at_the_crop_edge_is_left_out() -> None:
    """A die of the same colour in the next square, reaching into the crop's margin and
    touching the die by a corner's shadow, is no part of the die found."""
    crop = _crop((22, 22, 42, 42))
    crop[40:64, 42:64] = crop[30, 30]  # the neighbour, from the die's own colour
    box = find_piece(crop, SPEC)
    assert box is not None and abs(box.side - 20) <= 3 and abs(box.x - 32) <= 2


@pytest.mark.parametrize("seed", range(5))
def test_bare_board_shows_no_die(seed: int) -> None:
    rng = np.random.default_rng(seed)
    crop = np.clip(np.array(BOARD) + rng.normal(0, 6, (64, 64, 3)), 0, 255).astype(np.uint8)
    crop[:, 5:7] = 60  # the square's own grid line in the margin
    assert find_piece(crop, SPEC) is None


def test_a_die_off_the_centre_or_as_wide_as_two_squares_is_no_die_found() -> None:
    assert find_piece(_crop((44, 44, 60, 60)), SPEC) is None  # its centre is board
    assert find_piece(_crop((0, 0, 64, 64)), SPEC) is None  # no board left to tell it from


def test_the_crop_round_the_die_stands_the_model_s_cut_round_it() -> None:
    """The die found, mapped back through its square's perspective: the new square is centred
    on the die and `DIE_TO_SQUARE` times its side, and cutting it shows the die at that share."""
    frame = np.full((240, 240, 3), BOARD, np.uint8)
    frame[100:130, 110:140] = (30, 30, 200)  # a 30-pixel die, right of its square's centre
    quad = np.array([[60, 60], [180, 60], [180, 180], [60, 180]], np.float32)
    box = find_piece(crop_square(frame, quad, SPEC), SPEC)
    assert box is not None
    around = piece_quad(quad, box, SPEC)
    assert np.allclose(around.mean(axis=0), (125, 115), atol=1.5)
    # to a pixel of the crop (2.3 image pixels here) on each side of the die
    assert abs(np.linalg.norm(around[1] - around[0]) - 30 * DIE_TO_SQUARE) <= 2 * 2.3 * DIE_TO_SQUARE
    again = find_piece(crop_square(frame, around, SPEC), SPEC)
    square = SPEC.size - 2 * SPEC.border
    assert again is not None and abs(again.side / square - 1 / DIE_TO_SQUARE) < 0.05


def test_real_dice_are_found_in_their_squares(real_dice: Path, dice_model: Path) -> None:
    """On the photos the dice model held out for validation, cut at 1.5 and 1.8 times the
    labelled box: most dice are found, near the centre, a steady share of their labelled
    box (the labels run loose: about 0.8), and few bare tray squares show one."""
    photos = RealDice.load("train", real_dice)
    files = held_out_photos(Classifier.load("dice"))
    square = SPEC.size - 2 * SPEC.border
    for cut in (1.5, 1.8):
        dice = fixed_crops(photos.die_samples(files, cut=cut), SPEC)
        boxes = [box for box in (find_piece(crop, SPEC) for crop in dice) if box is not None]
        assert len(boxes) >= 0.7 * len(dice)
        share = np.array([box.side / square * cut for box in boxes])
        assert 0.75 <= np.median(share) <= 0.9 and np.percentile(share, 90) <= 1.05
        off = [np.hypot(box.x - SPEC.size / 2, box.y - SPEC.size / 2) / square for box in boxes]
        assert np.median(off) < 0.05
        bare = photos.empty_samples(np.random.default_rng(EVAL_SEED), EMPTIES_PER_PHOTO, files,
                                    cut=cut)
        assert sum(find_piece(crop, SPEC) is not None for crop in fixed_crops(bare, SPEC)) <= 4
