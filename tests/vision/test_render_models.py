"""The render-trained classifiers (penta, zensu, tiles, tiles-seam, tiles-monomino): each loads with its card,
a spoilt one is refused, `classify` prints JSON lines, and rendered squares of every class,
on a board style and seeds kept out of training, are read right."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.cli import main
from referee.errors import ModelError
from referee.vision.classifier import Classifier, default_models_dir, sha256_of
from referee.vision.crops import crop_squares, seam_quads
from referee.vision.monomino import MONOMINO_LABELS
from referee_lab.cli import main as lab_main
from referee_lab.renders import (
    PENTA_LABELS,
    SEAM_LABELS,
    TILES_LABELS,
    ZENSU_LABELS,
    LabelledFrame,
    cut_frame,
    frame_crops,
    merge_crop_folders,
    rendered_frames,
    write_crop_folder,
)
from referee_lab.synth import RenderOptions, SquareContent, render_frame
from referee_lab.synth.truth import Contents

MODELS = {"penta": PENTA_LABELS, "zensu": ZENSU_LABELS, "tiles": TILES_LABELS,
          "tiles-seam": SEAM_LABELS, "tiles-monomino": MONOMINO_LABELS}
OPTIONS = RenderOptions(width=960, height=540, tilt=(15.0, 30.0), style="mat", hands=0.0)


def _penta() -> tuple[str, Contents]:
    contents = {f"{f}1": SquareContent("penta", 0, s + 1) for s, f in enumerate("abcde")}
    contents |= {f"{f}6": SquareContent("penta", 1, s + 1) for s, f in enumerate("abcde")}
    contents["c3"] = SquareContent("penta", 1, 3)
    return "rinne", contents


def _zensu() -> tuple[str, Contents]:
    contents = {f"{f}1": SquareContent("zensu", 0, 1 + i % 2) for i, f in enumerate("abcdef")}
    contents |= {f"{f}9": SquareContent("zensu", 1, 2 - i % 2) for i, f in enumerate("abcdef")}
    contents["c5"] = SquareContent("zensu", 0, 2)
    return "zensu", contents


def _tiles() -> tuple[str, Contents]:
    tile, mono = SquareContent("tile", None, 1), SquareContent("monomino")
    contents = {
        "a1": tile, "b1": SquareContent("tile", None, 1, "gold"), "c1": SquareContent("tile", None, 2),
        "c2": SquareContent("tile", None, 2, "silver"), "d2": SquareContent("tile", None, 2),
        "e1": mono, "f1": SquareContent("monomino", None, 0, "gold"),
        "g1": SquareContent("monomino", None, 0, "silver"), "g2": mono,
        "a3": SquareContent("empty", None, 0, "gold"), "b5": SquareContent("empty", None, 0, "silver"),
        "f6": SquareContent("tile", None, 3), "g6": SquareContent("tile", None, 3),
    }
    return "renaissance", contents


SCENES = {"penta": _penta, "zensu": _zensu, "tiles": _tiles}


@pytest.fixture(scope="module")
def frames() -> dict[str, LabelledFrame]:
    out = {}
    for pieces, scene in SCENES.items():
        game, contents = scene()
        options = dataclasses.replace(OPTIONS, pieces="penta" if pieces == "penta" else None)
        frame, truth = render_frame(game, seed=990_001, options=options, contents=contents)
        out[pieces] = cut_frame(pieces, frame, truth)
    return out


def _model(name: str) -> Path:
    path = default_models_dir() / f"{name}.onnx"
    assert path.is_file(), f"no trained {name} model at {path} (run: referee-lab train)"
    return path


@pytest.mark.parametrize("name", list(MODELS))
def test_committed_model_matches_its_card(name: str) -> None:
    path = _model(name)
    card = Classifier.load(name).card
    assert card.labels == MODELS[name]
    assert card.faces == (None,) * len(card.labels)
    assert card.sha256 == sha256_of(path)
    assert path.stat().st_size < 2 * 1024 * 1024
    assert card.piece_height is not None and 0 < card.piece_height < 1
    assert card.recipe["seed"] == card.seed and card.recipe["steps"] > 0
    assert card.metrics["rendered_held_out"]["crops"] > 1000


@pytest.mark.parametrize("name", list(MODELS))
def test_a_corrupt_or_mismatched_model_is_refused(name: str, tmp_path: Path) -> None:
    onnx = tmp_path / f"{name}.onnx"
    shutil.copy(_model(name), onnx)
    shutil.copy(_model(name).with_suffix(".json"), onnx.with_suffix(".json"))
    data = bytearray(onnx.read_bytes())
    data[len(data) // 2] ^= 0xFF
    onnx.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="sha256"):
        Classifier.load(onnx)
    other = "zensu" if name != "zensu" else "penta"  # another model beside this card
    shutil.copy(_model(other), onnx)
    card = json.loads(onnx.with_suffix(".json").read_text())
    card["onnx"]["sha256"] = sha256_of(onnx)
    onnx.with_suffix(".json").write_text(json.dumps(card))
    with pytest.raises(ModelError, match="does not match"):
        Classifier.load(onnx)


@pytest.mark.parametrize("name", list(MODELS))
def test_rendered_squares_of_every_class_are_read_right(
        name: str, frames: dict[str, LabelledFrame]) -> None:
    pieces = "tiles" if name.startswith("tiles") else name
    samples = frames[pieces].samples[name]
    classifier = Classifier.load(name)
    crops = frame_crops(frames[pieces], {name: classifier.card.crop})[name]  # as at run time
    read = classifier.predict(crops).argmax(axis=1)
    truth = np.array([s.label for s in samples])
    assert {MODELS[name][k] for k in truth} == set(MODELS[name]), "the scene shows every class"
    wrong = [(MODELS[name][t], MODELS[name][r]) for t, r in zip(truth, read, strict=True) if t != r]
    assert not wrong, f"read wrong (true, read): {wrong}"


def test_classify_prints_json_lines_for_penta(
        frames: dict[str, LabelledFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    samples = frames["penta"].samples["penta"]
    spec = Classifier.load("penta").card.crop
    chosen = [s for s in samples if s.label][:5] + [s for s in samples if not s.label][:1]
    crops = crop_squares(samples[0].image, [s.quad for s in chosen], spec)
    files = [str(tmp_path / f"{i}.png") for i in range(len(chosen))]
    for file, crop in zip(files, crops, strict=True):
        assert cv2.imwrite(file, crop)
    assert main(["classify", "--pieces", "penta", *files]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["file"] for r in results] == files
    assert all(set(r) == {"file", "label", "face", "confidence"} for r in results)
    assert all(r["face"] is None and 0 <= r["confidence"] <= 1 for r in results)
    assert [r["label"] for r in results] == [PENTA_LABELS[s.label] for s in chosen]


def test_orientation_bound_models_refuse_turns(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = str(tmp_path / "square.png")
    cv2.imwrite(image, np.full((60, 60, 3), 128, np.uint8))
    assert main(["classify", "--pieces", "penta", "--turns", "4", image]) == 1
    assert "orientation" in capsys.readouterr().err
    assert main(["classify", "--pieces", "chess", image]) == 1
    assert "known: dice, penta, zensu, tiles" in capsys.readouterr().err


def test_seam_quads_straddle_every_inner_line() -> None:
    files, ranks = 3, 2
    squares = np.array([[[f, r + 1], [f + 1, r + 1], [f + 1, r], [f, r]]
                        for r in range(ranks) for f in range(files)], np.float64)
    seams = seam_quads(squares, files, ranks)
    assert len(seams) == (files - 1) * ranks + files * (ranks - 1)
    for a, b, quad in seams:
        centre = quad.mean(axis=0)
        middle = (squares[a].mean(axis=0) + squares[b].mean(axis=0)) / 2
        assert np.allclose(centre, middle)
        # The line between the squares runs top to bottom: the crop's left half is `a`.
        left = (quad[0] + quad[3]) / 2
        assert np.linalg.norm(left - squares[a].mean(axis=0)) < 1e-6


def test_the_pipeline_reads_a_rendered_penta_board() -> None:
    """The pipeline's Penta-piece set names the `penta` model: it loads, and the board reader
    (crops cut at the card's piece height) reads the start position of a held-out render."""
    from referee.app.pipeline import BoardReader
    from referee.rules.rinne import RINNE
    from referee.tracking.inference import PENTA
    from referee_lab.renders import pose_of, square_label

    options = dataclasses.replace(OPTIONS, pieces="penta", width=1280, height=720)
    frame, truth = render_frame("rinne", RINNE.start(), seed=990_002, options=options)
    reader = BoardReader(5, 6, Classifier.load(PENTA.model))
    assert reader.piece_height == Classifier.load("penta").card.piece_height
    reading = reader.read(frame, pose_of(truth), 0, 0.0)
    shown = truth.contents()
    names = [RINNE.geometry.square_name(i) for i in range(RINNE.geometry.size)]
    expected = [square_label("penta", shown[name]) for name in names]
    assert reading.best_labels() == expected


def test_crop_folders_grow_by_the_frames_missing(tmp_path: Path) -> None:
    """`train --frames N` renders only the seeds a folder lacks and adds their crops."""
    folder = tmp_path / "crops"
    assert rendered_frames(folder / "zensu") == 0
    first = write_crop_folder(str(folder), range(0, 1), size=40, margin=0.3, pieces="zensu")
    assert rendered_frames(folder / "zensu") == 1
    more = write_crop_folder(str(folder), range(1, 2), size=40, margin=0.3, pieces="zensu",
                             append=True)
    rows = (folder / "zensu" / "labels.csv").read_text().splitlines()
    assert rows[0] == "file,label" and len(rows) == 1 + first + more
    assert rendered_frames(folder / "zensu") == 2
    assert {row.split("-")[0] for row in rows[1:]} == {"000000", "000001"}
    with pytest.raises(ModelError, match="cut as"):  # crops cut otherwise do not mix
        write_crop_folder(str(folder), range(2, 3), size=48, margin=0.3, pieces="zensu",
                          append=True)


def test_one_model_trained_alone_is_measured_beside_the_committed_others(tmp_path: Path) -> None:
    """`train --only tiles --out DIR` leaves DIR with tiles alone; the held-out measure reads
    a tiles board with all three models, so the committed tiles-seam and tiles-monomino are
    copied in (and a model already there is kept)."""
    from referee.vision.classifier import default_models_dir
    from referee_lab.tasks import complete_set, render_classifiers

    shutil.copy2(default_models_dir() / "tiles.onnx", tmp_path / "tiles.onnx")
    shutil.copy2(default_models_dir() / "tiles.json", tmp_path / "tiles.json")
    said: list[str] = []
    complete_set("tiles", tmp_path, said.append)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "tiles-monomino.json", "tiles-monomino.onnx", "tiles-seam.json", "tiles-seam.onnx",
        "tiles.json", "tiles.onnx"]
    assert len(said) == 4 and sum("tiles-seam" in line for line in said) == 2
    loaded = render_classifiers("tiles", str(tmp_path / "tiles.onnx"))
    assert loaded["tiles-seam"].path.parent == tmp_path
    assert loaded["tiles-monomino"].path.parent == tmp_path


