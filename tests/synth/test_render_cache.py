"""What footage keeps from frame to frame (`scene.Placements`, the kept camera rotation,
lens maps and lamp map, `mesh.face_shades`) changes no pixel: frames rendered one after
another through one scene equal the same frames rendered each through a fresh scene."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from referee_lab.synth.camera import Canvas, through_lens
from referee_lab.synth.director import Director
from referee_lab.synth.footage import plan_acts, random_match
from referee_lab.synth.games import contents_from_position, game_spec
from referee_lab.synth.mesh import face_shades, shade
from referee_lab.synth.scene import FrameState, RenderOptions, Scene

SMALL = RenderOptions(width=320, height=180)


def _states(game: str, seed: int, plies: int) -> tuple[Scene, list[FrameState]]:
    """A scene and every frame state of a short random game (the director's only)."""
    spec = game_spec(game)
    rng = np.random.default_rng([seed, 6])
    scene = Scene(spec, seed, SMALL)
    match = random_match(spec, rng, plies)
    contents = contents_from_position(spec, match.positions[0], scene.style.pieces)
    director = Director(scene, contents, rng, fps=10)
    for act in plan_acts(spec, match, scene.style.pieces, (), rng):
        director.act(act)
        director.pause(0.3, act.note)
    return scene, director.frames


def _render(scene: Scene, state: FrameState, index: int) -> tuple[Any, Any]:
    frame, truth = scene.render(state, np.random.default_rng([index, 9]), index)
    return frame, truth.to_json()


@pytest.mark.parametrize(("game", "plies"), [("renaissance", 3), ("zensu", 2)])
def test_a_warm_scene_renders_what_a_fresh_one_does(game: str, plies: int) -> None:
    scene, states = _states(game, 3, plies)
    picked = sorted({0, len(states) // 3, len(states) // 2, 2 * len(states) // 3,
                     len(states) - 1})
    warm = {i: _render(scene, state, i) for i, state in enumerate(states) if i in picked}
    for i in picked:
        fresh = _render(Scene(game_spec(game), 3, SMALL), states[i], i)
        assert np.array_equal(warm[i][0], fresh[0]), f"frame {i}"
        assert warm[i][1] == fresh[1]


def test_kept_placements_are_not_changed_by_their_users() -> None:
    scene, states = _states("renaissance", 3, 3)
    state = states[-1]
    tiles, markers = scene._kept.flat(state, scene.style, scene.layout, scene.seed)
    assert tiles, "the last position holds tiles"
    tiles.clear()
    again, markers_again = scene._kept.flat(state, scene.style, scene.layout, scene.seed)
    assert again and [id(m) for m in markers_again] == [id(m) for m in markers]


def test_face_shades_agree_with_shade() -> None:
    scene, states = _states("renaissance", 3, 3)
    tiles, markers = scene._kept.flat(states[-1], scene.style, scene.layout, scene.seed)
    light, eye = scene.style.light, scene.camera.position
    for placed in tiles + markers:
        mesh = placed.mesh
        _points, normals, centres, _starts = mesh.stacked
        world_n = normals @ placed.rotation.T
        views = eye - placed.world(centres)
        views = views / np.linalg.norm(views, axis=1)[:, None]
        gains, specs = face_shades(mesh, mesh.colours, world_n, views, light)
        for i, f in enumerate(mesh.faces):
            diffuse, spec = shade(f.colour, world_n[i], views[i], light, mesh)
            np.testing.assert_allclose(gains[i], np.array(light.colour) * diffuse, rtol=1e-12)
            np.testing.assert_allclose(specs[i], spec, rtol=1e-9, atol=1e-9)


def test_a_trembling_cameras_frame_is_the_steady_canvas_turned() -> None:
    """A shaken camera turns about its centre: its frame, the steady camera's canvas through
    the turn's homography and the lens at once, is the frame drawn from the shaken camera
    itself, but for resampling; the truth is the shaken camera's."""
    options = RenderOptions(width=320, height=180, effects=False)
    scene, states = _states("zensu", 4, 1)
    shaken = [s for s in states if s.camera is not None and s.hand is not None][-1]
    camera = shaken.camera
    assert camera is not None and camera != scene.camera
    scene = Scene(game_spec("zensu"), 4, options)
    frame, truth = scene.render(shaken, np.random.default_rng(1))
    drawn, _hand = Scene(game_spec("zensu"), 4, options)._drawn(shaken, camera)
    direct = through_lens(drawn, Canvas(camera, scene.canvas.margin), None)
    difference = np.abs(frame.astype(np.int16) - direct.astype(np.int16))
    assert float(difference.mean()) < 1.0 and np.percentile(difference, 99) < 16
    assert truth.camera == scene.truth(0, camera, shaken, ()).camera
    still = [s for s in states if s.hand is None and s.carried is None][-2:]
    first, again = (scene._drawn(s, scene.camera)[0] for s in still)
    assert again is first, "a still frame is the last still frame's canvas again"
    assert scene._drawn(shaken, scene.camera)[0] is not first
