from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.vision.crops import (
    CropSpec,
    board_canvas,
    box_square,
    crop_square,
    crop_squares,
    fits_canvas,
    grid_crops,
    grid_seam_crops,
    seam_quads,
    square_quad,
    widen,
)
from referee.vision.pose import BoardPose
from referee.vision.warp import top_face_quads


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


def _board_frame(files: int = 5, ranks: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """A 960x540 frame of a tilted board whose squares each have their own colour and a
    dark corner at the far-left (so a crop's turn and shift show), and the squares'
    top-face quads as the run time computes them (rules order)."""
    side = 70
    top = np.zeros((ranks * side + 2 * side, files * side + 2 * side, 3), np.uint8)
    top[:] = (90, 160, 60)
    for index in range(files * ranks):
        rank, file = divmod(index, files)
        x, y = side + file * side, side + (ranks - 1 - rank) * side
        top[y:y + side, x:x + side] = (40 + 40 * file, 60 + 45 * rank, 200 - 9 * index)
        top[y + 6:y + 24, x + 6:x + 24] = 10
    board = np.array([[0, ranks], [files, ranks], [files, 0], [0, 0]], np.float64)  # far first
    in_top = np.array([[side, side], [side * (files + 1), side], [side * (files + 1),
                                                                side * (ranks + 1)],
                       [side, side * (ranks + 1)]], np.float64)
    image = np.array([[330, 90], [650, 110], [760, 470], [200, 440]], np.float64)
    to_image = cv2.getPerspectiveTransform(in_top.astype(np.float32), image.astype(np.float32))
    frame = cv2.warpPerspective(top, to_image, (960, 540), flags=cv2.INTER_LINEAR)
    h = cv2.getPerspectiveTransform(board.astype(np.float32), image.astype(np.float32))
    pose = BoardPose.from_homography(np.asarray(h, np.float64), files, ranks)
    quads = top_face_quads(pose, (960, 540), height=0.0).astype(np.float32)
    return np.asarray(frame, np.uint8), quads


def _close(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int32) - b.astype(np.int32)).mean())


@pytest.mark.parametrize("spec", [CropSpec(56, 0.2), CropSpec(80, 0.3), CropSpec(40, 0.0)])
def test_grid_crops_cut_what_crop_squares_cuts(spec: CropSpec) -> None:
    frame, quads = _board_frame()
    assert fits_canvas(spec, round(spec.size / (1 + 2 * spec.margin)))
    one_by_one = crop_squares(frame, list(quads), spec)
    at_once = grid_crops(frame, list(quads), 5, spec)
    assert at_once.shape == one_by_one.shape == (20, spec.size, spec.size, 3)
    _assert_same_squares(at_once, one_by_one)
    if spec.margin == 0:  # the margin is the only difference: widened on the board's plane
        assert _close(at_once, one_by_one) < 0.01


def _assert_same_squares(at_once: np.ndarray, one_by_one: np.ndarray) -> None:
    """Each crop within a pixel's shift of its counterpart (the margin is widened on the
    board's plane, not about the quad's corner mean), and far from every other square's."""
    for i, crop in enumerate(at_once):
        own = _close(crop, one_by_one[i])
        others = min(_close(crop, other) for j, other in enumerate(one_by_one) if j != i)
        assert own < 6.0 and own < others / 2


def test_grid_seam_crops_cut_what_crop_squares_cuts_from_seam_quads() -> None:
    frame, quads = _board_frame()
    spec = CropSpec(48, 0.1)  # 40 pixels a square, 4 of margin
    seams = [q for _, _, q in seam_quads(quads, 5, 4)]
    assert len(seams) == 4 * 4 + 5 * 3
    one_by_one = crop_squares(frame, seams, spec)
    at_once = grid_seam_crops(frame, list(quads), 5, spec)
    assert at_once.shape == one_by_one.shape
    _assert_same_squares(at_once, one_by_one)  # north-south seams turned alike


def test_grid_crops_fall_back_when_they_cannot_slice() -> None:
    frame, quads = _board_frame()
    odd = CropSpec(48, 0.12)  # 38.7 pixels a square: no whole-pixel canvas
    assert not fits_canvas(odd, 39)
    np.testing.assert_array_equal(grid_crops(frame, list(quads), 5, odd),
                                  crop_squares(frame, list(quads), odd))
    scattered = list(quads[::-1])  # not rules order: no one homography fits
    assert board_canvas(frame, scattered, 5, 40, 8) is None
    np.testing.assert_array_equal(grid_crops(frame, scattered, 5, CropSpec(56, 0.2)),
                                  crop_squares(frame, scattered, CropSpec(56, 0.2)))
