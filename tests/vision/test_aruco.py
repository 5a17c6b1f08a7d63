"""ArUco boards: the printable board drawn, photographed (warped) and found again, followed
by its markers frame by frame (hidden ones, a bent lens), every game's board printed, and a
real photograph of a printed ChArUco board found through its markers."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import cv2
import numpy as np
import pytest

from referee.app.pipeline import BoardReader
from referee.cli import main
from referee.errors import NoBoardError
from referee.vision.aruco import (
    ArucoLayout,
    MarkerSet,
    board_image,
    board_image_to_board,
    find_board_aruco,
    search_aruco,
    track_aruco,
    write_printable_board,
)
from referee.vision.classifier import Classifier
from referee.vision.pose import apply_homography, board_corners
from tests import DATA


def photograph(files: int, ranks: int, quad: list[list[float]], *, noise: float = 3.0,
               seed: int = 0, blocked: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray]:
    """The board image warped onto a table; returns the frame and the true grid corners."""
    img = board_image(files, ranks, 4.0, 30.0, blocked=blocked)
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


def corner_miss(pose_corners: np.ndarray, truth: np.ndarray) -> float:
    """The largest corner distance as a share of the board's diagonal (%)."""
    diagonal = max(np.linalg.norm(truth[2] - truth[0]), np.linalg.norm(truth[3] - truth[1]))
    return float(np.linalg.norm(pose_corners - truth, axis=1).max() / diagonal * 100)


def hide(frame: np.ndarray, *points: list[float]) -> np.ndarray:
    hidden = frame.copy()
    for point in points:
        cv2.circle(hidden, (int(point[0]), int(point[1])), 90, (140, 160, 200), -1)
    return hidden


def test_markers_follow_a_moving_board_and_two_of_them_are_enough() -> None:
    layout = ArucoLayout.for_board(5, 6)
    frame, truth = photograph(5, 6, TILTED)
    fix = search_aruco(frame, layout.markers())
    assert fix is not None and fix.seen == 4
    moved = [[x + 6, y - 4] for x, y in TILTED]  # the sheet nudged, two markers under hands
    frame, truth = photograph(5, 6, moved, seed=1)
    followed = track_aruco(hide(frame, moved[0], moved[3]), fix, layout.markers())
    assert followed is not None and followed.seen == 2
    assert corner_miss(followed.pose.corners_array, truth) < 0.1
    assert track_aruco(hide(frame, *moved[:3]), fix, layout.markers()) is None  # one: the lines' turn


def test_a_marker_where_the_board_cannot_have_it_gives_no_pose() -> None:
    frame, _ = photograph(5, 6, TILTED)
    layout = ArucoLayout.for_board(5, 6)
    fix = search_aruco(frame, layout.markers())
    assert fix is not None
    far = frame.copy()  # marker 2 copied over marker 0's place: two markers with one id
    a, b = (np.array(TILTED[k]) for k in (2, 0))
    patch = frame[int(a[1]) - 70:int(a[1]) + 10, int(a[0]) - 10:int(a[0]) + 70]
    far[int(b[1]) - 80:int(b[1]), int(b[0]) - 80:int(b[0])] = patch
    assert search_aruco(far, layout.markers()) is None or corner_miss(
        search_aruco(far, layout.markers()).pose.corners_array, fix.pose.corners_array) < 0.1


def bent(frame: np.ndarray, bend: float) -> tuple[np.ndarray, float]:
    """The frame as a barrel-distorting lens shows it (the division model `aruco` fits,
    about the frame's centre): a shown point p comes from p' = c + (p - c) / (1 + bend r²)."""
    height, width = frame.shape[:2]
    centre = np.array([width - 1, height - 1]) / 2
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    off = np.stack([xs - centre[0], ys - centre[1]], axis=-1)
    source = centre + off / (1 + bend * np.sum(off * off, axis=-1))[..., None]
    maps = source.astype(np.float32)
    return cv2.remap(frame, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR), bend


def test_a_bending_lens_is_fitted_from_the_markers() -> None:
    frame, truth = photograph(5, 6, [[250, 90], [1010, 110], [1050, 680], [200, 650]])
    shown, bend = bent(frame, -2.0e-7)
    centre = np.array([639.5, 359.5])
    off = truth - centre
    true_shown = centre + off * 1.0  # the inverse of the division model, by fixed point
    for _ in range(20):
        true_shown = centre + off * (1 + bend * np.sum((true_shown - centre) ** 2, axis=1))[:, None]
    fix = search_aruco(shown, ArucoLayout.for_board(5, 6).markers())
    assert fix is not None and fix.bend is not None and fix.bend < 0
    straight = search_aruco(shown, ArucoLayout.for_board(5, 6).markers(), bend=0.0)
    assert straight is not None
    assert corner_miss(fix.pose.corners_array, true_shown) < 0.1
    assert corner_miss(fix.pose.corners_array, true_shown) < corner_miss(straight.pose.corners_array,
                                                                          true_shown) / 2


# ---------------------------------------------------------------- the referee's reader


@pytest.fixture(scope="module")
def dice_classifier() -> Classifier:
    return Classifier.load("dice")


