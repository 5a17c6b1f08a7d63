"""Find a board's grid in a frame without markers: the whole chain, each stage in its own
module.

1. The line search (`grid_search`): edges (Canny per colour channel) -> Hough lines, each
   voted for only by edge pixels whose gradient lies across it (`lines`) -> two direction
   families -> hypotheses from pairs of neighbouring lines of each family, the crossings
   that fall on each lattice counted, refitted, the window of the wanted size picked
   (`lattice`) -> scored on the edge map's distance transform (grid lines supported,
   half-way lines not, the lines' extensions one square outside no stronger than the
   texture there) -> an ICP pull onto the edges -> a sub-pixel fit to the lines' profiles
   at full resolution (`line_profiles`), confirmed there. On 3x3 boards it also fits from
   nudged starts, keeps the fit whose inner lines meet its outer lines, and centres the grid
   in the board's edge where that edge clearly agrees more.
2. The networks (`corner_guesses`): a small network guesses the board's four corners on
   the whole frame (`corners` for 3x3 boards, `corners-big` for 5x5 and 5x6); the grid
   fitted from there replaces a refused search's answer where its lines confirm it, or a
   search's answer where the board's edge sits round it at least as well. On 3x3 boards a
   refiner reads the corners again in rectified views.
3. The grid reader (`grid_reader`) marks every intersection of the board's lines in a view
   rectified by each candidate grid, a 3x3 window at a time: the candidate whose
   intersections are marked on it is kept, fitted again through the marks that stay put.
4. The board must be in full view (`in_full_view`): a grid running out of the frame, or one
   slid off a board cut off by the frame's edge onto its margin, is refused, naming the side
   (`grid_search.runs_out_of_view`, which names it for the other refusals too).
5. Its lines must be straight (`bent_lines`): where a barrel lens bends them (`lens_bend`: a
   wide-angle lens and no camera file; a grid of straight lines slides a row on such a board)
   the lens is estimated from them (`own_lens`), the board found again in the frame
   undistorted through it, the lens fitted again to its lines read there (the division model
   or OpenCV's polynomial, whichever grid they fit better, and its centre) until it settles,
   and the corners put back through it (`through_own_lens`); where the board is not found
   there or the lens is not trusted, it is refused.

Tracking from frame to frame is `board_tracker`."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from referee.calibration.files import CameraCalibration
from referee.calibration.undistort import Undistorter
from referee.errors import NoBoardError
from referee.vision.corner_guesses import (
    big_net_fit,
    big_net_guess,
    corner_net_fit,
    corner_network,
    grid_reader,
    guessed_quad,
    refiner_corners,
    with_big_net,
    with_corner_net,
    with_grid_reader,
    with_grid_reader_big,
    with_refiner,
)
from referee.vision.edge_lens import edges_k
from referee.vision.grid_search import (
    attempt,
    pose_or_raise,
    refine,
    runs_out_of_view,
    search_big_board,
    search_small_board,
)
from referee.vision.lattice import out_sides
from referee.vision.lens_bend import LAMBDAS, Bend, Radial, measure_bend, straightest_k
from referee.vision.line_profiles import (
    small_board,
)
from referee.vision.lines import to_grey
from referee.vision.own_lens import (
    LensFit,
    around_board,
    best_lens,
    from_pinhole,
    grid_fit,
    lens_for,
    read_lines,
)
from referee.vision.pose import (
    BoardPose,
    FloatArray,
    apply_homography,
    board_corners,
    grid_through,
)
from referee.vision.settings import LocaliseSettings, default_settings


@dataclass(frozen=True)
class FoundBoard:
    """A board found (`pose`, in the frame's own pixels) and, where its lines bent and the
    lens was estimated from them (`own_lens`), that lens (the camera model a camera file
    gives) and the board in the frame undistorted through it keeping its camera matrix
    (`undistorted`, as `FrameLens` undistorts frames)."""

    pose: BoardPose
    lens: CameraCalibration | None = None
    undistorted: BoardPose | None = None


AROUND_BOARD = 0.25  # of the board's size: the view undistorted through an estimated lens holds this round it
LENS_ROUNDS = 4      # at most: lens fits to the board's lines, each read in the view through the last
LENS_SETTLED = 0.001  # of the board's diagonal: a refit moving its corners less ends the fits
LENS_UNSETTLED = 0.005  # ... and one still moving them this much leaves the lens untrusted
LENS_MISFIT = 0.02   # squares: lines read to a fraction of a pixel lie this near one grid through their lens


def find_board(frame_bgr: NDArray[np.uint8], files: int, ranks: int, *,
               settings: LocaliseSettings | None = None,
               camera_matrix: FloatArray | None = None) -> BoardPose:
    """The grid of a `files` x `ranks` board in a frame, to sub-pixel accuracy; the camera's
    intrinsics (`camera_matrix`, the frame undistorted), where known, hold the last fit of a
    board under a hand (`settle_on_steady_marks`).

    Raises NoBoardError when no such grid is in view (blank, black or noisy frames, a board
    of another size, a board mostly hidden, a board running out of the frame): it never
    guesses."""
    return find_board_and_lens(frame_bgr, files, ranks, settings=settings, camera_matrix=camera_matrix).pose


def find_board_and_lens(frame_bgr: NDArray[np.uint8], files: int, ranks: int, *,
                        settings: LocaliseSettings | None = None,
                        camera_matrix: FloatArray | None = None) -> FoundBoard:
    """`find_board`, with the lens estimated where the board's lines bend (`FoundBoard`)."""
    if files < 1 or ranks < 1:
        raise ValueError(f"a board needs at least one file and one rank, not {files}x{ranks}")
    s = settings or default_settings().localise
    try:
        pose = _in_view(frame_bgr, files, ranks, s, camera_matrix)
    except NoBoardError:
        # through a lens and no camera file the first search often refuses the bent lines
        if camera_matrix is not None or s.lens_bend_ratio <= 0:
            raise
        found = through_edges_lens(frame_bgr, files, ranks, s)
        if found is None:
            raise
        return found
    bend = bent_lines(frame_bgr, pose, s)
    if bend is None:
        return FoundBoard(pose)
    return through_own_lens(frame_bgr, pose, bend, files, ranks, s)


def _in_view(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings,
             camera_matrix: FloatArray | None) -> BoardPose:
    """The board's grid in full view (`in_full_view`), or NoBoardError naming a side it runs
    out on where one is seen."""
    try:
        pose = _find_board(frame_bgr, files, ranks, s, camera_matrix)
    except NoBoardError as refused:
        sides = runs_out_of_view(frame_bgr, files, ranks, s)
        if sides:
            raise _out_of_view(sides) from refused
        raise
    return in_full_view(frame_bgr, pose, s)


def bent_lines(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> Bend | None:
    """The lens that straightens the board's lines (`lens_bend`), where they bend as a barrel
    lens bends them; None where they read straight."""
    if s.lens_bend_ratio <= 0:
        return None
    bend = measure_bend(to_grey(frame_bgr), pose)
    # A k at the end of those tried is no lens found: the lines bend as no lens in reach
    # bends them (a paper board curling: real wide lenses read -0.1 to -0.2).
    if bend is not None and LAMBDAS[0] < bend.k < 0 and bend.bow >= s.lens_bend_bow and (
            bend.rms_seen >= s.lens_bend_ratio * bend.rms_fitted):
        return bend
    return None


def through_own_lens(frame_bgr: NDArray[np.uint8], pose: BoardPose, bend: Bend, files: int, ranks: int,
                     s: LocaliseSettings) -> FoundBoard:
    """The board whose lines bend (`pose`, `bend`), found again in a view undistorted through
    the lens estimated from them (`own_lens`: the division model about the frame's centre)
    round where it lies and finished there (`_found_through`: the lens fitted again to its
    lines, its corners put back through it); NoBoardError naming the bent lines and the cure
    where the board is not found there or the lens is not trusted."""
    height, width = frame_bgr.shape[:2]
    first = lens_for(Radial(straightest_k(bend.lines)), width, height)
    flat = around_board(first, pose.corners_array, AROUND_BOARD)
    return _found_through(frame_bgr, first, flat, files, ranks, s)


def through_edges_lens(frame_bgr: NDArray[np.uint8], files: int, ranks: int,
                       s: LocaliseSettings) -> FoundBoard | None:
    """Where the first search refused: the board found in the whole frame undistorted through
    the lens its edges show (`edge_lens`, a plumb-line estimate before any grid is found),
    finished as `through_own_lens` finishes; None where the edges show no lens or the board is
    not found through it (the first refusal stands)."""
    k = edges_k(to_grey(frame_bgr))
    if k is None:
        return None
    height, width = frame_bgr.shape[:2]
    lens = lens_for(Radial(k), width, height)
    frame_corners = np.array([[0.0, 0.0], [width - 1, 0.0], [width - 1, height - 1], [0.0, height - 1]])
    try:
        return _found_through(frame_bgr, lens, around_board(lens, frame_corners, 0.0), files, ranks, s,
                              straightened=True)
    except NoBoardError:
        return None


def _found_through(frame_bgr: NDArray[np.uint8], first: CameraCalibration, flat: Undistorter, files: int,
                   ranks: int, s: LocaliseSettings, *, straightened: bool = False) -> FoundBoard:
    """The board found in the view `flat` undistorted through the lens `first`, then the lens
    fitted again to its lines read there and the grid fitted to them in the view through that
    (`_settled`), until a refit moves the board's corners in the frame by less than
    `LENS_SETTLED` of its diagonal (at most `LENS_ROUNDS` times); the grid is refined on the
    last view's lines (`refine`) and its corners go back into the frame through the last
    lens. NoBoardError naming the bent lines and the cure where the board is not found in the
    first view or the last lens is not trusted (`_distrusted`), and naming the sides where its
    corners go back beyond the frame.
    """
    try:
        seen = _in_view(flat(frame_bgr), files, ranks, s, flat.camera_matrix)
    except NoBoardError as refused:
        raise _bent(f"the board is not found through the lens estimated from them ({refused})") from None
    settled = Settled(first, None, flat, seen.h)
    for _ in range(LENS_ROUNDS):
        last, settled = settled, _settled(frame_bgr, settled, files, ranks)
        moved = _moved(last.corners(files, ranks), settled.corners(files, ranks))
        if moved < LENS_SETTLED:
            break
    view_bgr = settled.view(frame_bgr)
    settled = replace(settled, grid=refine(view_bgr, settled.grid, files, ranks, s))
    why = _distrusted(view_bgr, settled, moved, files, ranks, s, straightened)
    if why:
        raise _bent(why)
    lens, view = settled.lens, settled.view
    # the view is a pinhole camera of its own matrix: the board as the lens's matrix sees it
    undistorted_h = lens.K @ np.linalg.inv(view.camera_matrix) @ settled.grid
    undistorted = BoardPose.from_homography(undistorted_h / undistorted_h[2, 2], files, ranks)
    h = grid_through(from_pinhole(undistorted.corners_array, lens), files, ranks)
    sides = out_sides(h, files, ranks, frame_bgr.shape, s.out_of_view)  # the view reaches past the frame
    if sides:
        raise _out_of_view(sides)
    return FoundBoard(BoardPose.from_homography(h, files, ranks), lens, undistorted)


@dataclass(frozen=True)
class Settled:
    """A lens estimated for the board (`lens`; `fit`, how it was fitted to the board's lines,
    None for the first estimate), the frame undistorted through it round the board (`view`)
    and the board's grid there (`grid`: board -> view)."""

    lens: CameraCalibration
    fit: LensFit | None
    view: Undistorter
    grid: FloatArray

    def corners(self, files: int, ranks: int) -> FloatArray:
        """The board's corners where the frame shows them."""
        return self.view.distort_points(apply_homography(self.grid, board_corners(files, ranks)), self.lens)


def _settled(frame_bgr: NDArray[np.uint8], last: Settled, files: int, ranks: int) -> Settled:
    """The lens fitted to the board's lines read in the view `last` along its grid there
    (`own_lens.best_lens`: the division model or the polynomial, with its centre), the frame
    undistorted through it round the board, and the grid there that the lines' points fit;
    `last` where too few lines are read."""
    samples = read_lines(frame_bgr, last.view, last.lens, last.grid, files, ranks)
    fit = best_lens(samples)
    if fit is None:
        return last
    width, height = last.lens.image_size
    lens = lens_for(fit.lens, width, height)
    view = around_board(lens, last.corners(files, ranks), AROUND_BOARD)
    grid = grid_fit(view.undistort_points(samples.pixels(width, height), lens), samples)
    return last if grid is None else Settled(lens, fit, view, grid)


def _moved(before: FloatArray, after: FloatArray) -> float:
    """How far the board's corners moved (the most any did), as a share of its diagonal."""
    diagonal = max(float(np.linalg.norm(after[2] - after[0])), float(np.linalg.norm(after[3] - after[1])))
    return float(np.max(np.linalg.norm(after - before, axis=1))) / max(diagonal, 1e-9)


def _distrusted(view_bgr: NDArray[np.uint8], settled: Settled, moved: float, files: int, ranks: int,
                s: LocaliseSettings, straightened: bool) -> str:
    """Why the lens settled on is not to be trusted, or "": it was not fitted to the board's
    lines, its last refit still moved the board's corners `LENS_UNSETTLED` of its diagonal or
    more, it is no barrel lens in reach, the lines lie on one grid through it no better
    (`lens_bend_ratio`) than as the frame shows them or further off one than lines read to a
    fraction of a pixel lie (`LENS_MISFIT`), or the board's lines in the view through it still
    bend: a lens straightens them `lens_bend_ratio` and bows them `lens_bend_bow`.
    `straightened`: also where they still read there as a barrel lens bends them
    (`lens_bend_ratio` straighter through one, at any bow): a lens read off the frame's edges,
    not the board's lines, that left them bent is no lens to read it through."""
    fit = settled.fit
    if fit is None:
        return "too few of them are read through the lens estimated from them"
    if moved >= LENS_UNSETTLED:
        return "the lens estimated from them does not settle"
    if not LAMBDAS[0] < fit.lens.k < 0 or fit.misfit > LENS_MISFIT or (
            fit.misfit_seen < s.lens_bend_ratio * fit.misfit):
        return "no lens in reach straightens them"
    grid = BoardPose.from_homography(settled.grid, files, ranks)
    straight = measure_bend(to_grey(view_bgr), grid)
    # a bow alone is no bend: where the lines' points scatter, a lens of any k fits them
    # hardly better than straight lines (even through the true lens); as in `bent_lines`,
    # a bend is a lens that fits them `lens_bend_ratio` straighter
    still_bent = straight is not None and straight.rms_seen >= s.lens_bend_ratio * straight.rms_fitted and (
        straight.bow >= s.lens_bend_bow or (straightened and straight.k < 0))
    if straight is None or still_bent:
        return "they still bend through the lens estimated from them"
    return ""


def _bent(why: str) -> NoBoardError:
    return NoBoardError(f"no board: the board's lines bend (a wide-angle lens?) and {why}: calibrate the "
                        "camera with `referee calibrate camera`")


def in_full_view(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> BoardPose:
    """The pose, unless a corner of its grid lies more than `out_of_view` squares beyond the
    frame (its outer squares cannot be read there: the grid was extrapolated past what the
    frame shows) or the grid slid off a board cut off by the frame's edge onto its margin
    (`runs_out_of_view`): NoBoardError naming the sides."""
    sides = (out_sides(pose.h, pose.files, pose.ranks, frame_bgr.shape, s.out_of_view)
             or runs_out_of_view(frame_bgr, pose.files, pose.ranks, s, pose))
    if sides:
        raise _out_of_view(sides)
    return pose


def _out_of_view(sides: tuple[str, ...]) -> NoBoardError:
    return NoBoardError(f"no board in full view: the board runs out of the frame {' and '.join(sides)}")


def _find_board(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings,
                camera_matrix: FloatArray | None) -> BoardPose:
    """`find_board` before its check that the board is in full view."""
    # On clutter the search meets degenerate grids (corners at infinity): the comparisons
    # reject their inf and nan, which are no fault to warn a player about.
    with np.errstate(all="ignore"):
        if not small_board(files, ranks):
            if not s.corner_net_big:
                return search_big_board(frame_bgr, files, ranks, s)
            searched_big = attempt(lambda: search_big_board(frame_bgr, files, ranks, s))
            guess = big_net_guess(frame_bgr, files, ranks, s)
            net_fit = big_net_fit(frame_bgr, guess, files, ranks, s)
            chosen_big = attempt(lambda: with_big_net(frame_bgr, searched_big, net_fit, s))
            if not (s.corner_grid and s.corner_grid_big and corner_network(s.corner_net_big).trained_on(
                    files, ranks)):
                return pose_or_raise(chosen_big)
            return with_grid_reader_big(frame_bgr, chosen_big, net_fit, guess, files, ranks, s,
                                         camera_matrix=camera_matrix)
        searched = attempt(lambda: search_small_board(frame_bgr, files, ranks, s))
        if not s.corner_net:
            return pose_or_raise(searched)
        quad = guessed_quad(corner_network(s.corner_net), frame_bgr)
        chosen = attempt(lambda: with_corner_net(
            frame_bgr, searched, corner_net_fit(frame_bgr, quad, files, ranks, s), s))
        if not s.corner_refiner:
            return pose_or_raise(chosen)
        refined = refiner_corners(frame_bgr, quad, files, ranks, s)
        if s.corner_grid and grid_reader(s).net.trained_on(files, ranks):
            return with_grid_reader(frame_bgr, chosen, refined, files, ranks, s, camera_matrix=camera_matrix)
        return with_refiner(chosen, refined, s)
