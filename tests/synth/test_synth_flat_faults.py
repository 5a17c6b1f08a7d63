"""Renaissance's faults, staged with tiles and markers: each one's trips show what the player
got wrong, leave it still a while, put it right, and the truth still ends on the rules'
positions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from referee.errors import RenderError
from referee.rules.core import Match
from referee.rules.polyomino import placements
from referee.rules.records import read_record, replay
from referee_lab.footage_check import Expected
from referee_lab.synth.footage import FootageOptions, render_footage
from referee_lab.synth.games import contents_from_position, game_spec, square_names
from referee_lab.synth.scene import RenderOptions
from referee_lab.synth.truth import Contents, FootageTruth, PlyTruth
from tests import DATA

TINY = RenderOptions(width=160, height=120)
FPS = 5
NAMES = square_names(7, 7)
SPEC = game_spec("renaissance")


def _excerpt(first: int, last: int) -> Match[Any, Any]:
    """Plies first..last-1 of the sample record, from the position before ply `first`."""
    full, _ = replay(read_record(DATA / "records" / "renaissance-sample.txt"))
    match: Match[Any, Any] = Match(full.game, full.positions[first])
    for move in full.moves[first:last]:
        match.push(move)
    return match


def _render(tmp_path: Path, match: Match[Any, Any], faults: tuple[str, ...],
            seed: int = 4) -> FootageTruth:
    return render_footage("renaissance", tmp_path / "f.avi", seed, match=match, options=TINY,
                          footage=FootageOptions(fps=FPS, faults=faults))


def _steady(truth: FootageTruth, note: str) -> Contents:
    return next(s.contents() for s in truth.steady if s.note == note)


def _seconds(truth: FootageTruth, note: str) -> float:
    steady = next(s for s in truth.steady if s.note == note)
    return (steady.end_frame - steady.start_frame + 1) / FPS


def _changed(a: Contents, b: Contents) -> set[str]:
    return {k for k in a if a[k] != b[k]}


def _touched(truth: FootageTruth, ply: PlyTruth, before: Contents) -> set[str]:
    """The squares that change at some frame of `ply`'s trip."""
    return set().union(*(_changed(before, truth.frames[i].contents())
                         for i in range(ply.start_frame, ply.end_frame + 1)))


def _assert_ends_right(truth: FootageTruth, match: Match[Any, Any]) -> None:
    """Every ply's steady moment after it holds the rules' position, every steady frame its
    contents with no hand, and the accepted plies are the match's."""
    wanted = [contents_from_position(SPEC, p, "") for p in match.positions]
    for i, contents in enumerate(wanted[1:], 1):
        assert _steady(truth, f"after ply {i}") == contents
    assert truth.steady[0].contents() == wanted[0] and truth.steady[-1].contents() == wanted[-1]
    for steady in truth.steady:
        for i in (steady.start_frame, steady.end_frame):
            assert truth.frames[i].contents() == steady.contents()
            assert not truth.frames[i].hand
    texts = [f"{i // 2 + 1}. {match.game.move_text(p, m)}"
             for i, (p, m) in enumerate(zip(match.positions, match.moves, strict=False))]
    assert [p.text for p in truth.plies if p.kind == "move"] == texts


def _squares(contents: Contents) -> tuple[int, ...]:
    return tuple(sorted(NAMES.index(k) for k in contents))


