"""The fault campaign of benchmarks/faults.md, rerun: each fault tried on the committed
footage (a whole game of Rinne) and counted: plies lost, wrong plies, hangs.

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/faults.py [--quick]

Prints one markdown table per fault and a summary table. --quick: fewer end-to-end runs and
broken files, and 3 minutes of footage soaked rather than 3 hours (--soak-hours H sets it).
The tests in tests/faults/ hold each fault's property; this counts it at scale."""

from __future__ import annotations

import argparse
import bisect
import errno
import functools
import io
import itertools
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple
from unittest import mock

import cv2

from referee.app.live import LiveOptions, run_live, start_referee
from referee.cli import main as referee_main
from referee.hardware.cues import Cue, cue_line
from referee.hardware.frames import BaseSource, Frame, make_frame
from referee.hardware.signals import TerminalSignals
from tests import ROOT
from tests.faults.broken import MUTATIONS, Inputs, cases, run_case, subprocess_case
from tests.faults.conftest import GAME, PIECES, LiveRun, live_options, referee_live
from tests.faults.test_disk_full import FailingFrom
from tests.faults.test_footage_cut import GAME as CUT_GAME
from tests.faults.test_footage_cut import HANDS_GONE, OFFSETS, PLIES, UNOPENABLE, recording
from tests.faults.test_power_cut import changes, write_ends
from tests.faults.test_soak import CHANGES as SOAK_CHANGES
from tests.faults.test_soak import PLAYED, TURN_FRAME, open_files, palindrome_footage

CHANGES = ("ACCEPTED", "TAKE_BACK", "GAME_OVER")
SUMMARY: list[tuple[str, int, str, str]] = []  # fault, tries, outcome, where


def table(header: list[str], rows: list[list[Any]]) -> None:
    print("| " + " | ".join(header) + " |")
    print("| " + " | ".join("---" for _ in header) + " |")
    for row in rows:
        print("| " + " | ".join(str(cell) for cell in row) + " |")
    print()


def summary(fault: str, tries: int, outcome: str, command: str) -> None:
    SUMMARY.append((fault, tries, outcome, command))


def lost_and_wrong(got: list[str], want: list[str]) -> tuple[int, int]:
    """Plies missing from `got` (a prefix of `want` expected) and plies in it that differ."""
    wrong = sum(g != w for g, w in zip(got, want, strict=False)) + max(0, len(got) - len(want))
    return max(0, len(want) - len(got)), wrong


# --- 1. a power cut at every byte of the log ----------------------------------------------


ZENSU = ROOT / "tests" / "data" / "footage" / "zensu-whole.mp4"


def _options(out: Path, game: str, footage: Path, *, resume: bool = False) -> LiveOptions:
    return LiveOptions(game, camera=str(footage), pieces=PIECES if game == "rinne" else None,
                       out=out, resume=resume, speed=0)


def _live_run(out: Path, game: str, footage: Path, *, resume: bool = False) -> LiveRun:
    lines: list[str] = []
    assert run_live(_options(out, game, footage, resume=resume), print_line=lines.append,
                    signals=TerminalSignals(io.StringIO())) == 0
    return LiveRun(out, (out / "game.jsonl").read_bytes(), (out / "game.txt").read_text(), lines)


