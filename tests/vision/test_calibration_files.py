"""Calibration files: round trips, strict validation with one-line errors, the Pi Camera
Module 3 defaults and the board profiles under calibration/."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from referee.calibration.defaults import (
    COMMON_SIZES,
    PUBLISHED_FOV_DEG,
    default_path,
    pi_camera_module_3,
)
from referee.calibration.files import (
    BoardProfile,
    CameraCalibration,
    PlayerPieces,
    camera_to_mapping,
    load_board,
    load_board_camera,
    load_camera,
    save_board,
    save_camera,
)
from referee.cli import main
from referee.errors import CalibrationError
from referee.resources import calibration_dir
from referee.rules import find_game, game_names

CALIBRATION = calibration_dir()

CAMERA = CameraCalibration(
    image_size=(640, 480),
    camera_matrix=((533.09, 0.0, 342.16), (0.0, 533.16, 234.04), (0.0, 0.0, 1.0)),
    dist_coeffs=(-0.2845, 0.0565, 0.00108, -9.65e-05, 0.0946),
    rms_px=0.178,
    source="test",
)


def write(tmp_path: Path, data: object, name: str = "camera.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_camera_round_trip(tmp_path: Path) -> None:
    save_camera(CAMERA, tmp_path / "c.yaml", header=("a comment",))
    assert (tmp_path / "c.yaml").read_text().startswith("# a comment\n")
    assert load_camera(tmp_path / "c.yaml") == CAMERA


def test_camera_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        'kind = "camera"\nversion = 1\nimage_size = [640, 480]\n'
        "camera_matrix = [[533.09, 0.0, 342.16], [0.0, 533.16, 234.04], [0.0, 0.0, 1.0]]\n"
        "dist_coeffs = [-0.2845, 0.0565, 0.00108, -9.65e-05, 0.0946]\n"
        'rms_px = 0.178\nsource = "test"\n'
    )
    assert load_camera(path) == CAMERA


def good() -> dict[str, object]:
    return camera_to_mapping(CAMERA)


def without(key: str) -> dict[str, object]:
    data = good()
    del data[key]
    return data


def changed(key: str, value: object) -> dict[str, object]:
    return {**good(), key: value}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (without("camera_matrix"), "missing field 'camera_matrix'"),
        (without("image_size"), "missing field 'image_size'"),
        (changed("focal", 3.0), "unknown field 'focal'"),
        (changed("rms_px", "small"), "rms_px must be a number, not text"),
        (changed("rms_px", True), "rms_px must be a number, not a boolean"),
        (changed("image_size", [640, 480, 3]), "image_size must have 2 values, not 3"),
        (changed("image_size", [640.5, 480]), r"image_size\[0\] must be an integer"),
        (changed("image_size", "640x480"), "image_size must be a list, not text"),
        (changed("camera_matrix", [[1, 0, 0], [0, 1, 0]]), "must be 3x3, not 2 rows"),
        (changed("camera_matrix", [[1, 0], [0, 1, 0], [0, 0, 1]]), r"\[0\] must have 3 values"),
        (changed("camera_matrix", [[500, 0, 320], [0, 500, 240], [0, 1, 1]]), r"\[0 0 1\]"),
        (changed("camera_matrix", [[-5, 0, 320], [0, 500, 240], [0, 0, 1]]), "positive"),
        (changed("camera_matrix", [[500, 0, 900], [0, 500, 240], [0, 0, 1]]), "outside"),
        (changed("dist_coeffs", [0.1, 0.2, 0.3]), "dist_coeffs must have 4, 5, 8, 12, 14"),
        (changed("dist_coeffs", [0.1, None, 0, 0, 0]), r"dist_coeffs\[1\] must be a number"),
        (changed("source", 7), "source must be a string, not an integer"),
        (changed("kind", "board"), "kind is 'board', expected 'camera'"),
        (changed("version", 2), "version 2 is not supported"),
        ([1, 2, 3], "expected a mapping of fields, found a list"),
        (None, "expected a mapping of fields, found nothing"),
    ],
)
def test_bad_camera_files_are_one_line(tmp_path: Path, data: object, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(CalibrationError, match=message) as caught:
        load_camera(path)
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_files_that_are_not_yaml_at_all(tmp_path: Path) -> None:
    text = tmp_path / "broken.yaml"
    text.write_text("kind: camera\nimage_size: [640, 480\nsource: x\n")
    with pytest.raises(CalibrationError, match=r"not valid YAML at line \d"):
        load_camera(text)
    binary = tmp_path / "photo.yaml"
    binary.write_bytes(bytes(range(256)))
    with pytest.raises(CalibrationError, match="not a text file"):
        load_camera(binary)
    bad_toml = tmp_path / "c.toml"
    bad_toml.write_text("kind = = 1\n")
    with pytest.raises(CalibrationError, match="not valid TOML"):
        load_camera(bad_toml)
    with pytest.raises(CalibrationError, match="no such calibration file"):
        load_camera(tmp_path / "absent.yaml")


def test_yaml_tags_are_not_executed(tmp_path: Path) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text("kind: !!python/object/apply:os.system ['echo hacked']\n")
    with pytest.raises(CalibrationError, match="not valid YAML"):
        load_camera(path)


def test_calibrate_check_reports_a_bad_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good_path = tmp_path / "good.yaml"
    save_camera(CAMERA, good_path)
    bad = write(tmp_path, changed("rms_px", "small"), "bad.yaml")
    assert main(["calibrate", "check", str(good_path)]) == 0
    out, _ = capsys.readouterr()
    assert "camera 640x480, fx 533.1" in out and "RMS 0.178 px" in out
    assert main(["calibrate", "check", str(bad)]) == 1
    _, err = capsys.readouterr()
    assert err == f"referee: {bad}: rms_px must be a number, not text\n"


def test_scaling_a_calibration_keeps_the_field_of_view() -> None:
    half = CAMERA.scaled_to(320, 240)
    assert half.K[0, 0] == pytest.approx(CAMERA.K[0, 0] / 2)
    assert half.K[0, 2] == pytest.approx((342.16 + 0.5) / 2 - 0.5)
    assert half.fov_deg() == pytest.approx(CAMERA.fov_deg(), abs=1e-9)
    with pytest.raises(CalibrationError, match="aspect differs"):
        CAMERA.scaled_to(640, 360)


# ---------------------------------------------------------------- Pi Camera Module 3


@pytest.mark.parametrize(("width", "height"), COMMON_SIZES)
def test_the_committed_pi_defaults_are_the_computed_ones(width: int, height: int) -> None:
    assert load_camera(default_path(CALIBRATION, width, height)) == pi_camera_module_3(
        width, height
    )


FULL_FIELD = [(4608, 2592), (2304, 1296), (1920, 1080), (1280, 720)]


@pytest.mark.parametrize(("width", "height"), FULL_FIELD)
def test_pi_defaults_match_the_published_field_of_view(width: int, height: int) -> None:
    """The datasheet's 4.74 mm and 1.4 µm give 68.5° x 41.9° for the pinhole model; the
    published figure is 66° x 41°. The 2.5° gap is the datasheet's own rounding and the
    lens's distortion, which a pinhole default cannot carry."""
    hfov, vfov = pi_camera_module_3(width, height).fov_deg()
    assert hfov == pytest.approx(PUBLISHED_FOV_DEG[0], abs=3.0)
    assert vfov == pytest.approx(PUBLISHED_FOV_DEG[1], abs=1.0)
    assert hfov == pytest.approx(2 * math.degrees(math.atan(4608 * 0.0014 / 2 / 4.74)))


