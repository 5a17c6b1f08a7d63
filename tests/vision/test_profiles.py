"""The sub-pixel line fit (profiles.py) on boards whose structure pulls a per-square fit off
the line: coloured cells inset from thick printed lines (each line shows one strong edge
towards a light cell and a faint one towards a dark cell) and a border line beside the grid.
A 3x3 board with such a border is held to it only with the fit that pairs a line's two edges
by polarity (`ridges`): its two inner lines a family leave the outer lines to weigh in early,
and the light gap between the outer line and the border is as symmetric as a line. (Not yet
held to this: 6x9 and 7x7 boards drawn this way at about 45 px a square, which end about 1%
of the diagonal off; see benchmarks/localise_accuracy.md.)"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.vision.line_profiles import (
    checker_steps,
    fit_profiles,
    grid_segments,
    line_ends,
    line_polarity,
    ridge_score,
)
from referee.vision.pose import BoardPose, corner_error

PX = 80  # texture pixels per square


def inset_board(files: int, ranks: int, *, ink: tuple[int, int, int] = (40, 70, 30),
                inset_px: int = round(0.04 * PX)) -> np.ndarray:
    """Dark green lines 0.08 square wide; cells alternately dark red and cream, inset; a
    thick border line 0.1 square outside the grid. `inset_px=0` and an ink like the paper:
    a checker without lines."""
    margin = PX
    w, h = files * PX + 2 * margin, ranks * PX + 2 * margin
    tex = np.full((h, w, 3), (200, 225, 230), np.uint8)
    x0, y0 = margin, margin
    cv2.rectangle(tex, (x0 - 14, y0 - 14), (x0 + files * PX + 14, y0 + ranks * PX + 14), (40, 70, 30), 5)
    half = round(0.04 * PX)
    cv2.rectangle(tex, (x0 - half, y0 - half), (x0 + files * PX + half, y0 + ranks * PX + half), ink, -1)
    for f in range(files):
        for r in range(ranks):
            colour = (40, 40, 120) if (f + r) % 2 == 0 else (170, 205, 215)
            cv2.rectangle(tex, (x0 + f * PX + inset_px, y0 + r * PX + inset_px),
                          (x0 + (f + 1) * PX - inset_px - 1, y0 + (r + 1) * PX - inset_px - 1), colour, -1)
    return tex


def seen(files: int, ranks: int, seed: int, tex: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The board photographed at a tilt: the frame and the true board -> image homography."""
    rng = np.random.default_rng(seed)
    tex = inset_board(files, ranks) if tex is None else tex
    board_to_tex = np.array([[PX, 0, PX - 0.5], [0, -PX, PX + ranks * PX - 0.5], [0, 0, 1.0]])
    corners = np.array([[0, 0], [files, 0], [files, ranks], [0, ranks]], np.float64)
    centre = np.array([640.0, 360.0])
    angle = rng.uniform(0, 2 * np.pi)
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    side = 420.0 / max(files, ranks)
    image_pts = (corners - [files / 2, ranks / 2]) * [side, -side] @ rot.T + centre
    image_pts[2:] = centre + (image_pts[2:] - centre) * 0.8  # far side smaller: a tilt
    h_true = cv2.getPerspectiveTransform(corners.astype(np.float32), image_pts.astype(np.float32))
    tex_to_image = h_true @ np.linalg.inv(board_to_tex)
    frame = cv2.warpPerspective(tex, tex_to_image, (1280, 720), flags=cv2.INTER_AREA,
                                borderValue=(90, 110, 130))
    frame = cv2.GaussianBlur(frame, (0, 0), 0.8)
    noise = rng.normal(0, 3, frame.shape)
    return np.clip(frame + noise, 0, 255).astype(np.uint8), h_true


