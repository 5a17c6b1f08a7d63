from __future__ import annotations

import cv2
import numpy as np

from referee.tracking.stabiliser import (
    ArmSettings,
    Stabiliser,
    StabiliserSettings,
    Stillness,
    arm_blobs,
    changed_pixels,
    smoothed,
)
from tests import DATA

FPS = 30


def board(moved: dict[tuple[int, int], int] | None = None, light: float = 1.0) -> np.ndarray:
    """A 7x8-cell board image (5x6 squares and a margin), 20 px a cell, with dice as bright
    blobs; `moved` puts a blob of that brightness in a cell."""
    image = np.full((160, 140), 90, np.float32)
    image[::20, :] = 40
    image[:, ::20] = 40
    for (col, row), value in {(1, 1): 230, (3, 2): 230, **(moved or {})}.items():
        image[row * 20 + 5: row * 20 + 15, col * 20 + 5: col * 20 + 15] = value
    return np.clip(image * light, 0, 255).astype(np.uint8)


def feed(stabiliser: Stabiliser, frames: list[np.ndarray], start_s: float) -> list[Stillness]:
    states = []
    for i, frame in enumerate(frames):
        state = stabiliser.update(frame, start_s + i / FPS)
        if state is Stillness.READ:
            stabiliser.mark_read()
        states.append(state)
    return states


def test_reads_once_after_settling_then_stays_quiet():
    stabiliser = Stabiliser(7, 8, StabiliserSettings(settle_s=0.5))
    states = feed(stabiliser, [board()] * 40, 0.0)
    assert states[0] is Stillness.MOVING
    assert states.count(Stillness.READ) == 1
    assert states.index(Stillness.READ) == 16  # 0.5 s after the first still frame
    assert set(states[17:]) == {Stillness.STEADY}


def test_a_move_is_read_once_the_hand_has_gone_and_the_board_settled():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    rng = np.random.default_rng(1)
    hand = [np.clip(board() + rng.integers(0, 120, board().shape), 0, 255).astype(np.uint8)
            for _ in range(20)]
    after = [board({(1, 1): 90, (1, 2): 230})] * 30
    states = feed(stabiliser, hand + after, 1.0)
    assert set(states[:20]) <= {Stillness.MOVING, Stillness.SETTLING}
    assert states[20:].count(Stillness.READ) == 1


def with_arm(image: np.ndarray, rows: slice, columns: slice, value: int = 200) -> np.ndarray:
    """`image` with a hand and its arm painted over `rows` x `columns` (pixels)."""
    out = image.copy()
    out[rows, columns] = value
    return out


def test_a_resting_hand_waits_then_reads_after_the_timeout():
    stabiliser = Stabiliser(7, 8, StabiliserSettings(occlusion_timeout_s=2.0))
    feed(stabiliser, [board()] * 30, 0.0)
    # A hand on the board and its arm across the ring of cells, out of the view.
    covered = with_arm(board(), slice(65, 95), slice(45, 140))
    states = feed(stabiliser, [covered] * 90, 1.0)
    read_at = states.index(Stillness.READ)
    assert Stillness.OCCLUDED in states[:read_at]
    assert read_at >= 2 * FPS


def test_a_hand_creeping_in_long_after_the_board_settled_is_waited_out():
    """A hand slides in at a corner of the view, a row of pixels a frame, too slowly for the
    cells to see motion: the board has been still for far longer than the timeout, but the
    hand is waited out from when it was first seen."""
    stabiliser = Stabiliser(7, 8, StabiliserSettings(occlusion_timeout_s=2.0))
    feed(stabiliser, [board()] * (10 * FPS), 0.0)
    creeping = [with_arm(board(), slice(1, rows), slice(0, 20), value=150) for rows in range(2, 20)]
    resting = [creeping[-1]] * (3 * FPS)
    states = feed(stabiliser, creeping + resting, 10.0)
    assert Stillness.MOVING not in states
    first_seen = states.index(Stillness.OCCLUDED)
    assert states.index(Stillness.READ) - first_seen >= 2 * FPS


