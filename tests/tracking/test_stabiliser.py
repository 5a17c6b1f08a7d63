from __future__ import annotations

import numpy as np

from referee.tracking.stabiliser import Stabiliser, StabiliserSettings, Stillness

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


def test_a_resting_hand_waits_then_reads_after_the_timeout():
    stabiliser = Stabiliser(7, 8, StabiliserSettings(occlusion_timeout_s=2.0))
    feed(stabiliser, [board()] * 30, 0.0)
    # A hand on the board and its arm across the ring of cells around it.
    covered = board({(c, r): 200 for c in range(2, 7) for r in range(3, 5)})
    states = feed(stabiliser, [covered] * 90, 1.0)
    read_at = states.index(Stillness.READ)
    assert Stillness.OCCLUDED in states[:read_at]
    assert read_at >= 2 * FPS


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



def test_the_edge_an_arm_crosses_is_told():
    stabiliser = Stabiliser(7, 8)
    feed(stabiliser, [board()] * 30, 0.0)
    arm = board()
    arm[140:, 60:80] = 200  # the bottom row of cells: the near side
    stabiliser.update(arm, 1.5)
    bottom, top, left, right = stabiliser.edge_changes()
    assert bottom > 9 and bottom > 3 * max(top, left, right)