def test_the_held_out_measure_reads_squares_as_the_referee_does() -> None:
    """`evaluate_renders(look=...)` reads the squares through the pipeline's own path
    (`second_look.read_squares`): with no square looked at again it reads exactly what the
    first look reads (the pipeline's crops are the benchmark's); the seams are then read
    given the squares, which only ever turns a seam apart."""
    from referee.vision.second_look import SecondLook
    from referee_lab.render_eval import (
        AS_THE_REFEREE_READS,
        SEAMS_AS_READ,
        evaluate_renders,
        format_render_report,
    )
    from referee_lab.tasks import render_classifiers

    classifiers = render_classifiers("tiles")
    none_again = evaluate_renders("tiles", classifiers, frames=2, look=SecondLook(below=0.0))
    assert [look.name for look in none_again.looks] == [SEAMS_AS_READ, AS_THE_REFEREE_READS]
    as_read, referee = none_again.looks
    assert [m.confusion for m in as_read.models] == [m.confusion for m in none_again.models]
    assert as_read.boards_without_error == none_again.boards_without_error
    assert referee.models[0].confusion == none_again.models[0].confusion
    seams = referee.models[1].confusion
    assert seams[0][1] <= none_again.models[1].confusion[0][1]  # fewer apart read joined
    assert seams[1][0] >= none_again.models[1].confusion[1][0]
    looked = evaluate_renders("tiles", classifiers, frames=2, look=SecondLook())
    assert looked.looks[-1].models[0].crops == 2 * 49
    assert looked.looks[-1].boards_without_error <= looked.looks[-1].models[0].boards_without_error
    assert AS_THE_REFEREE_READS in format_render_report(looked)
    assert evaluate_renders("tiles", classifiers, frames=1).looks == ()


