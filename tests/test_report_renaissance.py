"""The HTML report draws Renaissance boards: each tile one outlined polyomino with its shape
code written once, monominoes, the blocked centre, gold and silver marker discs, the last
move's squares shaded; the phase and scores under each diagram, the final score on top."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

from referee.app.diagrams import MARKER_FILLS, board_svg, renaissance_svg
from referee.app.record import Recorder
from referee.rules import Match
from referee.rules.records import read_record
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import (
    MONOMINO,
    MoveMarker,
    Phase,
    PlaceMarker,
    PlaceTile,
    Position,
)
from tests import DATA

GAME = RenaissanceRules()
GEOMETRY = GAME.geometry
CELL = 36
L4_SQUARES = ("b6", "c6", "d6", "d7")


def square(name: str) -> int:
    return GEOMETRY.parse_square(name)


def centre_of(name: str) -> tuple[float, float]:
    sq = square(name)
    return (GEOMETRY.file_of(sq) * CELL + CELL / 2,
            (GEOMETRY.ranks - 1 - GEOMETRY.rank_of(sq)) * CELL + CELL / 2)


def with_l4(markers: dict[str, int] | None = None) -> tuple[Position, int]:
    """The start with the first L4 tile on b6 c6 d6 d7, a monomino on g1, and `markers`."""
    start = GAME.start()
    tile = start.inventory.index("L4")
    cover = list(start.cover)
    for name in L4_SQUARES:
        cover[square(name)] = tile
    cover[square("g1")] = MONOMINO
    marks = list(start.markers)
    for name, value in (markers or {}).items():
        marks[square(name)] = value
    return replace(start, phase=Phase.PHASE1, cover=tuple(cover), markers=tuple(marks)), tile


def edges(svg: str) -> list[tuple[float, float, float, float]]:
    """The tile outlines' segments, each with its ends in order."""
    found = re.findall(r'<line class="tile-edge" x1="([\d.]+)" y1="([\d.]+)" '
                       r'x2="([\d.]+)" y2="([\d.]+)"', svg)
    return [tuple(sorted([(float(a), float(b)), (float(c), float(d))])) for a, b, c, d in found]


def boundary(names: tuple[str, ...]) -> set[tuple[tuple[float, float], tuple[float, float]]]:
    """The sides of these squares that only one of them has: the polyomino's outer edges."""
    sides: Counter[tuple[tuple[float, float], tuple[float, float]]] = Counter()
    for name in names:
        cx, cy = centre_of(name)
        x, y, h = cx - CELL / 2, cy - CELL / 2, CELL
        corners = [(x, y), (x + h, y), (x + h, y + h), (x, y + h)]
        for i in range(4):
            sides[tuple(sorted([corners[i], corners[(i + 1) % 4]]))] += 1
    return {side for side, n in sides.items() if n == 1}


def discs(svg: str, name: str) -> list[tuple[float, float, str]]:
    return [(float(x), float(y), fill) for x, y, fill in re.findall(
        rf'<circle class="marker {name}" cx="([\d.]+)" cy="([\d.]+)" r="[\d.]+" fill="(#\w+)"',
        svg)]


def test_a_tile_is_one_outlined_polyomino_with_its_shape_code_once() -> None:
    position, _ = with_l4()
    svg = renaissance_svg(GAME, position)
    assert re.findall(r'class="tile-label"[^>]*>([^<]*)</text>', svg) == ["L4"]
    outline = edges(svg)
    assert len(outline) == 10 == len(set(outline))  # an L tetromino's perimeter, in sides
    assert set(outline) == boundary(L4_SQUARES)  # none between its own squares
    # Its four squares in one fill, with no grid line between them.
    fills = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="36" height="36" fill="(#\w+)" '
                       r'stroke="none"/>', svg)
    assert len(fills) == 4 and len(set(fills)) == 1