def test_an_illegal_tile_is_laid_left_and_lifted_off(tmp_path: Path) -> None:
    match = _excerpt(2, 4)  # the preparation: I2 e4 f4, I4 a3 b3 c3 d3 (L4 is placed)
    truth = _render(tmp_path, match, ("illegal",))
    _assert_ends_right(truth, match)
    kinds = [p.kind for p in truth.plies]
    at = kinds.index("illegal")
    assert kinds[at:at + 3] == ["illegal", "takeback", "move"]
    ply = truth.plies[at].index
    before = contents_from_position(SPEC, match.positions[ply], "")
    shown = _steady(truth, "illegal ply on the board")
    laid = {k: shown[k] for k in _changed(before, shown)}
    assert {c.kind for c in laid.values()} == {"tile"} and len({c.value for c in laid.values()}) == 1
    assert all(before[k].kind == "empty" for k in laid)
    # The rules refuse it: no tile left to place has that shape there.
    position = match.positions[ply]
    game: Any = match.game
    assert not any(_squares(laid) == m.squares for m in game.legal_moves(position))
    assert _seconds(truth, "illegal ply on the board") >= 1.5
    assert _steady(truth, f"before ply {ply + 1}") == before
    assert _touched(truth, truth.plies[at + 1], shown) == set(laid)


def test_an_illegal_marker_in_phase_1(tmp_path: Path) -> None:
    match = _excerpt(14, 16)  # g1, c4
    truth = _render(tmp_path, match, ("illegal",))
    _assert_ends_right(truth, match)
    at = [p.kind for p in truth.plies].index("illegal")
    ply = truth.plies[at].index
    position = match.positions[ply]
    before = contents_from_position(SPEC, position, "")
    shown = _steady(truth, "illegal ply on the board")
    (square,) = _changed(before, shown)
    assert shown[square].marker == ("gold", "silver")[int(position.turn)]
    assert (shown[square].kind, shown[square].value) == (before[square].kind,
                                                         before[square].value)
    game: Any = match.game
    assert NAMES.index(square) not in {m.square for m in game.legal_moves(position)}
    assert _steady(truth, f"before ply {ply + 1}") == before


def test_a_tile_laid_a_square_off_is_slid_into_place(tmp_path: Path) -> None:
    match = _excerpt(2, 4)
    truth = _render(tmp_path, match, ("shifted",))
    _assert_ends_right(truth, match)
    kinds = [p.kind for p in truth.plies]
    at = kinds.index("shifted")
    assert kinds[at + 1] == "move"
    ply = truth.plies[at].index
    position, move = match.positions[ply], match.moves[ply]
    before = contents_from_position(SPEC, position, "")
    shown = _steady(truth, "tile laid a square off")
    off = _squares({k: shown[k] for k in _changed(before, shown)})
    # the same tile, one square over, where the rules allow it too
    game: Any = match.game
    assert off != move.squares and off in placements(7, position.inventory[move.tile])
    steps = {b - a for a, b in zip(move.squares, off, strict=True)}
    assert len(steps) == 1 and steps <= {1, -1, 7, -7}
    assert game.is_legal(position, type(move)(move.tile, off))
    assert {shown[NAMES[sq]].value for sq in off} == {move.tile + 1}
    assert _seconds(truth, "tile laid a square off") >= 1.5
    # the slide moves the tile whole: only its old and new squares change meanwhile
    after = contents_from_position(SPEC, match.positions[ply + 1], "")
    slide = truth.plies[at + 1]
    assert _touched(truth, slide, shown) == {NAMES[sq] for sq in (*off, *move.squares)}
    assert truth.frames[slide.end_frame].contents() == after


def test_the_referee_is_expected_to_record_the_true_plies_only(tmp_path: Path) -> None:
    match = _excerpt(2, 4)
    render_footage("renaissance", tmp_path / "s.avi", 4, match=match, options=TINY,
                   footage=FootageOptions(fps=FPS, faults=("shifted", "illegal", "linger")))
    expected = Expected.from_sidecar(tmp_path / "s.json")
    assert expected.plies == ("1. I2 e4 f4", "1. I4 a3 b3 c3 d3")


