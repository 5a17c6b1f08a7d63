"""Lines that bend as no lens in reach bends them (a paper board curling in a render) are
not taken for a lens: the board is read as found, not refused."""

from __future__ import annotations

import cv2
import numpy as np

from referee.vision.board_finder import find_board_and_lens
from referee.vision.lens_bend import LAMBDAS, measure_bend
from referee.vision.lines import to_grey
from tests import DATA

FRAME = DATA / "renders" / "rinne-700010-frame0.jpg"
TRUTH = np.array([(433.9, 672.7), (900.4, 583.4), (767.4, 127.2), (377.5, 188.5)])


def test_a_curled_paper_board_is_read_not_refused():
    frame = cv2.imread(str(FRAME))
    found = find_board_and_lens(frame, 5, 6)
    assert found.lens is None  # no lens estimated: its bend is no lens's
    bend = measure_bend(to_grey(frame), found.pose)
    assert bend is not None and bend.k == LAMBDAS[0]  # at the end of the ks tried
    corners = found.pose.corners_array
    error = min(np.abs(np.roll(corners, k, axis=0) - TRUTH).max() for k in range(4))
    assert error < 6.0  # pixels, of a 600-pixel diagonal