def test_the_1536x864_mode_is_a_centre_crop_and_640x480_keeps_the_full_height() -> None:
    full_h, full_v = pi_camera_module_3(2304, 1296).fov_deg()
    crop_h, crop_v = pi_camera_module_3(1536, 864).fov_deg()
    half = math.radians(full_h) / 2
    assert math.radians(crop_h) / 2 == pytest.approx(math.atan(math.tan(half) * 2 / 3))
    assert pi_camera_module_3(1536, 864).K[0, 0] == pi_camera_module_3(2304, 1296).K[0, 0]
    vga_h, vga_v = pi_camera_module_3(640, 480).fov_deg()
    assert vga_v == pytest.approx(full_v)
    assert vga_h < full_h
    assert crop_v < full_v


# ---------------------------------------------------------------- board profiles

PROFILE = BoardProfile(
    game="rinne",
    files=5,
    ranks=6,
    square_mm=32.0,
    corners_px=((400.0, 120.0), (880.0, 125.0), (900.0, 700.0), (380.0, 690.0)),
    first_player_edge="bottom",
    camera=None,
    first=PlayerPieces("white", "#f2f2ee", "#1a1a1a"),
    second=PlayerPieces("black", "#1e1e1e", "#f0f0f0"),
)


def test_board_round_trip_with_a_relative_camera(tmp_path: Path) -> None:
    save_camera(CAMERA, tmp_path / "cam.yaml")
    profile = BoardProfile(**{**PROFILE.__dict__, "camera": tmp_path / "cam.yaml"})
    save_board(profile, tmp_path / "boards" / "rinne.yaml")
    text = (tmp_path / "boards" / "rinne.yaml").read_text()
    assert "camera: ../cam.yaml" in text
    loaded = load_board(tmp_path / "boards" / "rinne.yaml")
    assert loaded.camera is not None and loaded.camera.resolve() == tmp_path / "cam.yaml"
    assert BoardProfile(**{**loaded.__dict__, "camera": profile.camera}) == profile
    assert load_board_camera(loaded) == CAMERA


