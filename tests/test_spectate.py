"""What spectators see (`referee/app/spectate.py`): the boards' views, their happenings in
players' words and the camera pictures, fed by `referee live` as it referees, the camera's
own cues included."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from referee.app.events import Event, EventKind
from referee.app.live import LiveOptions, run_live
from referee.app.spectate import BoardFeed, BoardView, Happening, Spectators, small_picture
from referee.hardware.signals import TerminalSignals
from referee.rules import find_game
from referee.rules.core import Match
from referee.rules.records import read_record
from referee.vision.pose import BoardPose
from tests import ROOT
from tests.footage_camera import PLIES, FakeClock, ScriptedCamera, Stretch

GREEN = np.array([60, 220, 60])


def test_live_shows_the_game_and_the_camera_lost_to_the_spectators(tmp_path: Path):
    spectators = Spectators()
    seen: list[BoardView | Happening] = []
    spectators.subscribe(seen.append)
    clock = FakeClock()
    camera = ScriptedCamera([Stretch(0.0, 5.0, lost=True), None, Stretch(5.0, 10.0)])
    options = LiveOptions("rinne", camera="0", out=tmp_path / "game", camera_wait_s=60.0)
    with open(tmp_path / "cues.txt", "w") as stream:
        run_live(options, print_line=lambda line: None, signals=TerminalSignals(stream),
                 open_camera=camera, clock=clock, sleep=clock.sleep, spectators=spectators,
                 board_name="table-2")
    kinds = [update.kind for update in seen if isinstance(update, Happening)]
    assert kinds == ["STARTED", "ACCEPTED", "CAMERA_LOST", "CAMERA_BACK", "ACCEPTED"]
    words = [update.text for update in seen if isinstance(update, Happening)]
    assert words[1] == "White played " + PLIES[0].split(". ", 1)[1]
    assert words[2] == "Camera lost"
    view = spectators.views()["table-2"]
    assert (view.ply, view.turn, view.result) == (2, "White", "")
    assert view.last_move == "1... " + PLIES[1].split(". ", 1)[1]
    assert [line for line in view.record.splitlines() if line[:1].isdigit()] == list(PLIES[:2])
    assert "<svg" in view.diagram_svg
    picture = spectators.picture("table-2")
    assert picture is not None and picture.image_bgr.shape[1] == 320
    assert (np.abs(picture.image_bgr.astype(int) - GREEN).max(axis=2) < 40).any()  # the grid


def test_a_renaissance_view_has_its_score_and_the_winner():
    game = find_game("renaissance")
    match: Match = Match(game)  # type: ignore[type-arg]
    for ply in read_record(ROOT / "tests/data/records/renaissance-sample.txt").plies:
        match.push_text(ply.text)
    spectators = Spectators()
    feed = BoardFeed(spectators, "table-3", match)
    feed.on_event(Event(EventKind.GAME_OVER, 100, 300.0, len(match.moves)))
    view = spectators.views()["table-3"]
    assert view.score and view.result and view.turn is None
    assert view.status == f"Game over: {view.result}"
    assert BoardView.from_json(view.to_json()) == view
    happening = spectators.happenings("table-3")[-1]
    assert Happening.from_json(happening.to_json()) == happening


def test_the_picture_shows_the_grid_where_the_pose_puts_it():
    frame = np.full((720, 1280, 3), 30, np.uint8)
    h = np.array([[50.0, 0, 400], [0, 50.0, 200], [0, 0, 1]])
    pose = BoardPose.from_homography(h, 5, 6)
    picture = small_picture(frame, pose, 320)
    assert picture.shape == (180, 320, 3)
    green = np.abs(picture.astype(int) - GREEN).max(axis=2) < 40
    ys, xs = np.nonzero(green)
    # the board's corners (400, 200) and (650, 500), a quarter the size, to a pixel
    assert np.abs(np.array([xs.min(), ys.min(), xs.max(), ys.max()]) - [100, 50, 162.5, 125]).max() <= 1
    assert not (np.abs(small_picture(frame, None, 320).astype(int) - GREEN).max(axis=2) < 40).any()


def test_subscribers_see_each_update_in_order_until_they_leave():
    spectators = Spectators(history=2)
    seen: list[BoardView | Happening] = []
    leave = spectators.subscribe(seen.append)
    updates = [Happening("b", "ILLEGAL", f"illegal move {n}", float(n), 0) for n in range(3)]
    for update in updates:
        spectators.publish(update)
    leave()
    spectators.publish(Happening("b", "RESTORED", "all clear", 4.0, 0))
    assert seen == updates
    assert [h.text for h in spectators.happenings("b")] == ["illegal move 2", "all clear"]
