"""Where the hands rested: the arm's tip in a stillness view, the rests in squares, and the
Renaissance decoder telling a push-in from the placement that leaves the same board by them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest

from referee.app.pipeline import GameLoop, board_referee
from referee.rules import Match
from referee.rules.records import read_record
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import Position
from referee.tracking.decoding import Verdict
from referee.tracking.reach import HandTrail, arm_reach
from referee.tracking.renaissance import RenaissanceDecoder
from referee.tracking.stabiliser import ArmSettings, Stillness
from referee.vision.pose import BoardPose
from tests import DATA
from tests.tracking.test_renaissance_decoding import LABELS, reading

PX, MARGIN, FILES, RANKS = 12, 1, 7, 7
SIDE = (FILES + 2 * MARGIN) * PX  # the view of a 7x7 board: 108 px


def arm_to(x: float, y: float) -> np.ndarray:
    """A view's arm mask: a forearm 12 px wide from the bottom edge to (x, y), a hand there."""
    mask = np.zeros((SIDE, SIDE), np.uint8)
    cv2.line(mask, (SIDE // 2, SIDE - 1), (round(x), round(y)), 1, 12)
    cv2.circle(mask, (round(x), round(y)), 8, 1, -1)
    return mask.astype(bool)


def seen(arm: np.ndarray | None) -> Callable[[ArmSettings], np.ndarray | None]:
    """The same arm whatever test looks for it."""
    return lambda _settings: arm


def view_px(square_x: float, square_y: float) -> tuple[float, float]:
    """The view's pixel of a point in squares from a1's outer corner (a1 at the bottom left)."""
    return (square_x + MARGIN) * PX, (RANKS + MARGIN - square_y) * PX


def arm_tip(arm: np.ndarray, outside: np.ndarray | None, **settings: Any) -> np.ndarray | None:
    reach = arm_reach(arm, outside, **settings)
    return None if reach is None else reach[1]


def test_an_arm_that_never_leaves_the_band_it_comes_in_by_has_not_reached_in() -> None:
    """An arm resting on the table just beyond the view, or its shadow, darkens a band along
    the view's edge, beyond the board's rim: seen (its rests count), but it has not reached in,
    and holds no reading back. The same arm's hand over the rim has."""
    band = np.zeros((SIDE, SIDE), bool)
    band[SIDE - 4:, 17:56] = True
    reach = arm_reach(band, None)
    assert reach is not None and not reach.reached_in
    trail = HandTrail(FILES, RANKS, PX, MARGIN)
    trail.update(seen(band), None, 0.0)
    assert trail.in_view and trail.seen_s == 0.0 and trail.reached_s is None
    trail.update(seen(band | arm_to(36, SIDE - 30)), None, 0.1)  # over the rim, onto rank 1
    assert trail.reached_s == 0.1


def test_the_tip_is_the_arms_far_end() -> None:
    tip = arm_tip(arm_to(30, 20), None)
    assert tip is not None
    direction = np.array([30 - SIDE / 2, 20 - SIDE + 1])
    far = np.array([30, 20]) + direction / np.linalg.norm(direction) * 8  # the hand's rim
    assert np.linalg.norm(tip - far) < 3  # (a quarter of a square)


def test_a_patch_that_does_not_reach_the_views_edge_has_no_tip() -> None:
    patch = np.zeros((SIDE, SIDE), bool)
    patch[40:60, 40:60] = True  # a piece laid: changed, but no arm
    assert arm_tip(patch, None) is None
    assert arm_tip(patch, None, edge_px=12) is None


def test_an_arm_coming_in_across_the_frames_edge_has_its_tip() -> None:
    """Where the view leaves the camera's frame, the arm enters there, not at the view's edge."""
    outside = np.zeros((SIDE, SIDE), bool)
    outside[:, :20] = True
    mask = np.zeros((SIDE, SIDE), np.uint8)
    cv2.line(mask, (21, 50), (80, 50), 1, 12)
    tip = arm_tip(mask.astype(bool), outside)
    assert tip is not None and tip[0] > 80


def test_a_hand_resting_on_a_square_is_a_rest_there_and_passing_over_is_not() -> None:
    """The arm reaches in over 0.5 s (the tip moves fast over the squares on the way), rests
    on f5 for 0.4 s, and goes: one rest, on f5 (the fingertips, a little past its middle)."""
    trail = HandTrail(FILES, RANKS, PX, MARGIN)
    target = np.array(view_px(5.5, 4.5))  # f5's middle
    start = np.array([SIDE / 2, SIDE - 5.0])
    t = 0.0
    for u in np.linspace(0.1, 1.0, 15):
        x, y = start + (target - start) * u
        trail.update(seen(arm_to(x, y)), None, t)
        t += 1 / 30
    for _ in range(12):
        trail.update(seen(arm_to(*target)), None, t)  # (the fingers reach past the middle)
        t += 1 / 30
    for _ in range(5):
        trail.update(seen(None), None, t)
        t += 1 / 30
    rests = trail.rests()
    assert rests.shape == (1, 2)
    assert np.linalg.norm(rests[0] - [5.5, 4.5]) < 0.8
    trail.clear()
    assert trail.rests().shape == (0, 2)


def test_a_hand_reaching_beyond_the_far_rim_keeps_its_tip_at_the_far_end() -> None:
    """An arm from the near side lays a marker beyond the far rim: the hand, wider than the
    forearm, crosses the view's far edge as well. The arm came in at the near edge, so the
    tip stays at the hand, where it alone (the widest crossing) would be taken for the
    entry; and so it does where the arm was lost for a few frames on the way."""
    spot = np.array(view_px(6.5, RANKS + 0.6))  # beyond g7, the far rim
    reaching = arm_to(*spot)
    cv2.circle(reaching.view(np.uint8), (round(spot[0]), round(spot[1])), 14, 1, -1)
    alone = arm_tip(reaching, None)
    assert alone is not None and alone[1] > SIDE / 2  # taken for the arm's near end
    trail = HandTrail(FILES, RANKS, PX, MARGIN)
    start = np.array([SIDE / 2, SIDE - 5.0])
    for i, u in enumerate(np.linspace(0.1, 0.9, 12)):
        trail.update(seen(arm_to(*(start + (spot - start) * u))), None, i / 30)
    for i in range(12, 15):
        trail.update(seen(None), None, i / 30)
    for i in range(15, 27):
        trail.update(seen(reaching), None, i / 30)
    rests = trail.rests()
    assert rests.shape == (1, 2) and rests[0][1] > RANKS


def test_a_rest_still_under_way_counts() -> None:
    trail = HandTrail(FILES, RANKS, PX, MARGIN)
    for i in range(8):
        trail.update(seen(arm_to(*view_px(0.5, 6.5))), None, i / 30)
    assert trail.rests().shape == (1, 2)


def test_where_the_finer_test_floods_the_view_the_stillness_checks_arm_gives_the_tip() -> None:
    """An arm reaching across a small board with its shadow beside it: the finer test sees
    half the view changed, the stillness check's coarser one the arm alone, resting on g1."""
    trail = HandTrail(FILES, RANKS, PX, MARGIN)
    flooded = np.zeros((SIDE, SIDE), bool)
    flooded[:, : SIDE * 3 // 5] = True
    arm = arm_to(*view_px(6.5, 0.5))

    def arm_of(settings: ArmSettings) -> np.ndarray:
        return flooded | arm if settings == trail.settings.arm else arm

    for i in range(8):
        trail.update(arm_of, None, i / 30)
    rests = trail.rests()
    assert rests.shape == (1, 2) and np.linalg.norm(rests[0] - [6.5, 0.5]) < 0.8
    # where the coarser test floods too, no arm is taken to be in view
    trail.clear()
    trail.update(seen(flooded | arm), None, 0.0)
    assert not trail.in_view


def test_a_hand_the_finer_test_saw_holds_the_reading_until_it_has_been_gone_a_moment() -> None:
    """Fingers leaving over the board's rim are seen in one frame of two: the reading waits
    until none has been seen for `hand_gone_s`, and no longer than the occlusion timeout."""
    referee, reader = board_referee(RenaissanceRules(), None)
    loop = GameLoop(reader, referee)
    assert loop.hands is not None
    arm = arm_to(*view_px(1.5, 0.5))
    for i, present in enumerate([True, True, False, True, False, False, True]):
        loop.hands.update(seen(arm if present else None), None, i / 30)
    last = 6 / 30
    gone = loop.settings.hand_gone_s
    assert loop._hand_holds(last + gone - 0.05)
    assert not loop._hand_holds(last + gone + 0.01)
    timeout = loop.settings.stabiliser.occlusion_timeout_s
    for i in range(int(30 * (timeout + 1))):  # a hand that stays
        loop.hands.update(seen(arm), None, 10 + i / 30)
        held = loop._hand_holds(10 + i / 30)
    assert not held


def test_an_arm_followed_is_followed_while_the_board_looks_steady() -> None:
    """A steady board is not searched for arms (the trail would gather the view's noise as
    rests while the players think), but an arm the trail follows is followed until it goes:
    fingers laying a marker beyond the near rim change too little for the stillness check."""
    referee, reader = board_referee(RenaissanceRules(), None)
    loop = GameLoop(reader, referee)
    assert loop.hands is not None
    assert loop._watches_hands(Stillness.SETTLING) and not loop._watches_hands(Stillness.STEADY)
    loop.hands.update(seen(arm_to(*view_px(3.5, -0.4))), None, 0.0)
    assert loop._watches_hands(Stillness.STEADY)
    loop.hands.update(seen(None), None, 1 / 30)
    assert not loop._watches_hands(Stillness.STEADY)



def table_view(patch: tuple[slice, slice] | None = None, value: int = 200) -> np.ndarray:
    """A still view of an empty 7x7 board on a darker table, `patch` (rows, columns) painted."""
    view = np.full((SIDE, SIDE), 60, np.uint8)
    view[PX:SIDE - PX, PX:SIDE - PX] = 150
    for line in range(PX, SIDE - PX + 1, PX):
        view[line, PX:SIDE - PX] = view[PX:SIDE - PX, line] = 90
    if patch is not None:
        view[patch] = value
    return view


def watched(loop: GameLoop, view: np.ndarray, start_s: float, seconds: float) -> list[bool]:
    """The still `view` fed to `loop`'s stillness check and hand trail as `GameLoop.feed` does
    (no reading made): per frame, whether the trail saw a hand; True once its reference for
    arms is renewed."""
    pose = BoardPose.from_homography(np.diag([60.0, 60.0, 1.0]), FILES, RANKS)
    assert loop.hands is not None
    seen = []
    for i in range(round(seconds * 30)):
        time_s = start_s + i / 30
        stillness = loop.stabiliser.update(view, time_s)
        if loop._watches_hands(stillness):
            loop.hands.update(lambda arm: loop.stabiliser.arm_pixels(arm), None, time_s)
        if loop._surroundings_changed(stillness, time_s):
            loop._renew_clean(view, pose)
            return [*seen, True]
        seen.append(loop.hands.in_view)
    return seen


# A shadow over the board's bottom right corner, beyond the rim (890009's: a hand about to
# come in from beyond the view), in the clean reading's frame.
SHADOWED = (slice(SIDE - PX + 1, SIDE), slice(SIDE - 16, SIDE - 4))


def test_the_surroundings_changed_beyond_the_rim_renew_the_reference_for_arms() -> None:
    """A shadow over the rim gone since the clean reading is a still change at the view's
    edge, beyond the squares: the finer hand test takes it for a hand at first, then, once it
    has stayed as it is for `still_s`, the frame of now is the reference for arms."""
    referee, reader = board_referee(RenaissanceRules(), None)
    loop = GameLoop(reader, referee)
    assert loop.hands is not None and loop.surroundings is not None
    shadowed = table_view(SHADOWED, 30)
    assert Stillness.READ in [loop.stabiliser.update(shadowed, i / 30) for i in range(30)]
    loop.stabiliser.mark_read()
    seen = watched(loop, table_view(), 2.0, 3.0)
    assert seen[-1] is True and all(seen[3:-1])  # (the first frames stir the cells)
    still_s = loop.surroundings.settings.still_s
    assert still_s <= len(seen) / 30 <= still_s + 0.2
    assert not any(watched(loop, table_view(), 5.0, 1.0))
    assert not loop._hand_holds(6.0)


@pytest.mark.parametrize("arm", [
    (slice(50, SIDE), slice(40, 52)),  # over the squares, from the near edge
    (slice(SIDE - PX + 1, SIDE), slice(PX, SIDE - PX)),  # along the near rim, a hand's size
])
def test_an_arm_over_the_squares_or_as_big_as_a_hand_renews_no_reference(
        arm: tuple[slice, slice]) -> None:
    """A hand resting over the squares, its arm coming in from the view's edge, is no change
    of the surroundings however still, nor is a patch beyond the rim as big as a hand."""
    referee, reader = board_referee(RenaissanceRules(), None)
    loop = GameLoop(reader, referee)
    assert Stillness.READ in [loop.stabiliser.update(table_view(), i / 30) for i in range(30)]
    loop.stabiliser.mark_read()
    seen = watched(loop, table_view(arm), 2.0, 3.0)
    assert len(seen) == 90 and all(seen[3:])


PUSHES = read_record(DATA / "records" / "renaissance-pushes.txt")


def pushes_match(plies: int) -> Match:
    match: Match = Match(RenaissanceRules())
    for ply in PUSHES.plies[:plies]:
        match.push_text(ply.text)
    return match


# (ply index, the look-alike pair as written: the one played first)
LOOK_ALIKES = [(16, "g1>", "f2"), (17, "a3>", "b3"), (18, "e3", "g1>"), (19, "c3", "a3>")]


def centre(square: str) -> np.ndarray:
    return np.array([ord(square[0]) - ord("a") + 0.5, int(square[1:3].rstrip(">")) - 0.5])


def set_down(game: RenaissanceRules, position: Position, text: str) -> np.ndarray:
    """Where a player lays the marker of `text`: on its square, or for a push-in a square
    beyond the rim, to slide it in."""
    if not text.endswith(">"):
        return centre(text)
    line = game.pushed_line(position, game.geometry.parse_square(text[:-1]))
    edge, inward = (centre(game.geometry.square_name(sq)) for sq in line[:2])
    return 2 * edge - inward


@pytest.mark.parametrize(("ply", "played", "other"), LOOK_ALIKES)
def test_the_hand_tells_a_push_in_from_the_placement_that_leaves_the_same_board(
        ply: int, played: str, other: str) -> None:
    match = pushes_match(ply + 1)
    game: RenaissanceRules = match.game
    before, after = match.positions[ply], match.positions[ply + 1]
    decoder = RenaissanceDecoder(game, LABELS)
    board = reading(decoder.appearance(after)[0], seed=ply)
    # The hand seen where it lays the marker (a push-in's beyond the rim), or where it lets go
    # (a push-in's on the outer square, once slid); first a rest beside the board, far from all.
    for made_at in (set_down, lambda _game, _position, where: centre(where.rstrip(">"))):
        texts = {}
        for where in (played, other):
            rests = np.array([[3.5, -0.8], made_at(game, before, where), centre("d4")])
            inference = decoder.infer(replace(board, hand_rests=rests), before, None)
            assert inference.verdict is Verdict.MOVE
            texts[where] = game.move_text(before, inference.move)
        assert texts == {played: played, other: other}


def test_without_a_rest_that_tells_the_placement_stands_for_both() -> None:
    match = pushes_match(17)
    game: RenaissanceRules = match.game
    before, after = match.positions[16], match.positions[17]
    decoder = RenaissanceDecoder(game, LABELS)
    board = reading(decoder.appearance(after)[0])
    halfway = (centre("g1") + centre("f2")) / 2
    for rests in (None, np.empty((0, 2)), np.array([halfway]), np.array([centre("b6")])):
        inference = decoder.infer(replace(board, hand_rests=rests),
                                  before, None)
        assert game.move_text(before, inference.move) == "f2"


def test_two_tiles_read_at_once_are_recorded_in_the_order_the_hands_laid_them() -> None:
    """The L4 and the I2 laid before the board was read in between: either order leaves the
    same board, but not the same game. The hand rested on the one laid first (after a rest
    beside the board, far from both)."""
    match = pushes_match(3)
    game: RenaissanceRules = match.game
    before, after = match.positions[1], match.positions[3]
    decoder = RenaissanceDecoder(game, LABELS)
    board = reading(decoder.appearance(after)[0])
    laid = [match.moves[1], match.moves[2]]
    for order in (laid, laid[::-1]):
        rests = np.array([[3.5, -0.8], *(centre(game.geometry.square_name(move.squares[0]))
                                         for move in order)])
        inference = decoder.infer(replace(board, hand_rests=rests), before, None)
        assert inference.verdict is Verdict.TWO_MOVES
        assert [inference.move, inference.second] == order