def test_a_hand_over_the_board_s_rim_at_a_corner_is_an_arm():
    """A hand at a corner of the board, over its rim and the margin but short of the grid,
    changes too little of any ring cell to be seen there; its patch is an arm all the same."""
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    hand = with_arm(board(), slice(1, 7), slice(7, 31), value=118)
    states = feed(stabiliser, [hand] * 30, 1.0)
    assert Stillness.READ not in states and Stillness.OCCLUDED in states


def test_the_board_is_read_when_a_hand_read_at_the_timeout_goes():
    """Read under a resting hand at the timeout, that view is no reference for arms: when the
    hand goes, its absence is no arm coming, and the board is read once it settles."""
    stabiliser = Stabiliser(7, 8, StabiliserSettings(occlusion_timeout_s=2.0))
    feed(stabiliser, [board()] * 30, 0.0)
    covered = with_arm(board(), slice(65, 95), slice(45, 140))
    assert Stillness.READ in feed(stabiliser, [covered] * 90, 1.0)  # at the timeout
    gone = feed(stabiliser, [board({(1, 1): 90, (1, 2): 230})] * 40, 4.0)
    assert Stillness.OCCLUDED not in gone and gone.count(Stillness.READ) == 1
    again = feed(stabiliser, [covered] * 20, 6.0)  # and a hand coming back is an arm again
    assert Stillness.OCCLUDED in again


def test_a_global_change_of_light_is_neither_motion_nor_change():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    dimming = [board(light=1.0 - 0.01 * i) for i in range(30)]
    assert set(feed(stabiliser, dimming, 1.0)) == {Stillness.STEADY}


def test_several_unread_moves_are_read_once_the_hands_are_gone():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    # Three pieces moved since the last reading (it was missed), nothing in the ring.
    moved = board({(1, 1): 90, (3, 2): 90, (2, 5): 230, (4, 5): 230, (5, 6): 230})
    states = feed(stabiliser, [moved] * 30, 1.0)
    assert Stillness.OCCLUDED not in states and states.count(Stillness.READ) == 1


def test_a_piece_leaning_into_the_margin_is_read_once_settled():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    # A die moved onto a-file's edge square leans, in the image, into the cell left of it:
    # that cell differs from the last reading for good, but nothing reaches the view's edge.
    leaning = board({(1, 1): 90})
    leaning[45:56, 7:30] = 230
    states = feed(stabiliser, [leaning] * 30, 1.0)
    assert Stillness.OCCLUDED not in states
    assert states.index(Stillness.READ) == 17  # settled: 0.5 s after the first still frame


def test_a_rim_relit_far_from_the_ring_cell_a_piece_changed_is_no_arm():
    """A piece laid on an edge square leans into its ring cell, which changes for good; a
    sliver of the board's rim at the view's edge elsewhere (a shadow moved, the board wandered
    a pixel) changed too. An arm crosses the ring where its cells changed: this is none. An
    arm through the changed cell still is."""
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    laid = board({(1, 6): 230})
    laid[125:145, 25:35] = 230  # leaning down into the ring cell below b6
    laid[61:79, 1:3] = 150  # the rim's sliver at the left edge: too thin to change its cell
    states = feed(stabiliser, [laid] * 30, 1.0)
    assert Stillness.OCCLUDED not in states and states.count(Stillness.READ) == 1
    arm = with_arm(laid, slice(130, 160), slice(22, 38))
    states = feed(stabiliser, [arm] * 30, 2.0)
    assert Stillness.READ not in states and Stillness.OCCLUDED in states


def test_an_arm_the_cells_miss_still_holds_the_reading():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    # A hand on e2 and e1, its striped sleeve down across the ring to the view's edge: the
    # stripes average to the table's grey, so the ring's cells hardly change.
    hand = with_arm(board(), slice(105, 135), slice(85, 115))
    hand[135:, 85:115] = 160
    hand[136::2, 85:115] = 20
    states = feed(stabiliser, [hand] * 60, 1.0)
    assert Stillness.READ not in states and Stillness.OCCLUDED in states


def test_an_arm_across_the_frame_edge_is_an_arm():
    stabiliser = Stabiliser(7, 8)
    outside = np.zeros((160, 140), bool)
    outside[130:, :] = True  # the camera's frame ends above the view's bottom
    blank = board()
    blank[outside] = 0
    for i in range(30):
        if stabiliser.update(blank, i / FPS, outside=outside) is Stillness.READ:
            stabiliser.mark_read()
    hand = with_arm(blank, slice(105, 130), slice(85, 110))
    states = [stabiliser.update(hand, 1.0 + i / FPS, outside=outside) for i in range(60)]
    assert Stillness.READ not in states and Stillness.OCCLUDED in states


