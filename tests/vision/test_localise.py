"""Board localisation on drawn frames: accuracy, refusals, orientation and tracking."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.errors import NoBoardError, VisionSettingsError
from referee.vision.board_finder import find_board
from referee.vision.board_tracker import refit, track
from referee.vision.gridfit import NearestEdges, band_support, edge_map
from referee.vision.lattice import _cells_of, _lattice_counts, _refit_lattice, banded
from referee.vision.lines import hough_lines, split_families, third_family
from referee.vision.pose import BoardPose, board_corners, corner_error
from referee.vision.settings import default_settings, load_settings
from referee.vision.warp import top_face_quads
from tests.vision.scenes import Scene, make_scene

CASES = [  # seed, files, ranks, style, tilt, rotation, hand
    (1, 5, 6, "lines", 0.0, 10.0, False),
    (2, 5, 5, "checker", 20.0, 135.0, True),
    (3, 3, 3, "lines", 35.0, 250.0, False),
    (4, 6, 9, "checker", 30.0, 300.0, False),
    (5, 7, 7, "lines", 25.0, 45.0, True),
    (6, 5, 6, "checker", 40.0, 80.0, False),
]


def scene(seed: int, files: int, ranks: int, **kw: object) -> Scene:
    return make_scene(np.random.default_rng(seed), files, ranks, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("seed", "files", "ranks", "style", "tilt", "rotation", "hand"), CASES)
def test_corners_within_one_percent_of_the_diagonal(seed: int, files: int, ranks: int, style: str,
                                                    tilt: float, rotation: float, hand: bool) -> None:
    s = scene(seed, files, ranks, style=style, tilt_deg=tilt, rotation_deg=rotation, hand=hand)
    pose = find_board(s.frame, files, ranks)
    assert (pose.files, pose.ranks) == (files, ranks)
    assert corner_error(pose, s.corners) < 0.01 * s.diagonal


def test_found_pose_is_never_mirrored() -> None:
    s = scene(7, 5, 6, style="lines", tilt_deg=25.0, rotation_deg=200.0, hand=False)
    pose = find_board(s.frame, 5, 6)
    pts = pose.to_image(np.array([[2.5, 3.0], [3.5, 3.0], [2.5, 4.0]]))
    jac = np.column_stack([pts[1] - pts[0], pts[2] - pts[0]])
    assert np.linalg.det(jac) < 0  # seen from above, as the truth is
    assert any(np.max(np.linalg.norm(p.corners_array - s.corners, axis=1)) < 0.01 * s.diagonal
               for p in pose.orientations())


@pytest.mark.parametrize("kind", ["grey", "black", "noise", "table"])
def test_no_board_raises(kind: str) -> None:
    rng = np.random.default_rng(0)
    if kind == "grey":
        frame = np.full((720, 1280, 3), 128, np.uint8)
    elif kind == "black":
        frame = np.zeros((720, 1280, 3), np.uint8)
    elif kind == "noise":
        frame = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    else:  # the table and its clutter, no board: the pieces-free scene with the board cut out
        s = scene(8, 5, 6, style="lines", hand=False, pieces=0.0)
        frame = s.frame.copy()
        cv2.fillConvexPoly(frame, s.corners.astype(np.int32), (90, 110, 130))
        outline = s.corners + (s.corners - s.corners.mean(axis=0)) * 0.35
        cv2.fillConvexPoly(frame, outline.astype(np.int32), (90, 110, 130))
    with pytest.raises(NoBoardError):
        find_board(frame, 5, 6)


@pytest.mark.parametrize(("files", "ranks", "style", "wanted"), [
    (7, 7, "lines", (5, 6)), (7, 7, "checker", (3, 3)), (6, 9, "lines", (5, 5))])
def test_a_bigger_board_raises(files: int, ranks: int, style: str, wanted: tuple[int, int]) -> None:
    s = scene(9, files, ranks, style=style, tilt_deg=10.0, rotation_deg=20.0, hand=False, pieces=0.0)
    with pytest.raises(NoBoardError):
        find_board(s.frame, *wanted)


def test_ruled_paper_and_wood_grain_alone_raise() -> None:
    """Parallel lines in one direction (a ruled page, wood grain) and a few crossing ones are
    not a grid."""
    rng = np.random.default_rng(5)
    frame = np.full((720, 1280, 3), (150, 180, 205), np.uint8)
    for y in range(40, 720, 23):  # grain or ruling: long near-parallel lines
        y2 = y + int(rng.integers(-15, 15))
        cv2.line(frame, (0, y), (1279, y2), (110, 140, 170), int(rng.integers(1, 4)), cv2.LINE_AA)
    cv2.line(frame, (300, 0), (340, 719), (60, 60, 60), 3, cv2.LINE_AA)  # a margin line or two
    cv2.line(frame, (900, 0), (880, 719), (60, 60, 60), 3, cv2.LINE_AA)
    frame = np.clip(frame + rng.normal(0, 4, frame.shape), 0, 255).astype(np.uint8)
    with pytest.raises(NoBoardError):
        find_board(frame, 5, 6)


@pytest.mark.parametrize("frame", [np.zeros((0, 0, 3), np.uint8), np.zeros((10, 10, 3), np.float32)])
def test_bad_frames_raise_no_board(frame: np.ndarray) -> None:
    with pytest.raises(NoBoardError):
        find_board(frame, 5, 6)


def test_rotations_rename_the_corners() -> None:
    h = np.array([[50.0, 5, 100], [3, -48, 500], [1e-4, 2e-4, 1]])
    square = BoardPose.from_homography(h, 5, 5)
    for k in range(4):
        turned = square.rotated(k)
        assert np.allclose(turned.corners_array, np.roll(square.corners_array, -k, axis=0))
        assert np.allclose(turned.rotated(4 - k).h, square.h)
    tall = BoardPose.from_homography(h, 5, 6)
    assert len(tall.orientations()) == 2
    with pytest.raises(ValueError):
        tall.rotated(1)
    assert tall.with_a1_near(tall.corners[2]).corners[0] == pytest.approx(tall.corners[2])


def test_a_board_named_from_another_side_names_the_same_squares_otherwise() -> None:
    h = np.array([[50.0, 5, 100], [3, -48, 500], [1e-4, 2e-4, 1]])
    for files, ranks, step in ((5, 5, 1), (5, 6, 2)):
        pose = BoardPose.from_homography(h, files, ranks)
        quads = top_face_quads(pose, (1280, 720), height=0.0)
        for k in range(0, 4, step):
            turned = pose.rotated(k)
            order = pose.squares_named_by(turned)
            assert sorted(order) == list(range(files * ranks))
            # each square, named from the other side, lies in the same place
            there = top_face_quads(turned, (1280, 720), height=0.0)
            np.testing.assert_allclose(there.mean(axis=1), quads[order].mean(axis=1), atol=1e-6)
    square = BoardPose.from_homography(h, 3, 3)  # a1 a quarter turn on is the old c1
    assert square.squares_named_by(square.rotated(1)).reshape(3, 3).tolist() == [
        [2, 5, 8], [1, 4, 7], [0, 3, 6]]


def test_tracking_follows_small_moves_and_gives_up_on_big_ones() -> None:
    s = scene(11, 5, 6, style="lines", tilt_deg=20.0, rotation_deg=30.0, hand=False)
    pose = find_board(s.frame, 5, 6)
    size = (s.frame.shape[1], s.frame.shape[0])
    for dx, dy in ((0, 0), (4, -3), (9, 6)):
        moved = cv2.warpAffine(s.frame, np.float32([[1, 0, dx], [0, 1, dy]]), size)
        followed = track(moved, pose)
        assert followed is not None
        assert corner_error(followed, s.corners + np.array([dx, dy])) < 0.01 * s.diagonal
        # the corners keep their names while tracking (a1 stays a1)
        named = np.linalg.norm(followed.corners_array - (pose.corners_array + np.array([dx, dy])), axis=1)
        assert named.max() < 0.1 * pose.square_size_px()
    side = pose.square_size_px()
    far = cv2.warpAffine(s.frame, np.float32([[1, 0, 0.6 * side], [0, 1, 0.45 * side]]), size)
    assert track(far, pose) is None
    assert track(np.zeros_like(s.frame), pose) is None


def test_tracking_a_real_board_move_then_refinding() -> None:
    s = scene(12, 5, 5, style="checker", tilt_deg=15.0, rotation_deg=60.0, hand=False, fill=0.5)
    pose = find_board(s.frame, 5, 5)
    h_shift = np.array([[1.0, 0, 1.5 * pose.square_size_px()], [0, 1.0, 0], [0, 0, 1.0]])
    bumped = cv2.warpPerspective(s.frame, h_shift, (s.frame.shape[1], s.frame.shape[0]))
    assert track(bumped, pose) is None
    again = find_board(bumped, 5, 5)
    truth = board_corners(5, 5)
    expected = cv2.perspectiveTransform(
        cv2.perspectiveTransform(truth[None].astype(np.float64), s.homography), h_shift)[0]
    assert corner_error(again, expected) < 0.01 * s.diagonal


def test_settings_file_rejects_unknown_keys(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "vision.toml"
    path.write_text("[localise]\nwork_width = 800\n")
    assert load_settings(path).localise.work_width == 800
    path.write_text("[localise]\nwork_widht = 800\n")
    with pytest.raises(VisionSettingsError):
        load_settings(path)
    path.write_text("[localise]\nwork_width = 'wide'\n")
    with pytest.raises(VisionSettingsError):
        load_settings(path)


@pytest.mark.parametrize(("seed", "files", "ranks", "style"), [(13, 5, 5, "checker"), (14, 5, 6, "lines")])
def test_tracking_keeps_any_naming_of_the_corners(seed: int, files: int, ranks: int, style: str) -> None:
    s = scene(seed, files, ranks, style=style, tilt_deg=25.0, rotation_deg=70.0, hand=False)
    pose = find_board(s.frame, files, ranks)
    size = (s.frame.shape[1], s.frame.shape[0])
    moved = cv2.warpAffine(s.frame, np.float32([[1, 0, 5], [0, 1, -4]]), size)
    followed = track(moved, pose)
    assert followed is not None
    step = 4 // len(pose.orientations())
    side = pose.square_size_px()
    for named in pose.orientations():  # a1 at each corner the referee may have chosen
        turns = next(k for k in range(0, 4, step) if np.allclose(pose.rotated(k).h, named.h))
        kept = track(moved, named)
        assert kept is not None, f"lost the board with a1 turned {turns} quarter turns"
        # the same grid, and a1 where the caller had it
        np.testing.assert_allclose(kept.corners_array, followed.rotated(turns).corners_array, atol=1e-6)
        assert np.linalg.norm(kept.corners_array[0] - named.corners_array[0] - (5, -4)) < 0.1 * side


def _arm_over(frame: np.ndarray, pose: BoardPose) -> np.ndarray:
    """The frame with a skin-coloured hand over the first rank and a half, its edge a little
    beyond the second rank line and along it: an edge the grid line's profile would follow."""
    hand = pose.to_image(np.array([[0.8, -1.5], [0.8, 1.15], [4.2, 1.15], [4.2, -1.5]]))
    covered = frame.copy()
    cv2.fillPoly(covered, [hand.astype(np.int32)], (120, 160, 215))
    return covered


