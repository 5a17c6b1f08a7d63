"""A soak in small: the committed Rinne game's first five plies played, then taken back one
by one, looped as one camera that never stops: every loop, the referee logs each ply and
each take-back, in order, and it leaves no file open. benchmarks/faults.md loops it for three
hours of footage."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import onnxruntime  # noqa: F401  (importing it opens a database of its own for good)
import pytest

from referee.app.live import run_live
from referee.hardware.frames import BaseSource, Frame
from referee.hardware.signals import TerminalSignals
from referee.hardware.sources import open_source
from referee_lab.synth.video import ffmpeg_exe
from tests.faults.conftest import GAME, live_options

EXPECTED = json.loads(GAME.with_suffix(".expected.json").read_text())
PLAYED = 5  # the plies before the winning one, which would end the game
# A little before the winning ply's hand comes into view: the board still after ply 5.
TURN_FRAME = EXPECTED["hand_frames"][PLAYED][0] - 10
PLIES = [ply.split(". ", 1)[1] for ply in EXPECTED["plies"][:PLAYED]]
# What each loop logs: the plies, then their take-backs, the last ply first.
CHANGES = [f"ACCEPTED {ply}" for ply in PLIES] + [f"TAKE_BACK {ply}" for ply in PLIES[::-1]]


def palindrome_footage(to: Path) -> Path:
    """GAME's frames up to TURN_FRAME, then the same frames backwards: five plies played,
    then undone hand by hand back to the start position. ffmpeg reverses and writes them in
    a process of its own, so the frames never swell the memory of the one that is measured;
    x264 near-lossless (CRF 18) and fast ("ultrafast")."""
    graph = (f"[0:v]trim=end_frame={TURN_FRAME},setpts=PTS-STARTPTS,split[played][back];"
             "[back]reverse[taken];[played][taken]concat=n=2:v=1:a=0[out]")
    exe = ffmpeg_exe()
    assert exe is not None, "imageio-ffmpeg is needed to write the soak's footage"
    subprocess.run([exe, "-nostdin", "-y", "-loglevel", "error", "-i", str(GAME),
                    "-filter_complex", graph, "-map", "[out]", "-an", "-c:v", "libx264",
                    "-preset", "ultrafast", "-crf", "18", "-pix_fmt", "yuv420p",
                    "-movflags", "+faststart", str(to)], check=True)
    return to


def changes(log: Path) -> list[str]:
    """The logged plies and take-backs, as "KIND move"."""
    events = map(json.loads, log.read_text().splitlines()[1:])
    return [f"{e['kind']} {e['move']}" for e in events if e["kind"] in ("ACCEPTED", "TAKE_BACK")]


def open_files() -> list[str]:
    """What this process holds open, one entry a descriptor."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the one listdir itself held
            found.append(os.readlink(f"/proc/self/fd/{fd}"))
    return sorted(found)


class Looped(BaseSource):
    """A video played `loops` times over as one camera: frame numbers and times carry on."""

    def __init__(self, path: Path, loops: int) -> None:
        self.path, self.loops = path, loops
        self.description = f"{path} looped {loops} times"

    def __iter__(self) -> Iterator[Frame]:
        index, time_s = 0, 0.0
        for _ in range(self.loops):
            source = open_source(self.path)
            try:
                for frame in source:
                    yield dataclasses.replace(frame, index=index + frame.index,
                                              timestamp_s=time_s + frame.timestamp_s)
            finally:
                source.close()
            index, time_s = index + frame.index + 1, time_s + frame.timestamp_s + 1 / 30


@pytest.fixture(scope="module")
def palindrome(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return palindrome_footage(tmp_path_factory.mktemp("soak") / "palindrome.mp4")


@pytest.mark.slow
def test_looped_plies_and_take_backs_are_all_logged_and_no_file_is_left_open(
        palindrome: Path, tmp_path: Path) -> None:
    before = open_files()
    status = run_live(live_options(tmp_path / "game", footage=palindrome),
                      print_line=lambda _: None, signals=TerminalSignals(io.StringIO()),
                      open_camera=lambda: Looped(palindrome, 2))
    assert status == 0
    assert open_files() == before
    assert changes(tmp_path / "game" / "game.jsonl") == CHANGES * 2
