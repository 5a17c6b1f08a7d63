"""Footage: a video of a game being played, from a game record (or a random legal game)
and a seed, with a JSON sidecar of the ground truth beside it (`game.mp4` → `game.json`).

Faults for testing the referee: `drop` (frames missing from the file), `bump` (the board
knocked aside), `light` (a lamp switched), `illegal` (a player makes an illegal move, then
takes it back and plays the real one), `forgotten` (a player moves without promoting, then
turns the piece to its new state)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.errors import OutputError, RenderError
from referee.rules.core import Match
from referee.synth.director import Act, Director, Step
from referee.synth.games import (
    GameSpec,
    contents_from_position,
    game_spec,
    rules_game,
    square_names,
)
from referee.synth.scene import RenderOptions, Scene
from referee.synth.truth import (
    EMPTY,
    Contents,
    FootageTruth,
    FrameTruth,
    PlyTruth,
    SquareContent,
    SteadyTruth,
)

log = logging.getLogger(__name__)
FAULTS = ("drop", "bump", "light", "illegal", "forgotten")
VIDEO_CODECS = {".mp4": "mp4v", ".avi": "MJPG"}


@dataclass(frozen=True)
class FootageOptions:
    fps: float = 30.0
    plies: int = 8  # length of a random game when there is no record
    faults: tuple[str, ...] = ()
    shake: float = 1.0
    flicker: float = 1.0
    setup: bool = False  # start from an empty board: the players set the pieces out

    def validate(self) -> None:
        unknown = [f for f in self.faults if f not in FAULTS]
        if unknown:
            raise RenderError(f"unknown fault {unknown[0]!r}; known faults: {', '.join(FAULTS)}")
        if not 1 <= self.fps <= 120:
            raise RenderError(f"fps {self.fps} is out of range 1..120")
        if self.plies < 0:
            raise RenderError("--plies must be 0 or more")


def random_match(spec: GameSpec, rng: np.random.Generator, plies: int) -> Match[Any, Any]:
    """A random legal game of `plies` plies at most (shorter if it ends)."""
    match: Match[Any, Any] = Match(rules_game(spec))
    for _ in range(plies):
        moves = match.legal_moves()
        if not moves:
            break
        match.push(moves[int(rng.integers(len(moves)))])
    return match


def _content(spec: GameSpec, position: Any, square: int, pieces: str) -> SquareContent:
    name = square_names(spec.files, spec.ranks)[square]
    return contents_from_position(spec, position, pieces)[name]


def plan_acts(spec: GameSpec, match: Match[Any, Any], pieces: str, faults: tuple[str, ...],
              rng: np.random.Generator) -> list[Act]:
    """The hand's trips for each ply of `match`, with the faults asked for."""
    game = match.game
    names = square_names(spec.files, spec.ranks)
    chance = bool(getattr(game, "chance", False))
    kind = "die" if pieces == "dice" else "penta"
    n = len(match.moves)
    illegal_at = int(rng.integers(0, n)) if "illegal" in faults and n else -1
    forgotten_at = -1
    if "forgotten" in faults and n and not chance:
        forgotten_at = int(rng.integers(0, n))
    acts: list[Act] = []
    for index, (before, move) in enumerate(zip(match.positions, match.moves, strict=False)):
        after = match.positions[index + 1]
        text = f"{index // 2 + 1}. {game.move_text(before, move)}"
        mover = int(before.turn)
        a, b = names[move.from_square], names[move.to_square]
        new = _content(spec, after, move.to_square, pieces)
        old = _content(spec, before, move.from_square, pieces)
        captured = before.piece_at(move.to_square) is not None
        if index == illegal_at:
            acts += _illegal(game, before, names, mover, kind, index, rng)
        steps: list[Step] = [Step("take", b)] if captured else []
        if chance and kind == "die":
            pending = SquareContent(kind, mover, 6) if kind == "die" else new
            acts.append(Act(text, "move", mover, (*steps, Step("move", a, b, pending)), index,
                            "roll pending"))
            acts.append(Act(text, "roll", mover, (Step("turn", b, "", new),), index,
                            f"after ply {index + 1}"))
        elif index == forgotten_at:
            acts.append(Act(text, "forgotten", mover, (*steps, Step("move", a, b, old)), index,
                            "promotion forgotten"))
            acts.append(Act(text, "promotion", mover, (Step("turn", b, "", new),), index,
                            f"after ply {index + 1}"))
        else:
            acts.append(Act(text, "move", mover, (*steps, Step("move", a, b, new)), index,
                            f"after ply {index + 1}"))
    return acts