def test_tracking_under_an_arm_stays_on_the_board() -> None:
    """A hand over part of the grid is outvoted by the lines elsewhere: tracking fits only a
    rigid move, so the arm's outline cannot bend the grid towards it frame after frame."""
    s = scene(22, 5, 6, style="lines", tilt_deg=30.0, rotation_deg=15.0, hand=False)
    pose = find_board(s.frame, 5, 6)
    start = pose
    covered = _arm_over(s.frame, pose)
    for _ in range(30):  # the arm stays a second
        pose = track(covered, pose) or pose
    assert np.abs(pose.corners_array - start.corners_array).max() < 0.05 * start.square_size_px()


def test_refit_follows_a_change_of_view_that_tracking_keeps() -> None:
    """The camera tilted a little (not a rigid move of the board): tracking keeps the old
    perspective, the full refit on the still frame finds the new one."""
    s = scene(22, 5, 6, style="checker", tilt_deg=20.0, rotation_deg=40.0, hand=False)
    pose = find_board(s.frame, 5, 6)
    tilt = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1e-5, 0.75e-5, 1.0]])  # corners 12 px
    tilted = cv2.warpPerspective(s.frame, tilt, (s.frame.shape[1], s.frame.shape[0]))
    truth = cv2.perspectiveTransform(s.corners[None].astype(np.float64), tilt)[0]
    tracked = track(tilted, pose)
    assert tracked is not None
    refitted = refit(tilted, tracked)
    assert corner_error(refitted, truth) < 0.003 * s.diagonal
    assert corner_error(refitted, truth) < 0.6 * corner_error(tracked, truth)
    assert refit(np.zeros_like(s.frame), pose) is pose  # nothing to fit: the pose stands


