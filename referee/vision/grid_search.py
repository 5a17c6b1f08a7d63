"""The line search for a board's grid (`board_finder` step 1), and the checks that confirm a
grid or refuse it: the lines' ends met, the lines running on beyond the board, the board's
edge round it, its printed lines. `attempt` and `pose_or_raise` keep a step's refusal as a
value, so that a later step may still find the board."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.errors import NoBoardError
from referee.vision.gridfit import (
    NearestEdges,
    Support,
    band_support,
    chamfer_fit,
    edge_hits,
    grid_support,
)
from referee.vision.lattice import (
    SIDES,
    Lattice,
    banded,
    banded_windows,
    canonical,
    lattice_hypotheses,
    lattice_windows,
    out_sides,
)
from referee.vision.line_profiles import (
    ProfileSupport,
    checker_steps,
    fit_profiles,
    line_ends,
    line_polarity,
    line_ridges,
    profile_support,
    ridge_polarity,
    ridge_score,
    small_board,
)
from referee.vision.lines import (
    board_edges,
    hough_lines,
    sort_family,
    split_families,
    third_family,
    to_grey,
)
from referee.vision.outline import edge_centred, margin_grids, outline_quads, ring_agreement
from referee.vision.pose import (
    BoardPose,
    FloatArray,
    apply_homography,
    board_corners,
)
from referee.vision.settings import LocaliseSettings


def _work_copy(grey: NDArray[np.uint8], width: int) -> tuple[NDArray[np.uint8], float]:
    scale = min(1.0, width / grey.shape[1])
    if scale == 1.0:
        return grey, 1.0
    size = (round(grey.shape[1] * scale), round(grey.shape[0] * scale))
    return np.asarray(cv2.resize(grey, size, interpolation=cv2.INTER_AREA), dtype=np.uint8), scale


def _to_frame(h_work: FloatArray, scale: float) -> FloatArray:
    """A board -> work-pixel homography as board -> frame pixels (pixel centres aligned)."""
    if scale == 1.0:
        return h_work
    back = np.array([[1 / scale, 0, 0.5 / scale - 0.5], [0, 1 / scale, 0.5 / scale - 0.5], [0, 0, 1.0]])
    return back @ h_work


def _from_frame(h: FloatArray, scale: float) -> FloatArray:
    if scale == 1.0:
        return h
    fwd = np.array([[scale, 0, 0.5 * scale - 0.5], [0, scale, 0.5 * scale - 0.5], [0, 0, 1.0]])
    return fwd @ h


def board_roi(h: FloatArray, files: int, ranks: int, margin: float,
         shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    outline = board_corners(files, ranks) + np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * margin
    pts = apply_homography(h, outline)
    x0, y0 = np.floor(pts.min(axis=0)).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0)).astype(int)
    return max(0, x0), max(0, y0), min(shape[1], x1 + 1), min(shape[0], y1 + 1)


def refine(frame: NDArray[np.uint8], h: FloatArray, files: int, ranks: int,
           s: LocaliseSettings) -> FloatArray:
    """Sub-pixel fit of `h` (board -> frame) to the lines' intensity profiles at full
    resolution; the coarse grid stays when the fit fails or jumps."""
    outer = s.refine_outer_small if small_board(files, ranks) else s.refine_outer
    fitted = fit_profiles(frame, h, files, ranks, s.refine_bands, outer=outer,
                          max_pair=s.refine_max_pair or None, outer_shift=s.refine_outer_shift,
                          ridges=s.refine_ridges)
    if fitted is None or corner_shift(h, fitted, files, ranks) > 0.5:
        return h
    return fitted


def attempt(find: Callable[[], BoardPose]) -> BoardPose | NoBoardError:
    """A step's grid, or its refusal kept as a value: a later step may still find the board."""
    try:
        return find()
    except NoBoardError as exc:
        return exc


def pose_or_raise(found: BoardPose | NoBoardError) -> BoardPose:
    """The grid found, or the refusal raised."""
    if isinstance(found, NoBoardError):
        raise found
    return found


