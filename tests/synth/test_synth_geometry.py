"""The ground truth is exact: known 3D points, projected by the recorded camera, are where
the rendered image shows them."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee_lab.synth.camera import CameraSpec, distortion_maps, make_canvas, sample_camera
from referee_lab.synth.games import game_spec
from referee_lab.synth.placement import place_all
from referee_lab.synth.scene import FrameState, RenderOptions, Scene, tilt_of
from referee_lab.synth.truth import EMPTY, SquareContent

CLEAN = RenderOptions(width=480, height=360, effects=False, clutter=False, shadows=False,
                      distortion=1.5)


def test_lens_map_inverts_opencv_distortion() -> None:
    """Sampling the distortion map at cv2.projectPoints' (distorted) pixel lands on the ideal
    pinhole pixel of the same 3D point: the image and the truth agree on the lens."""
    rng = np.random.default_rng(1)
    extent = np.array([[0, 0, 0], [200, 0, 0], [200, 240, 0], [0, 240, 0]], dtype=np.float64)
    camera = sample_camera(rng, CameraSpec(640, 480, distortion=2.0), extent)
    canvas = make_canvas(camera)
    map_x, map_y = distortion_maps(camera, canvas.margin)
    points = np.column_stack([rng.uniform(-40, 240, 200), rng.uniform(-40, 280, 200),
                              rng.uniform(0, 40, 200)])
    distorted = camera.project(points)
    ideal, _ = canvas.project(points)
    inside = np.all((distorted > 1) & (distorted < [638, 478]), axis=1)
    assert inside.sum() > 100
    d = distorted[inside]
    x0, y0 = np.floor(d[:, 0]).astype(int), np.floor(d[:, 1]).astype(int)
    fx, fy = d[:, 0] - x0, d[:, 1] - y0

    def bilinear(m: np.ndarray) -> np.ndarray:  # exact, unlike remap's 1/32-pixel steps
        return ((1 - fx) * (1 - fy) * m[y0, x0] + fx * (1 - fy) * m[y0, x0 + 1]
                + (1 - fx) * fy * m[y0 + 1, x0] + fx * fy * m[y0 + 1, x0 + 1])

    error = np.hypot(bilinear(map_x) - ideal[inside, 0], bilinear(map_y) - ideal[inside, 1])
    assert float(error.max()) < 0.05


@pytest.mark.parametrize("seed", [3, 11])
def test_grid_intersections_are_where_the_image_shows_them(seed: int) -> None:
    """Paint a white dot at every grid intersection of the board's texture, render through
    the lens, find the dots in the frame: each sits on its recorded intersection."""
    scene = Scene(game_spec("rinne"), seed, CLEAN)
    layout = scene.layout
    h, w = scene.board_tex.shape[:2]
    m = layout.margin_mm
    sx, sy = w / (layout.width_mm + 2 * m), h / (layout.height_mm + 2 * m)
    dots = np.zeros_like(scene.board_tex)
    for x, y, _ in layout.grid_points():
        centre = (round((x + m) * sx * 16), round((layout.height_mm + m - y) * sy * 16))
        cv2.circle(dots, centre, round(1.2 * scene.board_ppm * 16), (255, 255, 255), -1,
                   cv2.LINE_AA, 4)
    scene.board_tex = dots
    contents = dict.fromkeys(layout.square_names(), EMPTY)
    frame, truth = scene.render(FrameState(contents, {}), np.random.default_rng(0))
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float64)
    errors = []
    for gx, gy in truth.grid:
        x0, y0 = round(gx) - 4, round(gy) - 4
        patch = gray[y0:y0 + 9, x0:x0 + 9]
        weight = np.clip(patch - 40, 0, None)
        assert weight.sum() > 0, "no dot near a recorded intersection"
        ys, xs = np.mgrid[0:9, 0:9]
        cx = x0 + float((weight * xs).sum() / weight.sum())
        cy = y0 + float((weight * ys).sum() / weight.sum())
        errors.append(np.hypot(cx - gx, cy - gy))
    assert max(errors) < 0.5, max(errors)
    # The recorded corners are the grid's outer intersections.
    f = layout.files
    assert truth.corners[0] == truth.grid[0]
    assert truth.corners[2] == truth.grid[(layout.ranks + 1) * (f + 1) - 1]


def test_recorded_corners_are_the_projection_of_the_board() -> None:
    scene = Scene(game_spec("tensei-5x5"), 5, CLEAN)
    contents = dict.fromkeys(scene.layout.square_names(), EMPTY)
    _, truth = scene.render(FrameState(contents, {}), np.random.default_rng(0))
    k = np.array(truth.camera.K)
    image, _ = cv2.projectPoints(scene.layout.corners().reshape(-1, 1, 3),
                                 np.array(truth.camera.rvec), np.array(truth.camera.tvec), k,
                                 np.array(truth.camera.dist))
    assert np.allclose(image.reshape(-1, 2), np.array(truth.corners), atol=1e-6)


def test_pieces_stand_where_the_truth_says() -> None:
    """Where the truth puts a piece's top, the frame differs from the same frame without
    pieces; at the centre of every empty square the two frames agree."""
    scene = Scene(game_spec("rinne"), 8, CLEAN)
    layout, rng = scene.layout, np.random.default_rng(2)
    contents = dict.fromkeys(layout.square_names(), EMPTY)
    for i, name in enumerate(("a1", "c3", "e6", "b5", "d2")):
        contents[name] = SquareContent("die", i % 2, (2, 4, 6, 6, 4)[i])
    poses = place_all(contents, rng, scene.style, layout)
    with_pieces, truth = scene.render(FrameState(contents, poses), rng)
    empty = dict.fromkeys(layout.square_names(), EMPTY)
    without, _ = scene.render(FrameState(empty, {}), rng)
    diff = np.abs(with_pieces.astype(int) - without.astype(int)).sum(axis=2)
    tops = dict(truth.tops)
    assert sorted(tops) == ["a1", "b5", "c3", "d2", "e6"]
    for x, y in tops.values():
        assert diff[round(y), round(x)] > 30
    centres = scene.camera.project(np.array([layout.centre(n) for n in layout.square_names()
                                             if contents[n] is EMPTY]))
    for x, y in centres:
        assert diff[round(y), round(x)] == 0


def test_camera_respects_tilt_and_size() -> None:
    for seed in range(6):
        options = RenderOptions(width=320, height=240, tilt=(30.0, 40.0), effects=False)
        scene = Scene(game_spec("zensu"), seed, options)
        assert 29.9 <= tilt_of(scene.camera) <= 40.1
        frame, truth = scene.render(FrameState(dict.fromkeys(scene.layout.square_names(), EMPTY),
                                               {}), np.random.default_rng(0))
        assert frame.shape == (240, 320, 3)
        corners = np.array(truth.edge)
        assert np.all((corners > 0) & (corners < [320, 240]))


def test_die_top_face_colour_is_at_its_recorded_top() -> None:
    """At the recorded top of each die the clean frame shows that die's body colour, lit as
    a face looking straight up is lit (faces 2, 4, 6 have no pip in the middle)."""
    from referee_lab.synth.mesh import shade
    from referee_lab.synth.pieces import die_mesh

    scene = Scene(game_spec("tensei"), 14, RenderOptions(width=640, height=480, effects=False,
                                                         clutter=False, shadows=False,
                                                         pieces="dice"))
    layout, rng = scene.layout, np.random.default_rng(4)
    contents = dict.fromkeys(layout.square_names(), EMPTY)
    for i, name in enumerate(("a1", "c2", "e4", "b6", "d5", "c4")):
        contents[name] = SquareContent("die", i % 2, (2, 4, 6)[i % 3])
    poses = place_all(contents, rng, scene.style, layout)
    frame, truth = scene.render(FrameState(contents, poses), rng)
    up = np.array([0.0, 0.0, 1.0])
    for name, (x, y) in truth.tops:
        look = scene.style.dice[contents[name].owner or 0]
        top = layout.centre(name) + np.array([*poses[name].offset, look.size])
        view = scene.camera.position - top
        gain, spec = shade(look.body, up, view / np.linalg.norm(view), scene.style.light,
                           die_mesh(look))
        expected = np.clip(np.array(look.body) * np.array(scene.style.light.colour) * gain
                           + spec, 0, 255)
        seen = frame[round(y) - 1:round(y) + 2, round(x) - 1:round(x) + 2].reshape(-1, 3)
        assert np.abs(seen.mean(axis=0) - expected).max() < 12, (name, seen.mean(0), expected)
