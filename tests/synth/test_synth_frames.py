"""Single frames: determinism, variety, every game, and the truth's JSON round trip."""

from __future__ import annotations

import json

import numpy as np
import pytest

from referee.errors import RenderError
from referee.rules import find_game
from referee_lab.synth import RenderOptions, render_frame
from referee_lab.synth.games import game_spec, known_games, renaissance_position
from referee_lab.synth.scene import Scene
from referee_lab.synth.style import colour_distance, legible, lightness, sample_style
from referee_lab.synth.truth import FrameTruth, SquareContent

SMALL = RenderOptions(width=320, height=240)


def test_same_seed_gives_identical_bytes() -> None:
    a, ta = render_frame("tensei", seed=42, options=SMALL)
    b, tb = render_frame("tensei", seed=42, options=SMALL)
    assert a.tobytes() == b.tobytes()
    assert ta == tb


def test_different_seeds_give_different_styles() -> None:
    styles = [Scene(game_spec("rinne"), seed, SMALL).style for seed in range(12)]
    assert len({s.board.material for s in styles}) >= 3
    assert len({s.table for s in styles}) >= 3
    assert len({s.pieces for s in styles}) == 2
    assert len({(s.dice[0].body, s.dice[1].body) for s in styles}) == 12
    frames = [render_frame("rinne", seed=seed, options=SMALL)[0] for seed in (1, 2)]
    assert np.abs(frames[0].astype(int) - frames[1].astype(int)).mean() > 10


def test_die_colours_of_a_game_differ_clearly() -> None:
    for seed in range(20):
        dice = Scene(game_spec("rinne"), seed, SMALL).style.dice
        assert colour_distance(dice[0].body, dice[1].body) > 80


@pytest.mark.parametrize("game", known_games())
def test_every_game_renders_its_start(game: str) -> None:
    frame, truth = render_frame(game, seed=7, options=SMALL)
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
    spec = game_spec(game)
    assert len(truth.squares) == spec.files * spec.ranks
    assert len(truth.grid) == (spec.files + 1) * (spec.ranks + 1)
    kinds = {c.kind for _, c in truth.squares}
    if spec.family == "rinne":
        start = find_game(game).start()
        pieces = sum(1 for sq in range(spec.files * spec.ranks) if start.piece_at(sq))
        assert sum(1 for _, c in truth.squares if c.kind in ("die", "penta")) == pieces
    elif spec.family == "zensu":
        assert kinds == {"zensu", "empty"}
    else:
        assert truth.contents()["d4"].kind == "blocked"


def test_given_contents_are_shown_and_recorded() -> None:
    contents = {"a1": SquareContent("die", 0, 6), "e6": SquareContent("penta", 1, 5)}
    _, truth = render_frame("tensei", seed=1, options=SMALL, contents=contents)
    recorded = truth.contents()
    assert recorded["a1"] == contents["a1"] and recorded["e6"] == contents["e6"]
    assert recorded["c3"].kind == "empty"
    assert {name for name, _ in truth.tops} == {"a1", "e6"}


def test_bad_contents_and_options_are_refused() -> None:
    with pytest.raises(RenderError, match="not on the 5x6 board"):
        render_frame("rinne", seed=1, options=SMALL, contents={"f9": SquareContent("die", 0, 1)})
    with pytest.raises(RenderError, match="unknown square content"):
        SquareContent("pawn")
    with pytest.raises(RenderError, match="unknown style"):
        render_frame("rinne", seed=1, options=RenderOptions(style="glass"))
    with pytest.raises(RenderError, match="unknown game"):
        render_frame("chess", seed=1)
    with pytest.raises(RenderError, match="tilt"):
        render_frame("rinne", seed=1, options=RenderOptions(tilt=(0, 80)))


def test_renaissance_positions_hold_the_thirteen_polyominoes() -> None:
    spec = game_spec("renaissance")
    contents = renaissance_position(spec, np.random.default_rng(3))
    tiles = [c.value for c in contents.values() if c.kind == "tile"]
    assert len(set(tiles)) == 13 and len(tiles) == 40
    assert sum(1 for c in contents.values() if c.kind == "monomino") == 8


def test_truth_round_trips_through_json() -> None:
    _, truth = render_frame("renaissance", seed=4, options=SMALL)
    again = FrameTruth.from_json(json.loads(json.dumps(truth.to_json())))
    assert again.squares == truth.squares and again.camera == truth.camera
    assert np.allclose(again.grid, truth.grid, atol=1e-3)


def test_pips_stand_out_from_their_die() -> None:
    # Every pip stands out by lightness from the die's body and from a marbled die's swirls.
    # Before the floor, 300 styles held gold pips on orange dice (9 apart) and pale swirls on
    # orange, green and teal dice under white pips (1-3 apart).
    looks = [d for seed in range(300) for d in
             sample_style(np.random.default_rng(seed), square_mm=30.0, pieces="dice").dice]
    for d in looks:
        surfaces = [d.body] + ([d.marble] if d.marble is not None else [])
        assert legible(d.pips, surfaces) and legible(d.one_pip, surfaces), d
    gold = (40, 170, 210)
    assert sum(d.pips == gold for d in looks) >= 20
    marbled = [d for d in looks if d.marble is not None]
    # Swirls still come in both tones: lighter than a dark body, darker than a light one,
    # and darker than an orange, green or teal body whose pale swirls would hide its pips.
    assert any(lightness(d.marble) > lightness(d.body) for d in marbled if d.marble)
    assert any(lightness(d.marble) < lightness(d.body) and lightness(d.body) < 70
               for d in marbled if d.marble)
