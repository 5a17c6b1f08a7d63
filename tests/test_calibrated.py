"""The calibration files at work: `render` draws through a camera file's lens; with that file
`replay`/`live` undistort before looking for the board and cut the squares where the truth
says; a board profile from `calibrate board` gives the starting pose (checked, not trusted)
and decides the sides by its colours; bad files are one line and exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.app.calibrated import (
    Calibration,
    CalibrationFiles,
    FrameLens,
    load_calibration,
    profile_lab,
    profile_pose,
    side_by_colours,
)
from referee.app.events import Event, EventKind
from referee.app.pipeline import BoardReader, GameLoop, board_referee
from referee.app.replay import replay_footage
from referee.calibration.files import (
    BoardProfile,
    CameraCalibration,
    PlayerPieces,
    load_board,
    load_camera,
    save_board,
    save_camera,
)
from referee.calibration.undistort import make_undistorter
from referee.cli import main
from referee.errors import CalibrationError
from referee.hardware.sources import open_source
from referee.resources import calibration_dir
from referee.rules.rinne import RINNE
from referee.tracking.reading import Reading
from referee.vision.pose import corner_error
from referee_lab.cli import main as lab_main
from referee_lab.footage_check import Expected, accepted_plies
from referee_lab.pose_truth import errors
from referee_lab.synth.truth import FrameTruth
from tests import DATA

FOOTAGE = DATA / "footage" / "rinne-dice-31.mp4"
CLIP_FRAMES = 290  # the footage's first two plies (the second is accepted at frame 264)


def strong_lens(width: int = 1280, height: int = 720) -> CameraCalibration:
    """A wide lens with strong barrel distortion (beyond any the renderer draws itself)."""
    f = (width / 2) / np.tan(np.radians(35.0))
    k = ((f, 0.0, (width - 1) / 2 + 6), (0.0, f, (height - 1) / 2 - 4), (0.0, 0.0, 1.0))
    return CameraCalibration((width, height), k, (-0.32, 0.10, 0.0, 0.0, 0.0), None, "test")


@pytest.fixture(scope="module")
def strong_render(tmp_path_factory: pytest.TempPathFactory
                  ) -> tuple[Path, np.ndarray, FrameTruth]:
    """A frame rendered by `referee-lab render` through the strong lens's camera file (made at
    1280x720, rendered at 960x540: the file is scaled)."""
    folder = tmp_path_factory.mktemp("strong")
    camera = folder / "strong.yaml"
    save_camera(strong_lens(), camera)
    out = folder / "frame.png"
    assert lab_main(["render", "--game", "rinne", "--seed", "1", "--tilt", "20-35", "--pieces",
                 "dice", "--size", "960x540", "--calibration", str(camera),
                 "--out", str(out)]) == 0
    truth = FrameTruth.from_json(json.loads(out.with_suffix(".json").read_text()))
    frame = cv2.imread(str(out))
    assert frame is not None
    return camera, frame, truth


def test_render_draws_through_the_camera_file(strong_render):
    _, frame, truth = strong_render
    expected = strong_lens().scaled_to(960, 540)
    assert frame.shape == (540, 960, 3)
    assert np.allclose(truth.camera.K, expected.K)
    assert truth.camera.dist == expected.dist_coeffs


def test_with_the_camera_file_the_board_and_squares_land_where_the_truth_says(strong_render):
    camera, frame, truth = strong_render
    lens = FrameLens(Calibration(load_camera(camera), camera))
    raw = errors(frame, truth, None)
    flat = errors(frame, truth, lens)
    assert flat is not None, "the board is found in the undistorted frame"
    corners, crops = flat
    # The lens bends the grid's lines by several pixels: undistorted, the corners lie within
    # 1% of the diagonal and the squares' crops within 0.06 squares of the truth (measured
    # 0.46% and 0.033; on the raw frame 1.9% and 0.073).
    assert corners < 0.01 and crops < 0.06, (corners, crops)
    assert raw is None or (corners < raw[0] and crops < raw[1]), (raw, flat)


def test_undistorting_a_region_is_the_whole_frame_there():
    calibration = strong_lens(320, 180)
    undistort = make_undistorter(calibration)
    rng = np.random.default_rng(0)
    frame = cv2.GaussianBlur(rng.integers(0, 255, (180, 320, 3), dtype=np.uint8), (5, 5), 2)
    whole = undistort(frame)
    part = undistort.region(frame, (40, 32, 200, 150))
    assert np.array_equal(part[32:150, 40:200], whole[32:150, 40:200])
    assert not part[:32].any() and not part[:, 224:].any()  # (the box widened to 32 px)
    points = np.array([[10.0, 12.0], [160.0, 90.0], [300.0, 170.0]])
    raw = undistort.distort_points(points, calibration)
    assert np.allclose(undistort.undistort_points(raw, calibration), points, atol=1e-3)


def test_the_pi_defaults_follow_the_frame_size(caplog):
    lens = FrameLens(Calibration(pi_defaults=True))
    assert lens.at(1280, 720) is not None and lens.undistorter is not None
    assert lens.undistorter.is_identity  # the datasheet's lens: no distortion, no cost
    assert lens.path is not None and lens.path.name == "pi-camera-module-3-1280x720.yaml"
    assert lens.camera_matrix is not None and lens.camera_matrix[0, 0] == pytest.approx(940.476, abs=0.01)
    frame = np.zeros((720, 1280, 3), np.uint8)
    assert lens.undistort(frame, None) is frame
    assert lens.at(1000, 700) is None
    assert "no Pi Camera Module 3 defaults for 1000x700" in caplog.text


# ---------------------------------------------------------------- board profiles


def clip(path: Path, frames: int = CLIP_FRAMES) -> Path:
    """The committed footage's first frames as Motion JPEG (a short replay)."""
    capture = cv2.VideoCapture(str(FOOTAGE))
    writer: cv2.VideoWriter | None = None
    for _ in range(frames):
        ok, frame = capture.read()
        assert ok
        if writer is None:
            size = (frame.shape[1], frame.shape[0])
            writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30, size)
        writer.write(frame)
    assert writer is not None
    writer.release()
    capture.release()
    return path


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A short clip of the committed footage, and the board profile `calibrate board` wrote
    from it."""
    folder = tmp_path_factory.mktemp("profiled")
    video = clip(folder / "clip.avi")
    profile = folder / "board.yaml"
    assert main(["calibrate", "board", "--game", "rinne", "--camera", str(video), "--out",
                 str(profile)]) == 0
    return video, profile


def test_replay_with_a_board_profile_reads_the_footage(profiled, tmp_path, monkeypatch):
    video, profile = profiled
    import referee.app.pipeline as pipeline

    searches: list[int] = []

    def counting(real):  # type: ignore[no-untyped-def]
        def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
            searches.append(1)
            return real(*args, **kwargs)
        return counted

    # (without a camera file a search also estimates the lens where the lines bend)
    for name in ("find_board", "find_board_and_lens"):
        monkeypatch.setattr(pipeline, name, counting(getattr(pipeline, name)))
    searched_before_start: list[int] = []

    def on_event(event: Event, match: object) -> None:
        if event.kind is EventKind.STARTED:
            searched_before_start.append(len(searches))

    result = replay_footage(video, "rinne", board=profile, out=tmp_path / "out",
                            on_event=on_event)
    expected = Expected.load(FOOTAGE.with_suffix(".expected.json"))
    assert accepted_plies(result.events) == list(expected.plies[:2])
    # The profile's pose was confirmed by the tracker: the board was never searched for
    # before the game began (it sides were decided by the profile's colours).
    assert searched_before_start == [0]


def _reader(profile: BoardProfile) -> BoardReader:
    calibration = Calibration(board=profile)
    _, reader = board_referee(RINNE, "dice", calibration=calibration)
    return reader


def test_a_profile_pose_is_checked_and_a_moved_board_found_again(profiled, monkeypatch):
    video, path = profiled
    profile = load_board(path)
    capture = cv2.VideoCapture(str(video))
    ok, frame = capture.read()
    capture.release()
    assert ok
    truth = np.array(Expected.load(FOOTAGE.with_suffix(".expected.json")).corners[0])
    diagonal = float(np.linalg.norm(truth[2] - truth[0]))

    import referee.app.pipeline as pipeline

    def no_search(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("searched although the profile's pose fits")

    monkeypatch.setattr(pipeline, "find_board", no_search)
    monkeypatch.setattr(pipeline, "find_board_and_lens", no_search)
    reader = _reader(profile)
    _, pose, confirmed = reader.look(frame, 0.0)
    assert confirmed and pose is not None
    assert corner_error(pose, truth, any_orientation=False) < 0.02 * diagonal  # a1 right too
    monkeypatch.undo()

    # The same board moved since: the profile's corners two squares off. Not trusted: the
    # board is searched for, and a1 stays at the corner nearest the profile's a1.
    assert profile.corners_px is not None
    moved = BoardProfile(**{**profile.__dict__, "corners_px": tuple(
        (float(x) + 90.0, float(y) + 40.0) for x, y in profile.corners_px)})
    reader = _reader(moved)
    hint = profile_pose(moved, reader.lens)
    assert hint is not None and corner_error(hint, truth) > 0.1 * diagonal
    _, pose, confirmed = reader.look(frame, 0.0)
    assert confirmed and pose is not None
    assert corner_error(pose, truth, any_orientation=False) < 0.02 * diagonal


def test_profile_colours_decide_the_sides():
    profile = BoardProfile("rinne", 5, 6, None, None, "bottom", None,
                           PlayerPieces("white", "#f0f0e8", "#1a1a1a"),
                           PlayerPieces("black", "#202020", "#f0f0f0"))
    lab = profile_lab(profile)
    assert lab[0][0] > 90 and lab[1][0] < 15  # lightness of white and black
    owners = {0: 0, 1: 0, 28: 1, 29: 1}
    colours = np.zeros((30, 3))
    colours[[0, 1]] = lab[0] + 3.0  # white pieces on rank 1 as seen from side 0
    colours[[28, 29]] = lab[1] - 2.0
    seen = Reading(("empty",), np.ones((30, 1)), colours)
    turned = Reading(("empty",), np.ones((30, 1)), colours[::-1].copy())
    order, decided = side_by_colours([(2, turned), (0, seen)], owners, lab)
    assert [k for k, _ in order] == [0, 2] and decided
    alike = np.array([lab[0], lab[0] + 5.0])  # a profile whose colours cannot tell the sides
    _, decided = side_by_colours([(2, turned), (0, seen)], owners, alike)
    assert not decided


# ---------------------------------------------------------------- bad files


@pytest.mark.parametrize("field, value, message", [
    ("camera_matrix", None, "missing field 'camera_matrix'"),
    ("dist_coeffs", "none", "dist_coeffs must be a list, not text"),
])
def test_a_bad_camera_file_is_one_line_everywhere(tmp_path, capsys, field, value, message):
    good = tmp_path / "good.yaml"
    save_camera(strong_lens(), good)
    import yaml

    data = yaml.safe_load(good.read_text())
    if value is None:
        del data[field]
    else:
        data[field] = value
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    commands = [
        ["replay", str(FOOTAGE), "--game", "rinne", "--calibration", str(bad), "--out",
         str(tmp_path / "r")],
        ["live", "--game", "rinne", "--camera", str(FOOTAGE), "--calibration", str(bad),
         "--out", str(tmp_path / "l")],
        ["render", "--game", "rinne", "--calibration", str(bad), "--out",
         str(tmp_path / "f.png")],
        ["calibrate", "board", "--game", "rinne", "--camera", str(FOOTAGE), "--calibration",
         str(bad), "--out", str(tmp_path / "b.yaml")],
    ]
    for command in commands:
        run = lab_main if command[0] == "render" else main
        assert run(command) == 1, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err and str(bad) in err, (command, err)
    assert not (tmp_path / "f.png").exists() and not (tmp_path / "b.yaml").exists()


def test_a_bad_or_foreign_board_profile_is_one_line(tmp_path, capsys):
    good = load_board(calibration_dir() / "boards" / "rinne.yaml")
    cases = {}
    path = tmp_path / "wrong-type.yaml"
    save_board(good, path)
    path.write_text(path.read_text().replace("files: 5", "files: five"))
    cases[path] = "files must be an integer, not text"
    path = tmp_path / "missing.yaml"
    save_board(good, path)
    path.write_text(path.read_text().replace("first_player_edge: bottom\n", ""))
    cases[path] = "missing field 'first_player_edge'"
    path = tmp_path / "five.yaml"
    save_board(BoardProfile(**{**good.__dict__, "game": "rinne-5x5", "ranks": 5}), path)
    cases[path] = "a board profile of a 5x5 board (rinne-5x5), not rinne's 5x6"
    for path, message in cases.items():
        for command in (["replay", str(FOOTAGE)], ["live", "--camera", str(FOOTAGE)]):
            out = tmp_path / "out"
            assert main([*command, "--game", "rinne", "--board", str(path), "--out",
                         str(out)]) == 1
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and message in err, (command, err)
            assert not out.exists()


def test_a_camera_file_of_another_aspect_is_one_line(tmp_path):
    camera = tmp_path / "four-three.yaml"
    save_camera(strong_lens(640, 480), camera)
    calibration = load_calibration(CalibrationFiles(camera=camera), RINNE)
    lens = FrameLens(calibration)
    with pytest.raises(CalibrationError, match=r"four-three\.yaml: cannot scale a 640x480"):
        lens.at(1280, 720)


def _sides_kept_at_start(video: Path, calibration: Calibration) -> tuple[int, ...]:
    referee, reader = board_referee(RINNE, "dice", calibration=calibration)
    loop = GameLoop(reader, referee)
    with open_source(video) as source:
        for frame in source:
            events = loop.feed(frame.frame_bgr, frame.index, frame.timestamp_s)
            if any(event.kind is EventKind.STARTED for event in events):
                return loop._other_sides
    raise AssertionError("the game never started")


def test_the_profiles_colours_settle_the_sides_at_set_up(profiled):
    video, path = profiled
    # Rinne's start looks the same from both sides: alone, the first move must decide.
    assert _sides_kept_at_start(video, Calibration()) == (2,)
    assert _sides_kept_at_start(video, Calibration(board=load_board(path))) == ()


def test_render_refuses_a_lens_it_cannot_draw(tmp_path, capsys):
    base = strong_lens()
    cases = {
        "more terms": ((*base.dist_coeffs, 0.01, 0.0, 0.0), "without skew; this camera has more"),
        "folding": ((-0.9, 0.0, 0.0, 0.0, 0.0), "folds back inside the frame"),
    }
    for name, (dist, message) in cases.items():
        camera = tmp_path / f"{name}.yaml"
        save_camera(CameraCalibration(base.image_size, base.camera_matrix, dist, None, name),
                    camera)
        out = tmp_path / "frame.png"
        assert lab_main(["render", "--game", "rinne", "--calibration", str(camera), "--out",
                     str(out)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
        assert not out.exists()
