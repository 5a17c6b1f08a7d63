"""The board's outline (its edge against the table) as a way to a small board's grid: the
quadrilaterals of two Hough lines a family that edges support all round, and the grid inside
one at the margin its grid lines show, on OpenCV drawings."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from referee.vision.grid_search import _centre_on_edge, _ring_beats, _ring_tiebreak
from referee.vision.gridfit import NearestEdges, edge_map
from referee.vision.lines import hough_lines, split_families
from referee.vision.outline import edge_centred, margin_grids, outline_quads, ring_agreement
from referee.vision.pose import BoardPose, apply_homography, board_corners
from referee.vision.settings import default_settings

MARGIN = 0.45   # squares of bare board around the grid


def _drawn_board(*, hand: bool) -> tuple[np.ndarray, np.ndarray]:
    """A 3x3 board with dark lines and a light margin of MARGIN squares on a darker table,
    seen in perspective, with dice-like dark squares in three cells; with `hand`, a skin-
    toned blob over the middle of the board hiding most of the inner lines' ends. Returns
    the frame and its board -> pixel map."""
    frame = np.full((540, 720, 3), (60, 80, 100), dtype=np.uint8)
    frame += np.random.default_rng(7).integers(0, 10, frame.shape, dtype=np.uint8)
    grid = np.array([[250.0, 150.0], [470.0, 165.0], [490.0, 390.0], [230.0, 380.0]])
    h = np.asarray(cv2.getPerspectiveTransform(board_corners(3, 3).astype(np.float32),
                                               grid.astype(np.float32)), dtype=np.float64)
    m = MARGIN
    board = apply_homography(h, np.array([[-m, -m], [3 + m, -m], [3 + m, 3 + m], [-m, 3 + m]]))
    cv2.fillConvexPoly(frame, np.rint(board).astype(np.int32), (200, 210, 215), cv2.LINE_AA)
    for k in range(4):
        for a, b in (((k, 0), (k, 3)), ((0, k), (3, k))):
            p, q = apply_homography(h, np.array([a, b], dtype=np.float64))
            cv2.line(frame, tuple(np.rint(p).astype(int)), tuple(np.rint(q).astype(int)), (40, 40, 40), 2,
                     cv2.LINE_AA)
    for cell in ((0, 0), (2, 1), (1, 2)):   # a die in three cells
        die = apply_homography(h, np.array(cell) + np.array([[0.2, 0.2], [0.8, 0.2], [0.8, 0.8], [0.2, 0.8]]))
        cv2.fillConvexPoly(frame, np.rint(die).astype(np.int32), (30, 30, 160), cv2.LINE_AA)
    if hand:
        centre = apply_homography(h, np.array([[1.5, 1.6]]))[0]
        cv2.ellipse(frame, (round(centre[0]), round(centre[1])), (95, 70), 25, 0, 360, (120, 160, 215), -1,
                    cv2.LINE_AA)
    return frame, h


def _outline_and_grids(frame: np.ndarray) -> tuple[np.ndarray, list[tuple[float, np.ndarray]]]:
    s = default_settings().localise
    edges = edge_map(frame, low_ratio=s.canny_low_ratio, percentile=s.canny_percentile)
    near = NearestEdges.of(edges, frame)
    fam_a, fam_b = split_families(hough_lines(edges, s, near), s.family_spread_deg)
    quads = outline_quads(fam_a, fam_b, near, keep=s.outline_quads, min_side=s.outline_min_side,
                          min_side_px=3 * s.min_square_px, tol_px=s.support_tol_px,
                          max_angle_deg=s.support_angle_deg)
    grids = margin_grids(near, quads, 3, 3, margins=s.outline_margins, tol_px=s.support_tol_px,
                         max_angle_deg=s.support_angle_deg)
    return quads, grids


def _off(found: np.ndarray, want: np.ndarray) -> float:
    """Largest corner distance (pixels) between two quadrilaterals, over the namings of the
    corners either way round."""
    return min(float(np.max(np.linalg.norm(np.roll(q, k, axis=0) - want, axis=1)))
               for k in range(4) for q in (found, found[::-1]))


def _squares_off(h: np.ndarray, truth: np.ndarray) -> float:
    """_off of two grids' corners, in squares of the true grid (about 75 px here)."""
    want = apply_homography(truth, board_corners(3, 3))
    side = float(np.linalg.norm(want - np.roll(want, 1, axis=0), axis=1).mean()) / 3
    return _off(apply_homography(h, board_corners(3, 3)), want) / side


def test_the_board_outline_is_among_the_quadrilaterals_and_its_grid_is_found_inside() -> None:
    frame, h = _drawn_board(hand=False)
    quads, grids = _outline_and_grids(frame)
    m = MARGIN
    outline = apply_homography(h, np.array([[-m, -m], [3 + m, -m], [3 + m, 3 + m], [-m, 3 + m]]))
    # the drawn outline is one of the quadrilaterals (its corners within 3 px)
    assert min(_off(q, outline) for q in quads) < 3.0
    # and the best grid inside an outline is the board's: a start within a tenth of a square
    # at every corner, which the sub-pixel fit takes from there
    assert _squares_off(grids[0][1], h) < 0.1


def test_the_grid_is_found_from_the_outline_when_a_hand_hides_its_line_ends() -> None:
    frame, h = _drawn_board(hand=True)
    _, grids = _outline_and_grids(frame)
    assert min(_squares_off(g, h) for _, g in grids[:default_settings().localise.outline_candidates]) < 0.1


