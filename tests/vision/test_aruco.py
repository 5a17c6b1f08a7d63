"""ArUco boards: the printable board drawn, photographed (warped) and found again."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import cv2
import numpy as np
import pytest

from referee.cli import main
from referee.errors import NoBoardError
from referee.vision.aruco import (
    ArucoLayout,
    board_image,
    board_image_to_board,
    find_board_aruco,
    write_printable_board,
)
from referee.vision.pose import apply_homography, board_corners


def photograph(files: int, ranks: int, quad: list[list[float]], *, noise: float = 3.0,
               seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The board image warped onto a table; returns the frame and the true grid corners."""
    img = board_image(files, ranks, 4.0, 30.0)
    src = np.float32([[0, 0], [img.shape[1], 0], [img.shape[1], img.shape[0]], [0, img.shape[0]]])
    warp = cv2.getPerspectiveTransform(src, np.float32(quad))
    frame = cv2.warpPerspective(img, warp, (1280, 720), borderValue=(70, 110, 150))
    rng = np.random.default_rng(seed)
    frame = np.clip(frame + rng.normal(0, noise, frame.shape), 0, 255).astype(np.uint8)
    to_frame = warp @ board_image_to_board(files, ranks, 4.0, 30.0)
    truth = apply_homography(to_frame, board_corners(files, ranks))
    return frame, truth


TILTED = [[300, 120], [900, 160], [980, 650], [250, 600]]


def test_round_trip_finds_the_corners_to_a_fraction_of_a_pixel() -> None:
    frame, truth = photograph(5, 6, TILTED)
    pose = find_board_aruco(frame, ArucoLayout.for_board(5, 6))
    assert np.max(np.linalg.norm(pose.corners_array - truth, axis=1)) < 0.5


def test_markers_name_a1_even_upside_down() -> None:
    turned = TILTED[2:] + TILTED[:2]  # the sheet turned half round on the table
    frame, truth = photograph(5, 5, turned)
    pose = find_board_aruco(frame, ArucoLayout.for_board(5, 5))
    assert np.max(np.linalg.norm(pose.corners_array - truth, axis=1)) < 0.5


def test_one_hidden_marker_is_fine_two_are_not() -> None:
    frame, _ = photograph(5, 6, TILTED)
    layout = ArucoLayout.for_board(5, 6)
    hidden = frame.copy()
    cv2.circle(hidden, tuple(int(v) for v in TILTED[0]), 90, (140, 160, 200), -1)
    find_board_aruco(hidden, layout)
    cv2.circle(hidden, tuple(int(v) for v in TILTED[1]), 90, (140, 160, 200), -1)
    with pytest.raises(NoBoardError):
        find_board_aruco(hidden, layout)


def test_blank_frame_has_no_board() -> None:
    with pytest.raises(NoBoardError):
        find_board_aruco(np.full((720, 1280, 3), 200, np.uint8), ArucoLayout.for_board(5, 6))


def test_svg_and_pdf_are_true_size(tmp_path) -> None:  # type: ignore[no-untyped-def]
    layout = ArucoLayout.for_board(5, 6)
    svg = write_printable_board(5, 6, 40.0, tmp_path / "board.svg")
    root = ET.parse(svg).getroot()
    width_mm = (5 + 2 * layout.border) * 40.0
    assert root.get("width") == f"{width_mm:.3f}mm"
    assert root.get("height") == f"{(6 + 2 * layout.border) * 40.0:.3f}mm"
    pdf = write_printable_board(5, 6, 40.0, tmp_path / "board.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    assert f"/MediaBox [0 0 {width_mm * 72 / 25.4:.3f}".encode() in pdf


def test_board_verb_writes_the_game_board(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "flipflop.svg"
    assert main(["board", "--game", "flipflop-3x3", "--square-mm", "30", "--out", str(out)]) == 0
    assert "3x3" in capsys.readouterr().out
    assert ET.parse(out).getroot().get("width", "").endswith("mm")
    assert main(["board", "--game", "rinne", "--out", str(tmp_path / "b.png")]) == 1
    assert "svg or .pdf" in capsys.readouterr().err
