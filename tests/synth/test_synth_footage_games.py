"""Footage of Zensū and Renaissance from their rules: the steady moments hold the rules'
positions, the hand's trips change the squares a ply changes, and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import pytest

from referee.errors import RenderError
from referee.rules.core import Match
from referee.rules.records import read_record, replay
from referee_lab.synth.footage import FootageOptions, render_footage
from referee_lab.synth.games import contents_from_position, game_spec
from referee_lab.synth.scene import RenderOptions
from referee_lab.synth.truth import Contents, FootageTruth
from tests import DATA

RECORDS = DATA / "records"
TINY = RenderOptions(width=160, height=120)
FAST = FootageOptions(fps=5)


def _excerpt(game: str, first: int, last: int) -> Match[Any, Any]:
    """Plies first..last-1 of the sample record, from the position before ply `first`."""
    full, _ = replay(read_record(RECORDS / f"{game}-sample.txt"))
    match: Match[Any, Any] = Match(full.game, full.positions[first])
    for move in full.moves[first:last]:
        match.push(move)
    return match


def _after_plies(truth: FootageTruth) -> list[Contents]:
    return [s.contents() for s in truth.steady if s.note == "start" or s.note.startswith("after")]


def _assert_positions(truth: FootageTruth, game: str, match: Match[Any, Any]) -> None:
    spec = game_spec(game)
    wanted = [contents_from_position(spec, p, "") for p in match.positions]
    assert _after_plies(truth) == wanted
    for steady in truth.steady:  # every frame of a steady moment shows its contents
        for i in (steady.start_frame, steady.end_frame):
            assert truth.frames[i].contents() == steady.contents()
            assert not truth.frames[i].hand


def _changed(a: Contents, b: Contents) -> set[str]:
    return {k for k in a if a[k] != b[k]}


def test_zensu_blocks_move_and_captured_blocks_leave(tmp_path: Path) -> None:
    match = _excerpt("zensu", 9, 11)  # 5. 2 f7 x f5, 6. 2 f1 - f3
    out = tmp_path / "z.mp4"
    truth = render_footage("zensu", out, 3, match=match, options=TINY, footage=FAST)
    _assert_positions(truth, "zensu", match)
    assert [p.text for p in truth.plies] == ["1. 2 f7 x f5", "1. 2 f1 - f3"]
    before, after, last = _after_plies(truth)
    assert (after["f5"].kind, after["f5"].owner, after["f5"].value) == ("zensu", 1, 2)
    assert after["f7"].kind == "empty"
    counts = [sum(c.is_piece for c in s.values()) for s in (before, after, last)]
    assert counts[0] - counts[1] >= 1 and counts[2] == counts[1]
    # During the first ply only the squares the rules change ever change.
    ply = truth.plies[0]
    touched = set().union(*(_changed(before, truth.frames[i].contents())
                            for i in range(ply.start_frame, ply.end_frame + 1)))
    assert touched == _changed(before, after)
    capture = cv2.VideoCapture(str(out))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == len(truth.frames)


def test_renaissance_a_tile_taken(tmp_path: Path) -> None:
    match = _excerpt("renaissance", 18, 19)  # a2: completes the domino a1-a2
    truth = render_footage("renaissance", tmp_path / "r.avi", 4, match=match, options=TINY,
                           footage=FAST)
    _assert_positions(truth, "renaissance", match)
    before, after = _after_plies(truth)
    ply = truth.plies[0]
    during = [truth.frames[i].contents() for i in range(ply.start_frame, ply.end_frame + 1)]
    # The marker goes down first: a moment with the tile still there and both its squares
    # marked; then the tile is lifted off (with its markers) and monominoes fill it.
    tile = {k for k, c in before.items() if c.kind == "tile" and after[k].kind == "monomino"}
    assert tile == {"a1", "a2"}
    assert any(all(d[k].kind == "tile" and d[k].marker for k in tile) for d in during)
    assert any(all(d[k].kind == "empty" for k in tile) for d in during)
    assert during[-1] == after


def test_renaissance_push_in_shifts_the_line(tmp_path: Path) -> None:
    match = _excerpt("renaissance", 22, 23)  # a3>: Silver pushes Gold's a3 marker to b3
    truth = render_footage("renaissance", tmp_path / "p.avi", 6, match=match, options=TINY,
                           footage=FAST)
    _assert_positions(truth, "renaissance", match)
    before, after = _after_plies(truth)
    assert (before["a3"].marker, before["b3"].marker) == ("gold", None)
    assert (after["a3"].marker, after["b3"].marker) == ("silver", "gold")
    # The new marker is set down beyond the rim and slid onto a3: the line's markers leave
    # their squares together and arrive on their new ones together.
    ply = truth.plies[0]
    states: list[Contents] = []
    for i in range(ply.start_frame, ply.end_frame + 1):
        if not states or truth.frames[i].contents() != states[-1]:
            states.append(truth.frames[i].contents())
    assert len(states) == 3 and (states[0], states[2]) == (before, after)
    assert (states[1]["a3"].marker, states[1]["b3"].marker) == (None, None)
    assert _changed(before, states[1]) == {"a3"} and _changed(states[1], after) == {"a3", "b3"}


def test_renaissance_tiles_markers_and_marker_moves(tmp_path: Path) -> None:
    match = _excerpt("renaissance", 78, 81)  # a marker (setup), I4 c7-f7, b4 - g5
    truth = render_footage("renaissance", tmp_path / "r.avi", 5, match=match, options=TINY,
                           footage=FAST)
    _assert_positions(truth, "renaissance", match)
    positions = _after_plies(truth)
    assert {positions[2][k].kind for k in ("c7", "d7", "e7", "f7")} == {"tile"}
    assert len({positions[2][k].value for k in ("c7", "d7", "e7", "f7")}) == 1
    assert positions[2]["b4"].marker and positions[3]["b4"].marker is None
    assert positions[3]["g5"].marker == positions[2]["b4"].marker
    hands = [truth.frames[i].hand for p in truth.plies
             for i in range(p.start_frame, p.end_frame + 1)]
    assert sum(hands) > len(hands) // 2


def test_renaissance_random_game_and_refused_faults(tmp_path: Path) -> None:
    truth = render_footage("renaissance", tmp_path / "g.avi", 1, options=TINY,
                           footage=FootageOptions(fps=6, plies=1, faults=("drop",)))
    assert [p.kind for p in truth.plies] == ["move"]
    assert sum(c.kind == "tile" for c in truth.steady[-1].contents().values()) >= 2
    with pytest.raises(RenderError, match="needs pieces that move"):
        render_footage("renaissance", tmp_path / "x.avi", 1, options=TINY,
                       footage=FootageOptions(faults=("takeback",)))
