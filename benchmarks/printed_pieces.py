"""Pieces made from `referee pieces` read by the committed `penta` and `zensu` models.

The printed design's faces are taken from the SVG the command writes, rasterised by cairosvg
at 12 px/mm (each kind's first piece on the page, cut at its outline's square), and put as the
top faces of the renderer's piece prisms: the faces' height the models' card gives (0.2
squares for Penta-pieces, 0.28 for Zensū), a matte print (gloss 0.1), the edges either in
the body colour (painted or felt-tipped) or raw light wood. Everything else is the renderer's
own: a printed board with its ArUco markers (style "paper"), table, light, camera at 0-40° of
tilt, lens, blur, noise and JPEG, random contents (pieces of both sides on about 40% of the
squares, any state). The square is fixed at each size measured. The squares are cut where the
true pose puts the pieces' tops, as the run time cuts them (`second_look.read_squares`:
`crops.grid_crops`, one warp of the board), and read by `Classifier`: the first look's best
label and, "as the referee reads", after the pipeline's second look; "in doubt" squares lead
by under 3 nats, which holds a move up rather than record it.

Run: PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/printed_pieces.py [--frames 40]
[--sizes 30 40 50] [--only penta|zensu] [--models DIR]
[--sheet benchmarks/printed_pieces.jpg]
(needs the lab extra and cairosvg: `pip install cairosvg`, which needs the cairo library)
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from unittest import mock

import cairosvg
import cv2
import numpy as np
from numpy.typing import NDArray

import referee_lab.synth.placement as placement
import referee_lab.synth.scene as scene_module
from referee import pieces_design as design
from referee.app.pipeline import PipelineSettings
from referee.app.printable_pieces import Sheet, check_sizes, layout_sheet, page_svg, piece_set
from referee.rules import find_game
from referee.vision.classifier import Classifier
from referee.vision.second_look import read_squares
from referee_lab.renders import SIZES, cut_frame, random_contents
from referee_lab.synth import RenderOptions, render_frame
from referee_lab.synth.games import square_names
from referee_lab.synth.mesh import Mesh
from referee_lab.synth.pieces import BlockLook, PentaLook, _polygon_prism, penta_corners
from referee_lab.synth.style import Style

GAMES = {"penta": "rinne", "zensu": "zensu"}
FIRST_SEED = 960_000  # apart from training (below 900,000) and the held-out renders' first 1,000
RASTER_PX_PER_MM = 12.0
GLOSS = 0.1  # a matte print
PAPER_BEVEL = 0.3  # mm: the paper's edge on the block, barely rounded
RAW_WOOD = (150.0, 190.0, 222.0)  # BGR: pale pine or birch plywood
DOUBT_NATS = 3.0
Image = NDArray[np.uint8]


@dataclass(frozen=True)
class Setup:
    """One measured set-up: the model, the square, and how the pieces' sides look
    ("body": coloured like the face, "wood": raw wood, "renderer": the renderer's own pieces,
    the trained look, for comparison)."""

    model: str
    square: float
    edges: str

    def name(self) -> str:
        return f"{self.model} {self.square:g} mm, {self.edges}"


@dataclass(frozen=True)
class Tally:
    """Per truth label: squares, read right (first look), read right and wrong as the referee
    reads, in doubt after the second look."""

    labels: tuple[str, ...]
    counts: dict[str, list[int]] = field(default_factory=dict)
    worst: list[tuple[float, Image, str, str]] = field(default_factory=list)  # for the sheet
    shown: list[tuple[float, Image, str, str]] = field(default_factory=list)
    # by group ("side 0", "1280x720" …): squares, read right as the referee reads, in doubt
    groups: dict[str, list[int]] = field(default_factory=dict)

    def add(self, truth: int, first: int, probs: NDArray[np.floating], crop: Image,
            groups: tuple[str, ...]) -> None:
        row = self.counts.setdefault(self.labels[truth], [0, 0, 0, 0, 0])
        best = int(np.argmax(probs))
        logp = np.log(np.maximum(probs, 1e-12))
        lead = float(logp[best] - np.sort(logp)[-2])
        for group in groups:
            counts = self.groups.setdefault(group, [0, 0, 0])
            counts[0] += 1
            counts[1] += int(best == truth and lead >= DOUBT_NATS)
            counts[2] += int(lead < DOUBT_NATS)
        row[0] += 1
        row[1] += int(first == truth)
        row[2] += int(best == truth and lead >= DOUBT_NATS)
        row[3] += int(best != truth and lead >= DOUBT_NATS)
        row[4] += int(lead < DOUBT_NATS)
        entry = (lead if best == truth else -lead, crop, self.labels[truth], self.labels[best])
        if best != truth or lead < DOUBT_NATS:
            self.worst.append(entry)
        elif truth != 0 and len(self.shown) < 64:
            self.shown.append(entry)


# ---- the printed faces ----------------------------------------------------------------


def printed_sheet(model: str, square: float) -> Sheet:
    pieces = piece_set(find_game(GAMES[model]))
    return layout_sheet(pieces, check_sizes(model, square, 0.8))


def printed_faces(sheet: Sheet) -> dict[int, Image]:
    """Each kind's face cut from the rasterised SVG (BGR), forward up."""
    faces: dict[int, Image] = {}
    face = sheet.sizes.face
    for page in sheet.pages:
        png = cairosvg.svg2png(bytestring=page_svg(sheet, page).encode("utf-8"),
                               output_width=round(page.width * RASTER_PX_PER_MM),
                               output_height=round(page.height * RASTER_PX_PER_MM), background_color="white")
        raster = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        for placed in page.pieces:
            if placed.kind in faces:
                continue
            x, y = (round((c - face / 2) * RASTER_PX_PER_MM) for c in placed.centre)
            side = round(face * RASTER_PX_PER_MM)
            faces[placed.kind] = np.ascontiguousarray(raster[y:y + side, x:x + side])
    return faces


