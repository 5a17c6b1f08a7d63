"""The stabiliser: decides, frame by frame and cheaply, when the board may be read.

It looks at a small top-down grey image of the board (with a margin around the grid, where
arms come in) cut into cells. While cells change between frames, hands or pieces are moving
and nothing is read. Once the board has been still for `settle_s` seconds (time, not frames:
the camera's frame rate varies) and looks different from the last reading, or anything
moved since it, one reading is asked for. A hand over the board belongs to an arm, and an
arm comes in from beyond the view: while a still frame differs from the last reading taken
with no arm in view in a patch of pixels that reaches the view's edge (or the frame's,
where the view leaves it), and on into the grid where the ring of cells around it hardly
changed (a sleeve much like the table), a hand is resting in view, and the board is read
only if it stays so for `occlusion_timeout_s`. A piece standing on an edge square may lean
into the margin in the image, but its patch stops short of the view's edge, so it does not
hold the game up."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np


class Stillness(enum.Enum):
    MOVING = "moving"
    SETTLING = "settling"
    OCCLUDED = "occluded"  # still, but an arm reaches into the view
    READ = "read now"
    STEADY = "steady"  # still and already read


@dataclass(frozen=True)
class ArmSettings:
    """What makes a change since the last reading an arm: pixels changed by `threshold` grey
    levels on average over `patch_px` (beyond what tracking's jitter explains: the view
    re-aligned by up to `align_px`, then `shift_px` of slack; and beyond `contrast_share` of
    the local contrast, what a change of focus does to a line), `min_px` of them together,
    coming within `edge_px` of the view's edge or of the frame's."""

    threshold: float = 6.0
    contrast_share: float = 0.1
    patch_px: int = 5
    align_px: int = 3
    shift_px: int = 1
    min_px: int = 40
    edge_px: int = 2
    gap_px: int = 3  # a sleeve and its hand may be this far apart where they meet the grid
    # A patch this big at the view's edge is an arm though it stops short of the grid: a hand
    # at a corner of the board, over its rim, changes too little of a ring cell to be seen.
    # (12 px a square: most of a square, far more than a line re-focused or a piece leaning.)
    lone_px: int = 120
    light_match: float = 1.25  # the most the views' light is matched by (see changed_pixels)
    # Past this share of the view changed, the views do not compare pixel by pixel (the light,
    # the focus or the pose changed): the ring of cells around the grid must agree.
    comparable: float = 0.4
    # An arm moves: changes overlapping by this much at two still moments with `ghost_motion_s`
    # of motion between them (a move made: a hand pausing stirs for a frame or two) are the
    # surroundings changed since the clean reading (a hand at the view's edge then has gone),
    # which would otherwise hold every reading back.
    ghost_overlap: float = 0.7
    ghost_motion_s: float = 0.5


@dataclass(frozen=True)
class StabiliserSettings:
    settle_s: float = 0.5
    motion_threshold: float = 6.0  # mean grey-level change of a cell between frames
    change_threshold: float = 9.0  # mean grey-level change of a cell since the last reading
    occlusion_timeout_s: float = 4.0
    # An arm seen at rest is taken to be there until it has been unseen this long, or something
    # moved: one frame's patch broken up (a wrist much like the table) is no arm gone.
    arm_release_s: float = 0.25
    cells: tuple[int, int] = (0, 0)  # (columns, rows) of cells; 0 = one per square + margin
    arm: ArmSettings = field(default_factory=ArmSettings)


def cell_means(gray: np.ndarray, columns: int, rows: int) -> np.ndarray:
    """Mean grey level of each cell of a `rows` x `columns` grid over `gray`, normalised by
    the whole image's mean so that a global change of light is not motion."""
    h, w = gray.shape
    trimmed = gray[: h - h % rows, : w - w % columns].astype(np.float32)
    means = trimmed.reshape(rows, trimmed.shape[0] // rows, columns, -1).mean(axis=(1, 3))
    return np.asarray(means * (128.0 / max(float(means.mean()), 1.0)))


def smoothed(gray: np.ndarray) -> np.ndarray:
    """`gray` lightly blurred (sensor noise) and normalised by its median (a change of light;
    the median, since a hand moves the mean)."""
    image = cv2.blur(gray.astype(np.float32), (3, 3))
    return np.asarray(image * (128.0 / max(float(np.median(image)), 1.0)))


def aligned(before: np.ndarray, now: np.ndarray, search_px: int) -> np.ndarray:
    """`before` shifted by the whole pixels (at most `search_px` each way) that match `now`
    best: the tracked pose wanders by a pixel or two in the view."""
    if search_px <= 0:
        return before
    h, w, m = now.shape[0], now.shape[1], search_px
    costs = cv2.matchTemplate(before, np.ascontiguousarray(now[m:h - m, m:w - m]),
                              cv2.TM_SQDIFF)  # (2m + 1) x (2m + 1): one per shift
    _, _, (x, y), _ = cv2.minMaxLoc(costs)
    dx, dy = x - m, y - m
    shift = np.array([[1.0, 0.0, -dx], [0.0, 1.0, -dy]])
    return np.asarray(cv2.warpAffine(before, shift, (w, h), borderMode=cv2.BORDER_REPLICATE))


def changed_pixels(now: np.ndarray, before: np.ndarray, arm: ArmSettings) -> np.ndarray:
    """Pixels of `now` darker or lighter, on average over a patch around them, than every
    pixel of `before` (aligned with it) nearby: lines a little off are no change."""
    before = aligned(before, now, arm.align_px)
    # Each view was normalised by its own median, which a piece laid moves as much as the
    # light does (a light tile on dark squares made the whole view 5% darker, and the bright
    # table at the view's edge changed as an arm does): the two are matched by their pixels'
    # median ratio instead, which only a change over most of the view moves. A piece moves
    # it a few percent; beyond `light_match` it is no piece (a covered lens: a black view),
    # and is left as it was.
    ratio = float(np.median(now / np.maximum(before, 1.0)))
    before = before * float(np.clip(ratio, 1 / arm.light_match, arm.light_match))
    window = np.ones((2 * arm.shift_px + 1, 2 * arm.shift_px + 1), np.uint8)
    darker = cv2.erode(before, window) - now
    lighter = now - cv2.dilate(before, window)
    # A line drawn sharper or softer than before (the camera's focus and noise vary) changes
    # by a share of its contrast; an arm changes the flat table and margin.
    patch = np.ones((arm.patch_px, arm.patch_px), np.uint8)
    contrast = cv2.dilate(before, patch) - cv2.erode(before, patch)
    change = np.maximum(np.maximum(darker, lighter) - arm.contrast_share * contrast, 0)
    # Averaged over patches: a striped sleeve or a hand much like the table changes few
    # pixels strongly but a patch of them on the whole.
    return np.asarray(cv2.blur(change, (arm.patch_px, arm.patch_px)) > arm.threshold)


def arm_blobs(changed: np.ndarray, outside: np.ndarray | None, inner: np.ndarray | None,
              arm: ArmSettings) -> np.ndarray:
    """The changed pixels that make an arm: `min_px` of them together coming within `edge_px`
    of the view's edge (or of the part of the view beyond the frame, `outside`), and reaching
    `inner` if given or else `lone_px` of them."""
    edge = np.ones(changed.shape, np.uint8)
    edge[1:-1, 1:-1] = 0
    if outside is not None and outside.any():
        # The frame's edge moves with the view: a band along it is neither change nor edge.
        blank = cv2.dilate(outside.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
        changed = changed & ~blank
        edge[blank] = 1
    near = cv2.dilate(edge, np.ones((2 * arm.edge_px + 3, 2 * arm.edge_px + 3), np.uint8)) > 0
    if inner is not None:  # a sleeve's patches and its hand's, a little apart, are one
        gap = np.ones((2 * arm.gap_px + 1, 2 * arm.gap_px + 1), np.uint8)
        changed = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_CLOSE, gap) > 0
    _, labels, stats, _ = cv2.connectedComponentsWithStats(changed.astype(np.uint8),
                                                           connectivity=8)
    found = np.unique(labels[near & changed])
    found = found[found > 0]
    if inner is not None:
        found = found[np.isin(found, labels[inner & changed])
                      | (stats[found, cv2.CC_STAT_AREA] >= arm.lone_px)]
    found = found[stats[found, cv2.CC_STAT_AREA] >= arm.min_px]
    return np.asarray(np.isin(labels, found) & changed)


def reaches_in(changed: np.ndarray, outside: np.ndarray | None, inner: np.ndarray | None,
               arm: ArmSettings) -> bool:
    """Whether an arm reaches into the view (`arm_blobs`)."""
    return bool(arm_blobs(changed, outside, inner, arm).any())


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two masks (0 where both are empty)."""
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 0.0


# The board of the last clean reading's frame, cut with the pose of now (None: not kept).
CleanView = Callable[[], np.ndarray | None]


class Stabiliser:
    def __init__(self, columns: int, rows: int, settings: StabiliserSettings | None = None) -> None:
        self.columns, self.rows = columns, rows
        self.settings = settings or StabiliserSettings()
        self._previous: np.ndarray | None = None
        self._previous_view: np.ndarray | None = None  # `smoothed` of the last frame
        self._reference: np.ndarray | None = None  # the cells at the last reading
        self._reference_view: np.ndarray | None = None  # and its smoothed view
        self._still_since: float | None = None
        self._stirred = False  # something moved since the last reading
        # Arms are looked for against the last reading taken with none in view: one taken at
        # the timeout, a hand resting over the board, would make the hand's going look like
        # an arm coming.
        self._clean: np.ndarray | None = None
        self._clean_view: np.ndarray | None = None
        self._arm_now = False
        self._arm_seen_s: float | None = None  # when an arm was last seen in this still spell
        # When the arm now in view was first seen: a hand may creep in at a corner of the view
        # too slowly for the cells to see motion, long after the board came to rest, and it is
        # waited out from then.
        self._arm_since: float | None = None
        self._motion_s = 0.0  # seconds of motion so far
        self._last_time: float | None = None
        self._ghost: tuple[np.ndarray, float] | None = None  # the last arm seen, `_motion_s` then

    def update(self, board_gray: np.ndarray, time_s: float, *,
               outside: np.ndarray | None = None, clean: CleanView | None = None) -> Stillness:
        """`outside`: the pixels of `board_gray` beyond the camera's frame, if any; `clean`:
        the frame of the last reading taken with no arm in view, cut as `board_gray` is (see
        `_arm_in_view`)."""
        cells = cell_means(board_gray, self.columns, self.rows)
        previous, self._previous = self._previous, cells
        last_time, self._last_time = self._last_time, time_s
        self._previous_view = smoothed(board_gray)
        s = self.settings
        if previous is None or np.abs(cells - previous).max() > s.motion_threshold:
            self._motion_s += 0.0 if last_time is None else max(0.0, time_s - last_time)
            self._still_since = None
            self._stirred = previous is not None
            self._arm_seen_s = self._arm_since = None
            return Stillness.MOVING
        if self._still_since is None:
            self._still_since = time_s
        still_for = time_s - self._still_since
        if still_for < s.settle_s:
            return Stillness.SETTLING
        if self._reference is None:
            return Stillness.READ
        changed = np.abs(cells - self._reference) > s.change_threshold
        # A hand came and went: what it did may be too small for the cells (a die turned to
        # another face), so the board is read once more.
        if not self._stirred and not changed.any():
            return Stillness.STEADY
        if self._arm_in_view(cells, outside, clean):
            self._arm_seen_s = time_s
        seen = self._arm_seen_s
        self._arm_now = seen is not None and time_s - seen < s.arm_release_s
        if not self._arm_now:
            self._arm_since = None
            return Stillness.READ
        if self._arm_since is None:
            self._arm_since = time_s
        waited = time_s - self._arm_since
        return Stillness.OCCLUDED if waited < s.occlusion_timeout_s else Stillness.READ

    def recheck(self, board_gray: np.ndarray, *, outside: np.ndarray | None = None,
                clean: CleanView | None = None) -> Stillness:
        """After OCCLUDED: the same moment seen again from a refitted pose. Tracking follows
        rigid moves only, and a board edge it drifted a pixel from since the last reading
        looks like an arm reaching in."""
        self._previous = cell_means(board_gray, self.columns, self.rows)
        self._previous_view = smoothed(board_gray)
        self._arm_now = self._arm_in_view(self._previous, outside, clean)
        if not self._arm_now:  # (tracking's drift, not an arm: nothing to wait out)
            self._arm_seen_s = self._arm_since = None
        return Stillness.OCCLUDED if self._arm_now else Stillness.READ

    @property
    def clean_taken(self) -> bool:
        """Whether the last reading marked is the one arms are now looked for against."""
        return self._clean is not None and self._clean is self._reference

    def _arm_in_view(self, cells: np.ndarray, outside: np.ndarray | None,
                     clean: CleanView | None = None) -> bool:
        """An arm reaches in from beyond the view. A piece on an edge square may lean into
        the ring of cells around the grid, but not out to the view's edge. `clean` cuts the
        clean reading's frame as the view is cut now: a view cut from a pose that has drifted
        since shows the board's edges moved, which reach the view's edge as an arm does."""
        if self._clean is None or self._clean_view is None or self._previous_view is None:
            return False
        clean_cells, clean_view = self._clean, self._clean_view
        board = clean() if clean is not None else None
        if board is not None:
            clean_cells = cell_means(board, self.columns, self.rows)
            clean_view = smoothed(board)
        arm = self.settings.arm
        changed = changed_pixels(self._previous_view, clean_view, arm)
        blobs = np.zeros(changed.shape, bool)
        moved = np.abs(cells - clean_cells) > self.settings.change_threshold
        moved[1:-1, 1:-1] = False  # the ring of cells round the grid: the margin arms cross
        if moved.any():  # (an arm crosses it where its cells changed)
            blobs = arm_blobs(changed, outside, self._cells_mask(moved, changed.shape), arm)
        if not blobs.any() and changed.mean() <= arm.comparable:
            # The ring's cells may miss a sleeve much like the table, but its hand is on the
            # board; a hand over a grid drawn sharper in the clean view (it was read in focus)
            # changes the squares between the lines, its patches a little apart; and where the
            # whole view differs (the light, the focus) nothing is told.
            blobs = arm_blobs(changed, outside, self._inner(changed.shape), arm)
        return self._moves_as_an_arm(blobs)

    def _moves_as_an_arm(self, blobs: np.ndarray) -> bool:
        """Whether `blobs` are an arm, not the same change as at the last still moment with
        an arm, motion having come between."""
        if not blobs.any():
            return False
        ghost = self._ghost
        arm = self.settings.arm
        if ghost is not None and self._motion_s - ghost[1] >= arm.ghost_motion_s and \
                ghost[0].shape == blobs.shape and overlap(blobs, ghost[0]) >= arm.ghost_overlap:
            return False
        self._ghost = (blobs, self._motion_s)
        return True

    def arm_pixels(self, arm: ArmSettings, outside: np.ndarray | None = None) -> np.ndarray | None:
        """The pixels of the last frame's view an arm covers, as `arm` sees them: changed
        since the last clean reading, in patches reaching the view's edge (None: no clean
        reading to compare)."""
        now, clean = self._previous_view, self._clean_view
        if now is None or clean is None or now.shape != clean.shape:
            return None
        return arm_blobs(changed_pixels(now, clean, arm), outside, None, arm)

    def _cells_mask(self, cells: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """The view's pixels in the cells set in `cells` (rows x columns, as `cell_means`
        cuts them: the last pixels of a view not divided evenly belong to no cell)."""
        dy, dx = shape[0] // self.rows, shape[1] // self.columns
        mask = np.zeros(shape[:2], bool)
        mask[:dy * self.rows, :dx * self.columns] = np.kron(cells, np.ones((dy, dx), bool))
        return mask

    def _inner(self, shape: tuple[int, ...]) -> np.ndarray:
        """The view's pixels inside its ring of cells: the grid."""
        grid = np.zeros((self.rows, self.columns), bool)
        grid[1:-1, 1:-1] = True
        return self._cells_mask(grid, shape)

    def edge_changes(self) -> np.ndarray:
        """How much the cells along each edge of the view differ from the last reading:
        bottom, top, left, right (an arm reaching in crosses one of them)."""
        if self._previous is None or self._reference is None:
            return np.zeros(4)
        changed = np.abs(self._previous - self._reference)
        return np.array([changed[-1].mean(), changed[0].mean(), changed[:, 0].mean(),
                         changed[:, -1].mean()])

    def mark_read(self, board_gray: np.ndarray | None = None, *, renamed: bool = False,
                  hand_seen: bool = False) -> None:
        """The caller has read the board as it is now: later frames are compared with it
        (or with `board_gray`, the same moment seen from a refitted pose, or `renamed`: in
        another naming of the corners). `hand_seen`: the caller saw a hand in view that the
        arm test did not (the view is then no reference for arms)."""
        if board_gray is not None:
            self._previous = cell_means(board_gray, self.columns, self.rows)
            self._previous_view = smoothed(board_gray)
        self._reference = self._previous
        self._reference_view = self._previous_view
        self._stirred = False
        if not (self._arm_now or hand_seen) or renamed:  # (a view in the old naming is no use)
            self._clean, self._clean_view = self._reference, self._reference_view
            self._ghost = None

    def renew_clean(self) -> None:
        """Arms are looked for against the last frame's view from now on: what changed at
        its edge since the clean reading was the surroundings (the caller judged so), no arm."""
        self._clean, self._clean_view = self._previous, self._previous_view
        self._ghost = None
        self._arm_now = False
        self._arm_seen_s = self._arm_since = None

    def forget_reading(self) -> None:
        """Read again at the next steady moment (after a re-found board, say)."""
        self._reference = None
        self._reference_view = None
        self._clean = self._clean_view = None
        self._arm_now = False
        self._arm_seen_s = self._arm_since = None
