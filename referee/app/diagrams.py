"""Board diagrams for the game report, as SVG: the Rinne family's and Zensū's pieces as their
marks, Renaissance's tiles as whole polyominoes with their markers, the last move shaded."""

from __future__ import annotations

import html
from typing import Any

from referee.rules.core import Color, Game, Geometry
from referee.rules.renaissance import RenaissanceRules
from referee.rules.renaissance_position import (
    BLOCKED,
    EMPTY,
    MONOMINO,
    MoveMarker,
    Phase,
    PlaceMarker,
    PlaceMonomino,
    PlaceTile,
)
from referee.rules.renaissance_position import Position as RenaissancePosition
from referee.rules.zensu import ZensuRules


def board_svg(game: Game[Any, Any], position: Any, move: Any = None, cell: int = 36) -> str:
    """A board diagram: pieces as their marks (`piece_mark`), the last move's squares shaded,
    the goal or home squares green; Renaissance's tiles and markers by `renaissance_svg`."""
    if isinstance(game, RenaissanceRules):
        return renaissance_svg(game, position, move, cell)
    geometry = game.geometry  # type: ignore[attr-defined]
    marked = {move.from_square, move.to_square} - {-1} if move is not None else set()
    parts = [_svg_open(geometry, cell)]
    for square in geometry.squares():
        x, y = _corner(geometry, square, cell)
        fill = "#f3d28b" if square in marked else (
            "#e9e4d4" if (geometry.file_of(square) + geometry.rank_of(square)) % 2 else "#d8cfb6")
        if _is_goal(game, square):
            fill = "#c9e3c1" if square not in marked else fill
        parts.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" '
                     'stroke="#555" stroke-width="1"/>')
        piece = position.piece_at(square)
        if piece is not None:
            dark = piece.color != 0
            parts.append(
                f'<rect x="{x + 5}" y="{y + 5}" width="{cell - 10}" height="{cell - 10}" rx="5" '
                f'fill="{"#333" if dark else "#fff"}" stroke="#222"/>'
                f'<text x="{x + cell / 2}" y="{y + cell / 2 + 5}" text-anchor="middle" '
                f'font-family="sans-serif" font-size="15" font-weight="bold" '
                f'fill="{"#fff" if dark else "#000"}">{piece_mark(piece)}</text>')
    parts.append(_coordinates(geometry, cell))
    return "".join(parts)


def _svg_open(geometry: Geometry, cell: int) -> str:
    """An SVG's opening tag, room left of the board for the ranks and below it for the files."""
    width, height = geometry.files * cell, geometry.ranks * cell
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 16}" '
            f'height="{height + 16}" viewBox="-16 0 {width + 16} {height + 16}">')


def _corner(geometry: Geometry, square: int, cell: int) -> tuple[int, int]:
    """A square's top left corner in a diagram: rank 1 at the bottom."""
    return (geometry.file_of(square) * cell,
            (geometry.ranks - 1 - geometry.rank_of(square)) * cell)


def _coordinates(geometry: Geometry, cell: int) -> str:
    """The files' letters under the board and the ranks' numbers left of it; the SVG's end."""
    height = geometry.ranks * cell
    parts = [f'<text x="{file * cell + cell / 2}" y="{height + 13}" text-anchor="middle" '
             f'font-family="sans-serif" font-size="11">{"abcdefghi"[file]}</text>'
             for file in range(geometry.files)]
    parts += [f'<text x="-9" y="{(geometry.ranks - rank) * cell - cell / 2 + 4}" '
              f'text-anchor="middle" font-family="sans-serif" font-size="11">{rank + 1}</text>'
              for rank in range(geometry.ranks)]
    return "".join(parts) + "</svg>"


# A Renaissance tile's fill by its shape: one colour a shape family.
SHAPE_FILLS = {"I2": "#8ecae6", "I3": "#5fa8d3", "V3": "#90c67c", "I4": "#f4a261",
               "O4": "#e5989b", "T4": "#b39ddb", "S4": "#4db6ac", "L4": "#c9a27e"}