def penta_prism(look: PentaLook, tex: Image, edge: tuple[float, float, float]) -> Mesh:
    r, h = look.radius, look.height
    tex_points = np.array([[-r, r, h], [r, r, h], [r, -r, h], [-r, -r, h]])
    return Mesh(tuple(_polygon_prism(penta_corners(r), h, PAPER_BEVEL, edge, tex, tex_points)),
                gloss=look.gloss, shininess=20.0)


def block_prism(look: BlockLook, tex: Image, edge: tuple[float, float, float]) -> Mesh:
    a, h = look.size / 2, look.height
    top = np.array([[-a, -a], [a, -a], [a, a], [-a, a]])
    tex_points = np.array([[-a, a, h], [a, a, h], [a, -a, h], [-a, -a, h]])
    return Mesh(tuple(_polygon_prism(top, h, PAPER_BEVEL, edge, tex, tex_points)), gloss=look.gloss,
                shininess=15.0)


@dataclass(frozen=True)
class Printed:
    """The printed pieces as the renderer's looks and the meshes drawn for them."""

    penta: tuple[PentaLook, PentaLook]
    zensu: tuple[BlockLook, BlockLook]
    meshes: dict[tuple[Any, int], Mesh]


def printed_pieces(setup: Setup, sheet: Sheet, faces: dict[int, Image]) -> Printed:
    sizes, kinds = sheet.sizes, sheet.pieces.kinds
    penta = tuple(PentaLook(sizes.face / 2, sizes.height, _body(sheet, side), (0, 0, 0), sheet.signs,
                            GLOSS) for side in (0, 1))
    zensu = tuple(BlockLook(sizes.face, sizes.height, _body(sheet, side), (0, 0, 0), GLOSS)
                  for side in (0, 1))
    meshes: dict[tuple[Any, int], Mesh] = {}
    for i, kind in enumerate(kinds):
        edge = RAW_WOOD if setup.edges == "wood" else _body(sheet, kind.side)
        if kind.number is None:
            meshes[(penta[kind.side], 0)] = penta_prism(penta[kind.side], faces[i], edge)
        else:
            meshes[(zensu[kind.side], kind.number)] = block_prism(zensu[kind.side], faces[i], edge)
    return Printed((penta[0], penta[1]), (zensu[0], zensu[1]), meshes)


def _body(sheet: Sheet, side: int) -> tuple[float, float, float]:
    """A side's body colour as printed."""
    palette = design.PENTA_PRINT if sheet.pieces.model == "penta" else design.ZENSU_PRINT
    return palette[side][0]