def test_a_view_shifted_by_tracking_jitter_is_no_arm():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    shift = np.array([[1.0, 0.0, -2.0], [0.0, 1.0, 1.0]])  # 2 px left, 1 px down
    moved = cv2.warpAffine(board({(1, 1): 90, (2, 2): 230}), shift, (140, 160),
                           borderValue=90)  # the table comes into view
    states = feed(stabiliser, [moved] * 30, 1.0)
    assert Stillness.OCCLUDED not in states and states.count(Stillness.READ) == 1


def test_lines_seen_sharper_than_at_the_last_reading_are_no_arm():
    stabiliser = Stabiliser(7, 8)
    # The camera's focus drifts: at the last reading every line, the board's border on the
    # view's edge too, was softer than now.
    feed(stabiliser, [cv2.GaussianBlur(board(), (0, 0), 1.2)] * 30, 0.0)
    states = feed(stabiliser, [board({(1, 1): 90, (2, 2): 230})] * 30, 1.0)
    assert Stillness.OCCLUDED not in states and states.count(Stillness.READ) == 1


def test_the_edge_an_arm_crosses_is_told():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    arm = board()
    arm[140:, 60:80] = 200  # the bottom row of cells: the near side
    stabiliser.update(arm, 1.5)
    bottom, top, left, right = stabiliser.edge_changes()
    assert bottom > 9 and bottom > 3 * max(top, left, right)


def on_a_table(image: np.ndarray) -> np.ndarray:
    """`image` with a dark table showing round the board's light border, at the view's edge."""
    out = image.copy()
    out[:4], out[-4:], out[:, :4], out[:, -4:] = 15, 15, 15, 15
    return out


def test_a_board_edge_tracking_drifted_from_is_no_arm_once_rechecked():
    """Tracking drifted a degree since the last reading: the board's edge against the dark
    table moved a few pixels at the corners, which looks like an arm reaching in. Seen again
    from a refitted pose the move is read; a real arm stays an arm."""
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [on_a_table(board())] * 30, 0.0)
    after = on_a_table(board({(1, 1): 90, (2, 2): 230}))
    turn = cv2.getRotationMatrix2D((70.0, 80.0), 2.0, 1.0)
    drifted = cv2.warpAffine(after, turn, (140, 160), borderValue=15)
    states = feed(stabiliser, [drifted] * 20, 1.0)
    assert states[-1] is Stillness.OCCLUDED
    assert stabiliser.recheck(after) is Stillness.READ
    arm = with_arm(after, slice(0, 95), slice(45, 60))
    assert stabiliser.recheck(arm) is Stillness.OCCLUDED


def test_the_clean_reading_cut_with_the_pose_of_now_shows_no_drift():
    """Given the clean reading's frame cut with the pose of now, tracking's drift since the
    last reading does not look like an arm, without a refit; a real arm still does."""
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [on_a_table(board())] * 30, 0.0)
    turn = cv2.getRotationMatrix2D((70.0, 80.0), 2.0, 1.0)

    def drift(image: np.ndarray) -> np.ndarray:
        return cv2.warpAffine(image, turn, (140, 160), borderValue=15)

    clean = drift(on_a_table(board()))
    moved = drift(on_a_table(board({(1, 1): 90, (2, 2): 230})))
    states = [stabiliser.update(moved, 1.0 + i / FPS, clean=lambda: clean) for i in range(20)]
    assert Stillness.OCCLUDED not in states and states[-1] is Stillness.READ
    arm = with_arm(moved, slice(0, 95), slice(45, 60))
    states = [stabiliser.update(arm, 2.0 + i / FPS, clean=lambda: clean) for i in range(20)]
    assert states[-1] is Stillness.OCCLUDED


