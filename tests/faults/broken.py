"""Broken inputs for every player command, made by a seeded generator: each a valid file of
its kind (a record, a ruleset, a camera file, a board profile, a model and its card, a pin
map, a game log, a video, an image) broken one way (emptied, cut short, bytes flipped, lines
lost or doubled, numbers made absurd, random bytes, not UTF-8, a folder, missing, another
kind's file), and the `referee` command lines that read it. `run_case` runs one through
`referee.cli.main` in-process and says what happened; `subprocess_case` runs one as a
process. Shared by tests/faults/test_bad_files.py and benchmarks/faults.py."""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import io
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.app.record import finished_length
from referee.resources import calibration_dir, models_dir
from tests import DATA, ROOT

GAME = DATA / "footage" / "rinne-penta-whole.mp4"
RECORD = DATA / "records" / "rinne-sample.txt"
ZENSU_RECORD = DATA / "records" / "zensu-sample.txt"
RULESET = ROOT / "referee" / "rules" / "rulesets" / "zensu.toml"
PINS = ROOT / "hardware" / "pins.toml"
CAMERA = "pi-camera-module-3-1280x720.yaml"
LIVE = ["--game", "rinne", "--pieces", "penta"]

# What reads a broken file: (the verb, for the table; the command line; the environment),
# given the file and a folder for the command's output.
Commands = Callable[[Path, Path], list[tuple[str, list[str], dict[str, str]]]]
MUTATIONS = ("empty", "cut", "flipped", "random", "line-lost", "line-doubled", "number",
             "not-utf8", "folder", "missing", "other-kind")


@dataclass(frozen=True)
class Case:
    kind: str  # what is broken: "record", "model", ...
    mutation: str
    command: str  # the verb(s), for the table
    argv: list[str]
    folder: Path  # the case's own folder: what is in it must not be overwritten
    env: dict[str, str] = field(default_factory=dict)
    log: Path | None = None  # a game log the command may cut at an unfinished write only

    @property
    def name(self) -> str:
        return f"{self.kind}/{self.mutation}: referee {self.command}"


@dataclass(frozen=True)
class Outcome:
    status: int | None  # None: it raised, or hung
    err: str
    problem: str | None  # None: one clear line and a non-zero exit, or a valid input taken

    @property
    def refused(self) -> bool:
        return self.problem is None and self.status != 0


