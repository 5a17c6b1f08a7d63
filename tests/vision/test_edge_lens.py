"""A lens read off a frame's own edges before any board is found (`edge_lens.edges_k`, a
plumb-line estimate), the board finder's retry through it where the first search, on the
bent lines, refuses, and the lens fitted again to the board's own lines in the model that
bent them (`own_lens.best_lens`)."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from numpy.typing import NDArray

from referee.errors import NoBoardError
from referee.vision.board_finder import find_board_and_lens
from referee.vision.edge_lens import edges_k
from referee.vision.lens_bend import DIVISION, POLYNOMIAL, Radial
from referee.vision.pose import FloatArray, corner_error
from referee.vision.settings import default_settings
from tests.vision import real_boards
from tests.vision.real_boards import FILES, RANKS

WIDTH, HEIGHT = 640, 480
SQUARE = 40  # pixels of the straight checker


def checker(k: float, *, noise: float = 4.0) -> NDArray[np.uint8]:
    """A checker of `SQUARE`-pixel squares filling a 640x480 frame, bent through the division
    model k (x_u = c + (x - c) / (1 + k r^2), r in half diagonals): each pixel of the frame
    shows the straight checker at x_u; a little sensor noise."""
    big = 2048
    yy, xx = np.indices((big, big))
    straight = np.where((xx // SQUARE + yy // SQUARE) % 2 == 0, 200.0, 55.0).astype(np.float32)
    straight = cv2.GaussianBlur(straight, (0, 0), 0.8)
    centre = np.array([(WIDTH - 1) / 2, (HEIGHT - 1) / 2])
    scale = float(np.hypot(WIDTH, HEIGHT) / 2)
    xs, ys = np.meshgrid(np.arange(WIDTH, dtype=np.float64), np.arange(HEIGHT, dtype=np.float64))
    d = (np.stack([xs, ys], axis=-1) - centre) / scale
    u = d / (1 + k * np.sum(d * d, axis=-1))[..., None] * scale + big / 2 + 7.0  # no line through the centre
    bent = cv2.remap(straight, u[..., 0].astype(np.float32), u[..., 1].astype(np.float32), cv2.INTER_LINEAR)
    rng = np.random.default_rng(5)
    return np.asarray(np.clip(bent + rng.normal(0, noise, bent.shape), 0, 255), np.uint8)


@pytest.mark.parametrize("k", [-0.15, -0.3])
def test_the_lens_bending_a_checker_is_read_off_its_edges(k: float) -> None:
    """A checker bent through a barrel lens of division-model k: `edges_k` reads k within
    0.02 (under one step of `LAMBDAS`, 0.025, which moves the frame's corners by about 10
    pixels: the lens `own_lens` refits from the board's lines after)."""
    found = edges_k(checker(k))
    assert found is not None and abs(found - k) < 0.02, found


def test_straight_edges_read_no_lens() -> None:
    """The same checker through no lens, a blank frame and a frame of noise: no lens read."""
    assert edges_k(checker(0.0)) is None
    assert edges_k(np.full((HEIGHT, WIDTH), 128, np.uint8)) is None
    noise = np.random.default_rng(3).integers(0, 256, (HEIGHT, WIDTH)).astype(np.uint8)
    assert edges_k(noise) is None


def test_a_board_the_first_search_refuses_is_found_through_the_lens_of_its_edges() -> None:
    """left09 as taken (OpenCV's sample photo, its real barrel lens, no camera file): the
    first search, on the bent lines, refuses; through the lens its edges show the board is
    found within 1% of the diagonal, and that lens is the one adopted."""
    case = next(real_boards.cases(("as taken",), ("left09",)))
    s = default_settings().localise
    with pytest.raises(NoBoardError):  # no lens looked for: the first search alone
        find_board_and_lens(case.frame, FILES, RANKS, settings=replace(s, lens_bend_ratio=0.0))
    found = find_board_and_lens(case.frame, FILES, RANKS)
    assert found.lens is not None and found.lens.dist_coeffs[0] < -0.1
    assert corner_error(found.pose, case.corners) < 0.01 * case.diagonal


def bent_board(lens: Radial) -> tuple[NDArray[np.uint8], FloatArray]:
    """A 10x7 chessboard of 36-pixel squares on a grey table, tilted to fill most of a 640x480
    frame, bent through `lens` (each pixel of the frame shows the straight scene where the
    lens straightens it); the board's corners in the straight scene (frame pixels)."""
    square, big = 36, 1400
    scene = np.full((big, big), 90, np.float32)
    x0, y0 = big / 2 - 5 * square, big / 2 - 3.5 * square
    for i in range(FILES):
        for j in range(RANKS):
            cv2.rectangle(scene, (int(x0 + i * square), int(y0 + j * square)),
                          (int(x0 + (i + 1) * square) - 1, int(y0 + (j + 1) * square) - 1),
                          25 if (i + j) % 2 == 0 else 235, -1)
    on_scene = np.array([[x0, y0], [x0 + FILES * square, y0], [x0 + FILES * square, y0 + RANKS * square],
                         [x0, y0 + RANKS * square]]) - 0.5
    centre = np.array([(WIDTH - 1) / 2, (HEIGHT - 1) / 2])
    scale = float(np.hypot(WIDTH, HEIGHT) / 2)
    corners = np.array([[-0.62, -0.45], [0.66, -0.42], [0.6, 0.5], [-0.58, 0.44]]) * scale + centre
    tilt = cv2.getPerspectiveTransform(corners.astype(np.float32), on_scene.astype(np.float32))
    xs, ys = np.meshgrid(np.arange(WIDTH, dtype=np.float64), np.arange(HEIGHT, dtype=np.float64))
    seen = (np.stack([xs, ys], axis=-1).reshape(-1, 2) - centre) / scale
    straight = (lens.straightened(seen) + lens.centre) * scale + centre
    maps = cv2.perspectiveTransform(straight.reshape(-1, 1, 2), tilt).reshape(HEIGHT, WIDTH, 2)
    blurred = cv2.GaussianBlur(scene, (0, 0), 0.7)
    bent = cv2.remap(blurred, maps[..., 0].astype(np.float32), maps[..., 1].astype(np.float32),
                     cv2.INTER_LINEAR, borderValue=90.0)
    noisy = np.clip(bent + np.random.default_rng(1).normal(0, 3.0, bent.shape), 0, 255).astype(np.uint8)
    return np.asarray(cv2.cvtColor(noisy, cv2.COLOR_GRAY2BGR), np.uint8), corners


@pytest.mark.parametrize("lens", [Radial(-0.2, DIVISION, (0.04, -0.02)),
                                  Radial(-0.28, POLYNOMIAL, (0.04, -0.02))])
def test_a_board_is_read_through_a_lens_of_the_model_that_bent_it(lens: Radial) -> None:
    """A chessboard bent through a barrel lens of either model about a centre 18 px off the
    frame's (the division model, nearer a real wide lens; OpenCV's k1 alone, which the
    division model misses by a few pixels at the board's corners): the lens read is of that
    model (OpenCV's model holds the polynomial as k1 alone, the division model with k2 and
    k3 too), its centre within 4 px, and the board, straightened through the true lens, lies
    within 0.3% of its diagonal of the truth."""
    frame, truth = bent_board(lens)
    found = find_board_and_lens(frame, FILES, RANKS)
    assert found.lens is not None
    assert (found.lens.dist_coeffs[1] == 0.0) == (lens.model == POLYNOMIAL), found.lens.dist_coeffs
    centre = np.array([(WIDTH - 1) / 2, (HEIGHT - 1) / 2])
    scale = float(np.hypot(WIDTH, HEIGHT) / 2)
    assert np.linalg.norm(found.lens.K[:2, 2] - (centre + np.array(lens.centre) * scale)) < 4.0
    straight = (lens.straightened((found.pose.corners_array - centre) / scale) + lens.centre) * scale + centre
    error = min(float(np.max(np.linalg.norm(np.roll(order, turn, axis=0) - truth, axis=1)))
                for order in (straight, straight[::-1]) for turn in range(4))
    assert error < 0.003 * float(np.linalg.norm(truth[2] - truth[0])), error
