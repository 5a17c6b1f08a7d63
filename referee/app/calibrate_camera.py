"""The `referee calibrate` verbs: argument lists and what they print. The work is done in
`referee.calibration.intrinsics`, `.patterns` and `.calibration_files`."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import cv2

from referee.calibration.files import (
    BoardProfile,
    CameraCalibration,
    load_board,
    load_camera,
    read_kind,
    save_camera,
)
from referee.calibration.intrinsics import (
    DEFAULT_MIN_VIEWS,
    CalibrationResult,
    Detection,
    Pattern,
    calibrate,
    detect_all,
    draw_detection,
    find_images,
    make_pattern,
)
from referee.calibration.patterns import write_pattern
from referee.errors import CalibrationError

HIGH_VIEW_ERROR_PX = 1.0  # a photo above this is worth a look (blur, a misfound corner)


def _add_pattern_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pattern",
        required=True,
        metavar="COLSxROWS",
        help="chessboard: inner corners (OpenCV's 9x6 has 10x7 squares); ChArUco: squares",
    )
    parser.add_argument("--square-mm", type=float, required=True, help="side of one square")
    parser.add_argument(
        "--charuco", action="store_true", help="a ChArUco board instead of a chessboard"
    )
    parser.add_argument("--marker-mm", type=float, help="ChArUco marker side (default 0.7 square)")
    parser.add_argument("--dictionary", default="DICT_5X5_100", help="ChArUco ArUco dictionary")


def add_camera_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--images", required=True, help="a folder of photos of the pattern")
    _add_pattern_options(parser)
    parser.add_argument("--out", required=True, help="the camera file to write (.yaml)")
    parser.add_argument(
        "--min-views", type=int, default=DEFAULT_MIN_VIEWS, help="fewest usable photos"
    )
    parser.add_argument(
        "--fix-aspect-ratio", action="store_true", help="fit one focal length (fx = fy)"
    )
    parser.add_argument(
        "--subpix-window",
        type=int,
        help="fixed half-size of the corner refinement window (default: adapts to each photo)",
    )
    parser.add_argument("--overlays", help="also write each photo with its found corners here")


def add_pattern_arguments(parser: argparse.ArgumentParser) -> None:
    _add_pattern_options(parser)
    parser.add_argument("--out", required=True, help="FILE.svg, FILE.pdf or FILE.png")
    parser.add_argument("--dpi", type=int, default=300, help="resolution of a PNG (default 300)")


def _pattern(args: argparse.Namespace) -> Pattern:
    return make_pattern(
        args.pattern,
        args.square_mm,
        charuco=args.charuco,
        marker_mm=args.marker_mm,
        dictionary=args.dictionary,
    )


def run_calibrate_camera(args: argparse.Namespace) -> int:
    pattern = _pattern(args)
    if args.min_views < 1:
        raise CalibrationError("--min-views must be 1 or more")
    paths = find_images(args.images)
    detections, refused = detect_all(paths, pattern, subpix_window=args.subpix_window)
    for refusal in refused:
        print(f"{refusal.name}: refused, {refusal.reason}")
    result = calibrate(
        detections,
        refused=refused,
        min_views=args.min_views,
        fix_aspect_ratio=args.fix_aspect_ratio,
    )
    _print_result(result, len(paths))
    out = Path(args.out)
    source = (
        f"referee calibrate camera: {len(result.views)} of {len(paths)} photos in "
        f"{Path(args.images).name}, {pattern.label}, squares {pattern.square_mm:g} mm"
    )
    save_camera(_to_file(result, source), out)
    if args.overlays:
        _write_overlays(Path(args.images), Path(args.overlays), detections, pattern)
    print(f"wrote {out}")
    return 0


def _print_result(result: CalibrationResult, photos: int) -> None:
    width = max(len(v.name) for v in result.views)
    for view in result.views:
        flag = "  <- high, check this photo" if view.rms_px > HIGH_VIEW_ERROR_PX else ""
        print(f"{view.name:<{width}}  {view.corners:3d} corners  {view.rms_px:.3f} px{flag}")
    k = result.camera_matrix
    w, h = result.image_size
    print(
        f"{len(result.views)} of {photos} photos used; "
        f"reprojection error {result.rms_px:.3f} px (RMS)"
    )
    print(f"fx {k[0, 0]:.2f}  fy {k[1, 1]:.2f}  cx {k[0, 2]:.2f}  cy {k[1, 2]:.2f}  at {w}x{h}")
    print("distortion k1 k2 p1 p2 k3: " + " ".join(f"{c:.5f}" for c in result.dist_coeffs))


def _to_file(result: CalibrationResult, source: str) -> CameraCalibration:
    k = result.camera_matrix
    matrix = tuple(tuple(float(v) for v in row) for row in k)
    dist = tuple(float(c) for c in result.dist_coeffs)
    return CameraCalibration(result.image_size, matrix, dist, round(result.rms_px, 5), source)


def _write_overlays(
    images: Path, folder: Path, detections: Sequence[Detection], pattern: Pattern
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for detection in detections:
        photo = cv2.imread(str(images / detection.name), cv2.IMREAD_COLOR)
        if photo is None:  # read once already; gone or changed since
            continue
        overlay = draw_detection(photo, detection, pattern)
        cv2.imwrite(str(folder / (Path(detection.name).stem + "-corners.png")), overlay)


def run_calibrate_pattern(args: argparse.Namespace) -> int:
    pattern = _pattern(args)
    page = write_pattern(pattern, args.out, dpi=args.dpi)
    print(
        f"wrote {args.out}: {page.width_mm:g} x {page.height_mm:g} mm; "
        f"print at 100% (no 'fit to page') and check that a square measures "
        f"{pattern.square_mm:g} mm"
    )
    if not page.fits():
        print("note: larger than A4; print on bigger paper or choose smaller squares")
    return 0


def run_calibrate_check(args: argparse.Namespace) -> int:
    """Validate each file; the first bad one ends the command with its one-line error."""
    for name in args.files:
        if read_kind(name) == "board":
            print(f"{name}: {_board_summary(load_board(name))}")
        else:
            print(f"{name}: {_camera_summary(load_camera(name))}")
    return 0


def _camera_summary(c: CameraCalibration) -> str:
    (fx, _, cx), (_, fy, cy), _ = c.camera_matrix
    hfov, vfov = c.fov_deg()
    rms = "computed, not calibrated" if c.rms_px is None else f"RMS {c.rms_px:.3f} px"
    lens = "with distortion" if c.has_distortion else "no distortion"
    return (
        f"camera {c.image_size[0]}x{c.image_size[1]}, fx {fx:.1f} fy {fy:.1f} "
        f"cx {cx:.1f} cy {cy:.1f}, FOV {hfov:.1f}x{vfov:.1f} deg, {lens}, {rms}"
    )


def _board_summary(b: BoardProfile) -> str:
    square = "square size unmeasured" if b.square_mm is None else f"squares {b.square_mm:g} mm"
    corners = "corners not set" if b.corners_px is None else "corners set"
    camera = "no camera" if b.camera is None else f"camera {b.camera.name}"
    return (
        f"board for {b.game}, {b.files}x{b.ranks}, {square}, {corners}, rank 1 at the "
        f"{b.first_player_edge}, {camera}, {b.first.name} vs {b.second.name}"
    )