def test_a_hand_at_the_edge_of_the_clean_reading_holds_no_reading_back_once_gone():
    """The first reading had a hand at the view's edge; once it has gone, its absence differs
    from that reading as an arm coming would, at every still moment. The same change at two
    still moments with a move between is the surroundings, and the board is read."""
    stabiliser = Stabiliser(7, 8)
    fingers = with_arm(board(), slice(150, 160), slice(50, 70), value=160)
    assert Stillness.READ in feed(stabiliser, [fingers] * 30, 0.0)
    rng = np.random.default_rng(2)

    def hand() -> list[np.ndarray]:  # a move: a second of a hand over the board
        return [np.clip(board() + rng.integers(0, 120, board().shape), 0, 255).astype(np.uint8)
                for _ in range(FPS)]

    first = feed(stabiliser, hand() + [board({(1, 1): 90, (1, 2): 230})] * 40, 1.0)
    assert first[-1] is Stillness.OCCLUDED  # the fingers' going, seen once, is an arm's coming
    second = feed(stabiliser, hand() + [board({(1, 1): 90, (1, 2): 230, (4, 4): 230})] * 40, 4.0)
    assert Stillness.READ in second


def test_an_arm_seen_at_rest_is_not_gone_for_one_frame_unseen():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    # A hand over the right-hand squares, its faint wrist out to the view's edge; then, with
    # nothing moving, the wrist fades into the table (the camera's noise): the hand's patch
    # no longer reaches the edge, but an arm does not leave unseen in a frame or two.
    hand = with_arm(board(), slice(50, 80), slice(96, 128))
    wrist = hand.copy()
    wrist[62:64, 128:140] = 140
    states = feed(stabiliser, [wrist] * 20 + [hand] * 5, 1.0)
    assert Stillness.OCCLUDED in states[:20]
    assert Stillness.MOVING not in states[20:] and Stillness.READ not in states
    # Unseen for longer (`arm_release_s`), it has gone.
    assert Stillness.READ in feed(stabiliser, [hand] * 10, 1.0 + 25 / FPS)


def test_a_light_tile_laid_on_an_edge_column_is_no_arm():
    """Rendered Renaissance on a checkered wood board (seed 820005, 23.5 s): a light tile laid
    over dark squares of the edge column raises the view's median, by which each view is
    normalised, so the bright table at the view's edge darkened as an arm would; the tile's
    change then joined it. The stillness views of that moment, as the stabiliser held them."""
    views = np.load(DATA / "stillness" / "light-tile-on-edge.npz")
    now, clean = views["now"].astype(np.float32), smoothed(views["clean"])
    arm = ArmSettings()
    changed = changed_pixels(now, clean, arm)
    assert changed.sum() > 300  # the tile's change is seen
    assert not arm_blobs(changed, None, Stabiliser(9, 9)._inner(now.shape), arm).any()


def test_a_hand_at_the_near_edge_over_a_grid_read_sharper_is_an_arm():
    """Rendered Renaissance (seed 890014, frame 177): the hand laying an I4 rests at the
    view's near edge, its sleeve beyond the view. Against the clean view, read in focus, the
    grid's lines break the hand's change up where it meets the edge, and no patch of it was an
    arm: the board was read under the hand, the ply in doubt, and that view, hand and all,
    became the clean one. Its patches a little apart are one hand: an arm. (The stillness
    views of that moment, grey, as the frames were cut.)"""
    views = np.load(DATA / "stillness" / "hand-at-near-edge.npz")
    stabiliser = Stabiliser(9, 9)
    feed(stabiliser, [views["clean"]] * 30, 0.0)
    states = feed(stabiliser, [views["now"]] * 30, 1.0)
    assert Stillness.READ not in states and Stillness.OCCLUDED in states


def test_a_reading_with_a_hand_the_caller_saw_is_no_reference_for_arms():
    """The caller's finer hand test (`tracking.reach`) saw fingers the arm test missed: the
    board is read, but arms are still looked for against the last clean reading."""
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    assert stabiliser.clean_taken
    moved = board({(2, 5): 230})
    assert Stillness.READ in [stabiliser.update(moved, 1.0 + i / FPS) for i in range(30)]
    stabiliser.mark_read(hand_seen=True)
    assert not stabiliser.clean_taken
    assert Stillness.READ in [stabiliser.update(board(), 2.0 + i / FPS) for i in range(30)]
    stabiliser.mark_read()
    assert stabiliser.clean_taken