def board_data(**changes: object) -> dict[str, object]:
    save = dict(
        kind="board", version=1, game="rinne", files=5, ranks=6, square_mm=32.0,
        corners_px=[list(p) for p in PROFILE.corners_px or ()], first_player_edge="bottom",
        camera=None, pieces={"first": {"name": "white", "body": "#f2f2ee", "marks": "#1a1a1a"},
                             "second": {"name": "black", "body": "#1e1e1e", "marks": "#f0f0f0"}},
    )  # fmt: skip
    save.update(changes)
    return {k: v for k, v in save.items() if v != "DROP"}


def test_a_valid_board_profile_loads(tmp_path: Path) -> None:
    assert load_board(write(tmp_path, board_data(), "b.yaml")) == PROFILE


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"pieces": "DROP"}, "missing field 'pieces'"),
        ({"files": "five"}, "files must be an integer, not text"),
        ({"ranks": 0}, "ranks must be positive"),
        ({"orientation": 90}, "unknown field 'orientation'"),
        ({"square_mm": -3}, "square_mm must be positive"),
        ({"first_player_edge": "north"}, "first_player_edge must be one of bottom, right"),
        ({"corners_px": [[0, 0], [10, 0], [10, 10]]}, "corners_px must be 4x2"),
        ({"corners_px": [[0, 0], [0, 10], [10, 10], [10, 0]]}, "clockwise"),
        ({"camera": "nowhere.yaml"}, "camera file .*nowhere.yaml does not exist"),
        ({"pieces": {"first": {"name": "w", "body": "#fff", "marks": "#000000"},
                     "second": {"name": "b", "body": "#111111", "marks": "#eeeeee"}}},
         r"pieces.first.body must be a colour like"),
        ({"pieces": {"first": {"name": "w", "body": "#ffffff", "marks": "#000000"}}},
         "pieces: missing field 'second'"),
    ],
)  # fmt: skip
def test_bad_board_profiles_are_one_line(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    with pytest.raises(CalibrationError, match=message) as caught:
        load_board(write(tmp_path, board_data(**changes), "b.yaml"))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("game", game_names())
def test_the_default_board_profiles_fit_their_games(game: str) -> None:
    profile = load_board(CALIBRATION / "boards" / f"{game}.yaml")
    geometry = find_game(game).geometry  # type: ignore[attr-defined]  # RinneRules has it
    assert (profile.game, profile.files, profile.ranks) == (game, geometry.files, geometry.ranks)
    camera = load_board_camera(profile)
    assert camera is not None and camera.image_size == (1280, 720)