class Inputs:
    """The valid files the broken ones are made from, in `folder` (made once)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.clip = folder / "clip.avi"  # the game's first half second, as Motion-JPEG
        _write_clip(self.clip, frames=15)
        self.mp4 = folder / "head.mp4"  # the first 60 kB of the game's mp4: its first frames
        self.mp4.write_bytes(GAME.read_bytes()[:60_000])
        self.frames = folder / "frames"  # the game's first three frames, as PNG images
        _write_frames(self.frames, 3)
        self.image = folder / "square.png"
        cv2.imwrite(str(self.image), _square_image())
        self.camera = folder / CAMERA
        shutil.copy(calibration_dir() / CAMERA, self.camera)
        profile = (calibration_dir() / "boards" / "rinne.yaml").read_text()
        self.board = folder / "rinne.yaml"
        self.board.write_text(profile.replace(f"../{CAMERA}", CAMERA))
        self.models = folder / "models"
        shutil.copytree(models_dir(), self.models)
        self.log = folder / "game.jsonl"
        self.log.write_text(LOG)


def _write_clip(path: Path, frames: int) -> None:
    source = cv2.VideoCapture(str(GAME))
    size = (int(source.get(cv2.CAP_PROP_FRAME_WIDTH)), int(source.get(cv2.CAP_PROP_FRAME_HEIGHT)))
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30, size)
    for _ in range(frames):
        ok, frame = source.read()
        assert ok
        writer.write(frame)
    writer.release()
    source.release()


def _write_frames(folder: Path, frames: int) -> None:
    folder.mkdir()
    source = cv2.VideoCapture(str(GAME))
    for n in range(frames):
        ok, frame = source.read()
        assert ok
        cv2.imwrite(str(folder / f"frame-{n:03d}.png"), frame)
    source.release()


def _square_image() -> np.ndarray:
    image = np.full((64, 64, 3), 200, np.uint8)
    cv2.circle(image, (32, 32), 18, (30, 30, 30), -1)
    return image


LOG = "".join(line + "\n" for line in (
    '{"format": "referee-log/1", "game": "rinne", "headers": {"Date": "2025-06-30"}}',
    '{"kind": "STARTED", "frame_index": 17, "time_s": 0.567, "ply": 0, "move": null, '
    '"detail": "White to move", "confidence": 0.0}',
    '{"kind": "ACCEPTED", "frame_index": 128, "time_s": 4.267, "ply": 1, '
    '"move": "King c1 - d2 = Knight", "detail": "", "confidence": 6.56}',
    '{"kind": "ACCEPTED", "frame_index": 241, "time_s": 8.033, "ply": 2, '
    '"move": "King b4 - c4 = Knight", "detail": "", "confidence": 9.51, "more": true}',
    '{"kind": "GAME_OVER", "frame_index": 241, "time_s": 8.033, "ply": 2, "move": null, '
    '"detail": "", "confidence": 0.0}'))


def mutate(data: bytes, mutation: str, rng: random.Random, other: bytes) -> bytes | None:
    """`data` broken by `mutation`; None for "folder" and "missing" (made by the caller)."""
    if mutation == "empty":
        return b""
    if mutation == "cut":
        return data[:rng.randrange(1, max(2, len(data)))]
    if mutation == "flipped":
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if mutation == "random":
        return rng.randbytes(rng.choice((1, 7, 300, 5000)))
    if mutation in ("line-lost", "line-doubled"):
        lines = data.split(b"\n")
        n = rng.randrange(len(lines))
        lines[n:n + 1] = [] if mutation == "line-lost" else [lines[n], lines[n]]
        return b"\n".join(lines)
    if mutation == "number":
        numbers = list(re.finditer(rb"-?\d+(\.\d+)?", data))
        if not numbers:
            return data + b"\n1e309"
        hit = rng.choice(numbers)
        value = rng.choice((b"-1", b"0", b"1e309", b"-1e309", b"nan", b"99999999999999999999",
                            b"0.000001", b"\"x\"", b"[]", b"{}"))
        return data[:hit.start()] + value + data[hit.end():]
    if mutation == "not-utf8":
        at = rng.randrange(len(data) + 1)
        return data[:at] + b"\xff\xfe\xc3\x28" + data[at:]
    if mutation == "other-kind":
        return other
    return None


def place(path: Path, content: bytes | None, mutation: str) -> None:
    if mutation == "folder":
        path.mkdir(parents=True)
    elif mutation != "missing":
        assert content is not None
        path.write_bytes(content)


def cases(inputs: Inputs, work: Path, seed: int, per_kind: int) -> Iterator[Case]:
    """`per_kind` broken files of each kind, each in its own folder of `work`, with the
    command lines that read it."""
    rng = random.Random(seed)
    other = {"text": inputs.image.read_bytes(), "binary": RECORD.read_bytes()}
    kinds: list[tuple[str, bytes, str, Commands]] = [
        ("record", RECORD.read_bytes(), "record.txt", lambda f, out: [
            ("check", ["check", str(f)], {})]),
        ("ruleset", RULESET.read_bytes(), "zensu.toml", lambda f, out: [
            ("perft --ruleset", ["perft", "--game", "zensu", "--depth", "1", "--ruleset", str(f)], {}),
            ("check --ruleset", ["check", str(ZENSU_RECORD), "--ruleset", str(f)], {}),
            ("play --ruleset", ["play", "--game", "zensu", "--ruleset", str(f)], {})]),
        ("camera file", inputs.camera.read_bytes(), CAMERA, lambda f, out: [
            ("calibrate check", ["calibrate", "check", str(f)], {}),
            ("replay --calibration", ["replay", str(inputs.clip), *LIVE, "--calibration", str(f),
                                      "--out", str(out)], {})]),
        ("board profile", inputs.board.read_bytes(), "rinne.yaml", lambda f, out: [
            ("calibrate check", ["calibrate", "check", str(f)], {}),
            ("live --board", ["live", "--camera", str(inputs.clip), *LIVE, "--speed", "0",
                              "--board", str(f), "--out", str(out)], {})]),
        ("model", (inputs.models / "penta.onnx").read_bytes(), "penta.onnx", lambda f, out: [
            ("replay (REFEREE_MODELS)", ["replay", str(inputs.clip), *LIVE, "--out", str(out)],
             {"REFEREE_MODELS": str(_models_with(inputs, f))}),
            ("classify --model", ["classify", "--pieces", "penta", "--model", str(f),
                                  str(inputs.image)], {})]),
        ("model card", (inputs.models / "penta.json").read_bytes(), "penta.json", lambda f, out: [
            ("classify (REFEREE_MODELS)", ["classify", "--pieces", "penta", str(inputs.image)],
             {"REFEREE_MODELS": str(_models_with(inputs, f))}),
            ("live (REFEREE_MODELS)", ["live", "--camera", str(inputs.clip), *LIVE, "--speed",
                                       "0", "--out", str(out)],
             {"REFEREE_MODELS": str(_models_with(inputs, f))})]),
        ("pin map", PINS.read_bytes(), "pins.toml", lambda f, out: [
            ("signals --pins", ["signals", "accepted", "--seconds", "0", "--pins", str(f)], {}),
            ("live --pins", ["live", "--camera", str(inputs.clip), *LIVE, "--speed", "0",
                             "--pins", str(f), "--out", str(out)], {})]),
        ("game log", inputs.log.read_bytes(), "game/game.jsonl", lambda f, out: [
            ("live --resume", ["live", "--camera", str(inputs.clip), *LIVE, "--speed", "0",
                               "--resume", "--out", str(f.parent)], {})]),
        ("video", inputs.clip.read_bytes(), "clip.avi", lambda f, out: [
            ("replay", ["replay", str(f), *LIVE, "--out", str(out)], {}),
            ("live --camera", ["live", "--camera", str(f), *LIVE, "--speed", "0", "--out",
                               str(out)], {}),
            ("camera", ["camera", "--camera", str(f), "--frames", "5"], {}),
            ("calibrate board", ["calibrate", "board", "--game", "rinne", "--camera", str(f),
                                 "--out", str(_existing(inputs.board, f.parent / "board.yaml"))],
             {})]),
        ("mp4 video", inputs.mp4.read_bytes(), "head.mp4", lambda f, out: [
            ("replay", ["replay", str(f), *LIVE, "--out", str(out)], {}),
            ("camera", ["camera", "--camera", str(f), "--frames", "5"], {})]),
        ("image", inputs.image.read_bytes(), "square.png", lambda f, out: [
            ("classify", ["classify", "--pieces", "penta", str(f)], {})]),
        ("image in a footage folder", (inputs.frames / "frame-001.png").read_bytes(),
         "frames/frame-001.png", lambda f, out: [
             ("replay FOLDER", ["replay", str(f.parent), *LIVE, "--out", str(out)], {}),
             ("camera --camera FOLDER", ["camera", "--camera", str(f.parent), "--frames", "3"],
              {})]),
    ]
    number = 0
    for kind, data, name, commands in kinds:
        binary = name.endswith((".onnx", ".avi", ".mp4", ".png"))  # another kind: a record
        for n in range(per_kind):
            mutation = MUTATIONS[n % len(MUTATIONS)] if n < len(MUTATIONS) else rng.choice(
                MUTATIONS)
            content = mutate(data, mutation, rng, other["binary" if binary else "text"])
            folder = work / f"case-{number:04d}"
            number += 1
            path = folder / name
            path.parent.mkdir(parents=True)
            if kind == "model card":  # the card's model beside it, and the model's card
                shutil.copy(inputs.models / "penta.onnx", folder / "penta.onnx")
            elif kind == "model":
                shutil.copy(inputs.models / "penta.json", folder / "penta.json")
            elif kind == "image in a footage folder":  # the other frames beside it
                shutil.copytree(inputs.frames, path.parent, dirs_exist_ok=True)
                path.unlink()
            place(path, content, mutation)
            for n_command, (command, argv, env) in enumerate(commands(path, folder / "out")):
                argv = [arg.replace(f"{folder}/out", f"{folder}/out-{n_command}") for arg in argv]
                yield Case(kind, mutation, command, argv, folder, env,
                           path if kind == "game log" else None)


def _existing(source: Path, path: Path) -> Path:
    """An output file that is there already (a profile made before): not to be overwritten
    by a command that fails."""
    if not path.exists():
        shutil.copy(source, path)
    return path


def _models_with(inputs: Inputs, broken: Path) -> Path:
    """A models folder: the shipped models, with `broken` in place of its namesake."""
    folder = broken.parent / "models"
    if not folder.exists():
        folder.mkdir()
        for model in inputs.models.iterdir():
            if model.name != broken.name:
                (folder / model.name).symlink_to(model)
        if broken.exists() or broken.is_dir():
            (folder / broken.name).symlink_to(broken)
    return folder


def snapshot(folder: Path) -> dict[Path, str]:
    """Every file under `folder` and its SHA-256 (a folder: "folder")."""
    found: dict[Path, str] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            continue
        found[path] = "folder" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def overwritten(before: dict[Path, str], case: Case) -> list[str]:
    """Files that were there before and changed (a game log may lose an unfinished write
    and gain new events only)."""
    changed = []
    for path, digest in before.items():
        if digest == "folder":
            continue
        if not path.exists():
            changed.append(f"{path.name} removed")
            continue
        if hashlib.sha256(path.read_bytes()).hexdigest() == digest:
            continue
        if path == case.log and _log_kept(path, case):
            continue
        changed.append(f"{path.name} changed")
    return changed


_LOGS: dict[Path, bytes] = {}


def _log_kept(path: Path, case: Case) -> bool:
    before = _LOGS.get(path, b"")
    return path.read_bytes().startswith(before[:finished_length(before)])


class Hung(BaseException):
    pass


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def hung(number: int, frame: Any) -> None:
        raise Hung

    before = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def run_case(case: Case, *, limit_s: int = 60) -> Outcome:
    """`referee ARGV` in this process: its status and stderr, and what is wrong, if anything:
    a traceback, more or less than one line on stderr for a refusal, a file overwritten,
    a hang."""
    from referee.cli import main

    root = case.folder
    before = snapshot(root)
    if case.log is not None and case.log.is_file():
        _LOGS[case.log] = case.log.read_bytes()
    err, out = io.StringIO(), io.StringIO()
    problem: str | None = None
    status: int | None = None
    saved_env = {key: os.environ.get(key) for key in case.env}
    os.environ.update(case.env)

    def no_input(prompt: object = "") -> str:
        raise EOFError

    saved_input = builtins.input
    builtins.input = no_input
    try:
        with time_limit(limit_s), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            status = main(case.argv)
    except Hung:
        problem = f"hung for {limit_s} s"
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
        problem = f"SystemExit {exit_.code}"
    except BaseException as error:
        problem = f"raised {type(error).__name__}: {error}"
    finally:
        builtins.input = saved_input
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    text = err.getvalue()
    return Outcome(status, text, problem or judge(status, text) or _changed(before, case))


def _changed(before: dict[Path, str], case: Case) -> str | None:
    changed = overwritten(before, case)
    return f"overwrote {', '.join(changed)}" if changed else None


def judge(status: int | None, err: str) -> str | None:
    if "Traceback" in err:
        return "a traceback"
    if status == 0:
        return None  # the broken file was still a valid one
    lines = err.splitlines()
    if len(lines) != 1 or not lines[0].startswith("referee: ") or not err.endswith("\n"):
        return f"{len(lines)} lines on stderr"
    return None


def subprocess_case(case: Case, *, limit_s: int = 120) -> Outcome:
    """The same, as `python -m referee` in a process of its own."""
    root = case.folder
    before = snapshot(root)
    if case.log is not None and case.log.is_file():
        _LOGS[case.log] = case.log.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", **case.env}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "referee", *case.argv], capture_output=True,
                              text=True, env=env, timeout=limit_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Outcome(None, "", f"hung for {time.monotonic() - started:.0f} s")
    problem = judge(done.returncode, done.stderr) or _changed(before, case)
    if done.returncode < 0:
        problem = f"killed by signal {-done.returncode}"
    return Outcome(done.returncode, done.stderr, problem)
