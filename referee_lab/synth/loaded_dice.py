"""Whole Tensei games whose rolls come from a given die, fair or loaded, and the hand's trips
that show those rolls on camera.

In Tensei the moved die is rolled and its face is the piece's new state (1 King .. 5 Queen);
a 6 is rolled again. The players here choose where to move without knowing the roll (a
winning move when there is one, else a random one, as `footage.ended_match`), then roll the
die: each ply's faces are drawn from the die's chances until one is not a 6. On camera the
die lands on its new square showing the first face; each 6 is left up until the steady board
is read (the referee says "roll pending"), then the hand rolls it again where it stands."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from referee.errors import RenderError
from referee.rules import find_game
from referee.rules.core import Match
from referee.rules.rinne import Move, State
from referee_lab.synth.director import Act, Step
from referee_lab.synth.footage import Planner
from referee_lab.synth.games import GameSpec, contents_from_position, square_names
from referee_lab.synth.truth import SquareContent

FACES = 6
PENDING = 6  # the face that is rolled again


@dataclass(frozen=True)
class Die:
    """A six-sided die: the chance of each face, 1 to 6."""

    name: str
    chances: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.chances) != FACES or min(self.chances) < 0 or abs(sum(self.chances) - 1) > 1e-9:
            raise RenderError(f"die {self.name!r}: six chances that sum to 1, not {self.chances}")
        if self.chances[PENDING - 1] >= 1:
            raise RenderError(f"die {self.name!r} always shows a 6: a ply would never end")

    def roll(self, rng: np.random.Generator) -> tuple[int, ...]:
        """One ply's faces: rolled until one is not a 6 (the last is the new state)."""
        faces: list[int] = []
        while not faces or faces[-1] == PENDING:
            faces.append(int(rng.choice(FACES, p=self.chances)) + 1)
        return tuple(faces)


FAIR = Die("fair", (1 / 6,) * 6)


def loaded(face: int, chance: float) -> Die:
    """A die that shows `face` with `chance`, the other five faces equally often."""
    rest = (1 - chance) / (FACES - 1)
    return Die(f"loaded ({face} at {chance:g})",
               tuple(chance if f == face else rest for f in range(1, FACES + 1)))


@dataclass(frozen=True)
class RolledGame:
    """A whole game and, per ply, the faces its die showed (each 6 rolled again)."""

    seed: int
    die: Die
    match: Match[Any, Any]
    rolls: tuple[tuple[int, ...], ...]

    def face_counts(self) -> tuple[int, ...]:
        """How often each face 1..6 was rolled."""
        counts = [0] * FACES
        for faces in self.rolls:
            for face in faces:
                counts[face - 1] += 1
        return tuple(counts)


def rolled_game(game: str, seed: int, die: Die, max_plies: int) -> RolledGame | None:
    """A whole game of `game` (a game of chance: Tensei) from `seed` with `die`; None if it
    has not ended after `max_plies` plies. The moves and the rolls draw from separate
    streams, so a die's loading changes the rolls, never where the players would move."""
    rules: Any = find_game(game)
    if not getattr(rules, "chance", False):
        raise RenderError(f"{game} has no dice rolls")
    moves_rng, dice_rng = np.random.default_rng([seed, 31]), np.random.default_rng([seed, 66])
    match: Match[Any, Any] = Match(rules)
    rolls: list[tuple[int, ...]] = []
    while not match.is_over() and len(match.moves) < max_plies:
        faces = die.roll(dice_rng)
        move = _chosen(match, State(faces[-1]), moves_rng)
        match.push(move)
        rolls.append(faces)
    return RolledGame(seed, die, match, tuple(rolls)) if match.is_over() else None


def _chosen(match: Match[Any, Any], state: State, rng: np.random.Generator) -> Move:
    """Where the player moves, chosen before the roll: a winning (from, to) when there is
    one, else a random one; the die then becomes `state`."""
    pairs = sorted({(m.from_square, m.to_square) for m in match.legal_moves()})
    moves = [Move(frm, to, state) for frm, to in pairs]
    winning = [m for m in moves if _wins(match, m)]
    return winning[0] if winning else moves[int(rng.integers(len(moves)))]


def _wins(match: Match[Any, Any], move: Move) -> bool:
    mover = match.position.turn
    match.push(move)
    won = match.outcome is not None and match.outcome.winner == mover
    match.pop()
    return won


def rolled_planner(game: RolledGame) -> Planner:
    """The hand's trips for `game` (for `render_footage(plan=...)`): per ply, the captured
    die taken off and the moved die set down showing its first face, then one trip per
    roll after a 6."""

    def plan(spec: GameSpec, match: Match[Any, Any], pieces: str, faults: tuple[str, ...],
             rng: np.random.Generator) -> list[Act]:
        del rng
        if pieces != "dice" or faults:
            raise RenderError("rolled games are rendered with dice and without faults")
        if match is not game.match:
            raise RenderError("the planner renders its own game's match")
        return [act for index in range(len(match.moves)) for act in _ply_acts(spec, game, index)]

    return plan


def _ply_acts(spec: GameSpec, game: RolledGame, index: int) -> list[Act]:
    match = game.match
    names = square_names(spec.files, spec.ranks)
    before_position, move = match.positions[index], match.moves[index]
    before = contents_from_position(spec, before_position, "dice")
    after = contents_from_position(spec, match.positions[index + 1], "dice")
    mover = int(before_position.turn)
    text = f"{index // 2 + 1}. {match.game.move_text(before_position, move)}"
    a, b = names[move.from_square], names[move.to_square]
    taken = [Step("take", sq) for sq in names
             if sq != a and before[sq].is_piece and after[sq] != before[sq]]
    faces = game.rolls[index]

    def note(face: int) -> str:
        return "roll pending" if face == PENDING else f"after ply {index + 1}"

    acts = [Act(text, "move", mover, (*taken, Step("move", a, b, SquareContent("die", mover,
                                                                              faces[0]))),
                index, note(faces[0]))]
    acts += [Act(text, "roll", mover, (Step("turn", b, "", SquareContent("die", mover, face)),),
                 index, note(face)) for face in faces[1:]]
    return acts
