"""The finder's sets of rendered frames and the comparison of two runs over them
(`referee_lab.finder_sets`, which `benchmarks/localise_sets.py` runs)."""

import json
from pathlib import Path

from referee_lab.finder_sets import SETS, compare


def write_run(folder: Path, errors: dict[int, float | None]) -> Path:
    folder.mkdir()
    rows = [{"i": i, "game": "flipflop-3x3", "tilt": 10.0, "hand": i == 8, "error": e, "note": "",
             "ms": 500.0} for i, e in errors.items()]
    (folder / "a90000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def test_compare_counts_the_frames_both_runs_read_and_lists_those_that_changed(tmp_path: Path) -> None:
    before = write_run(tmp_path / "before", {2: 0.1, 8: None, 14: 3.0, 20: 0.2})
    after = write_run(tmp_path / "after", {2: 0.1, 8: 0.3, 14: 2.5})
    text = compare(before, after)
    assert "| a90000 | 3 | 1 (33.3%) | 1 | 1 | 500 |" in text   # before, frame 20 not read after
    assert "| a90000 | 3 | 2 (66.7%) | 0 | 1 | 500 |" in text
    changed = [line.strip() for line in text.split("changed:")[1].strip().splitlines()]
    assert changed == ["a90000 8 flipflop-3x3 hand: refused -> 0.30%",
                       "a90000 14 flipflop-3x3: 3.00% -> 2.50%"]


def test_the_headline_sets_are_the_five_held_out_all_games_sets() -> None:
    held_out = SETS["held-out"]
    assert [s.seed for s in held_out] == [90000, 100000, 170000, 190000, 200000]
    assert {s.frames for s in held_out} == {240} and {len(s.games) for s in held_out} == {6}
    # 3x3-only sets share seeds with all-games sets: they are cached apart
    assert {s.cache_folder for s in SETS["x3-held-out"]} == {"x3"}
