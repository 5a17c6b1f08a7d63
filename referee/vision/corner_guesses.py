"""What the networks add to the line search (`board_finder` steps 2 and 3): the corner
networks' guesses fitted to the lines, the 3x3 refiner's corners, and the grid reader's
choice among the candidates. The networks are loaded once a models folder
(`CornerNetworks`, `corner_networks`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import ModelError, NoBoardError
from referee.vision.classifier import default_models_dir
from referee.vision.corner_net import CornerNet
from referee.vision.grid_reader import GridReader
from referee.vision.grid_search import (
    best_reached,
    colour_frame,
    corner_shift,
    finish_small_grid,
    is_adrift,
    pose_or_raise,
    printed_lines_confirm,
    refine,
)
from referee.vision.lattice import canonical
from referee.vision.line_profiles import (
    line_ends,
    profile_support,
)
from referee.vision.outline import ring_agreement
from referee.vision.pose import (
    BoardPose,
    FloatArray,
    camera_homography,
    corner_error,
    grid_through,
)
from referee.vision.settings import LocaliseSettings


class CornerNetworks:
    """The corner networks of one models folder, and the grid readers made of them, each
    loaded and checked against its card on first use and then kept: the finder asks for
    them on every search, and loading one takes far longer than a search."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._networks: dict[str, CornerNet] = {}
        self._readers: dict[tuple[str, int, int, float, float], GridReader] = {}

    def network(self, name: str) -> CornerNet:
        """`<folder>/<name>.onnx` (a `ModelError` when it is missing, corrupt or does not
        match its card)."""
        if name not in self._networks:
            self._networks[name] = CornerNet.load(self.folder / name)
        return self._networks[name]

    def grid_reader(self, s: LocaliseSettings) -> GridReader:
        """The grid reader (`corner_grid`) taking its marks as the settings say."""
        key = (s.corner_grid, s.corner_grid_turns, s.corner_grid_rounds, s.corner_grid_heat,
               s.corner_grid_near_px)
        if key not in self._readers:
            try:
                self._readers[key] = GridReader(self.network(s.corner_grid), s.corner_grid_heat,
                                                s.corner_grid_near_px, s.corner_grid_turns,
                                                s.corner_grid_rounds)
            except ValueError as error:
                raise ModelError(str(error)) from None
        return self._readers[key]


_LOADED: dict[Path, CornerNetworks] = {}


def corner_networks() -> CornerNetworks:
    """The corner networks of the models folder in force (`default_models_dir()`: the
    shipped models, or `$REFEREE_MODELS`), one set a folder for the process."""
    folder = default_models_dir()
    return _LOADED.setdefault(folder, CornerNetworks(folder))


def corner_network(name: str) -> CornerNet:
    return corner_networks().network(name)


def grid_reader(s: LocaliseSettings) -> GridReader:
    return corner_networks().grid_reader(s)


def corner_net_fit(frame_bgr: NDArray[np.uint8], quad: NDArray[np.float32] | None, files: int, ranks: int,
             s: LocaliseSettings) -> BoardPose | None:
    """The grid the corner network (`corner_net`) puts the board's outer corners at (`quad`,
    `guessed_quad`), fitted from there as the line search's first grid is (`best_reached`:
    nudged starts, the fit whose inner lines best meet its outer ones), polished and
    centred; None where the network saw no four corners or the fit meets too few line ends."""
    if quad is None:
        return None
    h = grid_through(quad, files, ranks)
    try:
        fitted = best_reached(colour_frame(frame_bgr), [h], files, ranks, s, reach=s.corner_net_reach)
    except NoBoardError:
        return None
    return finish_small_grid(frame_bgr, canonical(fitted, files, ranks), s)


def guessed_quad(net: CornerNet, frame_bgr: NDArray[np.uint8]) -> NDArray[np.float32] | None:
    """The board's outer corners as `net` guesses them, a convex quadrilateral in frame
    pixels; None where it sees no four corners or they make no convex quadrilateral."""
    guess = net.guess(frame_bgr)
    if guess is None:
        return None
    quad = np.asarray(cv2.convexHull(guess.points.astype(np.float32)), np.float32).reshape(-1, 2)
    return quad if len(quad) == 4 else None