@contextmanager
def rendered_as(setup: Setup, printed: Printed | None) -> Iterator[None]:
    """The renderer with the square fixed and, given `printed`, the printed pieces in place
    of its own (its files untouched: the functions it looks up are swapped here)."""
    layout_fn, style_fn = scene_module.sample_layout, scene_module.sample_style

    def layout(*args: Any, **kwargs: Any) -> Any:
        return layout_fn(*args, **{**kwargs, "square_mm": setup.square})

    def style(*args: Any, **kwargs: Any) -> Style:
        drawn = style_fn(*args, **kwargs)
        return drawn if printed is None else replace(drawn, penta=printed.penta, zensu=printed.zensu)

    patches = [mock.patch.object(scene_module, "sample_layout", layout),
               mock.patch.object(scene_module, "sample_style", style)]
    if printed is not None:
        meshes = printed.meshes
        patches += [mock.patch.object(placement, "penta_mesh", lambda look: meshes[(look, 0)]),
                    mock.patch.object(placement, "zensu_mesh", lambda look, n: meshes[(look, n)])]
    for patch in patches:
        patch.start()
    try:
        yield
    finally:
        for patch in reversed(patches):
            patch.stop()


# ---- measuring -------------------------------------------------------------------------


def measure(setup: Setup, frames: int, classifier: Classifier) -> Tally:
    printed = None
    if setup.edges != "renderer":
        sheet = printed_sheet(setup.model, setup.square)
        printed = printed_pieces(setup, sheet, printed_faces(sheet))
    tally = Tally(classifier.labels)
    look = PipelineSettings().second_look
    with rendered_as(setup, printed):
        for seed in range(FIRST_SEED, FIRST_SEED + frames):
            _read_frame(setup, seed, classifier, look, tally)
    return tally


def _read_frame(setup: Setup, seed: int, classifier: Classifier, look: Any, tally: Tally) -> None:
    rng = np.random.default_rng([seed, 78])
    width, height = SIZES[seed % len(SIZES)]
    contents = random_contents(setup.model, GAMES[setup.model], rng)
    options = RenderOptions(width=width, height=height, style="paper", aruco=True,
                            pieces="penta" if setup.model == "penta" else None)
    image, truth = render_frame(GAMES[setup.model], seed=seed, options=options, contents=contents)
    frame = cut_frame(setup.model, image, truth)
    assert frame.quads is not None and frame.kept is not None
    crops, probs = read_squares(classifier, image, frame.quads, truth.files, look)
    first = classifier.predict(crops).argmax(axis=1)
    shown, names = truth.contents(), square_names(truth.files, truth.ranks)
    for index, sample in zip(frame.kept[setup.model], frame.samples[setup.model], strict=True):
        owner = shown[names[index]].owner if sample.label else None
        groups = (f"{width}x{height}",) + (() if owner is None else (f"side {owner}",))
        tally.add(sample.label, int(first[index]), probs[index], crops[index], groups)


# ---- the report ------------------------------------------------------------------------


def report(results: dict[Setup, Tally]) -> str:
    out = []
    for model in GAMES:
        rows = {s: t for s, t in results.items() if s.model == model}
        if not rows:
            continue
        labels = next(iter(rows.values())).labels
        sha = _CLASSIFIERS[model].card.sha256[:8] if model in _CLASSIFIERS else "?"
        out += [f"## `{model}` (`{sha}`)\n",
                "Squares read right as the referee reads (after the second look, not in doubt) / "
                "squares; then wrong and in doubt, all kinds together.\n",
                "| set-up | " + " | ".join(labels) + " | first look right | wrong | in doubt |",
                "| --- | " + " | ".join("---:" for _ in labels) + " | ---: | ---: | ---: |"]
        for setup, tally in rows.items():
            cells = []
            for label in labels:
                n, _, right, _, _ = tally.counts.get(label, [0] * 5)
                cells.append(f"{right}/{n} ({100 * right / max(n, 1):.1f}%)")
            total = np.sum(list(tally.counts.values()), axis=0)
            first = f"{total[1]}/{total[0]} ({100 * total[1] / total[0]:.2f}%)"
            out.append(f"| {setup.name()} | " + " | ".join(cells) + f" | {first} | {total[3]} | {total[4]} |")
        out += ["", *_groups_table(rows, model), ""]
    return "\n".join(out)