def test_the_label_avoids_a_marker_and_is_still_written_once_under_markers() -> None:
    position, _ = with_l4({"c6": 1})
    svg = renaissance_svg(GAME, position)
    label = re.search(r'class="tile-label" x="([\d.]+)" y="([\d.]+)"', svg)
    assert label is not None and float(label[1]) != centre_of("c6")[0]
    covered, _ = with_l4({name: 2 for name in L4_SQUARES})
    assert renaissance_svg(GAME, covered).count('class="tile-label"') == 1


def test_markers_are_gold_and_silver_discs_and_the_centre_is_blocked() -> None:
    position, _ = with_l4({"b6": 1, "a1": 2, "g1": 2})
    svg = renaissance_svg(GAME, position)
    assert discs(svg, "gold") == [(*centre_of("b6"), MARKER_FILLS[0])]
    assert sorted(discs(svg, "silver")) == sorted(
        [(*centre_of("a1"), MARKER_FILLS[1]), (*centre_of("g1"), MARKER_FILLS[1])])
    assert MARKER_FILLS == ("#d4a017", "#c0c0c0")
    blocked = re.findall(r'<rect class="blocked" x="([\d.]+)" y="([\d.]+)"[^>]*fill="(#\w+)"',
                         svg)
    d4 = centre_of("d4")
    assert blocked == [(f"{d4[0] - CELL / 2:g}", f"{d4[1] - CELL / 2:g}", "#2b2b2b")]
    monomino = re.findall(r'<rect class="monomino" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"',
                          svg)
    g1 = centre_of("g1")
    assert len(monomino) == 1 and float(monomino[0][2]) < CELL  # inset in its square
    assert g1[0] - CELL / 2 < float(monomino[0][0]) < g1[0]


def test_the_last_move_is_shaded_and_board_svg_dispatches_to_it() -> None:
    position, tile = with_l4({"a1": 1})
    placed = renaissance_svg(GAME, position, PlaceTile(tile, tuple(sorted(
        square(n) for n in L4_SQUARES))))
    assert placed.count('class="last"') == 3 * 4  # stripes across each of its squares
    assert "#f3d28b" not in renaissance_svg(GAME, position)
    moved = renaissance_svg(GAME, position, MoveMarker(square("e1"), square("a1")))
    assert moved.count('fill="#f3d28b"') == 2  # the empty from- and to-squares
    marker = board_svg(GAME, position, PlaceMarker(square("a1")))
    assert marker == renaissance_svg(GAME, position, PlaceMarker(square("a1")))
    assert marker.count('fill="#f3d28b"') == 1
    assert re.search(r'<text x="[\d.]+" y="[\d.]+" text-anchor="middle" font-family='
                     r'"sans-serif" font-size="11">g</text>', marker)  # the files' letters


def sample() -> Match:
    match: Match = Match(GAME)
    for ply in read_record(DATA / "records" / "renaissance-sample.txt").plies:
        match.push_text(ply.text)
    return match


def test_the_report_of_the_sample_game_draws_every_ply_with_its_phase_and_scores(
        tmp_path) -> None:
    match = sample()
    Recorder(tmp_path, GAME, {}).finish(match)
    report = (tmp_path / "report.html").read_text()
    plies = len(match.moves)
    assert report.count("<svg") == plies + 1
    assert re.search(r"Result: <strong>Gold wins</strong> \(score: Gold 3, Silver -3\)", report)
    sections = re.findall(r'<section class="ply">.*?</section>', report, re.S)
    assert len(sections) == plies + 1
    phases = [re.search(r'<p class="phase">([^<]*)</p>', s) for s in sections]
    assert [p[1] if p else None for p in phases] == [
        position.phase.value for position in match.positions]
    scored = [position.phase is not Phase.PREPARATION for position in match.positions]
    assert ['class="score"' in s for s in sections] == scored
    assert 0 < scored.index(True) < plies
    rows = re.findall(r"<tr><th>(\w+)</th><td>(-?\d+)</td><td>(-?\d+)</td><td><b>(-?\d+)</b>",
                      sections[-1])
    assert rows == [("Gold", "7", "4", "3"), ("Silver", "7", "10", "-3")]
    # Every tile on the last board is labelled once.
    last = match.positions[-1]
    assert sections[-1].count('class="tile-label"') == len(last.tiles_on_board()) > 0