@pytest.mark.parametrize(("files", "ranks", "seed"), [(5, 5, 1), (5, 6, 2)])
def test_the_fit_finds_line_centres_not_the_strong_edges(files: int, ranks: int, seed: int) -> None:
    frame, h_true = seen(files, ranks, seed)
    truth = BoardPose.from_homography(h_true, files, ranks)
    # a coarse grid up to a tenth of a square off, as the edge-map search leaves it
    nudge = np.array([[1.0, 0.01, 0.06], [-0.005, 1.0, -0.05], [0.0, 0.0, 1.0]])
    fitted = fit_profiles(frame, h_true @ nudge, files, ranks, (0.15, 0.08, 0.04))
    assert fitted is not None
    found = BoardPose.from_homography(fitted, files, ranks)
    assert corner_error(found, truth.corners_array, any_orientation=False) < 0.003 * truth.diagonal


def test_a_3x3_board_is_fitted_to_its_outer_line_not_to_the_border_beside_it() -> None:
    frame, h_true = seen(3, 3, 3)
    truth = BoardPose.from_homography(h_true, 3, 3)
    # the grid drawn a twentieth of a square too large a side, as the coarse search may leave it
    grow = np.array([[1.55 / 1.5, 0.0, -0.05], [0.0, 1.55 / 1.5, -0.05], [0.0, 0.0, 1.0]])
    fitted = fit_profiles(frame, h_true @ grow, 3, 3, (0.15, 0.08, 0.04), outer=(1.0, 1.0, 1.0),
                          outer_shift=0.3, ridges=True)
    assert fitted is not None
    found = BoardPose.from_homography(fitted, 3, 3)
    assert corner_error(found, truth.corners_array, any_orientation=False) < 0.005 * truth.diagonal


@pytest.mark.parametrize(("ink", "inset_px", "polarity"), [
    ((40, 70, 30), round(0.04 * PX), -1),      # dark printed lines
    ((245, 250, 250), round(0.04 * PX), 1),    # light lines (cells inset from a white ground)
    ((200, 225, 230), 0, 0),                   # a checker without lines: steps, no ridges
])
def test_line_polarity_tells_printed_lines_from_steps(ink: tuple[int, int, int], inset_px: int,
                                                      polarity: int) -> None:
    frame, h_true = seen(5, 5, 4, inset_board(5, 5, ink=ink, inset_px=inset_px))
    assert line_polarity(frame, h_true, 5, 5, 0.15) == polarity


def _about_the_middle(scale: float, files: int, ranks: int) -> np.ndarray:
    """A board -> board map scaling the grid about its middle."""
    return np.array([[scale, 0.0, files / 2 * (1 - scale)], [0.0, scale, ranks / 2 * (1 - scale)],
                     [0.0, 0.0, 1.0]])


def test_line_ends_tell_the_grid_from_one_on_its_border_or_inside_it() -> None:
    frame, h_true = seen(3, 3, 3)
    on_border = h_true @ _about_the_middle((3 + 2 * 0.175) / 3, 3, 3)  # outer lines on the border
    inside = h_true @ _about_the_middle((3 - 2 * 0.12) / 3, 3, 3)      # ... a little inside the grid
    true_ends = line_ends(frame, h_true, 3, 3)
    assert true_ends >= 0.75
    # the border has no lines meeting it; lines go on beyond an outer line inside the grid
    assert line_ends(frame, on_border, 3, 3) < true_ends - 0.5
    assert line_ends(frame, inside, 3, 3) < true_ends - 0.5


