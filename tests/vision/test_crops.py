from __future__ import annotations

import numpy as np
import pytest

from referee.vision.crops import (
    CropSpec,
    box_square,
    crop_square,
    crop_squares,
    square_quad,
    widen,
)


def _target_image() -> np.ndarray:
    """Black 200x200 image with a white square from (60, 40) to (120, 100) whose top-left
    quarter is red: the square's orientation shows in its crop."""
    image = np.zeros((200, 200, 3), np.uint8)
    image[40:100, 60:120] = 255
    image[40:70, 60:90] = (0, 0, 255)
    return image


def test_square_quad_corners_and_turn() -> None:
    quad = square_quad((10.0, 20.0), 4.0)
    assert quad.tolist() == [[8, 18], [12, 18], [12, 22], [8, 22]]
    turned = square_quad((0.0, 0.0), 2.0, 90.0)
    # Turned 90 degrees counter-clockwise on screen (y down): TL goes to the bottom-left.
    np.testing.assert_allclose(turned[0], [-1.0, 1.0], atol=1e-6)


def test_box_square_is_centred_on_the_longer_side() -> None:
    quad = box_square((10, 20, 30, 60), scale=1.5)  # 20 wide, 40 tall
    np.testing.assert_allclose(quad.mean(axis=0), [20, 40])
    np.testing.assert_allclose(quad[1, 0] - quad[0, 0], 60.0)
    with pytest.raises(ValueError):
        box_square((5, 5, 5, 9))


def test_widen_grows_about_the_centre() -> None:
    quad = square_quad((50.0, 50.0), 10.0)
    np.testing.assert_allclose(widen(quad, 0.5), square_quad((50.0, 50.0), 20.0))


def test_crop_puts_the_square_inside_its_margin() -> None:
    spec = CropSpec(size=48, margin=0.25)  # the square: the middle 32 pixels
    assert spec.border == pytest.approx(8.0)
    crop = crop_square(_target_image(), square_quad((90.0, 70.0), 60.0), spec)
    assert crop.shape == (48, 48, 3) and crop.dtype == np.uint8
    inside = crop[9:39, 9:39]
    assert inside.max(axis=2).min() == 255  # only square pixels (white or red) inside
    assert crop[:7, :].max() == 0 and crop[41:, :].max() == 0  # black margin
    assert tuple(crop[12, 12]) == (0, 0, 255)  # red corner stays top-left
    assert tuple(crop[35, 35]) == (255, 255, 255)


def test_crop_follows_a_turned_quad() -> None:
    spec = CropSpec(size=48, margin=0.25)
    crop = crop_square(_target_image(), square_quad((90.0, 70.0), 60.0, 90.0), spec)
    # The quad's TL corner lies at the image's bottom-left of the square: red now shows at
    # the crop's top-right.
    assert tuple(crop[12, 35]) == (0, 0, 255)
    assert tuple(crop[12, 12]) == (255, 255, 255)


def test_crop_of_a_big_square_is_averaged_not_aliased() -> None:
    stripes = np.zeros((400, 400, 3), np.uint8)
    stripes[:, ::2] = 255  # one-pixel stripes: a point sampler would give black or white
    crop = crop_square(stripes, square_quad((200.0, 200.0), 300.0), CropSpec(24, 0.1))
    assert 100 < crop.mean() < 155 and crop.std() < 20


def test_crop_at_the_image_edge_reflects() -> None:
    image = np.full((50, 50, 3), 90, np.uint8)
    crop = crop_square(image, square_quad((2.0, 2.0), 20.0), CropSpec(32, 0.1))
    assert crop.min() == 90 == crop.max()  # no black band outside the image


def test_crop_squares_batches_in_order() -> None:
    image = _target_image()
    quads = [square_quad((90.0, 70.0), 60.0), square_quad((170.0, 170.0), 20.0)]
    batch = crop_squares(image, quads, CropSpec(32, 0.1))
    assert batch.shape == (2, 32, 32, 3)
    assert batch[0].max() == 255 and batch[1].max() == 0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        CropSpec(size=4)
    with pytest.raises(ValueError):
        CropSpec(margin=1.5)
    with pytest.raises(ValueError):
        crop_square(np.zeros((10, 10), np.uint8), square_quad((5.0, 5.0), 4.0), CropSpec())
    with pytest.raises(ValueError):
        crop_square(_target_image(), np.zeros((3, 2), np.float32), CropSpec())