MARKER_FILLS = ("#d4a017", "#c0c0c0")  # Gold's, Silver's
_LAST = "#f3d28b"  # the last move's squares, as `board_svg` shades them


def renaissance_svg(game: RenaissanceRules, position: RenaissancePosition, move: Any = None,
                    cell: int = 36) -> str:
    """A Renaissance board diagram: each tile one piece (its squares in its shape's colour,
    outlined along its outer edges only, its shape code written once on it), monominoes as
    inset squares, the blocked centre dark, markers as gold and silver discs, the last move's
    squares shaded."""
    geometry = game.geometry
    marked = set(_move_squares(move))
    parts = [_svg_open(geometry, cell)]
    parts += (_renaissance_square(geometry, position, square, square in marked, cell)
              for square in geometry.squares())
    for tile in sorted(position.tiles_on_board()):
        parts.append(_tile_outline(geometry, position.tile_squares(tile), cell))
    parts += (_marker_disc(geometry, square, value, cell)
              for square, value in enumerate(position.markers) if value)
    for tile in sorted(position.tiles_on_board()):
        parts.append(_tile_label(geometry, position, tile, cell))
    parts.append(_coordinates(geometry, cell))
    return "".join(parts)


def _move_squares(move: Any) -> tuple[int, ...]:
    """The squares a Renaissance move changed: a tile's, a marker's or monomino's, a moved
    marker's from and to."""
    if isinstance(move, PlaceTile):
        return move.squares
    if isinstance(move, PlaceMarker | PlaceMonomino):
        return (move.square,)
    if isinstance(move, MoveMarker):
        return (move.from_square, move.to_square)
    return ()


def _renaissance_square(geometry: Geometry, position: RenaissancePosition, square: int,
                        last: bool, cell: int) -> str:
    """One square's ground: empty (shaded if the last move's), a tile's colour (striped if
    the last move's, no grid line across the tile), a monomino inset, or the blocked centre."""
    x, y = _corner(geometry, square, cell)
    cover = position.cover[square]
    if cover == BLOCKED:
        return (f'<rect class="blocked" x="{x}" y="{y}" width="{cell}" height="{cell}" '
                'fill="#2b2b2b" stroke="#555" stroke-width="1"/>')
    ground = (f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" '
              f'fill="{_LAST if last else "#efe9da"}" stroke="#aaa" stroke-width="1"/>')
    if cover == MONOMINO:
        inset = cell // 5
        return ground + (f'<rect class="monomino" x="{x + inset}" y="{y + inset}" '
                         f'width="{cell - 2 * inset}" height="{cell - 2 * inset}" '
                         'fill="#8d8577" stroke="#333" stroke-width="1.5"/>')
    if cover == EMPTY:
        return ground
    fill = SHAPE_FILLS.get(position.inventory[cover], "#cccccc")
    tile = (f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" '
            'stroke="none"/>')
    return tile + (_hatch(x, y, cell) if last else "")


def _hatch(x: int, y: int, cell: int) -> str:
    """The last move's shade on a tile's square: diagonal stripes, leaving its colour seen."""
    half = cell / 2
    return "".join(f'<line class="last" x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" '
                   f'stroke="{_LAST}" stroke-width="4"/>'
                   for x1, y1, x2, y2 in ((x, y + half, x + half, y),
                                          (x, y + cell, x + cell, y),
                                          (x + half, y + cell, x + cell, y + half)))


