"""Squares in doubt between bare and a monomino, asked again of the monomino model
(`vision.monomino`): only those squares, only their two labels' share, and the committed
model settles a rendered bare square and monomino the tiles model is made to doubt."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from referee.vision.classifier import Classifier
from referee.vision.monomino import MONOMINO_MODEL, in_doubt, monomino_label, monomino_pairs, second_opinion
from referee.vision.second_look import SecondLook
from referee_lab.render_eval import evaluate_renders
from referee_lab.renders import TILES_LABELS, cut_frame, frame_crops
from referee_lab.synth import RenderOptions, SquareContent, render_frame
from referee_lab.synth.games import square_names
from referee_lab.tasks import render_classifiers

L = TILES_LABELS


def test_bare_squares_and_monominoes_pair_by_marker() -> None:
    pairs = monomino_pairs(L)
    assert {L[i] for i in pairs} == {"empty", "empty+gold", "empty+silver", "monomino",
                                     "monomino+gold", "monomino+silver"}
    assert pairs[L.index("monomino+gold")] == (L.index("empty+gold"), L.index("monomino+gold"))
    assert pairs[L.index("empty")] == (L.index("empty"), L.index("monomino"))
    assert [monomino_label(x) for x in ("blocked", "tile+silver", "empty+gold", "monomino")] == [
        None, None, "bare", "monomino"]


def _row(**shares: float) -> np.ndarray:
    row = np.full(len(L), 1e-4)
    for name, p in shares.items():
        row[L.index(name.replace("_", "+"))] = p
    return row / row.sum()


def test_only_squares_in_doubt_between_the_two_are_asked() -> None:
    rows = np.stack([_row(empty=0.5, monomino=0.45),  # in doubt: asked
                     _row(empty=0.99, monomino=0.005),  # sure
                     _row(tile=0.5, monomino=0.45),  # best is a polyomino's square
                     _row(monomino_gold=0.5, tile_gold=0.45)])  # best is a monomino: asked
    assert list(in_doubt(rows, L, SecondLook())) == [0, 3]
    assert list(in_doubt(rows, L, SecondLook(below=0.0))) == []


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, list[str], np.ndarray]:
    """A rendered Renaissance board's crops as the pipeline cuts them, their true labels."""
    contents = {"a1": SquareContent("monomino"), "b1": SquareContent("empty"),
                "c1": SquareContent("monomino", None, 0, "gold"),
                "d1": SquareContent("empty", None, 0, "gold"),
                "e1": SquareContent("tile", None, 1), "f1": SquareContent("tile", None, 1)}
    options = RenderOptions(width=960, height=540, tilt=(15.0, 30.0), style="mat", hands=0.0)
    frame, truth = render_frame("renaissance", seed=990_002, options=options, contents=contents)
    cut = cut_frame("tiles", frame, truth)
    crops = frame_crops(cut, {"tiles": Classifier.load("tiles").card.crop})["tiles"]
    names = square_names(7, 7)
    return crops, [names[i] for i in cut.kept["tiles"]], np.array([s.label for s in cut.samples["tiles"]])


def test_the_monomino_model_settles_a_doubt_the_tiles_model_is_given(scene) -> None:  # type: ignore[no-untyped-def]
    crops, names, truth = scene
    specialist = Classifier.load(MONOMINO_MODEL)
    rows = [names.index(n) for n in ("a1", "b1", "c1", "d1", "e1")]
    # the tiles model made to doubt: bare and monomino even, a polyomino's square beside
    doubtful = np.stack([_row(empty=0.4, monomino=0.4, tile=0.2), _row(empty=0.4, monomino=0.4, tile=0.2),
                         _row(empty_gold=0.4, monomino_gold=0.4, tile_gold=0.2),
                         _row(empty_gold=0.4, monomino_gold=0.4, tile_gold=0.2),
                         _row(empty=0.4, monomino=0.4, tile=0.2)])
    look = SecondLook(monomino_weight=0.5)
    read = second_opinion(specialist, crops[rows], doubtful, L, look)
    assert np.allclose(read.sum(axis=1), 1.0)
    assert np.allclose(read[:, L.index("tile")], doubtful[:, L.index("tile")])  # the rest kept
    settled = [L[k] for k in read[:4].argmax(axis=1)]
    assert settled == [L[k] for k in truth[rows[:4]]] == ["monomino", "empty", "monomino+gold", "empty+gold"]
    # a polyomino's square is no bare square nor monomino: the specialist's word moves it
    # only within the pair, never to the tile
    assert read[4, L.index("tile")] == pytest.approx(doubtful[4, L.index("tile")])
    unasked = second_opinion(specialist, crops[rows], doubtful, L,
                             dataclasses.replace(look, monomino_weight=0.0))
    assert np.array_equal(unasked, doubtful)


def test_a_specialist_of_other_labels_is_refused(scene) -> None:  # type: ignore[no-untyped-def]
    crops, _, _ = scene
    with pytest.raises(ValueError, match="labels"):
        second_opinion(Classifier.load("tiles-seam"), crops[:1], np.stack([_row(empty=0.5, monomino=0.5)]),
                       L, SecondLook())


def test_the_held_out_measure_asks_the_monomino_model_and_measures_it_alone() -> None:
    """The monomino model reads no board by itself: it is measured apart, on the bare
    squares and monominoes of the frames, and is not one of the board's readers."""
    classifiers = render_classifiers("tiles")
    assert list(classifiers) == ["tiles", "tiles-seam", MONOMINO_MODEL]
    report = evaluate_renders("tiles", classifiers, frames=2, look=SecondLook())
    assert [m.model for m in report.models] == ["tiles", "tiles-seam"]
    (alone,) = report.helpers
    assert alone.model == MONOMINO_MODEL and alone.labels == ("bare", "monomino")
    assert 0 < alone.crops < 2 * 49
    assert [m.model for m in report.looks[-1].models] == ["tiles", "tiles-seam"]