def _with_net(frame_bgr: NDArray[np.uint8], searched: BoardPose | NoBoardError,
              net: BoardPose | None, s: LocaliseSettings,
              trusted: Callable[[NDArray[np.uint8], BoardPose], bool]) -> BoardPose:
    """The line search's grid or a corner network's: where the search found none, the
    network's if `trusted` (colour frame, grid) takes it; where both found one and they differ
    by `corner_net_apart` squares or more, the one round which the board's edge shows at one
    margin more (`ring_agreement`; the network's on a tie); the search's otherwise. The search
    locks onto a border line, a die's edge or a hand's, or takes a grid a rank off under a
    hand, where the fit started from the network's corners holds the board's own lines,
    concentric with its edge."""
    colour = colour_frame(frame_bgr)
    if isinstance(searched, NoBoardError):
        if net is not None and trusted(colour, net):
            return net
        raise searched
    files, ranks = searched.files, searched.ranks
    if net is None or corner_shift(searched.h, net.h, files, ranks) < s.corner_net_apart:
        return searched
    ring_net, ring_searched = (ring_agreement(colour, pose.h, files, ranks) for pose in (net, searched))
    return net if ring_net >= ring_searched else searched


def with_corner_net(frame_bgr: NDArray[np.uint8], searched: BoardPose | NoBoardError,
                     net: BoardPose | None, s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's grid (`_with_net`): a refused search's place taken by the network's grid
    if its printed lines confirm it (`printed_lines_confirm`). Read off the development frames
    (benchmarks/localise_accuracy.md): of 360, 309 within 1% by the search alone, 329
    so; asking the network's grid to meet its line ends as well as the search's too (the
    first rule tried), 324."""
    return _with_net(frame_bgr, searched, net, s, lambda colour, pose: printed_lines_confirm(colour, pose, s))


def refiner_corners(frame_bgr: NDArray[np.uint8], quad: NDArray[np.float32] | None, files: int, ranks: int,
             s: LocaliseSettings) -> tuple[BoardPose, float] | None:
    """The board's corners as the refiner (`corner_refiner`) reads them in views rectified
    by the corner network's guess (`quad`) and turned (`corner_refiner_turns`), each round
    from the last one's corners, with the least corner heat at the last round; None where
    the network saw no four corners. A network's grid, not fitted to the lines: where the
    line fits have failed it, under a hand or a square off, the refiner has read the board
    whole."""
    refiner = corner_network(s.corner_refiner)
    if quad is None or not refiner.trained_on(files, ranks):
        return None
    turns = s.corner_refiner_turns if files == ranks else min(s.corner_refiner_turns, 2)
    corners: NDArray[np.floating] = quad
    for _ in range(s.corner_refiner_rounds):
        guess = refiner.refine(frame_bgr, corners, turns)
        corners = guess.points
    return canonical(grid_through(corners, files, ranks), files, ranks), float(guess.heat.min())


def with_refiner(chosen: BoardPose | NoBoardError, refined: tuple[BoardPose, float] | None,
                  s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's answer (`with_corner_net`'s grid, or its refusal) or the refiner's
    corners (`refiner_corners`, with their least heat): the refiner's where the finder refused and
    every corner's heat reaches `corner_refiner_heat`, or where one of its corners lies
    `corner_refiner_apart` of the diagonal or more from the answer's (the line fits have then
    locked onto a hand's edge or the board's border a square off) and every heat reaches
    `corner_refiner_overrule_heat`: overruling a grid asks more of the refiner than answering
    a refusal. Where they lie `corner_refiner_far` or more apart, the answer is worth no more
    than a refusal (on the development frames every such answer was wrong) and the refiner's
    grid is taken as for one. Read off the development frames
    (benchmarks/localise_accuracy.md)."""
    if refined is None:
        return pose_or_raise(chosen)
    pose, heat = refined
    if isinstance(chosen, NoBoardError):
        return pose if heat >= s.corner_refiner_heat else pose_or_raise(chosen)
    apart = corner_error(pose, chosen.corners_array) / chosen.diagonal
    if apart >= s.corner_refiner_far:
        return pose if heat >= s.corner_refiner_heat else chosen
    return pose if heat >= s.corner_refiner_overrule_heat and apart >= s.corner_refiner_apart else chosen


def with_grid_reader(frame_bgr: NDArray[np.uint8], chosen: BoardPose | NoBoardError,
                      refined: tuple[BoardPose, float] | None, files: int, ranks: int,
                      s: LocaliseSettings, *, camera_matrix: FloatArray | None = None) -> BoardPose:
    """A 3x3 board's grid, the best seen (`_best_seen`) of the finder's answer
    (`with_corner_net`'s), the refiner's (`refiner_corners`) and the grids fitted to the reader's
    marks from each. The line fits are precise where they hold, the refiner reads a board
    under a hand whole, and the marks tell them apart and fit the grid the hand leaves in
    view. Read off the development frames (benchmarks/localise_accuracy.md)."""
    reader = grid_reader(s)
    starts = [pose.corners_array for pose in (chosen, refined and refined[0]) if isinstance(pose, BoardPose)]
    fits = [fit for fit in (reader.fit(frame_bgr, start) for start in starts) if fit is not None]
    grids = [grid_through(quad, files, ranks) for quad in [*starts, *fits]]
    best = _best_seen(frame_bgr, grids, files, ranks, s)
    if best is not None:
        return settle_on_steady_marks(frame_bgr, best, s, camera_matrix=camera_matrix)
    if isinstance(chosen, NoBoardError):
        raise chosen
    raise NoBoardError(f"only few of the grid's intersections show where it puts them (less than "
                       f"{s.corner_grid_seen:.0%}): something over the board?")


def settle_on_steady_marks(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings, *,
             camera_matrix: FloatArray | None = None) -> BoardPose:
    """A grid the reader chose fitted again, as a camera sees a flat board (`camera_homography`:
    `camera_matrix` where known, else a focal length scanned), through the intersections
    whose marks stay put when the guess moves (`GridReader.settled_marks`,
    `corner_grid_settle`); as it is where fewer than `corner_grid_settle_share` of the
    board's intersections (and four) do, since a fit through a few on one side guesses the
    far side. Under a hand the reader marks the hidden intersections where the grid it was
    given puts them, which holds every fit near its start; the intersections in view, with
    the board's squares kept square, place the hidden corner. Read off the development
    frames (benchmarks/localise_accuracy.md)."""
    if s.corner_grid_settle <= 0:
        return pose
    board, image = grid_reader(s).settled_marks(frame_bgr, pose.h, pose.files, pose.ranks,
                                                s.corner_grid_settle, s.corner_grid_settle_spread)
    if len(board) < max(4, math.ceil(s.corner_grid_settle_share * (pose.files + 1) * (pose.ranks + 1))):
        return pose
    h = camera_homography(board, image, (frame_bgr.shape[1], frame_bgr.shape[0]), camera_matrix=camera_matrix)
    return pose if h is None else canonical(h, pose.files, pose.ranks)


def with_grid_reader_big(frame_bgr: NDArray[np.uint8], chosen: BoardPose | NoBoardError,
                          net_fit: BoardPose | None, guess: NDArray[np.float32] | None,
                          files: int, ranks: int, s: LocaliseSettings, *,
                          camera_matrix: FloatArray | None = None) -> BoardPose:
    """A 5x5 or 5x6 board's grid (the sizes the bigger boards' network knows, the only ones
    measured): the finder's answer (`with_big_net`'s) where the grid reader sees it
    (`corner_grid_seen` of its intersections marked on it, read a 3x3 window at a time) with
    its marks within `corner_grid_big_keep_px` (median); else the best seen (`_best_seen`) of
    that answer, the network's fit (`big_net_fit`), on a square board the network's guess
    (a 5x6 board's guess may lay the files either way, and the marks cannot tell: most
    intersections lie alike), the grids fitted to the reader's marks from each and those fits
    fitted to the lines' profiles (`refine`), these last three only where their lines do not
    run on beyond them (`_lines_run_on`); where it sees none, the finder's answer or refusal
    (a board style the reader never saw, as the tests' drawn checkers, is marked little).
    Under a hand a line fit can take a rank off or lock onto the hand's edge, where the marks
    still show the grid. The best seen is fitted again through the marks that stay put
    (`settle_on_steady_marks`); a kept answer is not, since the line fits are the more precise. Read off
    the development frames (benchmarks/localise_accuracy.md)."""
    reader = grid_reader(s)
    colour = colour_frame(frame_bgr)
    if isinstance(chosen, BoardPose):
        support = reader.support(colour, chosen.h, files, ranks)
        if support.share() >= s.corner_grid_seen and support.median_px <= s.corner_grid_big_keep_px:
            return chosen
    confirmed = [pose.h for pose in (chosen, net_fit) if isinstance(pose, BoardPose)]
    guessed = [grid_through(guess, files, ranks)] if guess is not None and files == ranks else []
    fits = [fit for fit in (reader.fit_board(colour, h, files, ranks) for h in [*confirmed, *guessed])
            if fit is not None]
    polished = [refine(colour, fit, files, ranks, s) for fit in fits]
    held = [h for h in [*guessed, *fits, *polished] if not _lines_run_on(colour, h, files, ranks, s)]
    best = _best_seen(colour, [*confirmed, *held], files, ranks, s)
    if best is None:
        return pose_or_raise(chosen)
    return settle_on_steady_marks(colour, best, s, camera_matrix=camera_matrix)


def _lines_run_on(colour: NDArray[np.uint8], h: FloatArray, files: int, ranks: int,
                  s: LocaliseSettings) -> bool:
    """Whether a grid's lines run on one square beyond it about as strongly as they show
    (`max_outside_ratio`): a window of a bigger board, which the grid reader marks as well as
    a board's own grid."""
    support = profile_support(colour, h, files, ranks)
    return support.outside > s.max_outside_ratio * support.grid


def _best_seen(frame_bgr: NDArray[np.uint8], grids: list[FloatArray], files: int, ranks: int,
               s: LocaliseSettings) -> BoardPose | None:
    """Of the grids (board squares to frame pixels) the grid reader sees (`corner_grid_seen`
    of their intersections marked on them), the one whose marks lie nearest (their median
    distance); None where it sees none."""
    reader = grid_reader(s)
    best: tuple[float, FloatArray] | None = None
    for h in grids:
        support = reader.support(frame_bgr, h, files, ranks)
        if support.share() >= s.corner_grid_seen and (best is None or support.median_px < best[0]):
            best = (support.median_px, h)
    return None if best is None else canonical(best[1], files, ranks)


def big_net_guess(frame_bgr: NDArray[np.uint8], files: int, ranks: int,
               s: LocaliseSettings) -> NDArray[np.float32] | None:
    """The corners the bigger boards' network (`corner_net_big`) guesses (`guessed_quad`);
    None where it sees no four corners or was not trained on this board's size (its card's
    `boards`)."""
    colour = colour_frame(frame_bgr)  # NoBoardError for what is no image (the search's refusal)
    net = corner_network(s.corner_net_big)
    return guessed_quad(net, colour) if net.trained_on(files, ranks) else None


def big_net_fit(frame_bgr: NDArray[np.uint8], quad: NDArray[np.float32] | None, files: int, ranks: int,
                 s: LocaliseSettings) -> BoardPose | None:
    """A bigger board's grid from the corners the bigger boards' network (`corner_net_big`)
    guesses: the grid through them, with each of the two ways of laying the board's files
    along the guessed quadrilateral (a 5x6 board's sides differ; the guess names no corner),
    fitted to the lines' profiles (`refine`) and the fit whose lines best show (the profile
    support's grid less half-way lines) fitted once more; None where the network guessed
    none (`quad`, `big_net_guess`) or the fit is not confirmed as `_first_confirmed` confirms the
    search's grids (its profiles pass, it is not adrift). A fit from a guess within 2% of the
    diagonal (90% of held-out bigger-board frames, 75% under a hand) lands on the board's own
    lines, whatever hides the rest of them."""
    if quad is None:
        return None
    colour = colour_frame(frame_bgr)
    best: tuple[float, FloatArray] | None = None
    for roll in (0, 1) if files != ranks else (0,):
        h = grid_through(np.roll(quad, roll, axis=0), files, ranks)
        fitted = refine(colour, h, files, ranks, s)
        support = profile_support(colour, fitted, files, ranks)
        if best is None or support.grid - support.mid > best[0]:
            best = (support.grid - support.mid, fitted)
    assert best is not None
    fitted = refine(colour, best[1], files, ranks, s)
    support = profile_support(colour, fitted, files, ranks)
    if support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is not None or is_adrift(
            colour, fitted, files, ranks, s):
        return None
    return canonical(fitted, files, ranks)


def with_big_net(frame_bgr: NDArray[np.uint8], searched: BoardPose | NoBoardError,
                  net: BoardPose | None, s: LocaliseSettings) -> BoardPose:
    """A 5x5 or 5x6 board's grid (`_with_net`, the network's from `big_net_fit`): a refused
    search's place taken by the network's grid if at least `corner_net_big_ends` of its inner
    lines meet its outer lines (`line_ends`; on the development frames the network's grids
    within 1% there met 0.6-0.9, the one 9% off under a hand 0.06). Read off the development
    frames (benchmarks/localise_accuracy.md)."""
    return _with_net(frame_bgr, searched, net, s, lambda colour, pose: line_ends(
        colour, pose.h, pose.files, pose.ranks) >= s.corner_net_big_ends)