def test_lattice_counts_only_crossings_within_reach() -> None:
    # crossings on every point of a 21 x 21 lattice (image = lattice units x 10 + 100); a
    # lattice hypothesis counts those within `reach` squares of its origin, so a small board's
    # lattice is not outvoted by clutter falling on it far off
    u, v = np.meshgrid(np.arange(-10, 11), np.arange(-10, 11))
    pts = np.column_stack([u.ravel() * 10.0 + 100, v.ravel() * 10.0 + 100, np.ones(u.size)])
    to_lattice = np.array([[0.1, 0, -10.0], [0, 0.1, -10.0], [0, 0, 1.0]])
    shifted = to_lattice.copy()
    shifted[:2, 2] += 0.5   # half a square off: no crossing on its points
    counts = _lattice_counts(np.stack([to_lattice, shifted]), pts, 0.15, 20.0)
    assert counts.tolist() == [441, 0]
    assert _lattice_counts(to_lattice[None], pts, 0.15, 4.0).tolist() == [49]   # -3..3 each way


def test_a_singular_lattice_is_dropped_not_raised() -> None:
    # the wide search on a 3x3 board (fresh frame 24 of seeds 110000+) refitted a lattice onto
    # crossings along one line: a singular map, whose inverse raised LinAlgError out of find_board
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]])
    quads = np.array([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]])
    assert _cells_of(quads, singular, 0.15).tolist() == [False]
    pts = np.column_stack([np.arange(10.0), np.arange(10.0) * 2, np.ones(10)])
    assert _refit_lattice(singular, pts, 0.15) is None


