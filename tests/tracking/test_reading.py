"""The players' colours learnt from the set-up reading (`ColorModel.learn`)."""

from __future__ import annotations

import numpy as np
import pytest

from referee.app.state_machine import MIN_COLOR_SEPARATION
from referee.tracking.reading import ColorModel, Reading

# The set-up reading of tests/data/footage/rinne-takeback.mp4 under numpy 1.26 (Lab): the
# first player's white dice, then the second's cyan ones, each sample the median of its crop's
# middle. Two white dice stand off the middle of their squares, so their crops read mostly
# the board beside them: as dark as the cyan dice, whose crops show the board too.
WHITE = [[88.8, 3.0, 1.0], [95.7, 0.0, 0.0], [89.2, 0.0, 2.0], [91.0, 1.0, 1.0], [93.0, 0.0, 1.0]]
WHITE_READ_DARK = [[37.8, 7.0, 9.0], [42.2, 9.0, 11.0]]
CYAN = [[33.3, -7.0, 7.0], [43.9, -8.0, 2.0], [39.6, -17.0, 0.0], [44.3, 1.0, 5.0],
        [43.7, -18.0, -1.0]]


def learnt(first: list[list[float]], second: list[list[float]]) -> ColorModel:
    colors = np.array(first + second)
    squares = len(colors)
    reading = Reading(("empty", "king"), np.tile([0.0, 1.0], (squares, 1)), colors)
    return ColorModel.learn(reading, {sq: int(sq >= len(first)) for sq in range(squares)})


@pytest.mark.parametrize("dark", [0, 1, 2])
def test_white_dice_whose_crops_read_dark_still_leave_the_players_apart(dark: int) -> None:
    """A median over both players' pieces went from 2.9 to 8.4 with the two dark samples, and
    the start was refused at 2.9999 (numpy 2's reading: 3.0104, let through); each player's
    own median, averaged, goes from 5.4 to 7.2, and the start is taken at 3.48."""
    white = WHITE[:len(WHITE) - dark] + WHITE_READ_DARK[:dark]
    for colors in (learnt(white, CYAN), learnt(CYAN, white)):
        assert colors.separation > 1.1 * MIN_COLOR_SEPARATION


def test_one_colour_for_both_players_is_still_refused() -> None:
    rng = np.random.default_rng(7)
    same = rng.normal([60.0, 10.0, 10.0], 4.0, (10, 3)).tolist()
    assert learnt(same[:5], same[5:]).separation < MIN_COLOR_SEPARATION
