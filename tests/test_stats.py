"""`referee stats`: results by side, game lengths and Tensei's dice rolls from game logs. The
committed logs (`tests/data/stats/`, made by `benchmarks/dice_stats.py`) are rendered Tensei
games refereed from the camera, rolled with a fair die and with a loaded one; the small logs
here are written by the referee's own `Recorder`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from referee.app.events import Event, EventKind
from referee.app.record import Recorder
from referee.app.stats import (
    ALPHA,
    REREAD_S,
    MissingExtraError,
    collect,
    dice_tests,
    face_test,
    game_lines,
    read_game,
    run_stats,
)
from referee.errors import RecordError
from referee.rules import find_game
from referee.rules.core import Match
from referee.rules.records import read_record
from referee.rules.rinne import State
from referee_lab.synth.games import game_spec
from referee_lab.synth.loaded_dice import FAIR, loaded, rolled_game, rolled_planner
from tests import DATA, ROOT

STATS = DATA / "stats"
RECORDS = DATA / "records"
FACE_OF = {state.title: int(state) for state in State}


def record_plies(name: str, count: int | None = None) -> list[str]:
    return [ply.text for ply in read_record(RECORDS / name).plies[:count]]


def write_log(folder: Path, game_name: str, steps: list[tuple[str, str]],
              seconds: dict[int, float] | None = None) -> Path:
    """A log written by the referee's Recorder: each step (kind, move) is `accept`, `pending`
    (a 6 seen for that move), `takeback` or `illegal`; 3 s apart, or `seconds[step]` after
    the one before."""
    game = find_game(game_name)
    match: Match = Match(game)
    recorder = Recorder(folder, game, {})
    recorder.write(Event(EventKind.STARTED, 0, 0.0, 0), match)
    time_s = 0.0
    for frame, (kind, move) in enumerate(steps, start=1):
        time_s += (seconds or {}).get(frame - 1, 3.0)
        if kind == "accept":
            match.push_text(move)
            recorder.write(Event(EventKind.ACCEPTED, frame, time_s, len(match.moves), move), match)
        elif kind == "takeback":
            match.pop()
            recorder.write(Event(EventKind.TAKE_BACK, frame, time_s, len(match.moves), move), match)
        else:
            event_kind = EventKind.ROLL_PENDING if kind == "pending" else EventKind.ILLEGAL
            recorder.write(Event(event_kind, frame, time_s, len(match.moves), move or None), match)
    recorder.finish(match)
    return recorder.log_path


def accepted(plies: list[str]) -> list[tuple[str, str]]:
    return [("accept", ply) for ply in plies]


# Tensei, White's die on a2 and Black's on a5 stepping back and forth as Kings: the start
# position comes back a third time after 8 plies, a draw.
SHUFFLE = ["King a2 - a1 = King", "King a5 - a6 = King", "King a1 - a2 = King",
           "King a6 - a5 = King"] * 2


@pytest.fixture
def small_logs(tmp_path: Path) -> Path:
    """A won game of Rinne, an unfinished one, a won game of Zensū and a drawn Tensei."""
    write_log(tmp_path / "won", "rinne", accepted(record_plies("rinne-sample.txt")))
    write_log(tmp_path / "cut", "rinne", accepted(record_plies("rinne-sample.txt", 10)))
    write_log(tmp_path / "zensu", "zensu", accepted(record_plies("zensu-sample.txt")))
    write_log(tmp_path / "drawn", "tensei", accepted(SHUFFLE))
    return tmp_path


def test_results_by_side_and_lengths(small_logs: Path):
    kinds: dict[str, list] = {}
    for game in collect([small_logs]).games:
        kinds.setdefault(game.game, []).append(game)
    assert game_lines(kinds["rinne"]) == [
        "Rinne (5x6 standard): 2 games", "  wins: White 1, Black 0; draws 0; unfinished 1",
        "  length in plies: min 10, median 20.5, max 31"]
    assert game_lines(kinds["zensu"])[1] == "  wins: Turquoise 0, Red 1; draws 0; unfinished 0"
    assert game_lines(kinds["tensei"])[1:] == ["  wins: White 0, Black 0; draws 1; unfinished 0",
                                               "  length in plies: min 8, median 8, max 8"]


def test_the_table_says_each_game_and_the_tensei_rolls(small_logs: Path, capsys):
    assert run_stats([small_logs]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 games read\n")
    assert "\nZensū (6x9 standard): 1 game\n" in out
    # Tensei: 8 rolls, each a King (face 1), too few to judge; Rinne has no dice rolls.
    every = next(line for line in out.splitlines() if line.startswith("  all dice"))
    assert every.split()[2:] == ["8", "0", "0", "0", "0", "0", "8", "-", "-", "too", "few", "rolls",
                                 "to", "judge", "(under", "30)"]
    assert out.count("Rolls seen") == 1


def test_a_ply_rolls_its_sixes_then_its_state_and_a_take_back_takes_them_away(tmp_path: Path):
    steps = [("pending", "King b3 - c4 = King"), ("pending", "King b3 - c4 = King"),
             ("accept", "King b3 - c4 = Queen"),  # two 6s, then a Queen
             ("illegal", ""), ("pending", "King e5 - e4 = King"),
             ("accept", "King e5 - e4 = Rook"),  # taken back with its 6 ...
             ("takeback", "King e5 - e4 = Rook"),
             ("accept", "King a5 - a4 = Bishop"),  # ... and another ply made
             ("accept", "Queen c4 - c3 = Knight"),
             ("pending", "King e2 - d2 = King")]  # a 6 still pending when the log ends
    game = read_game(write_log(tmp_path, "tensei", steps))
    assert game.ply_faces == ((6, 6, 5), (3,), (2,))
    assert game.ply_dice == ("White b3", "Black a5", "White b3")
    assert game.result == "unfinished"


def test_a_six_read_twice_in_one_still_moment_is_one_six(tmp_path: Path):
    pending = ("pending", "King b3 - c4 = King")
    steps = [pending, pending, pending, ("accept", "King b3 - c4 = Queen")]
    # Read again 0.9 s after the first 6 (a hand leaving the frame), then rolled again: 3 s.
    game = read_game(write_log(tmp_path, "tensei", steps, {1: 0.9}))
    assert game.ply_faces == ((6, 6, 5),)


def test_dice_are_followed_from_their_start_square_and_a_capture_removes_one(tmp_path: Path):
    # The game of tests/data/footage/tensei-dice-whole: White's die from b3 takes Black's c6.
    steps = accepted(["King b3 - c4 = Queen", "King e5 - e4 = Queen", "King e2 - e1 = Knight",
                      "King b4 - a3 = Knight", "Queen c4 x c6 = Bishop", "Knight a3 - b1 = King"])
    game = read_game(write_log(tmp_path, "tensei", steps))
    assert game.ply_dice == ("White b3", "Black e5", "White e2", "Black b4", "White b3",
                             "Black b4")
    assert game.result == "White" and game.plies == 6
    every, dice = dice_tests([game])
    assert every.counts == (1, 2, 1, 0, 2, 0)
    assert [d.label for d in dice] == ["White e2", "White b3", "Black b4", "Black e5"]
    assert dice[1].counts == (0, 0, 1, 0, 1, 0)


def test_few_rolls_are_too_few_to_judge_and_many_are_tested():
    few = face_test("few", [1, 2, 3, 4, 5, 6] * 4 + [1] * 5)
    assert few.rolls == 29 and few.p_value is None and not few.flagged
    assert few.verdict().startswith("too few rolls to judge")
    fair = face_test("fair", [1, 2, 3, 4, 5, 6] * 10)
    assert fair.p_value == pytest.approx(1.0) and not fair.flagged
    assert fair.verdict().startswith("no sign of loading")
    loaded = face_test("loaded", [1] * 20 + [2, 3, 4, 5, 6] * 4)
    assert loaded.p_value is not None and loaded.p_value < ALPHA and loaded.flagged
    assert loaded.verdict().startswith("FLAGGED")


def test_a_broken_log_in_a_folder_is_skipped_with_a_line(small_logs: Path, capsys):
    broken = small_logs / "broken" / "game.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"format": "referee-log/1", "game": "rinne"}\n{not json\n{"kind": 1}\n')
    assert run_stats([small_logs]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"referee: skipped {broken}: line 2 is corrupt"]
    assert captured.out.startswith("4 games read; 1 log skipped (said above)\n")


def test_a_missing_path_a_broken_log_named_and_an_empty_folder_are_errors(small_logs: Path,
                                                                          tmp_path: Path):
    with pytest.raises(RecordError, match="nowhere: no such file or folder"):
        run_stats([tmp_path / "nowhere"])
    named = tmp_path / "notes.txt"
    named.write_text("hello\n")
    with pytest.raises(RecordError, match=r"notes\.txt: not a game log"):
        run_stats([small_logs, named])
    cut = tmp_path / "cut.jsonl"  # a log whose game cannot be replayed: named, an error
    cut.write_text((small_logs / "won" / "game.jsonl").read_text().replace('"ply": 1,', '"ply": 2,'))
    with pytest.raises(RecordError, match="inconsistent at ply 2"):
        run_stats([cut])
    (tmp_path / "empty").mkdir()
    with pytest.raises(RecordError, match="no game logs"):
        run_stats([tmp_path / "empty"])


def test_without_scipy_one_line_says_how_to_install_it(small_logs: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy raises ImportError
    with pytest.raises(MissingExtraError, match=r"pip install 'referee\[stats\]'"):
        run_stats([small_logs / "drawn"])


def test_a_die_rolls_again_on_a_six_and_a_loaded_one_favours_its_face():
    rng = np.random.default_rng(5)
    plies = [FAIR.roll(rng) for _ in range(3000)]
    assert all(faces[-1] != 6 and set(faces[:-1]) <= {6} for faces in plies)
    sixes = sum(len(faces) - 1 for faces in plies) / sum(len(faces) for faces in plies)
    assert sixes == pytest.approx(1 / 6, abs=0.02)
    die = loaded(1, 0.4)
    assert die.chances == pytest.approx((0.4, 0.12, 0.12, 0.12, 0.12, 0.12))
    ones = [faces[-1] for faces in (die.roll(rng) for _ in range(3000))].count(1) / 3000
    assert ones == pytest.approx(0.4 / 0.88, abs=0.03)  # of the rolls that are not a 6


def test_a_rolled_game_shows_each_roll_on_camera():
    game = rolled_game("tensei", 760008, FAIR, 24)
    assert game is not None and game.match.is_over()
    assert [faces[-1] for faces in game.rolls] == [int(m.new_state) for m in game.match.moves]
    acts = rolled_planner(game)(game_spec("tensei"), game.match, "dice", (),
                                np.random.default_rng(0))
    # A trip a ply (the die set down showing its first face), then one a roll after a 6.
    assert [a.kind for a in acts].count("move") == len(game.match.moves)
    assert [a.kind for a in acts].count("roll") == sum(len(f) - 1 for f in game.rolls) > 0
    shown = [act.steps[-1].content.value for act in acts]
    assert shown == [face for faces in game.rolls for face in faces]
    assert [a.note == "roll pending" for a in acts] == [face == 6 for face in shown]
    again = rolled_game("tensei", 760008, FAIR, 24)  # the seed decides it all
    assert again is not None and again.rolls == game.rolls
    assert list(again.match.ply_texts()) == list(game.match.ply_texts())


# --- the committed logs of rendered games -----------------------------------------------


def faces_in_log(path: Path) -> list[int]:
    """The faces a log's events give, read from its JSON lines directly: the new state of
    each accepted move, and a 6 per "roll pending" but one that repeats the one just before
    within REREAD_S (these logs take nothing back)."""
    events = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    assert not any(e["kind"] == "TAKE_BACK" for e in events)
    faces = []
    for before, event in zip([{}, *events], events, strict=False):
        if event["kind"] == "ACCEPTED":
            faces.append(FACE_OF[event["move"].rpartition("= ")[2]])
        elif event["kind"] == "ROLL_PENDING" and not (
                before.get("kind") == "ROLL_PENDING" and before["move"] == event["move"]
                and event["time_s"] - before["time_s"] < REREAD_S):
            faces.append(6)
    return faces


@pytest.mark.parametrize(("name", "flagged"), [("fair", False), ("loaded", True)])
def test_the_loaded_die_is_flagged_and_the_fair_one_not(name: str, flagged: bool):
    games = collect([STATS / name]).games
    every, _dice = dice_tests(list(games))
    assert every.rolls >= 100
    assert every.flagged is flagged
    faces = [face for log in sorted((STATS / name).rglob("game.jsonl")) for face in faces_in_log(log)]
    assert every.counts == tuple(faces.count(face) for face in range(1, 7))


def test_the_figures_are_written_as_images(tmp_path: Path, capsys):
    assert run_stats([STATS / "loaded"], plots=tmp_path) == 0
    out = capsys.readouterr().out
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["dice-tensei-each.png", "dice-tensei.png", "lengths.png"]
    import matplotlib.image

    for name in names:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        image = matplotlib.image.imread(tmp_path / name)
        assert image.ndim == 3 and min(image.shape[:2]) >= 300 and np.ptp(image) > 0
        assert f"figure: {tmp_path / name}" in out


def test_the_command_flags_the_loaded_die(tmp_path: Path):
    result = subprocess.run([sys.executable, "-m", "referee.cli", "stats",
                             str(STATS / "loaded"), "--plots", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2].startswith("Tensei (5x6 standard): ")
    every = next(line for line in lines if line.startswith("  all dice"))
    assert "FLAGGED: not a fair die (p < 0.01)" in every
    assert (tmp_path / "dice-tensei.png").is_file()