def test_the_held_out_measure_reads_tiles_as_whole_pieces() -> None:
    """With a pieces reader, tiles are also read as whole pieces: a fourth way of reading,
    every square and seam of the board, the first two frames read right (as they are by
    the seams given the squares) and nothing there to mend."""
    from referee.tracking.tile_pieces import read_whole_pieces
    from referee.vision.second_look import SecondLook
    from referee_lab.render_eval import WHOLE_PIECES, evaluate_renders
    from referee_lab.tasks import render_classifiers

    report = evaluate_renders("tiles", render_classifiers("tiles"), frames=2,
                              look=SecondLook(), pieces_reader=read_whole_pieces)
    given, whole = report.looks[-2:]
    assert whole.name == WHOLE_PIECES
    assert [m.crops for m in whole.models] == [2 * 49, 2 * 84]
    assert [m.confusion for m in whole.models] == [m.confusion for m in given.models]
    assert all(m.ms_per_crop > 0 for m in whole.models)  # the seam model's time too


def test_a_seam_joins_only_two_polyomino_squares() -> None:
    """`seam_pairs` names the squares of `seam_quads`' seams, in its order; a seam is no
    likelier joined than either of its squares is a polyomino's: apart beside a square read
    bare or as a monomino, but no surer of it than that square is of its read."""
    from referee.vision.crops import seam_quads
    from referee.vision.seams import seam_pairs, seams_given_squares

    quads = np.array([[[f, -r], [f + 1, -r], [f + 1, 1 - r], [f, 1 - r]]
                      for r in range(3) for f in range(2)], np.float64)
    pairs = seam_pairs(2, 3)
    assert [tuple(p) for p in pairs] == [(a, b) for a, b, _ in seam_quads(quads, 2, 3)]
    labels = ("empty", "tile", "tile+gold", "monomino")
    squares = np.array([[0.0, 1.0, 0.0, 0.0],  # a1: a polyomino's, surely
                        [0.0, 0.3, 0.6, 0.1],  # b1: one, nine in ten
                        [0.0, 0.0, 0.0, 1.0],  # a2: a monomino
                        [0.6, 0.4, 0.0, 0.0],  # b2: bare, in doubt
                        [0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    joined = np.tile([0.05, 0.95], (len(pairs), 1))
    out = seams_given_squares(joined, ("apart", "joined"), squares, labels, pairs)
    expected = {(0, 1): 0.9, (0, 2): 0.0, (1, 3): 0.4, (2, 3): 0.0, (2, 4): 0.0,
                (3, 5): 0.4, (4, 5): 0.95}
    assert {tuple(map(int, p)): round(float(o[1]), 6) for p, o in zip(pairs, out, strict=True)
            } == expected
    assert np.allclose(out.sum(axis=1), 1.0)
    with pytest.raises(ModelError):
        seams_given_squares(joined, ("apart", "same"), squares, labels, pairs)


def test_crop_folders_cut_side_by_side_merge_into_one(tmp_path: Path) -> None:
    """Two processes' crop folders (other seeds, cut alike) gather into one that trains like
    a folder rendered in one go; folders cut otherwise are refused."""
    parts = [tmp_path / "a", tmp_path / "b"]
    counts = [write_crop_folder(str(part), range(seed, seed + 1), size=40, margin=0.3,
                                pieces="zensu") for part, seed in zip(parts, (0, 7), strict=True)]
    merged = merge_crop_folders([p / "zensu" for p in parts], tmp_path / "all")
    assert merged == sum(counts) and rendered_frames(tmp_path / "all") == 8
    rows = (tmp_path / "all" / "labels.csv").read_text().splitlines()[1:]
    assert len(rows) == merged and {r.split("-")[0] for r in rows} == {"000000", "000007"}
    assert all((tmp_path / "all" / r.split(",")[0]).is_file() for r in rows)
    other = tmp_path / "c"
    write_crop_folder(str(other), range(3, 4), size=48, margin=0.3, pieces="zensu")
    with pytest.raises(ModelError, match="cut differently"):
        merge_crop_folders([tmp_path / "all", other / "zensu"], tmp_path / "again")


def test_eval_reads_held_out_renders_as_the_referee_does(capsys: pytest.CaptureFixture[str]) -> None:
    """`referee-lab eval` on a render-trained set prints the first look and the ways the referee
    reads (tiles: to whole pieces), the last one in the headline too."""
    from referee_lab.render_eval import WHOLE_PIECES

    assert lab_main(["eval", "--pieces", "tiles", "--frames", "1"]) == 0
    out = capsys.readouterr().out
    headline = next(line for line in out.splitlines() if line.startswith("- Boards read"))
    assert WHOLE_PIECES in headline
    assert f"| {WHOLE_PIECES} |" in out