def _tile_outline(geometry: Geometry, squares: tuple[int, ...], cell: int) -> str:
    """A tile's outline: a line along each side of its squares that no square of it shares."""
    own = {(geometry.file_of(sq), geometry.rank_of(sq)) for sq in squares}
    lines = []
    for file, rank in sorted(own):
        x, y = file * cell, (geometry.ranks - 1 - rank) * cell
        sides = {(0, 1): (x, y, x + cell, y), (0, -1): (x, y + cell, x + cell, y + cell),
                 (-1, 0): (x, y, x, y + cell), (1, 0): (x + cell, y, x + cell, y + cell)}
        for (df, dr), (x1, y1, x2, y2) in sides.items():
            if (file + df, rank + dr) not in own:
                lines.append(f'<line class="tile-edge" x1="{x1}" y1="{y1}" x2="{x2}" '
                             f'y2="{y2}" stroke="#222" stroke-width="2.5" '
                             'stroke-linecap="square"/>')
    return "".join(lines)


def _marker_disc(geometry: Geometry, square: int, value: int, cell: int) -> str:
    """A marker: a gold (1) or silver (2) disc."""
    x, y = _corner(geometry, square, cell)
    name = ("gold", "silver")[value - 1]
    return (f'<circle class="marker {name}" cx="{x + cell / 2}" cy="{y + cell / 2}" '
            f'r="{cell * 0.3:g}" fill="{MARKER_FILLS[value - 1]}" stroke="#333" '
            'stroke-width="1.5"/>')


def _tile_label(geometry: Geometry, position: RenaissancePosition, tile: int, cell: int) -> str:
    """A tile's shape code, once: on its square nearest its middle, one without a marker
    if it has one."""
    squares = position.tile_squares(tile)
    mid_file = sum(geometry.file_of(sq) for sq in squares) / len(squares)
    mid_rank = sum(geometry.rank_of(sq) for sq in squares) / len(squares)
    square = min(squares, key=lambda sq: (position.markers[sq] != 0,
                                          (geometry.file_of(sq) - mid_file) ** 2
                                          + (geometry.rank_of(sq) - mid_rank) ** 2, sq))
    x, y = _corner(geometry, square, cell)
    return (f'<text class="tile-label" x="{x + cell / 2}" y="{y + cell / 2 + 4}" '
            'text-anchor="middle" font-family="sans-serif" font-size="11" font-weight="bold" '
            'fill="#111" stroke="#fff" stroke-width="2.5" paint-order="stroke">'
            f"{html.escape(position.inventory[tile])}</text>")


def renaissance_state_html(game: RenaissanceRules, position: RenaissancePosition) -> str:
    """Under a Renaissance diagram: the phase and, from phase 1 on, each player's points."""
    phase = f'<p class="phase">{html.escape(position.phase.value)}</p>'
    if position.phase is Phase.PREPARATION:
        return phase
    scores = game.scores(position)
    rows = "".join(f"<tr><th>{html.escape(name)}</th><td>{scores.phase1[c]}</td>"
                   f"<td>{scores.penalty[c]}</td><td><b>{scores.total[c]}</b></td></tr>"
                   for c, name in enumerate(game.player_names))
    return (phase + '<table class="score"><tr><th></th><th>phase 1</th><th>penalty</th>'
            f"<th>total</th></tr>{rows}</table>")


def score_text(game: Game[Any, Any], position: Any) -> str:
    """The score as the report's top gives it, e.g. `Gold 3, Silver -3`: Renaissance's from
    phase 1 on, empty for the games won without points."""
    if not isinstance(game, RenaissanceRules) or position.phase is Phase.PREPARATION:
        return ""
    total = game.scores(position).total
    return ", ".join(f"{name} {total[c]}" for c, name in enumerate(game.player_names))


def piece_mark(piece: Any) -> str:
    """What a diagram writes on a piece: a Rinne-family piece's state letter, a Zensū
    piece's large number."""
    state = getattr(piece, "state", None)
    return str(state.letter) if state is not None else str(piece.kind)


def _is_goal(game: Any, square: int) -> bool:
    """A square a player races to: the Rinne family's goals, Zensū's home territories."""
    if isinstance(game, ZensuRules):
        return any(game.is_home(square, color) for color in Color)
    return bool(game.is_goal(square))
