"""Broken files through every player command (check, perft, play, replay, live, classify,
calibrate check, calibrate board, camera, signals): a seeded generator breaks a valid file of
each kind one way each (tests/faults/broken.py), and every command that reads it must end
with one clear line on stderr and a non-zero exit (or take a file the break left valid), no
traceback, no hang, nothing that was there overwritten. All run in this process through
`referee.cli.main`; a sample runs as processes too, where what C libraries print on stderr
shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT
from tests.faults.broken import MUTATIONS, Inputs, cases, run_case, subprocess_case

SEED = 20250630
PER_KIND = 12  # broken files of each of the 12 kinds


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("broken")


@pytest.fixture(scope="module")
def inputs(work: Path) -> Inputs:
    return Inputs(work / "inputs")


@pytest.mark.slow
def test_every_command_refuses_every_broken_file_in_one_line(work: Path, inputs: Inputs
                                                             ) -> None:
    problems, refused = [], 0
    all_cases = list(cases(inputs, work / "in-process", SEED, PER_KIND))
    assert len({case.folder for case in all_cases}) == 12 * PER_KIND
    for case in all_cases:
        outcome = run_case(case)
        if outcome.problem is not None:
            problems.append(f"{case.name}: {outcome.problem}: {outcome.err!r}")
        refused += outcome.refused
    assert problems == []
    assert refused > 0.8 * len(all_cases)  # most breaks are refused; a few leave a valid file


# As processes: one break of each kind, with every command that reads it.
SAMPLE = {("record", "flipped"), ("ruleset", "number"), ("camera file", "line-doubled"),
          ("board profile", "number"), ("model", "flipped"), ("model card", "number"),
          ("pin map", "number"), ("game log", "cut"), ("video", "flipped"),
          ("mp4 video", "cut"), ("image", "flipped"), ("image in a footage folder", "flipped")}


@pytest.mark.slow
def test_a_sample_as_processes(work: Path, inputs: Inputs) -> None:
    chosen = [case for case in cases(inputs, work / "processes", SEED, len(MUTATIONS))
              if (case.kind, case.mutation) in SAMPLE]
    assert len({(case.kind, case.mutation) for case in chosen}) == len(SAMPLE)
    problems = {}
    for case in chosen:
        outcome = subprocess_case(case)
        if outcome.problem is not None:
            problems[case.name] = f"{outcome.problem}: {outcome.err!r}"
    assert problems == {}


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["cut short", "a byte flipped"])
def test_classify_of_a_broken_png_prints_our_line_alone(damage: str, inputs: Inputs,
                                                        tmp_path: Path) -> None:
    """Decoding a broken PNG, libpng ("libpng error: IDAT: ...") and OpenCV ("PNG input buffer
    is incomplete") print on the process's stderr, below any log level: `referee classify`
    keeps them off it, so the player reads one line, ours."""
    png = inputs.image.read_bytes()
    middle = len(png) // 2
    broken = tmp_path / "broken.png"
    broken.write_bytes(png[:middle] if damage == "cut short"
                       else png[:middle] + bytes([png[middle] ^ 0xFF]) + png[middle + 1:])
    done = subprocess.run([sys.executable, "-m", "referee", "classify", "--pieces", "penta",
                           str(broken)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert done.stderr == f"referee: {broken}: not a readable image\n"