def setup_acts(contents: Contents) -> list[Act]:
    """The players set out their pieces, turn about, each from their own side."""
    sides: list[list[tuple[str, SquareContent]]] = [[], []]
    for name, content in sorted(contents.items(), key=lambda kv: (kv[0][1:], kv[0][0])):
        if content.is_piece and content.owner in (0, 1):
            sides[int(content.owner)].append((name, content))
    acts = []
    for i in range(max(len(sides[0]), len(sides[1]))):
        for owner in (0, 1):
            if i < len(sides[owner]):
                name, content = sides[owner][i]
                acts.append(Act(f"setup {name}", "setup", owner,
                                (Step("put", "", name, content),), -1, "setup"))
    return acts


def _illegal(game: Any, position: Any, names: list[str], mover: int, kind: str, index: int,
             rng: np.random.Generator) -> list[Act]:
    """A move the rules forbid (a piece to an empty square it cannot reach), then its
    take-back."""
    legal = {(m.from_square, m.to_square) for m in game.legal_moves(position)}
    own = [sq for sq in range(len(names)) if (p := position.piece_at(sq)) is not None
           and int(p.color) == mover]
    empty = [sq for sq in range(len(names)) if position.piece_at(sq) is None]
    options = [(f, t) for f in own for t in empty if (f, t) not in legal]
    if not options:
        return []
    f, t = options[int(rng.integers(len(options)))]
    piece = position.piece_at(f)
    content = SquareContent(kind, mover, int(piece.state))
    text = f"illegal: {names[f]}-{names[t]}"
    return [Act(text, "illegal", mover, (Step("move", names[f], names[t], content),), index,
                "illegal move on the board"),
            Act(f"take back {names[t]}-{names[f]}", "takeback", mover,
                (Step("move", names[t], names[f], content),), index, f"before ply {index + 1}")]


def render_footage(game: str, out: str | Path, seed: int, *, record_text: str = "",
                   match: Match[Any, Any] | None = None, options: RenderOptions | None = None,
                   footage: FootageOptions | None = None) -> FootageTruth:
    """Render the footage of `match` (or a random game) to `out` (.mp4 or .avi) and its
    sidecar `out` with suffix .json; returns the truth."""
    options = options or RenderOptions()
    footage = footage or FootageOptions()
    footage.validate()
    path = Path(out)
    codec = VIDEO_CODECS.get(path.suffix.lower())
    if codec is None:
        raise RenderError(f"{path}: footage must be .mp4 or .avi")
    spec = game_spec(game)
    if spec.family != "rinne":
        raise RenderError(f"footage of {spec.name} needs its rules, which the referee does not "
                          "have yet; render single frames of it instead")
    rng = np.random.default_rng([seed, 6])
    scene = Scene(spec, seed, options)
    if match is None:
        match = random_match(spec, rng, footage.plies)
    pieces = scene.style.pieces
    contents: Contents = contents_from_position(spec, match.positions[0], pieces)
    setup = setup_acts(contents) if footage.setup else []
    empty = {name: EMPTY for name in contents}
    director = Director(scene, empty if setup else contents, rng, fps=footage.fps,
                        shake=footage.shake, flicker=footage.flicker)
    acts = plan_acts(spec, match, pieces, footage.faults, rng)
    if setup:
        director.pause(float(rng.uniform(0.8, 1.2)), "empty board")
        for act in setup:
            director.act(act)
            director.pause(float(rng.uniform(0.15, 0.5)), act.note)
    _direct(director, acts, footage, rng)
    writer = _open_writer(path, codec, footage.fps, options.width, options.height)
    dropped = _dropped(len(director.frames), footage, rng)
    frames: list[FrameTruth] = []
    try:
        for index, state in enumerate(director.frames):
            if index in dropped:
                continue
            frame, frame_truth = scene.render(state, rng, len(frames))
            writer.write(frame)
            frames.append(frame_truth)
    finally:
        writer.release()
    truth = _truth(spec, seed, scene, footage, director, frames, dropped, record_text)
    sidecar = path.with_suffix(".json")
    try:
        truth.save(sidecar)
    except OSError as error:
        raise OutputError(f"{sidecar}: cannot be written ({error.strerror})") from None
    return truth