def test_ridge_score_tells_the_grid_from_one_a_twentieth_of_a_square_off() -> None:
    frame, h_true = seen(3, 3, 3)
    polarity = line_polarity(frame, h_true, 3, 3, 0.15)
    assert polarity == -1
    true_score = ridge_score(frame, h_true, 3, 3, polarity)
    assert true_score > 6.0  # of 8 lines
    # a twentieth of a square inside or outside on every side: the inner lines still meet the
    # outer ones and stop there (line ends as good as the grid's), but no line is centred on
    # a printed line any more
    for scale in ((3 - 2 * 0.05) / 3, (3 + 2 * 0.05) / 3):
        near = h_true @ _about_the_middle(scale, 3, 3)
        assert line_ends(frame, near, 3, 3) >= line_ends(frame, h_true, 3, 3) - 0.13
        assert ridge_score(frame, near, 3, 3, polarity) < true_score - 4.0
    # the whole grid 0.04 square along one family: that family's four lines miss
    shifted = h_true @ np.array([[1.0, 0.0, 0.04], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert ridge_score(frame, shifted, 3, 3, polarity) < true_score - 2.5


def test_ridge_score_is_nothing_on_a_checker_without_lines() -> None:
    frame, h_true = seen(3, 3, 3, inset_board(3, 3, ink=(200, 225, 230), inset_px=0))
    assert line_polarity(frame, h_true, 3, 3, 0.15) == 0
    assert ridge_score(frame, h_true, 3, 3, 0) == 0.0


def checker_with_dice(gap: float) -> np.ndarray:
    """A 3x3 checker without lines (its light squares the margin's tone, a border line
    outside) with a white die, outlined dark, in five squares, `gap` square in from the
    square's sides: each die's edges run along two lines, near them."""
    tex = inset_board(3, 3, ink=(200, 225, 230), inset_px=0)
    side = round(0.6 * PX)
    for f, r in ((0, 0), (2, 0), (0, 2), (2, 2), (1, 1)):
        x0, y0 = PX + f * PX + round(gap * PX), PX + r * PX + round(gap * PX)
        cv2.rectangle(tex, (x0, y0), (x0 + side, y0 + side), (245, 245, 245), -1)
        cv2.rectangle(tex, (x0, y0), (x0 + side, y0 + side), (20, 20, 20), 2)
    return tex


def test_checker_steps_alternate_square_by_square() -> None:
    frame, h_true = seen(3, 3, 5, checker_with_dice(0.08))
    steps = checker_steps(frame, h_true, 3, 3, 0.15)
    assert steps is not None
    sub = grid_segments(3, 3)
    # board y runs down the texture: square (f, r) is dark red when f + r is even, and the
    # tone falls from a light square into a dark one (the colour sum drops)
    along = np.floor(np.where(sub.on_x[:, None], sub.base[:, :, 1], sub.base[:, :, 0]).mean(axis=1))
    dark_after = ((sub.index + along).astype(int) % 2 == 0) & (sub.index != 3)
    inner = (sub.index > 0) & (sub.index < 3)
    assert np.all(steps[inner & dark_after] == -1.0)
    assert np.all(steps[inner & ~dark_after] == 1.0)
    # a board of one tone has no checker phase to read
    plain = inset_board(3, 3, ink=(200, 225, 230), inset_px=0)
    plain[PX:4 * PX, PX:4 * PX] = (40, 40, 120)
    frame, h_true = seen(3, 3, 5, plain)
    assert checker_steps(frame, h_true, 3, 3, 0.15) is None


@pytest.mark.parametrize("gap", [0.06, 0.1])
def test_a_checker_is_fitted_to_its_alternating_steps_not_to_dice_edges(gap: float) -> None:
    frame, h_true = seen(3, 3, 7, checker_with_dice(gap))
    truth = BoardPose.from_homography(h_true, 3, 3)
    assert line_polarity(frame, h_true, 3, 3, 0.15) == 0
    # a coarse grid a twentieth of a square off, turned a little
    start = h_true @ np.array([[1.0, 0.02, 0.06], [0.0, 1.0, -0.05], [0.0, 0.0, 1.0]])
    steps = checker_steps(frame, start, 3, 3, 0.15)
    assert steps is not None
    errors = {}
    for checker in (False, True):
        fitted = fit_profiles(frame, start, 3, 3, (0.15, 0.08, 0.06), outer=(1.0, 1.0, 1.0),
                              outer_shift=0.3, ridges=True, steps=steps if checker else None)
        assert fitted is not None
        found = BoardPose.from_homography(fitted, 3, 3)
        errors[checker] = corner_error(found, truth.corners_array, any_orientation=False) / truth.diagonal
    # the plain fit takes a die's edge for a line's (a symmetric edge near it); the signed
    # step that alternates with the squares is only the line
    assert errors[True] < 0.002
    assert errors[False] > 0.01
