"""The vision side of the pipeline on rendered frames: crops centred on the pieces' tops, the
owners' colours told apart, and the frame loop's bad input."""

from __future__ import annotations

import numpy as np
import pytest

from referee.app.pipeline import board_region, crop_colors
from referee.rules.rinne import RINNE
from referee.tracking.reading import ColorModel, Reading
from referee.vision.crops import CropSpec, crop_squares
from referee.vision.warp import top_face_quads
from referee_lab.renders import DIE_HEIGHT, dice_squares, pose_of
from referee_lab.synth import RenderOptions, render_frame


@pytest.fixture(scope="module")
def start_frame():
    options = RenderOptions(width=960, height=540, tilt=(25.0, 35.0), pieces="dice")
    return render_frame("rinne", RINNE.start(), seed=3, options=options)


def test_top_face_quads_centre_on_each_die_top(start_frame):
    frame, truth = start_frame
    pose = pose_of(truth)
    quads = top_face_quads(pose, (frame.shape[1], frame.shape[0]), height=DIE_HEIGHT)
    side = pose.square_size_px()
    assert truth.tops, "the renderer records where each piece's top is"
    for name, (x, y) in truth.tops:
        centre = quads[RINNE.geometry.parse_square(name)].mean(axis=0)
        # Dice stand off-centre and turned in their squares: within a fifth of a square.
        assert np.hypot(centre[0] - x, centre[1] - y) < 0.2 * side, name


def test_the_two_players_colours_are_told_apart(start_frame):
    frame, truth = start_frame
    quads = top_face_quads(pose_of(truth), (frame.shape[1], frame.shape[0]), height=DIE_HEIGHT)
    spec = CropSpec(48, 0.12)
    colors = crop_colors(crop_squares(frame, list(quads.astype(np.float32)), spec), spec)
    owners = {RINNE.geometry.parse_square(n): c.owner for n, c in truth.squares if c.kind == "die"}
    labels = ("empty", "1", "2", "3", "4", "5", "6")
    reading = Reading(labels, np.full((30, 7), 1 / 7), colors)
    model = ColorModel.learn(reading, owners)
    assert model.separation > 3
    p_first = model.first_owner_probability(colors)
    for square, owner in owners.items():
        assert (p_first[square] > 0.5) == (owner == 0)


def test_rendered_squares_carry_their_true_labels():
    squares = dice_squares(5, hands=0.0)
    contents = squares.truth.contents()
    files = squares.truth.files
    assert len(squares.samples) == files * squares.truth.ranks
    for index, sample in enumerate(squares.samples):
        name = f"{'abcdefghi'[index % files]}{index // files + 1}"
        content = contents.get(name)
        expected = content.value if content is not None and content.kind == "die" else 0
        assert sample.label == expected


def test_a_keyframe_keeps_the_board_and_little_else(start_frame):
    image, truth = start_frame
    pose = pose_of(truth)
    region = board_region(image, pose)
    height, width = region.shape[:2]
    assert height * width < 0.8 * image.shape[0] * image.shape[1]
    spans = pose.corners_array.max(axis=0) - pose.corners_array.min(axis=0)
    assert width >= min(spans[0], image.shape[1]) and height >= min(spans[1], image.shape[0])


def test_a_second_look_averages_tighter_crops_of_doubtful_squares_only(start_frame):
    """Squares whose best label leads by less than `SecondLook.below` nats are read again
    from tighter and shifted crops and the looks averaged; the others keep their reading."""
    from referee.app.pipeline import BoardReader, PipelineSettings
    from referee.vision.classifier import Classifier
    from referee.vision.second_look import SecondLook, lead, looked_again

    frame, truth = start_frame
    classifier = Classifier.load("dice")
    never = PipelineSettings(second_look=SecondLook(below=0.0))
    first = BoardReader(5, 6, classifier, settings=never).read(frame, pose_of(truth), 0, 0.0)
    quads = top_face_quads(pose_of(truth), (frame.shape[1], frame.shape[0]), height=DIE_HEIGHT)
    looked = looked_again(classifier, frame, quads, first.probabilities, SecondLook(below=np.inf))
    assert np.allclose(looked.sum(axis=1), 1.0)
    assert not np.allclose(looked, first.probabilities)  # every square was looked at again
    assert list(looked.argmax(axis=1)) == list(first.probabilities.argmax(axis=1))
    default = looked_again(classifier, frame, quads, first.probabilities, SecondLook())
    sure = lead(first.probabilities) >= SecondLook().below
    assert sure.any() and np.array_equal(default[sure], first.probabilities[sure])
    assert np.allclose(default[~sure], looked[~sure])


def test_a_blocked_square_read_as_an_empty_one_is_read_as_blocked() -> None:
    """No ply makes Renaissance's blocked centre empty, but a board may draw it so (a dark
    patterned centre read 0.64-0.72 empty stopped a rendered game); a piece read on it is
    still read as a piece (an illegal placement there must be seen)."""
    from referee.app.pipeline import board_referee
    from referee.rules.renaissance import RenaissanceRules
    from referee.rules.renaissance_position import BLOCKED

    game = RenaissanceRules()
    _referee, reader = board_referee(game, None)
    (centre,) = reader.blocked
    assert game.start().cover[centre] == BLOCKED
    labels = reader.labels
    probabilities = np.full((49, len(labels)), 0.01)
    probabilities[:, labels.index("empty")] = 0.6
    probabilities[centre, labels.index("blocked")] = 0.3
    probabilities[:, labels.index("tile")] = 0.2
    read = reader._as_blocked(probabilities / probabilities.sum(axis=1, keepdims=True))
    assert labels[int(np.argmax(read[centre]))] == "blocked"
    assert read[centre, labels.index("empty")] == 0.0
    np.testing.assert_allclose(read.sum(axis=1), 1.0)
    others = np.arange(49) != centre
    assert all(labels[k] == "empty" for k in np.argmax(read[others], axis=1))
    placed = probabilities.copy()
    placed[centre, labels.index("tile")] = 5.0
    read = reader._as_blocked(placed / placed.sum(axis=1, keepdims=True))
    assert labels[int(np.argmax(read[centre]))] == "tile"