def search_small_board(frame_bgr: NDArray[np.uint8], files: int, ranks: int,
                       s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's grid from the line searches, polished and centred in the board's edge."""
    pose = _find_small(frame_bgr, files, ranks, s) if s.wide_below_ends > 0 else _find_twice(
        frame_bgr, files, ranks, s)
    return finish_small_grid(frame_bgr, pose, s)


def finish_small_grid(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> BoardPose:
    pose = _polish_checker(frame_bgr, pose, s) if s.checker_bands else pose
    return _centre_on_edge(frame_bgr, pose, s) if s.edge_centre_rise else pose


def _centre_on_edge(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> BoardPose:
    """A 3x3 grid, once chosen, moved so that the board's edge round it lies at one margin on
    every side (`outline.edge_centred`), if that puts the edge at one margin on at least
    `edge_centre_rise` more of its sides' stretches (`ring_agreement`) and moves no corner
    more than `edge_centre_max_move` squares. The grid's fit to its own lines can settle a
    few hundredths of a square off, turned or sheared (faint lines, an outer line on a
    die's edge); the board's edge, four long straight steps, tells that shift, turn and
    perspective, while the grid keeps its size. Round a right grid the edge is concentric
    already, so the move is small and the ring does not rise. A thick board's side face,
    seen on the side towards the camera, puts the outline further out there (0.07 square on
    development 80000+ 1): past `edge_centre_window` that side shows no edge, and nothing
    moves."""
    frame = colour_frame(frame_bgr)
    files, ranks = pose.files, pose.ranks
    moved = edge_centred(frame, pose.h, files, ranks, window=s.edge_centre_window,
                         min_stretches=s.edge_centre_stretches)
    if moved is None or corner_shift(pose.h, moved, files, ranks) > s.edge_centre_max_move:
        return pose
    before = ring_agreement(frame, pose.h, files, ranks)
    if ring_agreement(frame, moved, files, ranks) < before + s.edge_centre_rise:
        return pose
    return canonical(moved, files, ranks)


def _polish_checker(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> BoardPose:
    """On a 3x3 checker without lines, the chosen grid fitted once more, each line read as
    the colour step of the sign the squares beside it give it (`checker_steps`; bands
    `checker_bands`). The plain fit reads a line as any symmetric structure near it, and
    on a checker a die's edge or a border beside the outermost line is one: its fixed
    points lie 1-8% off in one frame of seven (from the true pose, 54 of 75 development
    checkers held within 1%, 64 with the steps). As a last fit only: every start fitted
    this way picks worse among the fits (more hands' edges reached). Boards with printed
    lines, even faint ones (`checker_max_dark`), and checkers whose squares' tones do not
    tell a phase keep their grid."""
    frame = colour_frame(frame_bgr)
    files, ranks = pose.files, pose.ranks
    # faint dark printed lines (too faint for line_polarity) are no steps: the step's edge
    # is the line's edge, half a line's width off its centre (outer lines onto the cells)
    ridges = line_ridges(frame, pose.h, files, ranks, 0.15)
    if ridges is None or ridges[0] > s.checker_max_dark or ridge_polarity(ridges) != 0:
        return pose
    steps = checker_steps(frame, pose.h, files, ranks, 0.15)
    if steps is None:
        return pose
    outer = (s.refine_outer_small[-1],) * len(s.checker_bands)
    fitted = fit_profiles(frame, pose.h, files, ranks, s.checker_bands, outer=outer,
                          outer_shift=s.refine_outer_shift, steps=steps)
    if fitted is None or corner_shift(pose.h, fitted, files, ranks) > 0.5:
        return pose
    return canonical(fitted, files, ranks)


def _find_small(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings) -> BoardPose:
    """A 3x3 board's four lines a family have a die's two edges (and its side faces') in each
    gap between them, and a hand can hide one or two: the lattices made from neighbouring
    lines are then the dice's, and the board's own, counted over twenty squares around, is
    outvoted by clutter. So when the grid found meets few of its line ends (or none is
    found), search once more pairing lines further apart in order and counting crossings
    only near each lattice's square, and keep that grid if it meets as many line ends as the
    first was asked to (`wide_below_ends`), or, where the first search found nothing, if
    its printed lines confirm it (`printed_lines_confirm`). A grid kept though it meets few line ends
    is refused when its lines run on beyond it (`few_ends_max_outside`) or the board's edge
    does not surround it (`_edge_rings_board`); the board's outline is then looked for."""
    first: BoardPose | None = None
    missed: NoBoardError | None = None
    try:
        first = _find_twice(frame_bgr, files, ranks, s)
    except NoBoardError as exc:
        missed = exc
    if first is not None and _line_ends(frame_bgr, first) >= s.wide_below_ends:
        return first
    wide = replace(s, max_pair_gap=s.wide_pair_gap, lattice_reach=s.wide_reach)
    try:
        second = _find_twice(frame_bgr, files, ranks, wide)
        # kept only if it meets its line ends as well as the first grid was asked to: the
        # wide search's grids that meet fewer are as often a hand's or the dice's as the board's
        if _line_ends(frame_bgr, second) >= s.wide_below_ends:
            return second
        # ... or, where the first search found nothing (a hand over much of the board hides
        # line ends), if its printed lines confirm it
        if first is None and s.wide_confirm_ridge > 0 and printed_lines_confirm(
                colour_frame(frame_bgr), second, s):
            return second
        # ... or, where both grids meet few line ends, if the board's edge shows at one margin
        # round it clearly more than round the first's
        if first is not None and s.wide_ring_margin > 0 and _ring_beats(frame_bgr, second, first, s):
            return second
    except NoBoardError:
        pass
    if (first is not None and not _lines_run_past(colour_frame(frame_bgr), first, s)
            and _edge_rings_board(frame_bgr, first, s)):
        return first
    # about to refuse: the board's outline may still show where its grid does not
    outlined = _find_outline(frame_bgr, files, ranks, s) if s.outline_quads else None
    if outlined is not None:
        return outlined
    if first is None:
        assert missed is not None
        raise missed
    raise NoBoardError("no board: the grid found meets few of its line ends, and its lines run "
                       "on beyond it or the board's edge does not surround it (a bigger grid, a "
                       "ruled sheet, or something over the board?)")


def _find_outline(frame_bgr: NDArray[np.uint8], files: int, ranks: int,
                  s: LocaliseSettings) -> BoardPose | None:
    """A 3x3 board's grid found from its outline (`outline.outline_quads`, `margin_grids`): the
    best `outline_candidates` grids refined, the first kept that meets `outline_min_ends` of
    its line ends (more than `min_line_ends` asks of grids that the grid lines themselves
    found) or whose hidden ends the board's edge and its printed lines make up for
    (`_ends_hidden`), whose lines show and do not run on beyond it (`profile_support`,
    `_lines_run_past`), and round which the board's edge shows at one margin (`ring_agreement`,
    `outline_min_ring`); None when none does. Asked
    only where the grid searches would refuse the frame: on the development frames a hand
    over the board's middle (or dice along its lines) hid the grid's line ends, while the
    board's edge, or a border line around the grid, still showed on all four sides."""
    colour = colour_frame(frame_bgr)
    work, scale = _work_copy(colour, s.work_width)
    edges = board_edges(work, low_ratio=s.canny_low_ratio, clahe_clip=s.clahe_clip,
                        percentile=s.canny_percentile, cap_percentile=s.canny_cap_percentile)
    near = NearestEdges.of(edges, work)
    fam_a, fam_b = split_families(hough_lines(edges, s, near), s.family_spread_deg)
    quads = outline_quads(fam_a, fam_b, near, keep=s.outline_quads, min_side=s.outline_min_side,
                          min_side_px=files * s.min_square_px, tol_px=s.support_tol_px,
                          max_angle_deg=s.support_angle_deg)
    grids = margin_grids(near, quads, files, ranks, margins=s.outline_margins, tol_px=s.support_tol_px,
                         max_angle_deg=s.support_angle_deg)
    for _, h in grids[: s.outline_candidates]:
        fitted = refine(colour, _to_frame(h, scale), files, ranks, s)
        pose = BoardPose.from_homography(fitted, files, ranks)
        if pose.square_size_px() * scale < s.min_square_px:
            continue
        support = profile_support(colour, fitted, files, ranks)
        if (support.outside > s.few_ends_max_outside   # its lines run on (`_lines_run_past`)
                or support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is not None):
            continue
        few_ends = line_ends(colour, fitted, files, ranks) < s.outline_min_ends
        if few_ends and not s.outline_confirm_ring:
            continue
        ring = ring_agreement(colour, fitted, files, ranks) if s.outline_min_ring or few_ends else 1.0
        if ring < s.outline_min_ring or (few_ends and not _ends_hidden(colour, pose, ring, s)):
            continue
        return canonical(fitted, files, ranks)
    return None


def _ends_hidden(colour: NDArray[np.uint8], pose: BoardPose, ring: float, s: LocaliseSettings) -> bool:
    """Whether an outline's grid that meets fewer than `outline_min_ends` of its line ends is
    the board's all the same: the ends are hidden (a hand, or dice on the lines), while the
    board's edge shows round it on at least `outline_confirm_ring` of its sides' stretches
    and its lines are printed lines centred where it puts them (`printed_lines_confirm`)."""
    return (bool(s.outline_confirm_ring) and ring >= s.outline_confirm_ring
            and printed_lines_confirm(colour, pose, s))


def _ring_beats(frame_bgr: NDArray[np.uint8], second: BoardPose, first: BoardPose,
                s: LocaliseSettings) -> bool:
    """Whether the wide search's grid, where it and the first search's both meet few line ends
    (a hand hides them), is the board's rather than the first's: the board's edge shows at
    one margin round it (`ring_agreement`) on at least `outline_min_ring` of the side
    stretches and on `wide_ring_margin` more than round the first, and its lines do not run
    on (`_lines_run_past`). The first search's grid under a hand is often the dice's or the hand's
    edges a few percent off, which turn against the board's edge (development 80000+ 42:
    0.38 against the wide grid's 0.92)."""
    colour = colour_frame(frame_bgr)
    ring = ring_agreement(colour, second.h, second.files, second.ranks)
    if ring < max(s.outline_min_ring, ring_agreement(colour, first.h, first.files, first.ranks)
                  + s.wide_ring_margin):
        return False
    return not _lines_run_past(colour, second, s)


def _edge_rings_board(frame_bgr: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> bool:
    """Whether a 3x3 grid that meets few of its line ends has the board's edge round it at one
    margin on at least `few_ends_min_ring` of its sides' stretches (`ring_agreement`). The
    grids kept so that fell on the dice, a hand or the table read 0.12-0.29 on the
    development frames, the board's own 0.33 and more."""
    return not s.few_ends_min_ring or ring_agreement(
        colour_frame(frame_bgr), pose.h, pose.files, pose.ranks) >= s.few_ends_min_ring


def _lines_run_past(frame: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> bool:
    """Whether a 3x3 grid's lines, extended one square out, show on more than
    `few_ends_max_outside` of any side: a grid on part of a bigger pattern (a ruled sheet,
    the dice's edges) or one a square off. Asked only of grids meeting few line ends: on
    the development frames every such grid within 1% showed on at most a quarter of a side,
    while grids 5-50% off showed on a third to a half."""
    return profile_support(frame, pose.h, pose.files, pose.ranks).outside > s.few_ends_max_outside


def printed_lines_confirm(frame: NDArray[np.uint8], pose: BoardPose, s: LocaliseSettings) -> bool:
    """Whether a 3x3 grid that meets few line ends (a hand over the board hides them) is
    still the board's: its lines do not run on beyond it (`_lines_run_past`), and they are printed
    lines centred where it puts them on at least `wide_confirm_ridge` of them (`ridge_score`;
    a hand's or a die's edges are no printed lines). Checkers without lines are not
    confirmed: the squares' alternating tones (`checker_steps`) held under the development
    frames' wrong grids with a hand as well."""
    files, ranks = pose.files, pose.ranks
    if _lines_run_past(frame, pose, s):
        return False
    polarity = ridge_polarity(line_ridges(frame, pose.h, files, ranks, 0.15))
    if polarity == 0:
        return False
    return ridge_score(frame, pose.h, files, ranks, polarity) >= s.wide_confirm_ridge * (files + ranks + 2)


def _line_ends(frame_bgr: NDArray[np.uint8], pose: BoardPose) -> float:
    """line_ends on the frame as _find reads it."""
    return line_ends(colour_frame(frame_bgr), pose.h, pose.files, pose.ranks)


def colour_frame(frame_bgr: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """The frame as the fits read it: itself in colour, else grey (NoBoardError for a frame
    that is neither, see `to_grey`). A 3x3 frame passes here up to four times: a colour
    frame is not converted to grey only to be thrown away."""
    if (isinstance(frame_bgr, np.ndarray) and frame_bgr.dtype == np.uint8 and frame_bgr.size
            and frame_bgr.ndim == 3 and frame_bgr.shape[2] == 3):
        return frame_bgr
    return to_grey(frame_bgr)


def _find_twice(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings) -> BoardPose:
    """_find, and when it finds no board, once more at a finer edge threshold."""
    try:
        return _find(frame_bgr, files, ranks, s)
    except NoBoardError as first:
        if not s.retry_canny_percentile:
            raise
        # Faint printed lines beside strong edges (dice, the board's own edge) can fall under
        # an edge threshold set by the image's strongest edges: look once more, finer.
        try:
            return _find(frame_bgr, files, ranks, replace(s, canny_percentile=s.retry_canny_percentile))
        except NoBoardError:
            raise first from None


def search_big_board(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings) -> BoardPose:
    """A board bigger than 3x3: `_find_twice`, and where it refuses, the same search at each
    Canny threshold on lattices pairing the third line direction with each of the two families
    (`third_family_big`). The two families are the two strongest directions; where the lines
    of the pieces, a hand or the table's grain make a direction within 25-45 degrees of the
    board's first stronger than its second, the board's second direction is left out, though
    every one of its lines was found. Only where both searches refuse, so that no grid found
    now changes and frames found at the first try pay nothing."""
    try:
        return _find_twice(frame_bgr, files, ranks, s)
    except NoBoardError as first:
        if not s.third_family_big:
            raise
        for percentile in dict.fromkeys((s.canny_percentile, s.retry_canny_percentile or s.canny_percentile)):
            try:
                return _find(frame_bgr, files, ranks, replace(s, canny_percentile=percentile), third=True)
            except NoBoardError:
                pass
        raise first from None


def _find(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings,
          third: bool = False) -> BoardPose:
    """The grid of lattices from the two line families (with `third`, from the third
    direction paired with each of them instead: `search_big_board`)."""
    colour = colour_frame(frame_bgr)
    work, scale = _work_copy(colour, s.work_width)
    edges = board_edges(work, low_ratio=s.canny_low_ratio, clahe_clip=s.clahe_clip,
                        percentile=s.canny_percentile, cap_percentile=s.canny_cap_percentile)
    if np.count_nonzero(edges) < 2 * (files + ranks) * s.min_square_px:
        raise NoBoardError("no board: the frame has almost no edges (blank or dark)")
    near = NearestEdges.of(edges, work)
    lines = hough_lines(edges, s, near)
    fam_a, fam_b = split_families(lines, s.family_spread_deg)
    if len(fam_a) < 2 or len(fam_b) < 2:
        raise NoBoardError("no board: no two families of straight lines in view")
    centre = np.array([work.shape[1] / 2, work.shape[0] / 2])
    pairs = [(fam_a, fam_b)]
    if third:
        fam_c = third_family(lines, fam_a, fam_b, s.family_spread_deg)
        if len(fam_c) < max(2, s.third_family_big):
            raise NoBoardError("no board: no third direction of straight lines in view")
        pairs = [(fam_a, fam_c), (fam_b, fam_c)]
    elif small_board(files, ranks) and s.third_family_lines:
        # a ruled sheet or other clutter beside a small board can outnumber one of the
        # board's two directions: the board's is then the third
        fam_c = third_family(lines, fam_a, fam_b, s.family_spread_deg)
        if len(fam_c) >= s.third_family_lines:
            pairs += [(fam_a, fam_c), (fam_b, fam_c)]
    found: list[tuple[Lattice, list[tuple[float, FloatArray]]]] = []
    for one, two in pairs:
        for lattice in lattice_hypotheses(sort_family(one, centre), sort_family(two, centre), work.shape, s):
            found.append((lattice, lattice_windows(lattice, near, files, ranks, s)))
    windows = banded_windows(near, found, files, ranks, s)
    windows.sort(key=lambda sh: -sh[0])
    scored: list[tuple[float, FloatArray]] = []
    top = [h for _, h in windows[: 3 * s.chamfer_candidates]]
    for h, lost in zip(top, banded(near, top, files, ranks, s), strict=True):
        sup = _support(near, h, files, ranks, s)
        scored.append((sup.score() - lost if sup.visible >= 0.75 else -1.0, h))
    if not scored:
        raise NoBoardError(f"no board: no {files}x{ranks} grid of lines in view")
    scored.sort(key=lambda sh: -sh[0])
    passing: list[tuple[float, FloatArray]] = []                 # the grids that pass
    closest: tuple[float, FloatArray, Support] | None = None   # the best of all (to say why not)
    tried: list[FloatArray] = []
    small = small_board(files, ranks)
    for _, h in scored[: s.chamfer_candidates]:
        pulled = chamfer_fit(near, h, files, ranks, s.chamfer_radii_px)
        if pulled is None or corner_shift(h, pulled, files, ranks) > 0.5:
            pulled = h
        # the grid and its four one-square shifts: a hand over an outer row or a board's
        # border line can make the first guess one square off
        for dx, dy in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
            shifted = pulled @ np.array([[1.0, 0, dx], [0, 1.0, dy], [0, 0, 1.0]])
            # (boards bigger than 3x3 not past the frame's edge, as `lattice.windows_in_view`)
            beyond = not small and out_sides(shifted, files, ranks, work.shape, s.out_of_view)
            if beyond or any(corner_shift(shifted, other, files, ranks) < 0.3 for other in tried):
                continue
            tried.append(shifted)
            sup = _support(near, shifted, files, ranks, s)
            score = sup.score() if sup.visible >= 0.75 else -1.0
            if closest is None or score > closest[0]:
                closest = (score, shifted, sup)
            if sup.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is None:
                passing.append((score, shifted))
    if not passing:
        if closest is None:   # every grid tried ran out of the frame
            raise NoBoardError(f"no board: no {files}x{ranks} grid of lines in full view")
        why = closest[2].reason(s.min_support, s.min_contrast, s.max_outside_ratio)
        raise NoBoardError(f"no board: {why or 'no grid of that size'}")
    lost = banded(near, [h for _, h in passing], files, ranks, s)
    passing = [(score - float(k), h) for (score, h), k in zip(passing, lost, strict=True)]
    passing.sort(key=lambda sh: -sh[0])
    if BoardPose.from_homography(passing[0][1], files, ranks).square_size_px() < s.min_square_px:
        raise NoBoardError("no board: the grid's squares are too small to read")
    grids = [_to_frame(h, scale) for _, h in passing]
    if small_board(files, ranks) and s.small_nudges:
        return canonical(best_reached(colour, grids, files, ranks, s), files, ranks)
    return canonical(_first_confirmed(colour, grids, files, ranks, s, near, scale), files, ranks)


def runs_out_of_view(frame_bgr: NDArray[np.uint8], files: int, ranks: int, s: LocaliseSettings,
                     pose: BoardPose | None = None) -> tuple[str, ...]:
    """The sides of the frame (`lattice.SIDES`) a board bigger than 3x3 runs out on: judged
    from `pose` (an answer in full view, `slid_sides`), or where the board was refused, from
    the pattern of lines the search saw most of (`_pattern_reaches`). Empty where the board
    is not seen to."""
    if small_board(files, ranks) or not s.cut_off_gap or not isinstance(frame_bgr, np.ndarray) or (
            pose is not None and min(_edge_gaps(pose.h, files, ranks, frame_bgr.shape)[0]) >= s.cut_off_gap):
        return ()
    try:
        colour = colour_frame(frame_bgr)
    except NoBoardError:   # no image: refused as such
        return ()
    work, scale = _work_copy(colour, s.work_width)
    edges = board_edges(work, low_ratio=s.canny_low_ratio, clahe_clip=s.clahe_clip,
                        percentile=s.canny_percentile, cap_percentile=s.canny_cap_percentile)
    near = NearestEdges.of(edges, work)
    if pose is not None:
        return slid_sides(near, _from_frame(pose.h, scale), files, ranks, work.shape, s)
    fam_a, fam_b = split_families(hough_lines(edges, s, near), s.family_spread_deg)
    if len(fam_a) < 2 or len(fam_b) < 2:
        return ()
    centre = np.array([work.shape[1] / 2, work.shape[0] / 2])
    lattices = lattice_hypotheses(sort_family(fam_a, centre), sort_family(fam_b, centre), work.shape, s)
    return _pattern_reaches(near, lattices[0], work.shape, s) if lattices else ()


def _pattern_reaches(near: NearestEdges, lattice: Lattice, shape: tuple[int, ...],
                     s: LocaliseSettings) -> tuple[str, ...]:
    """The sides of the frame (`lattice.SIDES`) that the lines of `lattice` run into: where
    `cut_off_run` or more neighbouring lines of one family are each supported by an edge
    running along them (`edge_hits`) within half a square of that edge of the frame. A refused
    board cut off by the frame's edge crosses it there with its own lines; elsewhere the
    lattice's lines, carried on over the table or the board's margin, meet edges only here
    and there."""
    height, width = shape[:2]
    borders = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (1.0, 0.0, 1.0 - width), (0.0, 1.0, 1.0 - height))
    lo, hi = lattice.labels.min(axis=0) - 3, lattice.labels.max(axis=0) + 3
    steps = np.linspace(-0.5, 0.5, 9)   # along each line, about where it meets the frame's edge
    reached = []
    for side, border in zip(SIDES, borders, strict=True):
        for axis in (0, 1):
            k = np.arange(lo[axis], hi[axis] + 1, dtype=np.float64)
            along, fixed = lattice.h[:, 1 - axis], np.outer(k, lattice.h[:, axis]) + lattice.h[:, 2]
            with np.errstate(all="ignore"):
                t = (-(fixed @ np.array(border)) / (along @ np.array(border)))[:, None] + steps[None, :]
            pts = fixed[:, None, :] + t[..., None] * along
            hit, ok = edge_hits(near, pts.reshape(-1, 3), (pts + 0.05 * along).reshape(-1, 3),
                                s.support_tol_px, s.support_angle_deg)
            if _longest_run((hit * ok).reshape(len(k), -1).max(axis=1)) >= s.cut_off_run:
                reached.append(side)
                break
    return tuple(reached)


def _longest_run(flags: FloatArray) -> int:
    """The most neighbouring non-zero flags in a row."""
    longest = current = 0
    for flag in flags:
        current = current + 1 if flag else 0
        longest = max(longest, current)
    return longest


def slid_sides(near: NearestEdges, h: FloatArray, files: int, ranks: int, shape: tuple[int, ...],
               s: LocaliseSettings) -> tuple[str, ...]:
    """The sides of the frame that a grid `h` (board -> pixels of `near`'s image, in full
    view) has slid away from: where an outer file or rank of it is bare (crossed by its inner
    lines on less than `cut_off_band` of it: the board's margin or what lies beyond, taken
    for squares), the opposite one is crossed (on `cut_off_crossed` of it: the board's own
    squares), and the opposite side of the grid lies within `cut_off_gap` squares of the
    frame's edge. A board cut off by that edge has no window of its size in full view but
    those moved off its squares onto its margin; a board in full view has its own grid,
    whose outer rows are crossed."""
    bands = band_support(near, h[None], files, ranks, tol_px=s.support_tol_px, per_cell=8,
                         max_angle_deg=s.support_angle_deg)[0]
    opposite = bands[[1, 0, 3, 2]]
    gaps, edges = _edge_gaps(h, files, ranks, shape)
    slid = (bands < s.cut_off_band) & (opposite >= s.cut_off_crossed) & (gaps < s.cut_off_gap)
    return tuple(dict.fromkeys(SIDES[edge] for edge, out in zip(edges, slid, strict=True) if out))


# The board's side opposite each outer band of `band_support` (first and last file, first
# and last rank): its two corners in board squares, as multiples of (files, ranks).
_OPPOSITE = (((1, 0), (1, 1)), ((0, 0), (0, 1)), ((0, 1), (1, 1)), ((0, 0), (1, 0)))


def _edge_gaps(h: FloatArray, files: int, ranks: int, shape: tuple[int, ...]) -> tuple[FloatArray, list[int]]:
    """For each side of the grid opposite an outer band (`_OPPOSITE`), how far inside the
    frame its nearer end lies from the frame's nearest edge (squares), and that edge (an
    index of `lattice.SIDES`)."""
    ends = np.array(_OPPOSITE, np.float64).reshape(-1, 2) * [files, ranks]
    with np.errstate(all="ignore"):
        pts = apply_homography(h, ends).reshape(4, 2, 2)
        square = BoardPose.from_homography(h, files, ranks).square_size_px()
    height, width = shape[:2]
    inside = np.stack([pts[..., 0] + 0.5, pts[..., 1] + 0.5, width - 0.5 - pts[..., 0],
                       height - 0.5 - pts[..., 1]], axis=-1).min(axis=1) / max(square, 1e-9)
    return np.nan_to_num(inside.min(axis=1), nan=np.inf), [int(k) for k in np.argmin(inside, axis=1)]


def _first_confirmed(frame: NDArray[np.uint8], grids: list[FloatArray], files: int, ranks: int,
                     s: LocaliseSettings, near: NearestEdges | None = None, scale: float = 1.0) -> FloatArray:
    """The best grid by edge support (at the work size) that, refined, its full-resolution
    line profiles confirm, trying the next best few in turn: at the work size a grid a
    square off (onto a board's margin, its labels or its border) can score as well as the
    true one, while at full resolution the lines it would continue into show. The best one
    refined when none is confirmed, unless (`refuse_unconfirmed`) its own lines show and tell
    against it (lines everywhere, or running on beyond it) or an outer file or rank of it is
    bare (`_band_loss`: the table or the margin taken for squares): the grids that pass only
    because a hand or faint lines hide what would refuse them are kept, the others are
    guesses, mostly 30% or more off where they were measured. With
    `near` (the work copy's edges, `scale` to it), a grid after the first is confirmed only if
    its outer files and ranks are crossed by its inner lines no worse than the first's
    (`_band_loss`): past a best grid a hand hides part of, the next is often the window a
    row off onto the bare margin, whose lines at full resolution show as well."""
    first: tuple[FloatArray, float, ProfileSupport] | None = None
    for k, h in enumerate(grids[: s.confirm_candidates]):
        fitted = refine(frame, h, files, ranks, s)
        # 8 samples a square: 3 (the window search's) can tie a hand's grid with the board's
        loss = 0.0 if near is None else float(
            banded(near, [_from_frame(fitted, scale)], files, ranks, s, per_cell=8)[0])
        support = profile_support(frame, fitted, files, ranks)
        if first is None:
            first = (fitted, loss, support)
        if support.reason(s.min_support, s.min_contrast, s.max_outside_ratio) is None and (
                k == 0 or loss <= first[1]) and not is_adrift(frame, fitted, files, ranks, s):
            return fitted
    assert first is not None
    fitted, loss, support = first
    if is_adrift(frame, fitted, files, ranks, s):
        raise NoBoardError("no board: the grid's lines stop nowhere and no board edge runs round it")
    if s.refuse_unconfirmed and (loss > 0 or support.grid >= s.min_support):
        raise NoBoardError(f"no board: {support.reason(s.min_support, s.min_contrast, s.max_outside_ratio)}")
    return fitted


def is_adrift(frame: NDArray[np.uint8], h: FloatArray, files: int, ranks: int, s: LocaliseSettings) -> bool:
    """Whether a grid of a board bigger than 3x3 is held by nothing of the board's: fewer
    than `adrift_ends` of its inner lines meet its outer lines (`line_ends`) and the board's
    edge shows at one margin round it on fewer than `adrift_ring` of its sides' stretches
    (`ring_agreement`). Such grids, confirmed by their profiles, were a hand's, the table's
    grain or a window rows off onto the margin (30-118% off on the development frames);
    the board's own grids show one or the other, even under a hand."""
    if not s.adrift_ends or line_ends(frame, h, files, ranks) >= s.adrift_ends:
        return False
    return ring_agreement(frame, h, files, ranks) < s.adrift_ring


def best_reached(frame: NDArray[np.uint8], grids: list[FloatArray], files: int, ranks: int,
                  s: LocaliseSettings, reach: float = float("inf")) -> FloatArray:
    """On a 3x3 board the coarse grid can be 0.1-0.3 square off at a corner (turned or
    sheared a little), and the fit started there locks an outermost line onto a border line
    or a cell's own frame, while started nearer it finds the grid. So the best grid is fitted
    from itself and from nudges of it (each family shifted, spaced and turned a little either
    way), the next best grids from themselves, and the fit kept whose inner lines best meet
    its outermost lines and stop there (`line_ends`); among those about as good, the one that
    most starts reached (where the lines are printed, the one whose lines most show a printed
    line where it puts them, if clearly so: `_ridge_judge`). NoBoardError when even the best
    meets fewer than `min_line_ends`:
    on the benchmark's 3x3 frames every grid found within 1% met at least that, while most
    grids found far off (a hand over the board, a ruled note sheet) met less."""
    starts = [*_nudged(grids[0], files, ranks, s.small_nudges), *grids[1:s.confirm_candidates]]
    fitted = [refine(frame, h, files, ranks, s) for h in starts]
    # a fit that ran off further than `reach` squares from the first grid is dropped
    fitted = [h for h in fitted if corner_shift(grids[0], h, files, ranks) <= reach] or [grids[0]]
    ends = [line_ends(frame, h, files, ranks) for h in fitted]
    if max(ends) < s.min_line_ends:
        raise NoBoardError(f"no board: only {max(ends):.0%} of the grid's inner lines meet its "
                           "outer lines (something over the board?)")
    good = [k for k, e in enumerate(ends) if e >= max(ends) - s.ends_slack]

    def reached(k: int) -> int:
        return sum(corner_shift(fitted[k], other, files, ranks) < s.same_fit_squares for other in fitted)

    pick = max(good, key=lambda k: (reached(k), ends[k], -k))
    if s.tie_ring_margin > 0:
        pick = _ring_tiebreak(frame, fitted, [k for k in good if reached(k) == reached(pick)], pick,
                              files, ranks, s)
    return fitted[_ridge_judge(frame, fitted, good, pick, files, ranks, s) if s.ridge_margin > 0 else pick]


def _ring_tiebreak(frame: NDArray[np.uint8], fitted: list[FloatArray], tied: list[int], pick: int,
                   files: int, ranks: int, s: LocaliseSettings) -> int:
    """Among distinct fits that as many starts reached (at least two: fixed points the fit
    is drawn to, not a start it stopped at) and that meet their line ends about as well, the
    one round which the board's edge shows at one margin (`ring_agreement`) by
    `tie_ring_margin` more than round the pick; the pick otherwise. A fit a few hundredths
    of a square off turns or shifts one side against the board's edge, the true one keeps it
    at one margin all round (development 80000+ 32: 0.75 against 0.50)."""
    rivals = [k for k in tied if corner_shift(fitted[k], fitted[pick], files, ranks) >= s.same_fit_squares]
    if not rivals or sum(corner_shift(fitted[pick], o, files, ranks) < s.same_fit_squares
                         for o in fitted) < 2:
        return pick
    rings = {k: ring_agreement(frame, fitted[k], files, ranks) for k in [pick, *rivals]}
    best = max(rivals, key=lambda k: (rings[k], -k))
    return best if rings[best] >= rings[pick] + s.tie_ring_margin else pick


def _ridge_judge(frame: NDArray[np.uint8], fitted: list[FloatArray], good: list[int], pick: int,
                 files: int, ranks: int, s: LocaliseSettings) -> int:
    """On a 3x3 board whose lines are printed (darker or lighter than both their sides), the
    fit among those meeting their line ends about as well whose lines most show a printed
    line where it puts them (`ridge_score`), if it beats the pick by `ridge_margin`; the pick
    otherwise. Fits a few hundredths of a square off (an outer line on a cell's inset frame
    or beside a border line) meet their line ends as well as the true grid and can be reached
    by more starts, but miss the printed lines' centres. On a checker without lines no fit
    has ridges to show, and the pick stands."""
    polarity = line_polarity(frame, fitted[pick], files, ranks, 0.15)
    if polarity == 0:
        return pick
    scores = {k: ridge_score(frame, fitted[k], files, ranks, polarity) for k in good}
    best = max(good, key=lambda k: (scores[k], -k))
    return best if scores[best] > (1 + s.ridge_margin) * scores[pick] else pick


def _nudged(h: FloatArray, files: int, ranks: int, nudges: tuple[float, ...]) -> list[FloatArray]:
    """`h` and, for each family of lines on its own, `h` with them shifted by `nudges[0]`
    squares, spaced `nudges[1]` wider or closer, and turned by `nudges[2]` (squares across
    per square along), each either way."""
    shift, spacing, turn = nudges
    out = [h]
    for axis, count, other in ((0, files, ranks), (1, ranks, files)):
        for sign in (-1.0, 1.0):
            moves = [np.eye(3) for _ in range(3)]
            moves[0][axis, 2] = sign * shift
            moves[1][axis, axis] += sign * spacing
            moves[1][axis, 2] = -sign * spacing * count / 2   # about the board's middle
            moves[2][axis, 1 - axis] = sign * turn
            moves[2][axis, 2] = -sign * turn * other / 2
            out += [h @ m for m in moves]
    return out


def _support(near: NearestEdges, h: FloatArray, files: int, ranks: int, s: LocaliseSettings) -> Support:
    return grid_support(near, h, files, ranks, tol_px=s.support_tol_px, per_square=s.samples_per_square,
                        max_angle_deg=s.support_angle_deg)


def corner_shift(h0: FloatArray, h1: FloatArray, files: int, ranks: int) -> float:
    """Largest corner displacement between two poses, in squares; infinite where either
    sends a corner to infinity (a degenerate grid, met on frames of clutter)."""
    with np.errstate(all="ignore"):
        c0 = apply_homography(h0, board_corners(files, ranks))
        c1 = apply_homography(h1, board_corners(files, ranks))
        side = np.linalg.norm(c0 - np.roll(c0, -1, axis=0), axis=1).mean() / ((files + ranks) / 2)
        moved = float(np.max(np.linalg.norm(c1 - c0, axis=1)) / max(side, 1e-9))
    return moved if np.isfinite(moved) else float("inf")
