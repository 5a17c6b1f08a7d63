"""Render the committed test footage and its expected record: one recipe a file.

Run from the repository root: `PYTHONPATH=. python tests/data/footage/make_footage.py [NAME...]`
(about 3–5 minutes a file on one core). Each file is rendered once and committed; the test
(`tests/test_footage.py`) replays it through the real pipeline and checks the record, the
events the fault must raise, and that no move was recorded while a hand covered the board.
`rinne-dice-31` was rendered before recipes were kept (its seed and options are unknown) and
has no recipe here."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from referee.rules import game_with_ruleset
from referee.rules.core import Match
from referee.rules.records import read_record
from referee_lab.footage_check import Expected
from referee_lab.synth import RenderOptions
from referee_lab.synth.footage import FootageOptions, ended_match, render_footage
from referee_lab.synth.style import DIE_SIZE

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Recipe:
    name: str
    game: str
    seed: int
    plies: int
    pieces: str = "dice"
    faults: tuple[str, ...] = ()
    events: tuple[str, ...] = ()  # event kinds the referee must raise
    whole: bool = False  # play the game to its end (`plies` is then the most it may take)
    record: str = ""  # play the first `plies` plies of this record (tests/data/records/)
    aruco: bool = False  # the board with its ArUco markers (`referee board`)
    die_size: tuple[float, float] = DIE_SIZE  # dice this share of a square wide
    folder: str = "footage"  # under tests/data: footage read only through a board profile apart


RECIPES = (
    Recipe("rinne-illegal", "rinne", 800001, 5, faults=("illegal",),
           events=("ILLEGAL", "RESTORED")),
    Recipe("rinne-forgotten", "rinne", 800002, 6, faults=("forgotten",), events=("PROMOTE",)),
    Recipe("rinne-bump", "rinne", 800003, 5, faults=("bump",)),
    Recipe("rinne-light", "rinne", 800004, 5, faults=("light",)),
    Recipe("rinne-drop", "rinne", 800005, 5, faults=("drop",)),
    Recipe("rinne-linger", "rinne", 800006, 4, faults=("linger",)),
    Recipe("rinne-knocked", "rinne", 800007, 4, faults=("knocked",),
           events=("ILLEGAL", "RESTORED")),
    Recipe("rinne-takeback", "rinne", 800008, 4, faults=("takeback",), events=("TAKE_BACK",)),
    # Whole games to their end (Rinne with dice: the designer's game, examples/).
    Recipe("tensei-dice-whole", "tensei", 810009, 10, whole=True,
           events=("ROLL_PENDING", "GAME_OVER")),
    Recipe("rinne-penta-whole", "rinne", 810010, 10, pieces="penta", whole=True,
           events=("GAME_OVER",)),
    Recipe("tensei-penta-whole", "tensei", 810032, 10, pieces="penta", whole=True,
           events=("GAME_OVER",)),
    # Zensū (its own pieces): a whole game with a double capture, an illegal move put right
    Recipe("zensu-whole", "zensu", 810124, 16, pieces="zensu", whole=True,
           events=("GAME_OVER",)),
    Recipe("zensu-illegal", "zensu", 800101, 5, pieces="zensu", faults=("illegal",),
           events=("ILLEGAL", "RESTORED")),
    # Renaissance (tiles and markers): the preparation, the monomino fill and phase 1 up to
    # two polyominoes taken, from the sample game
    Recipe("renaissance-opening", "renaissance", 820001, 21, pieces="tiles",
           record="renaissance-sample.txt", events=("INCOMPLETE",)),
    # Renaissance's faults, from the sample game, seen as the opening is (its seed): in the
    # preparation a hand lingering (before ply 4) and an illegal tile (a second
    # L-tetromino, before ply 5) lifted off again; a tile laid a square off (ply 4),
    # accepted, then slid into place; in phase 1 a marker knocked aside and put back (after
    # ply 18), and at the first acquisition (ply 19) a neighbouring polyomino lifted with
    # its marker and put back before the domino is taken.
    Recipe("renaissance-illegal", "renaissance", 820001, 5, pieces="tiles",
           record="renaissance-sample.txt", faults=("illegal", "linger"),
           events=("ILLEGAL", "RESTORED")),
    Recipe("renaissance-shifted", "renaissance", 820001, 5, pieces="tiles",
           record="renaissance-sample.txt", faults=("shifted",), events=("TAKE_BACK",)),
    Recipe("renaissance-knocked-wrongtaken", "renaissance", 820001, 19, pieces="tiles",
           record="renaissance-sample.txt", faults=("knocked", "wrongtaken"),
           events=("ILLEGAL", "RESTORED")),
    # Renaissance's look-alikes: a marker pushed in at the end of a line of the mover's own
    # markers, and one placed where such a push would leave it, leave the same board; the hand
    # tells them apart (g1> then e3 along the diagonal g1-f2-e3, a3> then c3 along rank 3)
    Recipe("renaissance-pushes", "renaissance", 820001, 21, pieces="tiles",
           record="renaissance-pushes.txt"),
    # Zensū's faults of the hand: the capture of a piece passed over (ply 6) made with it left
    # standing 3 s, then taken off; a piece of the player who just moved knocked onto a
    # neighbouring square and put back (after ply 2)
    Recipe("zensu-halftaken", "zensu", 801239, 6, pieces="zensu", faults=("halftaken",),
           events=("INCOMPLETE",)),
    Recipe("zensu-knocked", "zensu", 800105, 5, pieces="zensu", faults=("knocked",),
           events=("ILLEGAL", "RESTORED")),
    # Zensū's faults of the camera and the table, a random game each: a lamp switched, the
    # board knocked aside, frames missing from the file
    Recipe("zensu-light", "zensu", 800106, 5, pieces="zensu", faults=("light",)),
    Recipe("zensu-bump", "zensu", 800103, 5, pieces="zensu", faults=("bump",)),
    Recipe("zensu-drop", "zensu", 800104, 5, pieces="zensu", faults=("drop",)),
    # The same three in Renaissance's preparation, from the sample game (its seed)
    Recipe("renaissance-light", "renaissance", 820001, 5, pieces="tiles",
           record="renaissance-sample.txt", faults=("light",)),
    Recipe("renaissance-bump", "renaissance", 820001, 5, pieces="tiles",
           record="renaissance-sample.txt", faults=("bump",)),
    Recipe("renaissance-drop", "renaissance", 820001, 5, pieces="tiles",
           record="renaissance-sample.txt", faults=("drop",)),
    # Boards with ArUco markers (`referee board`; RenderOptions.aruco): a few plies of each kind
    # of game, hands over the markers, and a bump (tests/test_aruco_footage.py)
    Recipe("rinne-aruco", "rinne", 830001, 3, aruco=True),
    Recipe("zensu-aruco", "zensu", 830002, 3, pieces="zensu", aruco=True),
    Recipe("renaissance-aruco", "renaissance", 830003, 3, pieces="tiles",
           record="renaissance-sample.txt", aruco=True),
    Recipe("rinne-bump-aruco", "rinne", 830004, 2, faults=("bump",), aruco=True),
    # Dice filling their squares, larger than the models learnt: read through the crop scale
    # `calibrate pieces` measures (tests/test_calibrate_pieces.py)
    Recipe("rinne-bigdice", "rinne", 840001, 4, die_size=(0.8, 0.9), folder="footage-sized"),
)


def make(recipe: Recipe) -> None:
    video = HERE.parent / recipe.folder / f"{recipe.name}.mp4"
    video.parent.mkdir(exist_ok=True)
    match = ended_match(recipe.game, recipe.seed, recipe.plies) if recipe.whole else None
    if recipe.record:
        match = Match(game_with_ruleset(recipe.game, None))
        for ply in read_record(HERE.parent / "records" / recipe.record).plies[:recipe.plies]:
            match.push_text(ply.text)
    if recipe.whole and match is None:
        raise SystemExit(f"{recipe.name}: the game did not end within {recipe.plies} plies")
    render_footage(recipe.game, video, recipe.seed, match=match,
                   options=RenderOptions(width=1280, height=720, pieces=None if recipe.pieces in (
                       "zensu", "tiles") else recipe.pieces, aruco=recipe.aruco,
                       die_size=recipe.die_size),
                   footage=FootageOptions(plies=recipe.plies, faults=recipe.faults))
    sidecar = video.with_suffix(".json")
    result = ""
    if match is not None and match.outcome is not None:
        result = match.outcome.result(match.game.player_names)
    expected = replace(Expected.from_sidecar(sidecar, recipe.events), pieces=recipe.pieces,
                       result=result)
    video.with_suffix(".expected.json").write_text(json.dumps(expected.to_json()) + "\n",
                                                   encoding="utf-8")
    sidecar.unlink()
    print(f"{video.name}: {len(expected.plies)} plies, events {list(recipe.events)}")


def main(names: list[str]) -> None:
    unknown = set(names) - {r.name for r in RECIPES}
    if unknown:
        raise SystemExit(f"no recipe named {sorted(unknown)[0]}")
    for recipe in RECIPES:
        if not names or recipe.name in names:
            make(recipe)


if __name__ == "__main__":
    main(sys.argv[1:])