def _tangle(seed: int) -> np.ndarray:
    """A frame of random coloured lines: clutter with no board, whose lattices are often
    degenerate (corners at infinity)."""
    rng = np.random.default_rng(seed)
    frame = np.full((360, 640, 3), int(rng.integers(0, 256)), np.uint8)
    for _ in range(int(rng.integers(10, 40))):
        p, q = rng.integers(0, [640, 360], size=(2, 2))
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        cv2.line(frame, (int(p[0]), int(p[1])), (int(q[0]), int(q[1])), colour, int(rng.integers(1, 4)))
    return frame


@pytest.mark.parametrize("seed", range(6))
def test_clutter_gets_no_board_or_a_grid_and_no_numerical_warnings(seed: int) -> None:
    """A tangle of lines: a clear NoBoardError (or some grid), never an exception of numpy's
    nor a RuntimeWarning printed at the players (degenerate grids are the search's daily
    bread on clutter)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            pose = find_board(_tangle(seed), 3, 3)
        except NoBoardError:
            return
    assert np.all(np.isfinite(pose.corners_array))


def _ruled_sheet_beside_a_grid() -> tuple[np.ndarray, np.ndarray]:
    """A drawn frame: a 3x3 grid of dark lines (turned 10 degrees) and, beside it, a sheet
    ruled with twelve lines at 45 degrees to the grid's: the sheet's direction outnumbers
    one of the grid's. Returns the frame and the grid's corners."""
    frame = np.full((480, 800), 200, np.uint8)
    turn = np.radians(10.0)
    along, across = np.array([np.cos(turn), np.sin(turn)]), np.array([-np.sin(turn), np.cos(turn)])
    origin, side = np.array([420.0, 120.0]), 80.0
    for k in range(4):
        for a, b in ((origin + k * side * along, origin + k * side * along + 3 * side * across),
                     (origin + k * side * across, origin + k * side * across + 3 * side * along)):
            cv2.line(frame, tuple(np.rint(a).astype(int)), tuple(np.rint(b).astype(int)), 40, 3, cv2.LINE_AA)
    rule = np.radians(55.0)
    run, step = np.array([np.cos(rule), np.sin(rule)]), np.array([-np.sin(rule), np.cos(rule)])
    for k in range(12):
        start = np.array([150.0, 60.0]) + k * 18 * step
        cv2.line(frame, tuple(np.rint(start).astype(int)), tuple(np.rint(start + 300 * run).astype(int)),
                 90, 2, cv2.LINE_AA)
    corners = np.array([origin, origin + 3 * side * along, origin + 3 * side * (along + across),
                        origin + 3 * side * across])
    return frame, corners


def test_third_family_holds_the_direction_clutter_outnumbered() -> None:
    frame, _ = _ruled_sheet_beside_a_grid()
    s = default_settings().localise
    edges = edge_map(frame, low_ratio=s.canny_low_ratio, percentile=s.canny_percentile)
    lines = hough_lines(edges, s, NearestEdges.of(edges, frame))
    fam_a, fam_b = split_families(lines, s.family_spread_deg)
    third = third_family(lines, fam_a, fam_b, s.family_spread_deg)

    def degrees(rows: np.ndarray) -> np.ndarray:
        return np.degrees(np.mod(np.arctan2(rows[:, 1], rows[:, 0]), np.pi))

    # the sheet's lines (normals at 145 degrees) are one of the two families; the grid's
    # other direction (normals at 10 or 100 degrees) is left to the third
    assert any(np.all(np.abs(degrees(fam) - 145) < 12) for fam in (fam_a, fam_b))
    assert len(third) >= 4
    got = degrees(third)
    assert np.all((np.abs(got - 10) < 5) | (np.abs(got - 100) < 5) | (got > 175) | (got < 5))
    assert third_family(lines[:0], fam_a, fam_b, s.family_spread_deg).shape == (0, 3)


def _drawn_grid() -> tuple[np.ndarray, NearestEdges, np.ndarray]:
    """A 5x5 grid of dark lines, 37 px squares, on a plain light board with two squares of
    bare margin round it, a little noise: its edges and board -> pixel map."""
    frame = np.full((400, 400, 3), 200, dtype=np.uint8)
    frame += np.random.default_rng(5).integers(0, 12, frame.shape, dtype=np.uint8)
    for k in range(6):
        cv2.line(frame, (101 + 37 * k, 101), (101 + 37 * k, 286), (40, 40, 40), 1, cv2.LINE_AA)
        cv2.line(frame, (101, 101 + 37 * k), (286, 101 + 37 * k), (40, 40, 40), 1, cv2.LINE_AA)
    s = default_settings().localise
    edges = edge_map(frame, low_ratio=s.canny_low_ratio, percentile=s.canny_percentile)
    h = np.array([[37.0, 0, 101], [0, 37.0, 101], [0, 0, 1]])
    return frame, NearestEdges.of(edges, frame), h


def test_band_support_reads_the_crossings_of_each_outer_file_and_rank() -> None:
    _, near, h = _drawn_grid()
    s = default_settings().localise

    def bands(files: int, ranks: int, dx: float = 0, dy: float = 0) -> np.ndarray:
        shifted = h @ np.array([[1.0, 0, dx], [0, 1.0, dy], [0, 0, 1]])
        return band_support(near, shifted[None], files, ranks, tol_px=s.support_tol_px,
                            max_angle_deg=s.support_angle_deg)[0]

    assert np.all(bands(5, 5) > 0.9)                       # the board: every band crossed
    # one rank further down: its last rank is the bare margin, the others still crossed
    np.testing.assert_allclose(bands(5, 5, dy=1)[3], 0.0)
    assert np.all(bands(5, 5, dy=1)[:3] > 0.9)
    # a 4x6 window taking the margin as a sixth rank (a hand over the fifth file): the same
    assert bands(4, 6)[3] == 0.0 and np.all(bands(4, 6)[:3] > 0.9)
    # off the image: NaN
    assert np.all(np.isnan(bands(5, 5, dx=30)))


def test_a_window_taking_the_margin_as_a_row_loses_its_band_score() -> None:
    frame, near, h = _drawn_grid()
    s = default_settings().localise
    assert banded(near, [h], 5, 5, s)[0] == 0.0
    for dx, dy in ((0, 1), (0, -1), (1, 0), (-1, 0)):
        off = h @ np.array([[1.0, 0, dx], [0, 1.0, dy], [0, 0, 1]])
        assert banded(near, [off], 5, 5, s)[0] == pytest.approx(s.band_weight * s.band_floor)
    # a hand over part of the last column leaves the rest of its crossings: no loss
    cv2.ellipse(frame, (268, 140), (28, 42), 0, 0, 360, (120, 160, 210), -1)
    edges = edge_map(frame, low_ratio=s.canny_low_ratio, percentile=s.canny_percentile)
    assert banded(NearestEdges.of(edges, frame), [h], 5, 5, s)[0] == 0.0
    # 3x3 boards keep their own search: never penalised
    assert banded(near, [h @ np.array([[1.0, 0, 0], [0, 1.0, 1], [0, 0, 1]])], 3, 3, s)[0] == 0.0