def _direct(director: Director, acts: list[Act], footage: FootageOptions,
            rng: np.random.Generator) -> None:
    director.pause(float(rng.uniform(1.0, 1.6)), "start")
    bump_after = int(rng.integers(0, max(len(acts), 1))) if "bump" in footage.faults else -1
    light_after = int(rng.integers(0, max(len(acts), 1))) if "light" in footage.faults else -1
    if light_after >= 0:
        gain = float(rng.choice([rng.uniform(0.6, 0.8), rng.uniform(1.2, 1.35)]))
        tint = (float(rng.uniform(0.85, 1.1)), 1.0, float(rng.uniform(0.9, 1.15)))
        light_event: dict[str, object] = {"gain": gain, "tint": list(tint)}
        director.marks.events["light"] = light_event
    for i, act in enumerate(acts):
        director.act(act)
        director.pause(float(rng.uniform(0.6, 1.8)), act.note)
        if i == light_after:
            step = len(director.frames)
            director.light_step = (step, gain, tint)
            light_event["frame"] = step
            director.pause(float(rng.uniform(0.6, 1.0)), act.note + " (light changed)")
        if i == bump_after:
            director.bump()
            director.pause(float(rng.uniform(0.6, 1.0)), act.note + " (board bumped)")


def _dropped(count: int, footage: FootageOptions, rng: np.random.Generator) -> set[int]:
    if "drop" not in footage.faults:
        return set()
    out: set[int] = set()
    for _ in range(max(1, count // 150)):
        start = int(rng.integers(10, max(count - 10, 11)))
        out.update(range(start, start + int(rng.integers(1, 6))))
    return {i for i in out if i < count}


def _open_writer(path: Path, codec: str, fps: float, width: int, height: int) -> Any:
    if path.parent and not path.parent.exists():
        raise OutputError(f"{path}: its folder does not exist")
    try:
        path.touch()
    except OSError as error:
        raise OutputError(f"{path}: cannot be written ({error.strerror})") from None
    fourcc = cv2.VideoWriter.fourcc(*codec)
    writer = cv2.VideoWriter(str(path), fourcc, fps, (width, height))
    if not writer.isOpened():
        raise OutputError(f"{path}: OpenCV cannot write {codec} video here")
    return writer


def _truth(spec: GameSpec, seed: int, scene: Scene, footage: FootageOptions, director: Director,
           frames: list[Any], dropped: set[int], record_text: str) -> FootageTruth:
    """Map the director's marks onto the written frames (dropped frames leave gaps)."""
    kept = [i for i in range(len(director.frames)) if i not in dropped]
    position = {src: out for out, src in enumerate(kept)}

    def first_kept(src: int) -> int:
        for i in range(src, len(director.frames)):
            if i in position:
                return position[i]
        return len(kept) - 1

    def last_kept(src: int) -> int:
        for i in range(src, -1, -1):
            if i in position:
                return position[i]
        return 0

    plies = tuple(PlyTruth(act.ply, act.text, first_kept(a), last_kept(b), act.kind)
                  for act, a, b in director.marks.acts)
    steady = tuple(SteadyTruth(first_kept(a), last_kept(b),
                               tuple((k, contents[k]) for k in sorted(contents)), note)
                   for a, b, contents, note in director.marks.steady)
    faults: dict[str, Any] = {"asked": list(footage.faults), **director.marks.events}
    if dropped:
        faults["dropped_source_frames"] = sorted(dropped)
    for key in ("bump", "light"):
        event = faults.get(key)
        if isinstance(event, dict):
            if "frames" in event:
                event["frames"] = [first_kept(event["frames"][0]), last_kept(event["frames"][1])]
            if "frame" in event:
                event["frame"] = first_kept(event["frame"])
    return FootageTruth(spec.name, seed, footage.fps, scene.options.width, scene.options.height,
                        scene.style.name(), tuple(frames), plies, steady, faults, record_text)