def test_a_blank_table_or_lone_lines_give_no_outline() -> None:
    s = default_settings().localise
    frame = np.full((300, 400, 3), 90, dtype=np.uint8)
    cv2.line(frame, (20, 50), (380, 60), (220, 220, 220), 2)   # one line of each direction:
    cv2.line(frame, (200, 10), (190, 290), (220, 220, 220), 2)  # no quadrilateral
    edges = edge_map(frame, low_ratio=s.canny_low_ratio, percentile=s.canny_percentile)
    near = NearestEdges.of(edges, frame)
    fam_a, fam_b = split_families(hough_lines(edges, s, near), s.family_spread_deg)
    quads = outline_quads(fam_a, fam_b, near, keep=10, min_side=0.5, min_side_px=24.0, tol_px=2.0,
                          max_angle_deg=20.0)
    assert quads.shape == (0, 4, 2)
    assert margin_grids(near, quads, 3, 3, margins=(0.1, 1.0), tol_px=2.0, max_angle_deg=20.0) == []


def test_the_board_edge_shows_at_one_margin_round_the_grid_only() -> None:
    frame, h = _drawn_board(hand=False)
    assert ring_agreement(frame, h, 3, 3) > 0.9
    # one family of lines stretched by a fifth of a square at one side: the edge lies at
    # another margin along the two sides it moved and slants along the two it turned
    stretched = h @ np.array([[1.0 + 0.2 / 3, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert ring_agreement(frame, stretched, 3, 3) < 0.6
    # a grid off the frame has nothing to agree on
    assert ring_agreement(frame, h @ np.array([[1.0, 0, 40.0], [0, 1.0, 0], [0, 0, 1.0]]), 3, 3) == 0.0


def test_of_fits_reached_alike_the_one_the_board_edge_surrounds_is_kept() -> None:
    # two fixed points of the fit, each reached by two starts and meeting their line ends
    # alike: the true grid and one whose last rank line sits an eighth of a square out (onto
    # a cell's inset frame); the board's edge lies at one margin only round the true one
    frame, h = _drawn_board(hand=False)
    off = h @ np.array([[1.0, 0.0, 0.0], [0.0, 1.0 + 0.125 / 3, 0.0], [0.0, 0.0, 1.0]])
    s = default_settings().localise
    assert _ring_tiebreak(frame, [off, off, h, h], [0, 2], 0, 3, 3, s) == 2
    assert _ring_tiebreak(frame, [off, off, h, h], [0, 2], 0, 3, 3, replace(s, tie_ring_margin=1.0)) == 0
    # a pick no other start reached is a start the fit stopped at: the ring does not judge it
    assert _ring_tiebreak(frame, [off, h, h], [0, 1], 0, 3, 3, s) == 0


def test_the_wide_grid_is_kept_where_the_board_edge_surrounds_it_and_not_the_first() -> None:
    frame, h = _drawn_board(hand=True)
    off = h @ np.array([[1.0, 0.0, 0.0], [0.0, 1.0 + 0.125 / 3, 0.0], [0.0, 0.0, 1.0]])
    true_pose, off_pose = BoardPose.from_homography(h, 3, 3), BoardPose.from_homography(off, 3, 3)
    s = default_settings().localise
    assert _ring_beats(frame, true_pose, off_pose, s)
    assert not _ring_beats(frame, off_pose, true_pose, s)
    assert not _ring_beats(frame, true_pose, true_pose, s)   # no better than the first


def _centred(frame: np.ndarray, h: np.ndarray) -> np.ndarray | None:
    s = default_settings().localise
    return edge_centred(frame, h, 3, 3, window=s.edge_centre_window, min_stretches=s.edge_centre_stretches)


# shifted by 0.035 square across the files and turned by 0.005 square a rank: the board's edge
# lies at another margin on the two sides it moved and slants along the others
NUDGE = np.array([[1.0, 0.005, 0.035], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def test_a_grid_a_little_off_is_centred_in_the_board_edge_round_it() -> None:
    frame, h = _drawn_board(hand=False)
    moved = _centred(frame, h @ NUDGE)
    assert moved is not None and _squares_off(moved, h) < 0.015 < 0.05 < _squares_off(h @ NUDGE, h)
    # round the true grid the edge is concentric already: it stays
    still = _centred(frame, h)
    assert still is not None and _squares_off(still, h) < 0.01
    # the edge tells where the grid lies, not its size: a grid a little too small stays so
    small = h @ np.array([[0.98, 0.0, 0.03], [0.0, 0.98, 0.03], [0.0, 0.0, 1.0]])
    kept = _centred(frame, small)
    assert kept is not None and _squares_off(kept, small) < 0.01


def test_the_chosen_grid_is_moved_only_where_the_board_edge_agrees_more_round_it() -> None:
    frame, h = _drawn_board(hand=False)
    s = default_settings().localise
    off = BoardPose.from_homography(h @ NUDGE, 3, 3)
    assert _squares_off(_centre_on_edge(frame, off, s).h, h) < 0.015
    assert _centre_on_edge(frame, off, replace(s, edge_centre_rise=1.0)) is off
    assert _centre_on_edge(frame, off, replace(s, edge_centre_max_move=0.01)) is off
    # a side whose edge the table hides (a hand, the frame's border): nothing to centre on
    hidden = frame.copy()
    side = apply_homography(h, np.array([[-1.5, -1.0], [-0.1, -1.0], [-0.1, 4.0], [-1.5, 4.0]]))
    cv2.fillConvexPoly(hidden, np.rint(side).astype(np.int32), (200, 210, 215))
    assert _centred(hidden, off.h) is None