def _groups_table(rows: dict[Setup, Tally], model: str) -> list[str]:
    """Each side's pieces read right, and the squares in doubt by frame size."""
    players = piece_set(find_game(GAMES[model])).players
    sizes = [f"{w}x{h}" for w, h in sorted(set(SIZES))]
    out = ["| set-up | " + " | ".join(f"{p}'s pieces right" for p in players) + " | "
           + " | ".join(f"in doubt, {size}" for size in sizes) + " |",
           "| --- |" + " ---: |" * (2 + len(sizes))]
    for setup, tally in rows.items():
        cells = []
        for side in (0, 1):
            n, right, _ = tally.groups.get(f"side {side}", [0, 0, 0])
            cells.append(f"{right}/{n} ({100 * right / max(n, 1):.1f}%)")
        for size in sizes:
            n, _, doubt = tally.groups.get(size, [0, 0, 0])
            cells.append(f"{doubt}/{n}")
        out.append(f"| {setup.name()} | " + " | ".join(cells) + " |")
    return out


def contact_sheet(results: dict[Setup, Tally], faces: list[Image], columns: int = 10,
                  side: int = 80) -> Image:
    """The SVG's faces as rasterised, then a row a set-up: its misread and doubtful squares
    first (red), then squares read right (green), each with its truth and reading."""
    printed = [cv2.resize(face, (side, side), interpolation=cv2.INTER_AREA) for face in faces[:columns]]
    printed += [np.full((side, side, 3), 255, np.uint8)] * (columns - len(printed))
    heading = "the faces of the SVG `referee pieces` writes, rasterised (40 mm squares)"
    rows = [_title(heading, side * columns), np.hstack(printed)]
    for setup, tally in results.items():
        entries = sorted(tally.worst, key=lambda e: e[0])[:columns // 2]
        step = max(1, len(tally.shown) // max(1, columns - len(entries)))
        entries += tally.shown[::step][:columns - len(entries)]
        cells = [_cell(crop, truth, read, lead, side) for lead, crop, truth, read in entries]
        cells += [np.full((side + 16, side, 3), 255, np.uint8)] * (columns - len(cells))
        rows += [_title(setup.name(), side * columns), np.hstack(cells)]
    return np.vstack(rows)


def _title(text: str, width: int) -> Image:
    title = np.full((14, width, 3), 255, np.uint8)
    cv2.putText(title, text, (4, 11), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    return title


def _cell(crop: Image, truth: str, read: str, lead: float, side: int) -> Image:
    big = cv2.resize(crop, (side, side), interpolation=cv2.INTER_LINEAR)
    ok = truth == read and lead >= DOUBT_NATS
    colour = (40, 150, 40) if ok else (30, 30, 200)
    cell = np.full((side + 16, side, 3), 255, np.uint8)
    cell[:side] = big
    cv2.rectangle(cell, (0, 0), (side - 1, side - 1), colour, 2)
    text = truth if truth == read else f"{truth}>{read}"
    cv2.putText(cell, text[:14], (2, side + 12), cv2.FONT_HERSHEY_SIMPLEX, 0.35, colour, 1, cv2.LINE_AA)
    return cell


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=40, help="frames a set-up (40)")
    parser.add_argument("--sizes", type=float, nargs="+", default=[30.0, 40.0, 50.0])
    parser.add_argument("--only", nargs="+", default=list(GAMES), choices=list(GAMES))
    parser.add_argument("--sheet", help="write the contact sheet here (.png)")
    parser.add_argument("--models", dest="folder", help="a folder holding penta.onnx and zensu.onnx "
                        "with their cards (default: the installed models)")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    setups = [Setup(m, s, "body") for m in args.only for s in args.sizes]
    middle = args.sizes[len(args.sizes) // 2]
    setups += [Setup(m, middle, e) for m in args.only for e in ("wood", "renderer")]
    results: dict[Setup, Tally] = {}
    for setup in setups:
        results[setup] = measure(setup, args.frames, _classifier(setup.model, args.folder))
        print(f"{setup.name()}: done", flush=True)
    print(report(dict(sorted(results.items(), key=lambda kv: (kv[0].model, kv[0].edges != "body")))))
    if args.sheet:
        faces = [face for m in args.only for face in printed_faces(printed_sheet(m, 40.0)).values()]
        cv2.imwrite(args.sheet, contact_sheet(results, faces), [cv2.IMWRITE_PNG_COMPRESSION, 9])


_CLASSIFIERS: dict[str, Classifier] = {}


def _classifier(model: str, folder: str | None) -> Classifier:
    if model not in _CLASSIFIERS:
        _CLASSIFIERS[model] = Classifier.load(Path(folder) / f"{model}.onnx" if folder else model)
    return _CLASSIFIERS[model]


if __name__ == "__main__":
    main()
