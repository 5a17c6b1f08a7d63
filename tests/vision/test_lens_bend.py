"""Lines that bend as no lens in reach bends them (a paper board curling in a render) are
not taken for a lens, nor lines whose points scatter so that a lens barely fits them better
than straight lines: the board is read, not refused."""

from __future__ import annotations

import cv2
import numpy as np

from referee.vision.board_finder import find_board_and_lens
from referee.vision.lens_bend import LAMBDAS, measure_bend
from referee.vision.lines import to_grey
from tests import DATA

FRAME = DATA / "renders" / "rinne-700010-frame0.jpg"
TRUTH = np.array([(433.9, 672.7), (900.4, 583.4), (767.4, 127.2), (377.5, 188.5)])
SCATTERED = DATA / "renders" / "renaissance-890016-frame0.jpg"
SCATTERED_TRUTH = np.array([(864.3, 106.9), (348.5, 145.6), (387.7, 660.5), (901.2, 623.2)])


def off_by(corners: np.ndarray, truth: np.ndarray) -> float:
    """The largest corner error in pixels, the corners taken from any of the four starts."""
    return float(min(np.abs(np.roll(corners, k, axis=0) - truth).max() for k in range(4)))


def test_a_curled_paper_board_is_read_not_refused():
    frame = cv2.imread(str(FRAME))
    found = find_board_and_lens(frame, 5, 6)
    assert found.lens is None  # no lens estimated: its bend is no lens's
    bend = measure_bend(to_grey(frame), found.pose)
    assert bend is not None and bend.k == LAMBDAS[0]  # at the end of the ks tried
    assert off_by(found.pose.corners_array, TRUTH) < 6.0  # pixels, of a 600-pixel diagonal


def test_a_lens_that_barely_fits_the_lines_better_is_no_bend_left():
    # the empty board at the start of whole game 890016: its lines read a bow of 0.09 squares
    # (k -0.275) fitted only 1.15 times straighter, and the same bow through the drawn lens;
    # read through the lens estimated from them, they bow as much, no straighter fitted
    frame = cv2.imread(str(SCATTERED))
    found = find_board_and_lens(frame, 7, 7)
    assert off_by(found.pose.corners_array, SCATTERED_TRUTH) < 0.01 * 730  # of the diagonal