def test_the_reader_takes_the_pose_and_a1_from_the_markers(dice_classifier: Classifier) -> None:
    turned = TILTED[2:] + TILTED[:2]  # the sheet half turned: a1 far from the camera
    frame, truth = photograph(5, 6, turned)
    reader = BoardReader(5, 6, dice_classifier)
    assert reader.turn_options() == (0, 2)
    pose, confirmed = reader.locate(frame, 0.0)
    assert confirmed and pose is not None
    assert corner_miss(pose.corners_array, truth) < 0.1  # a1 where the markers put it
    assert reader.turn_options() == (0,)  # the side question is answered
    nudged = [[x + 3, y + 2] for x, y in turned]
    frame, truth = photograph(5, 6, nudged, seed=2)
    pose, confirmed = reader.locate(hide(frame, nudged[1]), 1 / 30)
    assert confirmed and pose is not None and corner_miss(pose.corners_array, truth) < 0.1


def test_a_reader_without_markers_in_view_searches_by_the_lines(dice_classifier: Classifier) -> None:
    frame, _ = photograph(5, 6, TILTED)
    layout = ArucoLayout.for_board(5, 6)
    covered = hide(hide(frame, TILTED[0], TILTED[1]), TILTED[2])
    reader = BoardReader(5, 6, dice_classifier)
    reader.locate(covered, 0.0)
    assert reader.turn_options() == (0, 2)  # not named by markers, whatever the finder found
    assert search_aruco(covered, layout.markers()) is None


# ---------------------------------------------------------------- every game's board


@pytest.mark.parametrize(("game", "size", "blocked"), [
    ("zensu", "6x9", ""), ("renaissance", "7x7", "d4"), ("rinne", "5x6", ""), ("flipflop-3x3", "3x3", "")])
def test_every_game_prints_its_board(tmp_path, capsys, game: str, size: str,  # type: ignore[no-untyped-def]
                                     blocked: str) -> None:
    out = tmp_path / f"{game}.svg"
    assert main(["board", "--game", game, "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert size in said and (blocked in said if blocked else "blocked" not in said)
    svg = out.read_text()
    files, ranks = (int(v) for v in size.split("x"))
    assert svg.count("<line") == files + ranks + 2 + (2 if blocked else 0)
    assert ('fill="#0f0f0f"' in svg) == bool(blocked)  # the blocked square's dark fill


def test_renaissance_printed_is_found_by_its_markers_and_shows_its_centre_blocked() -> None:
    frame, truth = photograph(7, 7, TILTED, blocked=("d4",))
    pose = find_board_aruco(frame, ArucoLayout.for_board(7, 7))
    assert corner_miss(pose.corners_array, truth) < 0.1
    centre = pose.to_image(np.array([[3.5, 3.5], [1.5, 1.5]]))
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    (cx, cy), (ox, oy) = centre.astype(int)
    assert grey[cy - 3:cy + 4, cx + 8:cx + 12].mean() < 60 < grey[oy - 3:oy + 4, ox - 3:ox + 4].mean()


def test_the_pdf_paints_the_blocked_square_grey_and_dark(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pdf = write_printable_board(7, 7, 40.0, tmp_path / "r.pdf", blocked=("d4",)).read_bytes()
    assert b"0.060 g" in pdf and b"0.400 G" in pdf
    with pytest.raises(ValueError, match="not a square"):
        write_printable_board(7, 7, 40.0, tmp_path / "r.svg", blocked=("h9",))


# ---------------------------------------------------------------- a real photograph


def charuco_markers() -> tuple[MarkerSet, cv2.aruco.CharucoBoard]:
    """The markers of the photographed ChArUco board (OpenCV's tutorial board: 5x7 squares
    of 40 mm, markers of 20 mm, DICT_6X6_250) in board units, a1 at its lower left."""
    board = cv2.aruco.CharucoBoard((5, 7), 0.04, 0.02,
                                   cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_6X6_250))
    corners = tuple(tuple((float(x) / 0.04, 7 - float(y) / 0.04) for x, y, _ in quad)
                    for quad in board.getObjPoints())
    ids = tuple(int(i) for i in board.getIds().ravel())
    return MarkerSet(5, 7, "DICT_6X6_250", ids, corners), board


def test_a_real_photo_of_a_printed_board_is_found_through_its_markers() -> None:
    photo = cv2.imread(str(DATA / "aruco" / "charuco-photo.jpg"))
    markers, board = charuco_markers()
    pose = find_board_aruco(photo, markers)
    inner = np.array([(float(x) / 0.04, 7 - float(y) / 0.04) for x, y, _ in board.getChessboardCorners()])
    grey = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)
    found, chess = cv2.findChessboardCornersSB(grey, (4, 6), flags=cv2.CALIB_CB_ACCURACY)
    assert found  # the 24 inner corners, found by the squares alone
    predicted = pose.to_image(inner)
    miss = np.linalg.norm(predicted[:, None] - chess.reshape(1, -1, 2), axis=2).min(axis=1)
    assert miss.max() < 0.005 * pose.diagonal  # 0.43 px on a 442 px diagonal
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(grey)
    named = np.linalg.norm(pose.to_image(inner[ids.ravel()]) - corners.reshape(-1, 2), axis=1)
    assert len(named) == 24 and named.max() < 1.0  # each corner where its id says: a1 is right


# ---------------------------------------------------------------- rendered marker boards


@pytest.mark.parametrize(("game", "seed"), [("rinne", 2), ("zensu", 10), ("renaissance", 13)])
def test_a_rendered_marker_board_is_found_by_its_markers(game: str, seed: int) -> None:
    from referee_lab.synth import RenderOptions, render_frame

    frame, truth = render_frame(game, seed=seed, options=RenderOptions(aruco=True))
    pose = find_board_aruco(frame, ArucoLayout.for_board(truth.files, truth.ranks))
    assert corner_miss(pose.corners_array, np.array(truth.corners)) < 0.25  # a1 first, lens bent
