"""`referee pieces`: printable Penta-pieces and Zensū pieces at true size, drawn by the
functions the renderer textures the models' training pieces with."""

from __future__ import annotations

import hashlib
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee import pieces_design as design
from referee.app.printable_pieces import check_sizes, face_image, layout_sheet, piece_set
from referee.cli import main
from referee.rules import find_game

SVG = "{http://www.w3.org/2000/svg}"


def _write(tmp_path: Path, *args: str, out: str = "pieces.svg") -> list[Path]:
    assert main(["pieces", *args, "--out", str(tmp_path / out)]) == 0
    return sorted(tmp_path.glob(Path(out).stem + "*" + Path(out).suffix))


def _pieces(paths: list[Path]) -> list[tuple[int, tuple[float, float], list[tuple[float, float]]]]:
    """Each piece on the pages: its kind, its centre (mm) and its cut line's points round it."""
    out = []
    for path in paths:
        for group in ET.parse(path).getroot().iter(SVG + "g"):
            if group.get("class") != "piece":
                continue
            x, y = (float(v) for v in re.findall(r"[-\d.]+", group.get("transform", "")))
            cut = next(p for p in group.iter(SVG + "polygon") if p.get("class") == "cut")
            points = [tuple(float(v) for v in pair.split(",")) for pair in cut.get("points", "").split()]
            out.append((int(group.get("data-kind", "-1")), (x, y), points))
    return out


def test_the_svg_is_a_true_size_a4_page(tmp_path: Path) -> None:
    (path,) = _write(tmp_path, "--game", "rinne", "--square-mm", "40")
    root = ET.parse(path).getroot()
    assert (root.get("width"), root.get("height")) == ("210.000mm", "297.000mm")
    assert root.get("viewBox") == "0 0 210.000 297.000"  # one unit a millimetre
    ruler = next(line for line in root.iter(SVG + "line") if line.get("class") == "ruler")
    assert float(ruler.get("x2", "0")) - float(ruler.get("x1", "0")) == pytest.approx(50.0)
    assert any("this line is 50 mm" in (t.text or "") for t in root.iter(SVG + "text"))
    assert any("Rinne" in (t.text or "") and "40 mm" in (t.text or "") for t in root.iter(SVG + "text"))


@pytest.mark.parametrize(("game", "square", "face"), [("rinne", 40.0, 0.8), ("tensei", 30.0, 0.75),
                                                      ("zensu", 50.0, 0.8), ("zensu", 30.0, 0.72)])
def test_each_face_measures_its_share_of_the_square(tmp_path: Path, game: str, square: float,
                                                    face: float) -> None:
    paths = _write(tmp_path, "--game", game, "--square-mm", f"{square:g}", "--face", f"{face:g}")
    for _, _, points in _pieces(paths):
        corners = np.array(points)
        if game == "zensu":  # a square of side face x square
            sides = np.linalg.norm(corners - np.roll(corners, 1, axis=0), axis=1)
            assert sides == pytest.approx([face * square] * 4, abs=0.002)
        else:  # a regular pentagon whose corners lie face x square / 2 from its centre
            assert len(corners) == 5
            assert np.linalg.norm(corners, axis=1) == pytest.approx([face * square / 2] * 5, abs=0.002)
            top = corners[corners[:, 1].argmin()]  # a corner points up (forward)
            assert top == pytest.approx([0.0, -face * square / 2], abs=0.002)


@pytest.mark.parametrize(("game", "counts"), [
    ("rinne", {None: 5}), ("tensei", {None: 5}), ("rinne-5x5", {None: 5}), ("tensei-5x5", {None: 5}),
    ("flipflop-3x3", {None: 3}), ("flipflop-5x5", {None: 5}), ("zensu", {1: 6, 2: 6})])
def test_a_set_has_the_setup_pieces_of_each_side(tmp_path: Path, game: str,
                                                  counts: dict[int | None, int]) -> None:
    pieces = piece_set(find_game(game))
    for side in (0, 1):
        assert {n: pieces.count(side, n) for n in counts} == counts
    paths = _write(tmp_path, "--game", game, "--square-mm", "50")
    printed = [pieces.kinds[kind] for kind, _, _ in _pieces(paths)]
    for side in (0, 1):
        assert {n: sum(1 for k in printed if k.side == side and k.number == n) for n in counts} == counts


def test_pieces_do_not_overlap_and_stay_on_the_page(tmp_path: Path) -> None:
    paths = _write(tmp_path, "--game", "zensu", "--square-mm", "100", "--face", "0.84")
    assert len(paths) > 1  # one SVG a page
    for path in paths:
        placed = _pieces([path])
        centres = np.array([c for _, c, _ in placed])
        reach = 0.84 * 100 / 2 + 1.0  # the face and its bleed
        assert (centres - reach >= 0).all() and (centres[:, 0] + reach <= 210).all()
        assert (centres[:, 1] + reach <= 297).all()
        gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2) + np.eye(len(centres)) * 1e9
        assert gaps.min() >= 2 * reach