def power_cut(work: Path, whole: LiveRun, quick: bool, *, game: str = "rinne",
              footage: Path = GAME) -> None:
    print(f"## A power cut at every byte of the log ({game})\n")
    log, events = whole.log, whole.events
    ends = write_ends(log)
    moves = [e["move"] for e in events if e["kind"] == "ACCEPTED"]

    def fake(game: Any, pieces: Any, *, match: Any, **_: Any) -> tuple[Any, None]:
        return SimpleNamespace(match=match), None

    outcomes: Counter[str] = Counter()
    with mock.patch("referee.app.live.board_referee", fake):
        for offset in range(len(log) + 1):
            folder = work / f"cut-{offset}"
            folder.mkdir()
            (folder / "game.jsonl").write_bytes(log[:offset])
            live = start_referee(_options(folder, game, footage, resume=True),
                                 print_line=lambda _: None)
            live.recorder.close()
            kept = (folder / "game.jsonl").read_bytes()
            if offset < ends[0]:
                ok = live.resumed_at_s is None and kept.count(b"\n") == 1
                outcomes["a new game (the header was cut)" if ok else "WRONG"] += 1
                continue
            end = max(end for end in ends if end <= offset)
            held = [json.loads(line) for line in kept.splitlines()[1:]]
            replayed = list(live.referee.match.ply_texts())
            want = moves[:sum(e["kind"] == "ACCEPTED" for e in held)]
            if kept == log[:end] and replayed == want:
                outcomes["resumed at the last whole reading before the cut"] += 1
            else:
                outcomes["WRONG"] += 1
    print(f"Every byte offset 0..{len(log)} of the log of an uninterrupted `referee live` run "
          f"of `{footage.relative_to(ROOT)}` ({len(moves)} plies, {len(events)} events in "
          f"{len(ends) - 1} readings), cut there and resumed as `--resume` does "
          "(`start_referee`):\n")
    table(["outcome", "offsets"], [[k, v] for k, v in sorted(outcomes.items())])
    summary(f"power cut at every byte of the log, {game} (resume's log and replayed game)",
            len(log) + 1, f"{outcomes['WRONG']} wrong, 0 hangs",
            "`pytest tests/faults/test_power_cut.py`")
    # End to end: resumed on the footage from a cut in the middle of each line and at
    # each write's end.
    lines = log.splitlines(keepends=True)
    starts = [sum(map(len, lines[:n])) for n in range(len(lines))]
    cuts = [(f"middle of line {n + 1} ({_line_name(lines[n])})", starts[n] + len(lines[n]) // 2)
            for n in range(len(lines))]
    cuts += [(f"end of write {n + 1}", end) for n, end in enumerate(ends)]
    if quick:
        cuts = cuts[-4:]
    elif game != "rinne":  # a longer game: the reading of two events, and three others
        cuts = [cuts[len(lines) - 1], cuts[len(lines) // 2], cuts[-3], cuts[1]]
    rows, bad = [], 0
    for name, offset in cuts:
        out = work / f"e2e-{offset}"
        out.mkdir()
        (out / "game.jsonl").write_bytes(log[:offset])
        started = time.perf_counter()
        resumed = _live_run(out, game, footage, resume=True)
        seconds = time.perf_counter() - started
        got = [str(m) for kind, _, m in changes(resumed.events) if kind == "ACCEPTED"]
        lost, wrong = lost_and_wrong(got, moves)
        same = resumed.record == whole.record and changes(resumed.events) == changes(events)
        bad += not same
        rows.append([name, offset, lost, wrong, "yes" if same else "NO", f"{seconds:.1f}"])
    print("End to end, `referee live --resume` on the footage (speed 0) after a cut:\n")
    table(["cut at", "byte", "plies lost", "wrong or doubled plies",
           "record and events = uninterrupted", "wall s"], rows)
    summary(f"power cut, {game}, resumed end to end on the footage", len(cuts),
            f"{bad} records differ, 0 hangs", "`pytest tests/faults/test_power_cut.py`")


def _line_name(line: bytes) -> str:
    data = json.loads(line)
    return "header" if "format" in data else f"{data['kind']} ply {data['ply']}"


# --- 2. footage cut short ----------------------------------------------------------------


def footage_cut(work: Path) -> None:
    print("## Footage cut short\n")
    data = CUT_GAME.read_bytes()
    rows, wrong_total, bad = [], 0, 0
    for offset in OFFSETS:
        cut = work / f"cut-{offset}.mp4"
        cut.write_bytes(data[:offset])
        status, out, err = _referee(["replay", str(cut), "--game", "tensei", "--pieces",
                                     "penta", "--out", str(work / f"out-{offset}")])
        read = [line.split("move accepted ", 1)[1] for line in out.splitlines()
                if "move accepted" in line]
        want = [ply.split(". ", 1)[1] for ply in PLIES]
        wrong = sum(g != w for g, w in zip(read, want, strict=False))
        wrong_total += wrong
        ended = re.search(r"ends after (\d+) of its (\d+) frames", err)
        frames = int(ended.group(1)) if ended else 0
        sure = sum(gone + 45 < frames for gone in HANDS_GONE)
        lost = max(0, sure - len(read))
        bad += lost + wrong + (status != 1) + (err.count("\n") != 1)
        message = err.strip().split(": ", 2)[-1]
        rows.append([f"{offset:,} ({100 * offset / len(data):.0f}%)", status, len(read), lost,
                     wrong, message])
    whole = recording(work, 2.0).read_bytes()
    for share in (25, 50, 90):
        cut = work / f"recording-{share}.mp4"
        cut.write_bytes(whole[:len(whole) * share // 100])
        status, out, err = _referee(["replay", str(cut), "--game", "tensei", "--pieces",
                                     "penta", "--out", str(work / f"rec-{share}")])
        ok = status == 1 and err.strip().endswith(UNOPENABLE) and "move accepted" not in out
        bad += not ok
        rows.append([f"{share}% of a recording with its index last", status, 0, 0, 0,
                     err.strip().split(": ", 2)[-1]])
    print(f"`referee replay` of `{CUT_GAME.relative_to(ROOT)}` ({len(PLIES)} plies, index "
          "first) cut at a byte offset, and of a 2 s recording written with its index last "
          "(OpenCV's mp4 writer) cut short. \"Plies lost\": plies whose board was still for "
          "1.5 s before the cut but not read.\n")
    table(["cut at byte", "exit", "plies read", "plies lost", "wrong plies", "stderr (one line)"],
          rows)
    summary("footage cut short (power loss while recording)", len(rows),
            f"{wrong_total} wrong plies, {bad} faults, 0 hangs",
            "`pytest tests/faults/test_footage_cut.py`")


def _referee(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = referee_main(argv)
    return status, out.getvalue(), err.getvalue()


# --- 3. a full or read-only disk ---------------------------------------------------------


class _Monkey:
    """monkeypatch's setattr outside pytest."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    def setattr(self, target: Any, name: str, value: Any) -> None:
        self._undo.append((target, name, getattr(target, name)))
        setattr(target, name, value)

    def undo(self) -> None:
        for target, name, value in reversed(self._undo):
            setattr(target, name, value)
        self._undo.clear()


def disk_faults(work: Path, whole: LiveRun) -> None:
    from tests.faults.disk import FailingDisk

    print("## A full disk, a read-only file system\n")
    rows, bad = [], 0
    windows = [(0.3, 5.0), (6.0, 14.0), (10.0, 23.5), (20.0, 99.0)]
    for (name, error), (start, end) in itertools.product(
            [("disk full", errno.ENOSPC), ("read-only", errno.EROFS)], windows):
        folder = work / f"{name}-{start}"
        folder.mkdir()
        out = folder / "game"
        monkey = _Monkey()
        disk = FailingDisk(folder, monkey)  # type: ignore[arg-type]
        lines: list[str] = []
        shown = io.StringIO()
        camera = functools.partial(FailingFrom, disk, error, start, end)
        try:
            status: Any = run_live(live_options(out), print_line=lines.append,
                                   signals=TerminalSignals(shown), open_camera=camera)
        except Exception as failure:
            status = f"{type(failure).__name__}: {str(failure).split(': ', 1)[-1]}"
        finally:
            monkey.undo()
        logged = [json.loads(x) for x in (out / "game.jsonl").read_text().split("\n")[1:-1]]
        got = [e["move"] for e in logged if e["kind"] == "ACCEPTED"]
        want = [e["move"] for e in whole.events if e["kind"] == "ACCEPTED"]
        lost, wrong = lost_and_wrong(got, want)
        told = shown.getvalue().count(cue_line(Cue.LOG_FAILED))
        back = shown.getvalue().count(cue_line(Cue.LOG_BACK))
        printed = sum("move accepted" in line for line in lines)
        still_failing = end > 24.0
        ok = (told > 0 and printed == len(want) and (
            (status == 0 and lost == 0 and wrong == 0 and back == 1
             and logged == whole.events) if not still_failing else
            (isinstance(status, str) and "cannot write the game's files" in status)))
        bad += not ok
        rows.append([name, f"{start:g}-{min(end, 24.5):g} s" + (" (to the end)" if still_failing
                                                             else ""),
                     disk.refused, told, back, printed, lost, wrong,
                     "0" if status == 0 else status])
    print("`referee live` of the whole game (speed 0) with the game folder's disk failing "
          "(ENOSPC: the first write cut short, then refused; EROFS: every write, fsync, "
          "truncate and rename refused) from one footage time to another. \"Alarms\": the "
          "red light and alarm shown; \"plies announced\": move-accepted lines printed; plies "
          "lost and wrong: in the log at the end against the uninterrupted run's.\n")
    table(["fault", "disk failing", "calls refused", "alarms", "all-clear", "plies announced",
           "plies lost from the log", "wrong plies", "exit"], rows)
    summary("disk full / read-only file system while refereeing", len(rows),
            f"{bad} faults; every ply announced; log caught up (0 plies lost) where the disk "
            "came back, one line and exit 1 naming the writes lost where it never did; 0 hangs",
            "`pytest tests/faults/test_disk_full.py`")


# --- 4. SIGTERM ------------------------------------------------------------------------


def sigterm(work: Path, quick: bool) -> None:
    print("## SIGTERM (and SIGINT) mid-game\n")
    rows, bad = [], 0
    tries = [(signal.SIGTERM, 1), (signal.SIGTERM, 3), (signal.SIGTERM, 5), (signal.SIGINT, 2)]
    if quick:
        tries = tries[1:2]
    for stop, after in tries:
        out = work / f"{stop.name}-{after}"
        command = [sys.executable, "-m", "referee", "live", "--game", "rinne", "--pieces",
                   PIECES, "--camera", str(GAME), "--speed", "3", "--out", str(out)]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
        deadline = time.monotonic() + 180
        while _accepted(out / "game.jsonl") < after and run.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        sent = time.monotonic()
        run.send_signal(stop)
        try:
            _, stderr = run.communicate(timeout=30)
            stopped_s: Any = f"{time.monotonic() - sent:.2f}"
        except subprocess.TimeoutExpired:
            run.kill()
            stderr, stopped_s = "", "HUNG"
        record = (out / "game.txt").read_text() if (out / "game.txt").exists() else ""
        plies = sum(line[:1].isdigit() for line in record.splitlines())
        report = (out / "report.html").exists()
        logged = _accepted(out / "game.jsonl")
        ok = run.returncode == (0 if stop is signal.SIGTERM else 130) and report \
            and plies == logged and "Traceback" not in stderr
        bad += not ok
        rows.append([stop.name, after, run.returncode, stopped_s, logged, plies,
                     "yes" if report else "NO"])
    print("`referee live --camera FOOTAGE --speed 3` as a process, the signal sent once it "
          "had logged N plies:\n")
    table(["signal", "after plies", "exit", "stopped in s", "plies logged", "plies in record",
           "report written"], rows)
    summary("SIGTERM / SIGINT mid-game", len(rows), f"{bad} faults, 0 hangs",
            "`pytest tests/faults/test_sigterm.py`")


def _accepted(log: Path) -> int:
    if not log.exists():
        return 0
    lines = log.read_text().split("\n")[1:-1]
    return sum(json.loads(line)["kind"] == "ACCEPTED" for line in lines)


# --- 5. the wall clock jumping ------------------------------------------------------------


def clock_jumps(work: Path, whole: LiveRun) -> None:
    print("## The wall clock jumping\n")
    day = 1751284800.0  # 2025-06-30 12:00 UTC
    jumps = itertools.chain([0.0], itertools.cycle([day, day + 3e8, day - 7200.0, 5.0]))
    readings = Counter[str]()
    monkey = _Monkey()

    def jumping() -> float:
        readings["time.time"] += 1
        return next(jumps)

    monkey.setattr(time, "time", jumping)
    monkey.setattr(sys.modules["referee.app.live"], "CLOCK_SYNCED", work / "none" / "x")
    try:
        jumped = referee_live(work / "game")
    finally:
        monkey.undo()
    same = jumped.events == whole.events
    date = json.loads(jumped.log.splitlines()[0])["headers"].get("Date")
    table(["run", "wall clock readings", "events = the uninterrupted run's", "record's Date"],
          [["`referee live` with time.time at 1970, then jumping years and hours at each "
            "reading", readings["time.time"], "yes" if same else "NO", date]])
    summary("wall clock jumping (no real-time clock)", 1,
            f"{0 if same else 1} runs differ; Date {date} where the clock cannot be trusted",
            "`pytest tests/faults/test_clock.py`")


# --- 6. broken files --------------------------------------------------------------------


def bad_files(work: Path, per_kind: int) -> None:
    print("## Broken files through every command\n")
    inputs = Inputs(work / "inputs")
    counts: dict[tuple[str, str], Counter[str]] = {}
    problems: list[str] = []
    started = time.perf_counter()
    total = 0
    for case in cases(inputs, work / "in-process", 20250630, per_kind):
        outcome = run_case(case)
        total += 1
        key = (case.kind, case.command)
        verdict = ("refused in one line" if outcome.refused else
                   "taken (left valid)" if outcome.problem is None else "PROBLEM")
        counts.setdefault(key, Counter())[verdict] += 1
        if outcome.problem:
            problems.append(f"{case.name}: {outcome.problem}")
    seconds = time.perf_counter() - started
    rows = [[kind, f"`{command}`", sum(c.values()), c["refused in one line"],
             c["taken (left valid)"], c["PROBLEM"]] for (kind, command), c in counts.items()]
    print(f"{per_kind} broken files of each kind, each broken one way ({', '.join(MUTATIONS)}), "
          f"through each command that reads it, in-process through `referee.cli.main` "
          f"({total} runs in {seconds:.0f} s). \"Taken\": the break left a valid file (a "
          "flipped comment byte, a lost optional line) and the command did its work.\n")
    table(["file", "command", "runs", "refused in one line, exit 1", "taken", "problems"], rows)
    for problem in problems:
        print(f"- {problem}")
    sample = [case for case in cases(inputs, work / "processes", 7, len(MUTATIONS))
              if case.mutation in ("flipped", "cut", "number")]
    sample_problems = Counter[str]()
    hung = 0
    for case in sample:
        outcome = subprocess_case(case)
        if outcome.problem:
            sample_problems[f"{case.kind}: `referee {case.command}`: {outcome.problem}"] += 1
            hung += "hung" in outcome.problem
    print(f"\nAs processes (`python -m referee`), the flipped, cut and number breaks of each "
          f"kind ({len(sample)} runs): {sum(sample_problems.values())} with a problem.\n")
    for line, count in sorted(sample_problems.items()):
        print(f"- {line} ({count})")
    print()
    summary("broken files through every command (in-process)", total,
            f"{len(problems)} problems (traceback, not one line, file overwritten, hang)",
            "`pytest tests/faults/test_bad_files.py`")
    summary("broken files as processes", len(sample),
            f"{sum(sample_problems.values())} with extra lines on stderr, {hung} hangs",
            "`pytest tests/faults/test_bad_files.py`")


# --- 7. a starved CPU (short) --------------------------------------------------------


class LiveLike(BaseSource):
    """Footage delivered as a live camera delivers it to a reader slower than it: the frame
    of the moment; those the reader was too slow for are gone. With `wait_for_start`, the
    players wait for the referee's "game started" (`start()`) before they play: until then
    the camera sees the first frame's board, still. `hold_s`: the last frame is seen that
    long after the end, as a camera still sees the board. `loops`: played that many times
    over, its times carrying on."""

    def __init__(self, path: Path, *, loops: int = 1, paced: bool = True,
                 wait_for_start: bool = False, hold_s: float = 0.0) -> None:
        self.path, self.loops, self.paced, self.hold_s = path, loops, paced, hold_s
        self.description = f"{path} as a camera"
        self.delivered = self.dropped = 0
        self.played_s = 0.0  # how long the game's frames took to be read
        self.started = not wait_for_start

    def start(self, line: str) -> None:
        if "game started" in line:
            self.started = True

    def __iter__(self) -> Iterator[Frame]:
        clock_start = time.monotonic()
        offset, shown = 0.0, 0
        for _ in range(self.loops):
            capture = cv2.VideoCapture(str(self.path))
            fps = capture.get(cv2.CAP_PROP_FPS)
            ok, first = capture.read()
            while ok and not self.started:  # the set-up board, until the referee has started
                shown += 1
                yield make_frame(first.copy(), shown, time.monotonic() - clock_start,
                                 self.description)
                time.sleep(1 / fps)
            start = time.monotonic()
            offset = start - clock_start if offset == 0.0 and shown else offset
            index = 0
            try:
                while ok:
                    due = int((time.monotonic() - start) * fps) if self.paced else index + 1
                    if due <= index:
                        time.sleep(max(0.0, (index + 1) / fps - (time.monotonic() - start)))
                        continue
                    skipped = 0
                    while index < due - 1 and ok:
                        ok = capture.grab()
                        index += 1
                        skipped += 1
                    ok, pixels = capture.read() if ok else (False, None)
                    index += 1
                    if not ok or pixels is None:
                        break
                    self.dropped += skipped
                    self.delivered += 1
                    self.played_s = time.monotonic() - start
                    yield make_frame(pixels, index, offset + index / fps, self.description)
            finally:
                capture.release()
            if self.paced and self.hold_s:  # the board stays in view after the game
                final = _last_frame(self.path)
                held_from = time.monotonic()
                while (waited := time.monotonic() - held_from) < self.hold_s:
                    yield make_frame(final.copy(), index, offset + index / fps + waited,
                                     self.description)
                    time.sleep(1 / fps)
            offset += index / fps
            clock_start = time.monotonic() - offset


def starved(work: Path, whole: LiveRun, hogs: tuple[int, ...]) -> None:
    print("## A starved CPU (short)\n")
    rows, bad = [], 0
    for count in hogs:
        hog = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(count)]
        before = os.sched_getaffinity(0)
        try:
            for process in hog:
                os.sched_setaffinity(process.pid, {0})
            os.sched_setaffinity(0, {0})
            camera = LiveLike(GAME, wait_for_start=True, hold_s=3.0)
            lines: list[str] = []
            said = functools.partial(_say, camera, lines)

            run_live(live_options(work / f"game-{count}"), print_line=said,
                     signals=TerminalSignals(io.StringIO()),
                     open_camera=functools.partial(_same, camera))
        finally:
            os.sched_setaffinity(0, before)
            for process in hog:
                process.kill()
                process.wait()
        text = (work / f"game-{count}" / "game.jsonl").read_text()
        logged = [json.loads(x) for x in text.split("\n")[1:-1]]
        got = [str(e["move"]) for e in logged if e["kind"] == "ACCEPTED"]
        lost, wrong = lost_and_wrong(got, [e["move"] for e in whole.events
                                           if e["kind"] == "ACCEPTED"])
        bad += lost + wrong
        behind = [line for line in lines if "keep up" in line]
        rows.append([count, camera.delivered + camera.dropped, camera.delivered, camera.dropped,
                     f"{camera.delivered / max(camera.played_s, 1e-9):.1f}", lost, wrong,
                     behind[0] if behind else "nothing"])
    print("`referee live` of the whole game on one core shared with N busy loops, its frames "
          "delivered as a live camera delivers them (at 30 a second; those the referee is "
          "too slow to take are dropped). The players wait for the referee's \"game started\" "
          "(the turn light) before the first move: until then the camera shows the set-up "
          "board, and after the game it shows the final position 3 s more. \"Read a second\": "
          "frames of the game the referee took a second.\n")
    table(["busy loops", "frames", "read", "dropped", "read a second", "plies lost",
           "wrong plies", "what the referee says"], rows)
    summary("starved CPU: one core shared with busy loops (short)", len(rows),
            f"{bad} plies lost or wrong", "`PYTHONPATH=. .venv/bin/python benchmarks/faults.py "
            "--only starved`")


def _say(camera: LiveLike, lines: list[str], line: str) -> None:
    lines.append(line)
    camera.start(line)


def _last_frame(path: Path) -> Any:
    capture = cv2.VideoCapture(str(path))
    capture.set(cv2.CAP_PROP_POS_FRAMES, capture.get(cv2.CAP_PROP_FRAME_COUNT) - 1)
    ok, pixels = capture.read()
    capture.release()
    assert ok, f"{path}: no last frame"
    return pixels


def _same(camera: LiveLike) -> LiveLike:
    return camera


# --- 8. a soak -------------------------------------------------------------------------


class Sample(NamedTuple):
    frames: int  # delivered so far
    rss_kb: int
    open_files: int


class SampledLoops(LiveLike):
    """Footage looped as one camera, unpaced, with this process's memory and open files
    sampled every `every` frames, at the first frame of each loop (the end of the one
    before: `loop_starts`) and after the last."""

    def __init__(self, path: Path, loops: int, every: int = 300) -> None:
        super().__init__(path, loops=loops, paced=False)
        self.every = every
        self.samples: list[Sample] = []
        self.loop_starts: list[tuple[float, Sample]] = []  # the loop's first frame's time

    def __iter__(self) -> Iterator[Frame]:
        last_index = -1
        for frame in super().__iter__():
            if frame.index < last_index or not self.loop_starts:
                self.loop_starts.append((frame.timestamp_s, self.sample()))
                self._progress()
            elif self.delivered % self.every == 0:
                self.sample()
            last_index = frame.index
            yield frame
        self.sample()

    def sample(self) -> Sample:
        self.samples.append(Sample(self.delivered, _rss_kb(), len(open_files())))
        return self.samples[-1]

    def _progress(self) -> None:
        loop, sample = len(self.loop_starts), self.samples[-1]
        if loop % 10 == 0:
            print(f"soak: loop {loop} of {self.loops}, {sample.frames:,} frames, "
                  f"{sample.rss_kb / 1024:.0f} MB, {sample.open_files} open files",
                  file=sys.stderr, flush=True)


def soak(work: Path, hours: float) -> None:
    print("## A soak\n")
    footage = palindrome_footage(work / "soak.mp4")  # by ffmpeg, in its own process
    # LiveLike delivers a loop's frames after its first (read to show while the players
    # wait for the start): whole loops enough for `hours` at 30 frames a second.
    frames = _frame_count(footage)
    per_loop = frames - 1
    loops = max(2, math.ceil(hours * 3600 * 30 / per_loop))
    camera = SampledLoops(footage, loops)
    files_before = len(open_files())
    started = time.perf_counter()
    run_live(live_options(work / "game", footage=footage), print_line=lambda _: None,
             signals=TerminalSignals(io.StringIO()), open_camera=functools.partial(_same, camera))
    seconds = time.perf_counter() - started
    files_after = len(open_files())
    print(f"The first {PLAYED} plies of `{GAME.relative_to(ROOT)}` played, then taken back "
          f"one by one (its frames 0-{TURN_FRAME - 1}, up to a little before the winning "
          f"ply's hand comes, then the same frames backwards: {frames} frames, {frames / 30:.1f} s), looped "
          f"{loops} times through `referee live` as one camera (unpaced, times carrying on). "
          f"Memory: this process's resident set, sampled every {camera.every} frames and at "
          "each loop's end; open files: its file descriptors.\n")
    log = work / "game" / "game.jsonl"
    growth = _soak_figures(camera, seconds, log, (files_before, files_after))
    lost, wrong, right, kinds = _soak_changes(log, [at for at, _ in camera.loop_starts])
    table(["loops as logged", "ACCEPTED", "TAKE_BACK", "other events", "plies lost",
           "wrong or doubled"],
          [[f"{right} of {loops} as expected", f"{kinds['ACCEPTED']:,}", f"{kinds['TAKE_BACK']:,}",
            ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())
                      if k not in ("ACCEPTED", "TAKE_BACK")) or "none", lost, wrong]])
    _memory_over_time(camera.samples)
    summary(f"soak: {hours:g} h of footage through live, unpaced: {PLAYED} plies played and "
            f"taken back, {loops} times", loops,
            f"{lost} plies lost, {wrong} wrong or doubled; memory {growth:+.1f}% after the "
            f"first loop; open files {files_before} before, {files_after} after",
            "`PYTHONPATH=. .venv/bin/python benchmarks/faults.py --only soak`")


def _soak_figures(camera: SampledLoops, seconds: float, log: Path,
                  files: tuple[int, int]) -> float:
    """The soak's table of figures; returns the memory's growth after the first loop, %."""
    after_first, end = camera.loop_starts[1][1], camera.samples[-1]
    growth = 100 * (end.rss_kb - after_first.rss_kb) / after_first.rss_kb
    at_starts = sorted({sample.open_files for _, sample in camera.loop_starts})
    with log.open("rb") as lines:
        line_count = sum(1 for _ in lines)
    table(["footage", "frames", "wall", "frames a second", "memory after loop 1", "at the end",
           "growth", "peak", "open files: before, at each loop's start, after", "log"],
          [[f"{camera.delivered / 30 / 3600:.2f} h", f"{camera.delivered:,}",
            f"{seconds / 60:.0f} min", f"{camera.delivered / seconds:.0f}",
            f"{after_first.rss_kb / 1024:.0f} MB", f"{end.rss_kb / 1024:.0f} MB",
            f"{growth:+.1f}%", f"{max(s.rss_kb for s in camera.samples) / 1024:.0f} MB",
            f"{files[0]}, {'-'.join(map(str, at_starts))}, {files[1]}",
            f"{log.stat().st_size:,} bytes, {line_count:,} lines"]])
    return growth


def _frame_count(video: Path) -> int:
    capture = cv2.VideoCapture(str(video))
    count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    capture.release()
    return count


def _soak_changes(log: Path, loop_starts: list[float]) -> tuple[int, int, int, Counter[str]]:
    """Each loop's logged plies and take-backs against SOAK_CHANGES: plies lost, wrong or
    doubled over all loops, the loops exactly as expected, and the count of each kind of
    event. Read line by line: the log of hours is not held whole."""
    per_loop: list[list[str]] = [[] for _ in loop_starts]
    kinds = Counter[str]()
    with log.open() as lines:
        next(lines)  # the header
        for line in lines:
            event = json.loads(line)
            kinds[event["kind"]] += 1
            if event["kind"] in ("ACCEPTED", "TAKE_BACK"):
                # (+1 ms: the log rounds times to the millisecond)
                loop = bisect.bisect_right(loop_starts, event["time_s"] + 1e-3) - 1
                per_loop[loop].append(f"{event['kind']} {event['move']}")
    lost = wrong = right = 0
    for got in per_loop:
        missing, bad = lost_and_wrong(got, SOAK_CHANGES)
        lost, wrong, right = lost + missing, wrong + bad, right + (got == SOAK_CHANGES)
    return lost, wrong, right, kinds


def _memory_over_time(samples: list[Sample]) -> None:
    """Memory and open files at each half hour of footage, and at the end."""
    half_hour = 30 * 60 * 30  # frames
    marks = [next(s for s in samples if s.frames >= mark)
             for mark in range(0, samples[-1].frames, half_hour)] + samples[-1:]
    table(["footage", "frames", "memory", "open files"],
          [[f"{s.frames / 30 / 60:.0f} min", f"{s.frames:,}", f"{s.rss_kb / 1024:.0f} MB",
            s.open_files] for s in marks])


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", help="comma-separated sections: power,zensu,footage,disk,"
                        "sigterm,clock,files,starved,soak")
    parser.add_argument("--soak-hours", type=float,
                        help="hours of footage the soak loops (default 3; --quick: 0.05)")
    args = parser.parse_args()
    soak_hours = args.soak_hours or (0.05 if args.quick else 3.0)
    only = set(args.only.split(",")) if args.only else None
    work = Path(tempfile.mkdtemp(prefix="faults-"))
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=ROOT).stdout.strip()
    print(f"Measured on the working tree after {head}; work files in {work}.\n")
    whole = referee_live(work / "whole" / "game")
    sections: list[tuple[str, Callable[[Path], None]]] = [
        ("power", lambda w: power_cut(w, whole, args.quick)),
        ("zensu", lambda w: power_cut(w, _live_run(w / "whole", "zensu", ZENSU), args.quick,
                                      game="zensu", footage=ZENSU)),
        ("footage", footage_cut),
        ("disk", lambda w: disk_faults(w, whole)),
        ("sigterm", lambda w: sigterm(w, args.quick)),
        ("clock", lambda w: clock_jumps(w, whole)),
        ("files", lambda w: bad_files(w, 12 if args.quick else 25)),
        ("starved", lambda w: starved(w, whole, (1, 4) if args.quick else (1, 4, 8, 16))),
        ("soak", lambda w: soak(w, soak_hours)),
    ]
    for name, section in sections:
        if only is None or name in only:
            folder = work / name
            folder.mkdir()
            section(folder)
    print("## Summary\n")
    table(["fault", "tries", "outcome", "reproduce"], [list(row) for row in SUMMARY])


if __name__ == "__main__":
    main()
