"""Footage: a video OpenCV reads back, frame for frame with its sidecar, whose steady
moments hold the positions of the game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.errors import OutputError, RenderError
from referee.rules import find_game
from referee.rules.records import parse_record, replay
from referee_lab.synth.footage import FootageOptions, render_footage
from referee_lab.synth.games import contents_from_position, game_spec
from referee_lab.synth.scene import RenderOptions
from referee_lab.synth.truth import FootageTruth

TINY = RenderOptions(width=192, height=144)
FAST = FootageOptions(fps=8, plies=2)


def _frames(path: Path) -> int:
    capture = cv2.VideoCapture(str(path))
    assert capture.isOpened()
    count = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        assert frame.shape == (144, 192, 3)
        count += 1
    return count


def _record(text: str) -> Any:
    match, _ = replay(parse_record(text))
    return match


@pytest.mark.parametrize("suffix", [".mp4", ".avi"])
def test_footage_reads_back_with_its_sidecar(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"game{suffix}"
    truth = render_footage("rinne", out, 5, options=TINY, footage=FAST)
    assert _frames(out) == len(truth.frames)
    loaded = FootageTruth.load(out.with_suffix(".json"))
    assert len(loaded.frames) == len(truth.frames) and loaded.plies == truth.plies
    assert [f.index for f in loaded.frames] == list(range(len(truth.frames)))
    # Plies follow each other, inside the footage; hands are in view during them only.
    last = -1
    for ply in truth.plies:
        assert last < ply.start_frame <= ply.end_frame < len(truth.frames)
        last = ply.end_frame
    steady_frames = {i for s in truth.steady for i in range(s.start_frame, s.end_frame + 1)}
    assert all(not truth.frames[i].hand for i in steady_frames)
    assert any(f.hand and f.occluded for f in truth.frames)


def test_steady_moments_hold_the_games_positions(tmp_path: Path) -> None:
    match = _record("Game: Tensei\n\n1. King e2 - e3 = Rook\n1. King e5 - d5 = Queen\n")
    truth = render_footage("tensei", tmp_path / "t.mp4", 2, match=match,
                           options=RenderOptions(width=192, height=144, pieces="dice"),
                           footage=FAST)
    spec = game_spec("tensei")
    wanted = [contents_from_position(spec, p, "dice") for p in match.positions]
    notes = [s.note for s in truth.steady]
    assert notes == ["start", "roll pending", "after ply 1", "roll pending", "after ply 2"]
    assert truth.steady[0].contents() == wanted[0]
    assert truth.steady[2].contents() == wanted[1]
    assert truth.steady[4].contents() == wanted[2]
    pending = truth.steady[1].contents()["e3"]
    assert (pending.kind, pending.value) == ("die", 6)
    for steady in truth.steady:
        for i in range(steady.start_frame, steady.end_frame + 1):
            assert truth.frames[i].contents() == steady.contents()


def test_faults_are_recorded(tmp_path: Path) -> None:
    match = _record("Game: Rinne\n\n1. King e2 - e3 = Knight\n1. King e5 - d5 = Knight\n")
    faults = ("drop", "bump", "light", "illegal", "forgotten")
    out = tmp_path / "f.avi"
    truth = render_footage("rinne", out, 9, match=match, options=TINY,
                           footage=FootageOptions(fps=8, faults=faults))
    assert _frames(out) == len(truth.frames)
    kinds = [p.kind for p in truth.plies]
    assert "illegal" in kinds and "takeback" in kinds
    assert "forgotten" in kinds and "promotion" in kinds
    assert truth.faults["dropped_source_frames"]
    first, last = truth.faults["bump"]["frames"]
    before, after = truth.frames[first - 1], truth.frames[last + 1]
    moved = np.abs(np.array(before.corners) - np.array(after.corners)).max()
    assert moved > 1.0
    assert 0 < truth.faults["light"]["frame"] < len(truth.frames)


def test_hand_knock_and_take_back_faults_are_played(tmp_path: Path) -> None:
    match = _record("Game: Rinne\n\n1. King e2 - e3 = Knight\n1. King e5 - d5 = Knight\n")
    out = tmp_path / "k.avi"
    truth = render_footage("rinne", out, 9, match=match,
                           options=RenderOptions(width=192, height=144, pieces="dice"),
                           footage=FootageOptions(fps=8, faults=("linger", "knocked",
                                                                 "takeback")))
    kinds = [p.kind for p in truth.plies]
    assert {"linger", "knock", "right", "trial", "takeback"} <= set(kinds)
    assert kinds.count("move") == 2
    linger = next(p for p in truth.plies if p.kind == "linger")
    assert (linger.end_frame - linger.start_frame) / 8 > 5.5  # seconds over the board
    assert all(truth.frames[i].hand for i in range(linger.start_frame + 8, linger.end_frame - 8))
    # The trial move is accepted on the board, then taken back: the steady moment after
    # the take-back shows the position before it again.
    trial = kinds.index("trial")
    notes = [s.note for s in truth.steady]
    shown = {s.note: s.contents() for s in truth.steady}
    assert notes.index(f"trial ply {truth.plies[trial].index + 1}") < len(notes)
    ply = truth.plies[trial].index
    before = "start" if ply == 0 else f"after ply {ply}"
    assert shown[f"before ply {ply + 1}"] == shown[before]
    knocked = next(s for s in truth.steady if "knocked over" in s.note)
    square = knocked.note.split()[2]
    upright = shown[f"after ply {truth.plies[kinds.index('knock')].index + 1}"][square]
    fallen = knocked.contents()[square]
    assert (fallen.kind, fallen.owner) == ("die", upright.owner)
    assert fallen.value not in (upright.value, 7 - upright.value)  # rolled onto a side


def test_faults_need_the_pieces_they_act_on(tmp_path: Path) -> None:
    with pytest.raises(RenderError, match="'knocked' needs dice"):
        render_footage("rinne", tmp_path / "x.avi", 1,
                       options=RenderOptions(width=192, height=144, pieces="penta"),
                       footage=FootageOptions(fps=8, plies=2, faults=("knocked",)))
    with pytest.raises(RenderError, match="'takeback' needs a game without dice rolls"):
        render_footage("tensei", tmp_path / "x.avi", 1, options=TINY,
                       footage=FootageOptions(fps=8, plies=2, faults=("takeback",)))
    with pytest.raises(RenderError, match="needs pieces that move"):
        render_footage("renaissance", tmp_path / "x.avi", 1, options=TINY,
                       footage=FootageOptions(fps=8, plies=2, faults=("forgotten",)))


def test_footage_of_the_same_seed_is_identical(tmp_path: Path) -> None:
    a = render_footage("flipflop-3x3", tmp_path / "a.avi", 3, options=TINY,
                       footage=FootageOptions(fps=6, plies=1))
    b = render_footage("flipflop-3x3", tmp_path / "b.avi", 3, options=TINY,
                       footage=FootageOptions(fps=6, plies=1))
    assert a == b
    assert (tmp_path / "a.avi").read_bytes() == (tmp_path / "b.avi").read_bytes()


def test_footage_refuses_bad_requests(tmp_path: Path) -> None:
    with pytest.raises(RenderError, match=r"\.mp4 or \.avi"):
        render_footage("rinne", tmp_path / "x.mkv", 1, options=TINY, footage=FAST)
    with pytest.raises(OutputError, match="folder does not exist"):
        render_footage("rinne", tmp_path / "no" / "x.mp4", 1, options=TINY, footage=FAST)
    with pytest.raises(RenderError, match="unknown fault"):
        render_footage("rinne", tmp_path / "x.mp4", 1, options=TINY,
                       footage=FootageOptions(faults=("earthquake",)))


def test_penta_pieces_turn_to_their_new_state(tmp_path: Path) -> None:
    match = _record("Game: Rinne\n\n1. King e2 - e3 = Knight\n")
    truth = render_footage("rinne", tmp_path / "p.avi", 4, match=match,
                           options=RenderOptions(width=192, height=144, pieces="penta"),
                           footage=FAST)
    final = truth.steady[-1].contents()["e3"]
    assert (final.kind, final.owner, final.value) == ("penta", 0, 2)
    assert truth.steady[-1].contents()["e2"].kind == "empty"
    assert "e3" in dict(truth.frames[truth.steady[-1].start_frame].tops)


def test_setup_sets_out_every_piece(tmp_path: Path) -> None:
    truth = render_footage("flipflop-3x3", tmp_path / "s.avi", 6, options=TINY,
                           footage=FootageOptions(fps=6, plies=0, setup=True))
    assert truth.steady[0].note == "empty board"
    assert all(c.kind == "empty" for c in truth.steady[0].contents().values())
    setups = [p for p in truth.plies if p.kind == "setup"]
    assert len(setups) == 6
    start = next(s for s in truth.steady if s.note == "start").contents()
    pieces = "dice" if any(c.kind == "die" for c in start.values()) else "penta"
    assert start == contents_from_position(game_spec("flipflop-3x3"),
                                           find_game("flipflop-3x3").start(), pieces)


def test_a_capture_takes_the_piece_off_the_board(tmp_path: Path) -> None:
    match = _record("Game: FlipFlop\nVariant: 3x3\n\n1. Rook b1 x b3 = Bishop\n")
    truth = render_footage("flipflop-3x3", tmp_path / "c.avi", 8, match=match, options=TINY,
                           footage=FootageOptions(fps=6))
    before, after = truth.steady[0].contents(), truth.steady[-1].contents()
    assert (after["b3"].owner, after["b3"].value) == (0, 3)  # White's Bishop now
    assert after["b1"].kind == "empty"
    pieces = [sum(c.is_piece for c in s.values()) for s in (before, after)]
    assert pieces == [6, 5]


def test_zensu_captures_half_removed_and_pieces_knocked_aside(tmp_path: Path) -> None:
    match = _record("Game: Zensū\n\n1. 1 d2 - d3\n1. 2 e9 - e7\n2. 1 e2 - e3\n2. 2 e7 - e5\n"
                    "3. 1 e3 - e4\n3. 2 e5 x e3\n")
    truth = render_footage("zensu", tmp_path / "z.avi", 3, match=match, options=TINY,
                           footage=FootageOptions(fps=6, faults=("halftaken", "knocked")))
    kinds = [p.kind for p in truth.plies]
    assert kinds.count("move") == 6 and {"capture", "knock", "right"} <= set(kinds)
    shown = {s.note: s.contents() for s in truth.steady}
    # The capture of e4 (passed over) made with e4 left standing, then taken off.
    half = shown["capture half removed: e4 standing"]
    assert (half["e3"].owner, half["e4"].owner) == (1, 0)
    assert shown["after ply 6"]["e4"].kind == "empty"
    # A piece of the player who just moved knocked onto an empty neighbour, then put back.
    note = next(s.note for s in truth.steady if "knocked onto" in s.note)
    a, b = note.split()[2], note.split()[-1]
    knocked = shown[note]
    ply = truth.plies[kinds.index("knock")].index
    before = shown[f"after ply {ply + 1}"]
    assert knocked[a].kind == "empty" and knocked[b] == before[a]
    assert before[b].kind == "empty" and before[a].owner == ply % 2
