"""Resuming a live game at every point of the committed footage: a log cut after each
reading's events (the events of one reading are written together, so a kill leaves all of
them or none), then `referee live --resume` on the footage (which carries on from where the
log stops). Does every resume end with the uninterrupted run's plies, none lost and none
doubled?

One uninterrupted run first (its log is cut for the others), then one resumed run per
cut. Footage is read unpaced (speed 0: the same frames as paced, sooner).

Run: python benchmarks/live_resume.py [FOOTAGE]. Results: benchmarks/live_resume.md."""

from __future__ import annotations

import io
import json
import sys
import tempfile
import time
from pathlib import Path

from referee.app.live import LiveOptions, run_live
from referee.hardware.signals import TerminalSignals

FOOTAGE = Path(__file__).resolve().parent.parent / "tests" / "data" / "footage" / "rinne-dice-31.mp4"


def live(footage: Path, out: Path, *, resume: bool) -> float:
    """Referee `footage` into `out`; the seconds it took."""
    start = time.perf_counter()
    options = LiveOptions("rinne", camera=str(footage), out=out, resume=resume, speed=0)
    run_live(options, print_line=lambda line: None, signals=TerminalSignals(io.StringIO()))
    return time.perf_counter() - start


def accepted(log: Path) -> list[str]:
    lines = log.read_text().splitlines()[1:]
    return [event["move"] for event in map(json.loads, lines) if event["kind"] == "ACCEPTED"]


def main(footage: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="live-resume-"))
    whole = work / "whole"
    seconds = live(footage, whole, resume=False)
    lines = (whole / "game.jsonl").read_text().splitlines(keepends=True)
    expected = accepted(whole / "game.jsonl")
    print(f"uninterrupted: {len(expected)} plies in {seconds:.1f} s")
    print("| log cut after | last event at | resumed run's first event | plies after resume | "
          "same plies | wall s |")
    print("| --- | ---: | --- | ---: | --- | ---: |")
    readings = [json.loads(line) for line in lines[1:]]
    cuts = [n + 2 for n, event in enumerate(readings)  # after the last event of each reading
            if n + 1 == len(readings) or readings[n + 1]["frame_index"] != event["frame_index"]]
    for cut in cuts:
        out = work / f"cut-{cut}"
        out.mkdir()
        (out / "game.jsonl").write_text("".join(lines[:cut]))
        last = json.loads(lines[cut - 1])
        seconds = live(footage, out, resume=True)
        resumed = [json.loads(x) for x in (out / "game.jsonl").read_text().splitlines()[cut:]]
        first = f"{resumed[0]['kind']} at {resumed[0]['time_s']:.1f} s" if resumed else "none"
        after = sum(event["kind"] == "ACCEPTED" for event in resumed)
        same = "yes" if accepted(out / "game.jsonl") == expected else "NO"
        what = f"{last['kind']} ply {last['ply']}"
        print(f"| {what} | {last['time_s']:.1f} s | {first} | {after} | {same} | {seconds:.1f} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else FOOTAGE)