def test_a_marker_knocked_aside_and_put_back(tmp_path: Path) -> None:
    match = _excerpt(15, 17)  # 8. c4, 9. g5
    truth = _render(tmp_path, match, ("knocked",))
    _assert_ends_right(truth, match)
    kinds = [p.kind for p in truth.plies]
    at = kinds.index("knock")
    assert kinds[at - 1:at + 2] == ["move", "knock", "right"]
    ply = truth.plies[at].index
    after = contents_from_position(SPEC, match.positions[ply + 1], "")
    note = next(s.note for s in truth.steady if "knocked to" in s.note)
    a, b = note.split()[2], note.split()[5]
    knocked = _steady(truth, note)
    assert _changed(after, knocked) == {a, b}
    assert after[a].marker and after[b].marker is None
    assert knocked[b].marker == after[a].marker and knocked[a].marker is None
    assert abs(NAMES.index(a) - NAMES.index(b)) in (1, 7)
    assert _seconds(truth, note) >= 1.5


def test_a_hand_lingers_over_the_board(tmp_path: Path) -> None:
    match = _excerpt(2, 3)
    truth = _render(tmp_path, match, ("linger",))
    _assert_ends_right(truth, match)
    assert [p.kind for p in truth.plies] == ["linger", "move"]
    linger = truth.plies[0]
    assert (linger.end_frame - linger.start_frame) / FPS > 5.5
    assert all(truth.frames[i].hand for i in range(linger.start_frame + FPS,
                                                   linger.end_frame - FPS))
    assert _steady(truth, "before ply 1") == truth.steady[0].contents()


def test_a_wrong_polyomino_lifted_and_put_back_before_the_acquisition(tmp_path: Path) -> None:
    match = _excerpt(18, 19)  # 10. a2 takes the domino a1-a2
    truth = _render(tmp_path, match, ("wrongtaken",))
    _assert_ends_right(truth, match)
    assert [p.kind for p in truth.plies] == ["move", "wrongtaken", "putback", "take"]
    position = match.positions[0]
    before = contents_from_position(SPEC, position, "")
    under_way = _steady(truth, "ply 1 under way")
    assert _changed(before, under_way) == {"a2"}  # the marker down, nothing taken yet
    lifted = _steady(truth, "wrong polyomino lifted")
    gone = _changed(under_way, lifted)
    assert {lifted[k].kind for k in gone} == {"empty"}
    tiles = {under_way[k].value for k in gone}
    assert len(tiles) == 1 and all(under_way[k].kind == "tile" for k in gone)
    game: Any = match.game
    taken = {t for t, _holder in game.acquisitions(position, match.moves[0])}
    assert tiles.isdisjoint({t + 1 for t in taken})
    assert any(under_way[k].marker for k in gone)  # lifted with its marker
    near = {NAMES[sq + d] for t in taken for sq in position.tile_squares(t)
            for d in (1, -1, 7, -7) if 0 <= sq + d < 49}
    assert gone & near
    assert _seconds(truth, "wrong polyomino lifted") >= 1.5
    notes = [s.note for s in truth.steady]
    assert notes == ["start", "ply 1 under way", "wrong polyomino lifted", "ply 1 under way",
                     "after ply 1"]
    assert truth.steady[3].contents() == under_way


def test_renaissance_refuses_the_faults_of_moving_pieces(tmp_path: Path) -> None:
    for fault in ("takeback", "forgotten"):
        with pytest.raises(RenderError, match="needs pieces that move"):
            _render(tmp_path, _excerpt(2, 3), (fault,))
    with pytest.raises(RenderError, match="needs Renaissance's tiles"):
        render_footage("rinne", tmp_path / "x.avi", 1, options=TINY,
                       footage=FootageOptions(fps=FPS, plies=1, faults=("shifted",)))


def test_a_fault_no_ply_allows_is_left_out(tmp_path: Path) -> None:
    match = _excerpt(2, 3)  # a tile: nothing to take, no marker to knock
    truth = _render(tmp_path, match, ("wrongtaken", "knocked"))
    assert [p.kind for p in truth.plies] == ["move"]
    _assert_ends_right(truth, match)
