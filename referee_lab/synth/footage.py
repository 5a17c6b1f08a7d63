"""Footage: a video of a game being played, from a game record (or a random legal game)
and a seed, with a JSON sidecar of the ground truth beside it (`game.mp4` → `game.json`).

Faults for testing the referee: `drop` (frames missing from the file), `bump` (the board
knocked aside), `light` (a lamp switched), `illegal` (a player makes an illegal move, then
takes it back and plays the real one), `forgotten` (a player moves without promoting, then
turns the piece to its new state), `linger` (a hand stays over the board for several
seconds before a ply), `knocked` (a die is knocked over onto a side, then set right),
`takeback` (a player makes another legal move, lets it be accepted, takes it back and plays
the real one), `halftaken` (Zensū: a capturing ply made with one piece it passed over left
standing a while, then taken off). `forgotten` and `takeback` need pieces that move (not
Renaissance); `forgotten` needs a ply that changes the piece's state (not Zensū), `knocked`
dice or Zensū's pieces (a Zensū piece is knocked onto a neighbouring square, then put back),
`takeback` a game without dice rolls, `halftaken` a ply that captures a piece it passes
over. Renaissance stages `illegal`, `linger` and `knocked` with its tiles
and markers, and has two faults of its own, `shifted` (a tile laid a square off, then slid
into place) and `wrongtaken` (a polyomino lifted that the ply does not take, then put back):
see `flat_faults`.

Every game plays through its rules (`plan_acts`): the Rinne family and Zensū move pieces
(`_piece_acts`), Renaissance lays and lifts flat things (`_flat_acts`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from referee.errors import OutputError, RenderError
from referee.rules.core import Match
from referee.rules.renaissance_position import Phase
from referee_lab.synth.director import Act, Director, Step
from referee_lab.synth.flat_faults import FLAT_FAULTS, FlatFaults, FlatPly
from referee_lab.synth.games import (
    GameSpec,
    contents_from_position,
    game_spec,
    rules_game,
    square_names,
)
from referee_lab.synth.scene import RenderOptions, Scene
from referee_lab.synth.truth import (
    BLOCKED,
    EMPTY,
    Contents,
    FootageTruth,
    FrameTruth,
    PlyTruth,
    SquareContent,
    SteadyTruth,
)
from referee_lab.synth.video import VIDEO_SUFFIXES, Encoding, open_video

log = logging.getLogger(__name__)
FAULTS = ("drop", "bump", "light", "illegal", "forgotten", "linger", "knocked", "takeback",
          "shifted", "wrongtaken", "halftaken")
MOVING_FAULTS = {"illegal", "forgotten", "linger", "knocked", "takeback", "halftaken"}
TILE_FAULTS = set(FLAT_FAULTS) - MOVING_FAULTS  # Renaissance's own


END_HOLD_S = 5.0  # seconds of the final position at the end of footage
HALF_TAKEN_HOLD_S = 3.0  # seconds a capture is left half removed (`halftaken`)
# The hand's trips for a match (`plan_acts`'s signature): spec, match, pieces, faults, rng.
Planner = Callable[[GameSpec, Match[Any, Any], str, tuple[str, ...], np.random.Generator],
                   list[Act]]


@dataclass(frozen=True)
class FootageOptions:
    fps: float = 30.0
    plies: int = 8  # length of a random game when there is no record
    faults: tuple[str, ...] = ()
    shake: float = 1.0
    flicker: float = 1.0
    setup: bool = False  # start from an empty board: the players set the pieces out
    # Temporal sensor noise as a share of the style's (which spans dim light too, for
    # single training frames): a camera at normal table light is cleaner, and every
    # noisy pixel of every frame costs the video file bits.
    noise: float = 0.5
    crf: int = 30  # H.264 quality of .mp4 footage: lower is better and bigger

    def validate(self) -> None:
        unknown = [f for f in self.faults if f not in FAULTS]
        if unknown:
            raise RenderError(f"unknown fault {unknown[0]!r}; known faults: {', '.join(FAULTS)}")
        if not 1 <= self.fps <= 120:
            raise RenderError(f"fps {self.fps} is out of range 1..120")
        if not 0 <= self.noise <= 2:
            raise RenderError(f"noise {self.noise} is out of range 0..2")
        if not 0 <= self.crf <= 51:
            raise RenderError(f"crf {self.crf} is out of range 0..51")
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


def ended_match(game: str, seed: int, max_plies: int) -> Match[Any, Any] | None:
    """A whole game from `seed`: each player makes a winning move when there is one, else a
    random one; None if it has not ended after `max_plies` plies."""
    rng = np.random.default_rng([seed, 31])
    match: Match[Any, Any] = Match(rules_game(game_spec(game)))
    while not match.is_over() and len(match.moves) < max_plies:
        moves = match.legal_moves()
        winning = [m for m in moves if _wins(match, m)]
        match.push(winning[0] if winning else moves[int(rng.integers(len(moves)))])
    return match if match.is_over() else None


def _wins(match: Match[Any, Any], move: Any) -> bool:
    mover = match.position.turn
    match.push(move)
    won = match.outcome is not None and match.outcome.winner == mover
    match.pop()
    return won


def plan_acts(spec: GameSpec, match: Match[Any, Any], pieces: str, faults: tuple[str, ...],
              rng: np.random.Generator) -> list[Act]:
    """The hand's trips for each ply of `match`, with the faults asked for."""
    if spec.family == "renaissance":
        return _flat_acts(spec, match, pieces, faults, rng)
    return _piece_acts(spec, match, pieces, faults, rng)


