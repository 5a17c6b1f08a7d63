"""How much the squares a ply changed, and those it left, change in the image
(`vision.change.square_changes`) on the committed footage: what `unchanged_below` (the
grey level under which a square counts as unchanged, `PipelineSettings`) rests on.

Every clip in tests/data/footage/ is replayed through the real pipeline; at each reading
accepted as one ply, its frame is compared with the frame that showed the position before,
and each square counted as changed where the two positions' looks differ (`appearance`).
A square counts as unchanged to the decoder where both signals say so: its change under the
threshold and its best label still the old one.

    PYTHONPATH=. .venv/bin/python benchmarks/square_changes.py

Prints a Markdown table a game: squares, the smallest and 1st percentile of the changed
squares' change, the median, 99th percentile and largest of the unchanged squares', how many
changed squares measured under the threshold, and how many of those the classifier also read
as unchanged (the decoder would take them for unchanged), and the share of the unchanged
squares both signals show unchanged; then the same the other way (`changed_above`): the
unchanged squares both signals show changed, and the share of the changed squares so."""

from __future__ import annotations

import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from referee.app.events import EventKind
from referee.app.pipeline import GameLoop, PipelineSettings
from referee.app.replay import replay_footage
from referee.app.state_machine import Referee
from referee.vision.change import square_changes
from referee_lab.footage_check import Expected

ROOT = Path(__file__).resolve().parent.parent
FOOTAGE = ROOT / "tests" / "data" / "footage"


Figures = tuple[list[float], list[float], list[bool], list[bool]]


def measure(video: Path, changed: list[float], unchanged: list[float], changed_read: list[bool],
            unchanged_read: list[bool]) -> None:
    """Append each changed and unchanged square's change, and whether the classifier's best
    label was the old one."""
    expected = Expected.load(video.with_suffix(".expected.json"))
    judge, on_reading = GameLoop._judge, Referee.on_reading
    shown: dict[str, Any] = {}

    def kept(self: Referee, reading: Any) -> Any:
        shown["reading"] = reading
        return on_reading(self, reading)

    def measured(self: GameLoop, frame: np.ndarray, *args: Any) -> Any:
        match = self.referee.match
        plies = len(match.moves)
        events = judge(self, frame, *args)
        accepted = [e for e in events if e.kind is EventKind.ACCEPTED]
        if len(accepted) == 1 and len(match.moves) == plies + 1 and shown.get("plies") == plies:
            pose = self.reader.pose
            assert pose is not None
            changes = square_changes(frame, shown["frame"], pose)
            before, _ = self.referee.inferer.appearance(match.positions[-2])
            after, _ = self.referee.inferer.appearance(match.positions[-1])
            read_old = np.argmax(shown["reading"].probabilities, axis=1) == before
            changed.extend(changes[before != after])
            unchanged.extend(changes[before == after])
            changed_read.extend(read_old[before != after])
            unchanged_read.extend(read_old[before == after])
        if accepted or any(e.kind is EventKind.STARTED for e in events):
            shown.update(frame=frame, plies=len(match.moves))
        return events

    GameLoop._judge = measured  # type: ignore[method-assign]
    Referee.on_reading = kept  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as out:
            replay_footage(video, expected.game, pieces=expected.pieces, out=out)
    finally:
        GameLoop._judge = judge  # type: ignore[method-assign]
        Referee.on_reading = on_reading  # type: ignore[method-assign]


def main() -> None:
    threshold, above = PipelineSettings().unchanged_below, PipelineSettings().changed_above
    figures: dict[str, Figures] = defaultdict(lambda: ([], [], [], []))
    for video in sorted(FOOTAGE.glob("*.mp4")):
        game = Expected.load(video.with_suffix(".expected.json")).game
        measure(video, *figures[game])
    print(f"| game | squares changed | changed: min / p1 | unchanged | unchanged: median / p99 / "
          f"max | changed under {threshold:g} | ... and read unchanged | unchanged taken so | "
          f"unchanged {above:g} or over and read changed | changed taken so |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for game, (changed, unchanged, changed_read, unchanged_read) in sorted(figures.items()):
        c, u = np.asarray(changed), np.asarray(unchanged)
        low = c < threshold
        taken = (u < threshold) & np.asarray(unchanged_read)
        wrongly_changed = (u >= above) & ~np.asarray(unchanged_read, dtype=bool)
        changed_taken = (c >= above) & ~np.asarray(changed_read, dtype=bool)
        print(f"| {game} | {len(c)} | {c.min():.1f} / {np.percentile(c, 1):.1f} | {len(u)} | "
              f"{np.median(u):.1f} / {np.percentile(u, 99):.1f} / {u.max():.1f} | "
              f"{int(low.sum())} | {int((low & np.asarray(changed_read)).sum())} | "
              f"{100 * taken.mean():.1f}% | {int(wrongly_changed.sum())} | "
              f"{100 * changed_taken.mean():.1f}% |")


if __name__ == "__main__":
    main()
