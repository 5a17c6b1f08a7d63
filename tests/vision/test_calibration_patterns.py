"""Printable patterns at true size, and undistortion with the maps computed once."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.calibration.defaults import pi_camera_module_3
from referee.calibration.files import CameraCalibration
from referee.calibration.intrinsics import Charuco, Chessboard, calibrate_folder, find_chessboard
from referee.calibration.patterns import layout, rasterise, to_pdf, to_svg, write_pattern
from referee.calibration.undistort import make_undistorter, warp_maps
from referee.cli import main
from referee.errors import CalibrationError
from tests import DATA

SAMPLES = DATA / "calibration" / "opencv-left"


def imread(path: Path, flags: int = cv2.IMREAD_COLOR) -> np.ndarray:
    image = cv2.imread(str(path), flags)
    assert image is not None, path
    return image


def test_svg_is_true_size() -> None:
    page = layout(Chessboard(9, 6, 25.0))
    svg = to_svg(page)
    # 10x7 squares of 25 mm plus a 25 mm quiet zone each side, and the caption strip
    assert 'width="300mm" height="229mm" viewBox="0 0 300 229"' in svg
    squares = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="([\d.]+)"/>', svg)
    assert len(squares) == 35 and set(squares) == {("25.0000", "25.0000")}


def test_pdf_page_is_true_size() -> None:
    page = layout(Chessboard(7, 5, 20.0))
    pdf = to_pdf(page)
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    box = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", pdf)
    assert box is not None
    assert float(box.group(1)) == pytest.approx(page.width_mm * 72 / 25.4, abs=1e-3)
    assert float(box.group(2)) == pytest.approx(page.height_mm * 72 / 25.4, abs=1e-3)
    assert pdf.count(b" re f") == 24  # 8x6 squares, half of them black
    xref = int(pdf.rsplit(b"startxref\n", 1)[1].split()[0])
    assert pdf[xref:].startswith(b"xref")


def test_png_records_its_dpi_and_its_squares_measure_true(tmp_path: Path) -> None:
    path = tmp_path / "board.png"
    write_pattern(Chessboard(9, 6, 25.0), path, dpi=200)
    data = path.read_bytes()
    at = data.index(b"pHYs")
    x, y, unit = struct.unpack(">IIB", data[at + 4 : at + 13])
    assert (x, y, unit) == (round(200 / 0.0254), round(200 / 0.0254), 1)
    gray = imread(path, cv2.IMREAD_GRAYSCALE)
    corners = find_chessboard(gray, Chessboard(9, 6, 25.0))
    assert corners is not None
    grid = corners.reshape(6, 9, 2)
    spacing = np.linalg.norm(np.diff(grid, axis=1), axis=2)
    assert spacing.mean() == pytest.approx(25.0 * 200 / 25.4, abs=0.05)


def test_charuco_layout_is_opencvs_own_board() -> None:
    pattern = Charuco(5, 7, 20.0, 14.0)  # 20 mm → 200 px at 254 dpi, 2 px marker cells
    ours = rasterise(layout(pattern, margin_mm=0), dpi=254)[: 7 * 200]
    theirs = pattern.board().generateImage((5 * 200, 7 * 200), marginSize=0, borderBits=1)
    assert np.array_equal(ours, theirs)


def test_pattern_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.svg"
    assert main(["calibrate", "pattern", "--pattern", "9x6", "--square-mm", "25",
                 "--out", str(out)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "300 x 229 mm" in text and "larger than A4" in text
    assert main(["calibrate", "pattern", "--pattern", "9x6", "--square-mm", "25",
                 "--out", str(tmp_path / "p.gif")]) == 1  # fmt: skip
    assert "write a pattern as .svg, .pdf or .png" in capsys.readouterr().err


def test_a_charuco_pattern_fits_a4_and_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "charuco.png"
    page = write_pattern(Charuco(7, 5, 25.0, 18.0), path, dpi=150)
    assert page.fits()
    gray = imread(path, cv2.IMREAD_GRAYSCALE)
    _, ids, _, _ = cv2.aruco.CharucoDetector(Charuco(7, 5, 25.0, 18.0).board()).detectBoard(gray)
    assert ids is not None and sorted(ids.ravel().tolist()) == list(range(24))


# ---------------------------------------------------------------- undistortion


def straightness_px(gray: np.ndarray) -> float:
    """The worst distance of a corner from the line through its row of the chessboard."""
    corners = find_chessboard(gray, Chessboard(9, 6, 25.0))
    assert corners is not None
    worst = 0.0
    for row in corners.reshape(6, 9, 2):
        centre = row.mean(axis=0)
        _, _, vt = np.linalg.svd(row - centre)
        worst = max(worst, float(np.abs((row - centre) @ vt[1]).max()))
    return worst


@pytest.mark.parametrize("name", ["left12.jpg", "left02.jpg"])  # left02: steep, small squares
def test_undistortion_straightens_the_chessboard_rows(name: str) -> None:
    result = calibrate_folder(SAMPLES, Chessboard(9, 6, 25.0))
    calibration = CameraCalibration(
        result.image_size,
        tuple(tuple(float(v) for v in row) for row in result.camera_matrix),
        tuple(float(c) for c in result.dist_coeffs),
        result.rms_px,
        "test",
    )
    undistort = make_undistorter(calibration)
    photo = imread(SAMPLES / name)
    flat = undistort(photo)
    assert flat.shape == photo.shape
    before = straightness_px(cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY))
    after = straightness_px(cv2.cvtColor(flat, cv2.COLOR_BGR2GRAY))
    assert before > 1.5 and after < 0.5, (before, after)
    # Points map the same way as pixels.
    corners = find_chessboard(cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY), Chessboard(9, 6, 25.0))
    flat_corners = find_chessboard(cv2.cvtColor(flat, cv2.COLOR_BGR2GRAY), Chessboard(9, 6, 25.0))
    assert corners is not None and flat_corners is not None
    moved = undistort.undistort_points(corners.reshape(-1, 2), calibration)
    assert np.abs(moved - flat_corners.reshape(-1, 2)).max() < 0.5


def test_no_distortion_passes_frames_through_and_sizes_must_match() -> None:
    undistort = make_undistorter(pi_camera_module_3(1280, 720))
    frame = np.zeros((720, 1280, 3), np.uint8)
    assert undistort(frame) is frame
    with pytest.raises(CalibrationError, match="frame is 640x480 but the camera calibration"):
        undistort(np.zeros((480, 640, 3), np.uint8))
    scaled = make_undistorter(pi_camera_module_3(1920, 1080), (1280, 720))
    assert scaled.camera_matrix[0, 0] == pytest.approx(pi_camera_module_3(1280, 720).K[0, 0])


def test_one_remap_undistorts_and_warps_the_board_flat() -> None:
    """The raw photo → a top-down chessboard in one remap: its corners land on a square grid."""
    board = Chessboard(9, 6, 25.0)
    result = calibrate_folder(SAMPLES, board)
    calibration = CameraCalibration(
        result.image_size,
        tuple(tuple(float(v) for v in row) for row in result.camera_matrix),
        tuple(float(c) for c in result.dist_coeffs),
        result.rms_px,
        "test",
    )
    photo = imread(SAMPLES / "left12.jpg")
    corners = find_chessboard(cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY), board)
    assert corners is not None
    # The homography from undistorted pixels (the calibration's K) to a 40 px-per-square
    # board image with a 60 px border.
    flat = cv2.undistortPoints(corners, calibration.K, calibration.dist, P=calibration.K)
    target = board.object_points()[:, :2] / 25.0 * 40 + 60
    homography, _ = cv2.findHomography(flat.reshape(-1, 2), target)
    warp = warp_maps(calibration, homography, (8 * 40 + 120, 5 * 40 + 120))
    top_down = warp(photo)
    found = find_chessboard(cv2.cvtColor(top_down, cv2.COLOR_BGR2GRAY), board)
    assert found is not None
    assert np.abs(found.reshape(-1, 2) - target).max() < 0.6
    # A homography alone leaves the lens's bend in: corners several pixels off the grid.
    plain, _ = cv2.findHomography(corners.reshape(-1, 2), target)
    bent = cv2.warpPerspective(photo, plain, (8 * 40 + 120, 5 * 40 + 120))
    found = find_chessboard(cv2.cvtColor(bent, cv2.COLOR_BGR2GRAY), board)
    assert found is not None and np.abs(found.reshape(-1, 2) - target).max() > 1.5