def _plies(spec: GameSpec, match: Match[Any, Any], pieces: str,
           ) -> list[tuple[int, str, int, Any, Contents, Contents]]:
    """Per ply: index, text, mover, the move, and the square contents before and after."""
    game = match.game
    contents = [contents_from_position(spec, p, pieces) for p in match.positions]
    return [(i, f"{i // 2 + 1}. {game.move_text(before, move)}", int(before.turn), move,
             contents[i], contents[i + 1])
            for i, (before, move) in enumerate(zip(match.positions, match.moves, strict=False))]


def _piece_acts(spec: GameSpec, match: Match[Any, Any], pieces: str, faults: tuple[str, ...],
                rng: np.random.Generator) -> list[Act]:
    """Games of pieces that move (the Rinne family, Zensū): the hand takes the captured
    pieces off, then carries the moved one, turned to its new state (Tensei: 6 up, then
    the roll)."""
    game = match.game
    names = square_names(spec.files, spec.ranks)
    chance = bool(getattr(game, "chance", False))
    plies = _plies(spec, match, pieces)
    n = len(plies)
    illegal_at = int(rng.integers(0, n)) if "illegal" in faults and n else -1
    promoting = [i for i, _t, _m, move, b, a in plies
                 if move.from_square >= 0 and b[names[move.from_square]] != a[names[move.to_square]]]
    forgotten_at = -1
    if "forgotten" in faults and promoting and not chance:
        forgotten_at = promoting[int(rng.integers(len(promoting)))]
    linger_at = int(rng.integers(0, n)) if "linger" in faults and n else -1
    knocked_at = int(rng.integers(0, n)) if "knocked" in faults and n else -1
    takeback_at = int(rng.integers(0, n)) if "takeback" in faults and n else -1
    halftaken_at = _half_taken_at(plies, names, rng) if "halftaken" in faults else -1
    acts: list[Act] = []
    for index, text, mover, move, before, after in plies:
        if move.from_square < 0:  # a pass: nothing on the board changes
            continue
        a, b = names[move.from_square], names[move.to_square]
        new, old = after[b], before[a]
        if index == linger_at:
            acts.append(Act("a hand over the board", "linger", mover,
                            (Step("hover", names[len(names) // 2],
                                  seconds=float(rng.uniform(5.5, 7.0))),), index,
                            f"before ply {index + 1}"))
        if index == illegal_at:
            acts += _illegal(game, match.positions[index], names, before, mover, index, rng)
        if index == takeback_at:
            acts += _taken_back(spec, match, index, pieces, names, rng)
        # Every piece but the mover's that is gone or replaced is captured (Rinne: on the
        # goal square moved to; Zensū: every opponent passed over or landed on).
        taken = [sq for sq in names if sq != a and before[sq].is_piece and after[sq] != before[sq]]
        taken.sort(key=lambda sq: abs(names.index(sq) - move.from_square))
        steps: list[Step] = [Step("take", sq) for sq in taken]
        if chance and new.kind == "die":
            pending = SquareContent("die", mover, 6)
            acts.append(Act(text, "move", mover, (*steps, Step("move", a, b, pending)), index,
                            "roll pending"))
            acts.append(Act(text, "roll", mover, (Step("turn", b, "", new),), index,
                            f"after ply {index + 1}"))
        elif index == halftaken_at:  # one piece passed over left standing, taken off after
            passed = [s.a for s in steps if s.a != b]
            standing = passed[int(rng.integers(len(passed)))]
            acts.append(Act(text, "move", mover, (*(s for s in steps if s.a != standing),
                                                  Step("move", a, b, new)), index,
                            f"capture half removed: {standing} standing",
                            hold=HALF_TAKEN_HOLD_S))
            acts.append(Act(text, "capture", mover, (Step("take", standing),), index,
                            f"after ply {index + 1}"))
        elif index == forgotten_at:
            acts.append(Act(text, "forgotten", mover, (*steps, Step("move", a, b, old)), index,
                            "promotion forgotten"))
            acts.append(Act(text, "promotion", mover, (Step("turn", b, "", new),), index,
                            f"after ply {index + 1}"))
        else:
            acts.append(Act(text, "move", mover, (*steps, Step("move", a, b, new)), index,
                            f"after ply {index + 1}"))
        if index == knocked_at:
            knock = _knocked_aside if spec.family == "zensu" else _knocked
            acts += knock(after, match, index, names, rng)
    return acts


def _half_taken_at(plies: list[tuple[int, str, int, Any, Contents, Contents]], names: list[str],
                   rng: np.random.Generator) -> int:
    """The ply of the `halftaken` fault: one drawn among those that capture a piece they pass
    over (not only the one landed on); -1, with a warning, if none does."""
    options = [index for index, _text, _mover, move, before, after in plies
               if move.from_square >= 0 and any(
                   before[sq].is_piece and after[sq] != before[sq] for sq in names
                   if sq not in (names[move.from_square], names[move.to_square]))]
    if not options:
        log.warning("fault 'halftaken' left out: no ply captures a piece it passes over")
        return -1
    return options[int(rng.integers(len(options)))]


def _knocked_aside(contents: Contents, match: Match[Any, Any], index: int, names: list[str],
                   rng: np.random.Generator) -> list[Act]:
    """After ply `index`, the next player's hand knocks a piece of the player who just moved
    (one the next ply leaves alone) onto a neighbouring empty square, then puts it back; the
    board knocked must not be one a ply or a take-back could leave."""
    game: Any = match.game
    previous, position = match.positions[index], match.positions[index + 1]
    spared: set[str] = set()
    if index + 1 < len(match.moves):
        nxt = match.moves[index + 1]
        spared = {names[nxt.from_square], names[nxt.to_square]}
    readable = {tuple(previous.board), tuple(position.board)}
    readable |= {tuple(game.play(p, m).board) for p in (previous, position)
                 for m in game.legal_moves(p)}
    files = sorted({name[0] for name in names})
    mover = int(previous.turn)
    options = []
    for sq, name in enumerate(names):
        if contents[name].owner != mover or name in spared:
            continue
        f, r = files.index(name[0]), int(name[1:])
        for df, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            if not (0 <= f + df < len(files)):
                continue
            to = f"{files[f + df]}{r + dr}"
            if to not in contents or contents[to].kind != "empty" or to in spared:
                continue
            board = list(position.board)
            board[names.index(to)], board[sq] = board[sq], 0
            if tuple(board) not in readable:
                options.append((name, to))
    if not options:
        log.warning("fault 'knocked' left out after ply %d: no piece can be knocked aside",
                    index + 1)
        return []
    a, b = options[int(rng.integers(len(options)))]
    knocker = 1 - mover
    return [Act(f"knock {a}-{b}", "knock", knocker, (Step("move", a, b, contents[a]),), index,
                f"piece on {a} knocked onto {b}"),
            Act(f"put back {b}-{a}", "right", knocker, (Step("move", b, a, contents[a]),), index,
                f"after ply {index + 1}")]


def _knocked(contents: Contents, match: Match[Any, Any], index: int, names: list[str],
             rng: np.random.Generator) -> list[Act]:
    """After ply `index`, the next player's hand knocks a die over (one the next ply leaves
    alone), then sets it right."""
    spared: set[str] = set()
    if index + 1 < len(match.moves):
        nxt = match.moves[index + 1]
        spared = {names[nxt.from_square], names[nxt.to_square]}
    dice = [sq for sq in names if contents[sq].kind == "die" and sq not in spared]
    if not dice:
        return []
    square = dice[int(rng.integers(len(dice)))]
    mover = 1 - int(match.positions[index].turn)
    return [Act(f"knock {square}", "knock", mover, (Step("knock", square),), index,
                f"die on {square} knocked over"),
            Act(f"set {square} right", "right", mover,
                (Step("turn", square, "", contents[square]),), index, f"after ply {index + 1}")]


def _taken_back(spec: GameSpec, match: Match[Any, Any], index: int, pieces: str,
                names: list[str], rng: np.random.Generator) -> list[Act]:
    """Before ply `index`, its player makes another legal move that captures nothing, lets
    it be accepted, then takes it back."""
    game, position = match.game, match.positions[index]
    before = contents_from_position(spec, position, pieces)
    options = []
    for move in game.legal_moves(position):
        if move == match.moves[index] or move.from_square < 0:
            continue
        after = contents_from_position(spec, game.play(position, move), pieces)
        changed = {sq for sq in names if after[sq] != before[sq]}
        if changed == {names[move.from_square], names[move.to_square]}:
            options.append((move, after))
    if not options:
        return []
    move, after = options[int(rng.integers(len(options)))]
    a, b = names[move.from_square], names[move.to_square]
    mover = int(position.turn)
    text = f"{index // 2 + 1}. {game.move_text(position, move)}"
    return [Act(text, "trial", mover, (Step("move", a, b, after[b]),), index,
                f"trial ply {index + 1}"),
            Act(f"take back {b}-{a}", "takeback", mover, (Step("move", b, a, before[a]),), index,
                f"before ply {index + 1}")]


def _flat_acts(spec: GameSpec, match: Match[Any, Any], pieces: str,
               faults: tuple[str, ...] = (), rng: np.random.Generator | None = None,
               ) -> list[Act]:
    """Renaissance: each ply lays a tile, a marker or a monomino, pushes a marker in from
    beyond the rim (sliding its line on), or slides a marker; then the board is brought to
    the rules' position: tiles taken are lifted off with their markers and monominoes laid in
    their place, and a phase's end clears the board (`_settle`). Faults are staged by
    `FlatFaults`."""
    plies = [FlatPly(index, text, mover, move, before, after,
                     _flat_ply(spec, match, index, text, mover, move, before, after))
             for index, text, mover, move, before, after in _plies(spec, match, pieces)]
    staged = set(faults) & set(FLAT_FAULTS)
    if not staged or rng is None:
        return [ply.act for ply in plies]
    staging = FlatFaults(spec, match, plies, tuple(staged), rng)
    return [act for ply in plies for act in staging.stage(ply)]


def _flat_ply(spec: GameSpec, match: Match[Any, Any], index: int, text: str, mover: int,
              move: Any, before: Contents, after: Contents) -> Act:
    """The act of one Renaissance ply: the player's action, then `_settle`."""
    names = square_names(spec.files, spec.ranks)
    squares = getattr(move, "squares", None)
    now = dict(before)
    steps: list[Step] = []
    if squares is not None:  # a tile
        cells = tuple(names[sq] for sq in squares)
        steps.append(Step("lay", cells[0], changes=tuple((c, after[c]) for c in cells),
                          carry=cells))
    elif hasattr(move, "from_square"):  # a marker moved
        a, b = names[move.from_square], names[move.to_square]
        steps.append(Step("shift", a, b, changes=((a, after[a]), (b, after[b]))))
    else:  # a marker or a monomino placed, or a marker pushed in
        square = names[move.square]
        changes = {square: after[square]}
        line: tuple[str, ...] = ()
        if match.positions[index].phase is Phase.PHASE1:
            changes = _placed_marker(match, index, spec, before)
            line = _pushed_line(match, index, names)
        if line:  # pushed from beyond the rim: every marker of the line slides one square on
            changes = {**{sq: before[sq] for sq in line}, **changes}
            steps.append(Step("push", square, line[1], changes=tuple(changes.items()), carry=line))
        else:
            steps.append(Step("lay", square, changes=tuple(changes.items()), carry=(square,)))
    for step in steps:
        now.update(step.changes)
    steps += _settle(now, after)
    return Act(text, "move", mover, tuple(steps), index, f"after ply {index + 1}")


def _with_marker(content: SquareContent, marker: str | None) -> SquareContent:
    return SquareContent(content.kind, content.owner, content.value, marker)


def _pushed_line(match: Match[Any, Any], index: int, names: list[str]) -> tuple[str, ...]:
    """The squares whose markers the phase 1 marker of ply `index` pushes one square on,
    its own first; none for a plain placement."""
    game: Any = match.game
    return tuple(names[sq] for sq in game.pushed_line(match.positions[index],
                                                      match.moves[index].square))


def _placed_marker(match: Match[Any, Any], index: int, spec: GameSpec,
                   before: Contents) -> Contents:
    """The squares a phase 1 marker changes (a push-in shifts its line), before any tile it
    completes is taken."""
    game: Any = match.game
    position, move = match.positions[index], match.moves[index]
    markers = game.placed_markers(position, move.square)
    names = square_names(spec.files, spec.ranks)
    colours = (None, "gold", "silver")
    return {names[sq]: _with_marker(before[names[sq]], colours[new])
            for sq, (old, new) in enumerate(zip(position.markers, markers, strict=True))
            if old != new or sq == move.square}


def _settle(now: Contents, after: Contents) -> list[Step]:
    """Steps that bring the board from `now` to `after`: what must go is lifted off (a tile
    with its markers at once, other things a rank at a time), then what `after` holds is
    laid, a square at a time."""
    lifts: dict[tuple[str, str], list[str]] = {}
    cleared: Contents = {}
    for sq, target in after.items():
        have = now[sq]
        if have == target:
            continue
        if have.kind in ("tile", "monomino") and (have.kind, have.value) != (target.kind,
                                                                             target.value):
            cleared[sq] = EMPTY  # the cover goes, and its marker with it
        elif have.marker and have.marker != target.marker:
            cleared[sq] = _with_marker(have, None)
        else:
            continue
        key = ("tile", f"{have.value:03d}") if have.kind == "tile" else ("rank", sq[1:])
        lifts.setdefault(key, []).append(sq)
    steps = [Step("lift", cells[0], changes=tuple((c, cleared[c]) for c in cells),
                  carry=tuple(cells)) for _key, cells in sorted(lifts.items())]
    steps += [Step("lay", sq, changes=((sq, target),), carry=(sq,))
              for sq, target in after.items() if cleared.get(sq, now[sq]) != target]
    return steps


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


def _illegal(game: Any, position: Any, names: list[str], contents: Contents, mover: int,
             index: int, rng: np.random.Generator) -> list[Act]:
    """A move the rules forbid (a piece to an empty square it cannot reach), then its
    take-back."""
    legal = {(m.from_square, m.to_square) for m in game.legal_moves(position)}
    own = [sq for sq, name in enumerate(names) if contents[name].owner == mover]
    empty = [sq for sq, name in enumerate(names) if contents[name].kind == "empty"]
    options = [(f, t) for f in own for t in empty if (f, t) not in legal]
    if not options:
        return []
    f, t = options[int(rng.integers(len(options)))]
    content = contents[names[f]]
    text = f"illegal: {names[f]}-{names[t]}"
    return [Act(text, "illegal", mover, (Step("move", names[f], names[t], content),), index,
                "illegal move on the board"),
            Act(f"take back {names[t]}-{names[f]}", "takeback", mover,
                (Step("move", names[t], names[f], content),), index, f"before ply {index + 1}")]


def render_footage(game: str, out: str | Path, seed: int, *, record_text: str = "",
                   match: Match[Any, Any] | None = None, options: RenderOptions | None = None,
                   footage: FootageOptions | None = None,
                   plan: Planner | None = None) -> FootageTruth:
    """Render the footage of `match` (or a random game) to `out` (.mp4 or .avi) and its
    sidecar `out` with suffix .json; returns the truth. `plan`: the hand's trips, in place of
    `plan_acts` (Tensei's rolls of a given die, `loaded_dice`)."""
    options = options or RenderOptions()
    footage = footage or FootageOptions()
    footage.validate()
    path = Path(out)
    if path.suffix.lower() not in VIDEO_SUFFIXES:
        raise RenderError(f"{path}: footage must be .mp4 or .avi")
    spec = game_spec(game)
    rng = np.random.default_rng([seed, 6])
    scene = Scene(spec, seed, options)
    if match is None:
        match = random_match(spec, rng, footage.plies)
    pieces = scene.style.pieces
    _check_faults(footage.faults, spec, match, pieces)
    contents: Contents = contents_from_position(spec, match.positions[0], pieces)
    setup = setup_acts(contents) if footage.setup else []
    empty = {name: BLOCKED if c.kind == "blocked" else EMPTY for name, c in contents.items()}
    director = Director(scene, empty if setup else contents, rng, fps=footage.fps,
                        shake=footage.shake, flicker=footage.flicker, noise=footage.noise)
    acts = (plan or plan_acts)(spec, match, pieces, footage.faults, rng)
    if setup:
        director.pause(float(rng.uniform(0.8, 1.2)), "empty board")
        for act in setup:
            director.act(act)
            director.pause(float(rng.uniform(0.15, 0.5)), act.note)
    _direct(director, acts, footage, rng)
    writer = open_video(path, footage.fps, (options.width, options.height),
                        Encoding(crf=footage.crf))
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
        writer.close()
    truth = _truth(spec, seed, scene, footage, director, frames, dropped, record_text)
    sidecar = path.with_suffix(".json")
    try:
        truth.save(sidecar)
    except OSError as error:
        raise OutputError(f"{sidecar}: cannot be written ({error.strerror})") from None
    return truth


def _check_faults(faults: tuple[str, ...], spec: GameSpec, match: Match[Any, Any],
                  pieces: str) -> None:
    if spec.family == "renaissance":
        moving = (MOVING_FAULTS - set(FLAT_FAULTS)) & set(faults)
        if moving:
            raise RenderError(f"fault {sorted(moving)[0]!r} needs pieces that move; "
                              f"{spec.name} has none")
        return
    tiles = TILE_FAULTS & set(faults)
    if tiles:
        raise RenderError(f"fault {sorted(tiles)[0]!r} needs Renaissance's tiles; "
                          f"{spec.name} has none")
    if "knocked" in faults and pieces != "dice" and spec.family != "zensu":
        raise RenderError(f"fault 'knocked' needs dice; this {spec.name} is played with {pieces}")
    if "takeback" in faults and getattr(match.game, "chance", False):
        raise RenderError(f"fault 'takeback' needs a game without dice rolls, not {spec.name}")


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
        pause_s = float(rng.uniform(0.6, 1.8))
        # The players look at the final position while the camera keeps recording: long
        # enough for a referee that waits out an arm (`StabiliserSettings.occlusion_timeout_s`,
        # 4 s), since a captured piece set down beside the board looks like one. The pause is
        # drawn all the same, so the random numbers after it are those of the same seed.
        hold = max(act.hold, END_HOLD_S if i == len(acts) - 1 else 0.0)
        director.pause(max(pause_s, hold), act.note)
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