def test_a_pdf_holds_every_page(tmp_path: Path) -> None:
    (path,) = _write(tmp_path, "--game", "zensu", "--square-mm", "60", out="pieces.pdf")
    data = path.read_bytes()
    assert data.startswith(b"%PDF-1.4") and data.rstrip().endswith(b"%%EOF")
    assert len(re.findall(rb"/Type /Page ", data)) == 2
    assert b"/MediaBox [0 0 595.276 841.890]" in data  # A4 in points
    assert b"(this line is 50 mm)" in data


@pytest.mark.parametrize(("args", "says"), [
    (["--game", "chess"], "unknown game 'chess'"),
    (["--game", "renaissance"], "not printable yet"),
    (["--game", "rinne", "--square-mm", "12"], "--square-mm 12 is out of range 20..100"),
    (["--game", "rinne", "--square-mm", "250"], "out of range"),
    (["--game", "zensu", "--face", "0.9"], "--face 0.9 is outside 0.72..0.84"),
    (["--game", "rinne", "--face", "0.5"], "the penta model was trained on"),
])
def test_bad_input_is_refused_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            args: list[str], says: str) -> None:
    assert main(["pieces", *args, "--out", str(tmp_path / "p.svg")]) == 1
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_an_unknown_output_format_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pieces", "--game", "rinne", "--out", str(tmp_path / "p.png")]) == 1
    assert "printable pieces are .svg or .pdf" in capsys.readouterr().err


# ---- the same faces as the renderer's ------------------------------------------------------


def _texture(mesh: object) -> np.ndarray:
    return next(f.texture for f in mesh.faces if f.texture is not None)


# The renderer's textures drawn before its faces moved to referee.pieces_design (OpenCV 5.0,
# which the renders were made with: tests/synth/test_synth_pieces.py checks that).
RENDERER_TEXTURES = {
    "letters": "3890644e89e35558b77fa5a1e17c85309f724d5a6cff6a9f740878a2d3e2e17b",
    "symbols": "553d899ad94fc6828f96276ce5d45cdd03960bc893ea164fdd938d1dfb947cc2",
}


@pytest.mark.parametrize("signs", design.SIGNS)
def test_the_renderer_draws_its_pieces_as_before_the_move(signs: str) -> None:
    from referee_lab.synth.pieces import PentaLook, penta_mesh

    tex = _texture(penta_mesh(PentaLook(16.0, 8.0, (150, 195, 230), (30, 30, 30), signs, 0.2)))
    assert hashlib.sha256(tex.tobytes()).hexdigest() == RENDERER_TEXTURES[signs]


@pytest.mark.parametrize(("game", "signs"),
                         [("rinne", "letters"), ("rinne", "symbols"), ("zensu", "letters")])
def test_a_printed_face_is_the_renderers_face_at_print_resolution(game: str, signs: str) -> None:
    """The printed face shrunk to the renderer's 128 pixels differs from the renderer's own
    texture in the same colours only along the signs' anti-aliased edges."""
    from referee_lab.synth.pieces import PentaLook, penta_mesh

    pieces = piece_set(find_game(game))
    sizes = check_sizes(pieces.model, 40.0, 0.8)
    sheet = layout_sheet(pieces, sizes, signs=signs)
    printed = face_image(pieces, pieces.kinds[0], sizes.face, signs)
    assert printed.shape[0] == round(sizes.face * 12) and np.array_equal(printed, sheet.images[0])
    body, ink = (design.PENTA_PRINT if pieces.model == "penta" else design.ZENSU_PRINT)[0]
    if pieces.model == "penta":
        renderer = _texture(penta_mesh(PentaLook(sizes.face / 2, 8.0, body, ink, signs, 0.2)))
    else:  # the renderer's wood grain left out: a print is flat
        renderer = np.zeros((128, 128, 3), np.uint8)
        renderer[:] = [int(c) for c in body]
        design.draw_zensu_numbers(renderer, design.renderer_edges(1), ink)
    small = cv2.resize(printed, (128, 128), interpolation=cv2.INTER_AREA)
    assert float(np.abs(small.astype(int) - renderer).mean()) < 4.0


def test_the_printed_colours_are_the_renderers() -> None:
    from referee_lab.synth import style

    light, dark = style.PENTA_COLOURS[0]
    assert (design.PENTA_PRINT[0][0], design.PENTA_PRINT[1][0]) == (light, dark)
    assert (design.ZENSU_PRINT[0][0], design.ZENSU_PRINT[1][0]) == ((190, 180, 60), (50, 45, 185))
    assert math.isclose(design.PENTA_FACE_RANGE[0], 2 * 0.36)
