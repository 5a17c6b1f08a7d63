"""`referee stats` on Tensei games rolled with a fair die and with a loaded one: the games are
played from fixed seeds, rendered as footage, refereed through the real pipeline, and the
rolls the referee saw are tested against a fair die. The loaded die must be flagged
(p < 0.01), the fair one not.

Each set takes whole games from its first seed on (a game that has not ended after
`--max-plies` plies is skipped, seed by seed) until its dice were rolled at least `--rolls`
times. Each game is rendered (its look drawn from its seed), replayed, and its log and record
are kept under `--out` (`fair/SEED/`, `loaded/SEED/`); the replay is checked against the
rolled game, ply by ply: the move, and every face the log gives for it (a misread roll biases
the counts).

Run: PYTHONPATH=. python benchmarks/dice_stats.py [--out tests/data/stats] [--footage DIR]
[--plots DIR] (keep the footage in DIR and reuse it: rendering is most of the time;
`--render-only` fills DIR without replaying; `--stats-only` reads the logs under `--out`)
"""

from __future__ import annotations

import argparse
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import cv2

from referee.app.replay import replay_footage
from referee.app.stats import read_game, run_stats
from referee.errors import RefereeError
from referee_lab.synth import RenderOptions
from referee_lab.synth.footage import FootageOptions, render_footage
from referee_lab.synth.loaded_dice import FAIR, Die, RolledGame, loaded, rolled_game, rolled_planner

GAME = "tensei"
LOADED = loaded(1, 0.4)  # King: 0.4, every other face 0.12
SETS = (("fair", FAIR, 760_000), ("loaded", LOADED, 770_000))  # name, die, first seed
ROLLS = 100  # per set: 0.99 power against LOADED at p < 0.01 (dice_stats.md)
MAX_PLIES = 24
SIZE = "960x540"


@dataclass(frozen=True)
class Checked:
    """One game's replay against the rolled game."""

    name: str
    seed: int
    plies: int
    rolls: int
    result: str
    plies_read: int
    misreads: tuple[str, ...]  # a ply or a roll read otherwise than rolled
    render_s: float
    replay_s: float
    footage_s: float

    def line(self) -> str:
        right = "yes" if not self.misreads else "; ".join(self.misreads)
        return (f"| {self.name} | {self.seed} | {self.plies} | {self.rolls} | {self.result} | "
                f"{self.plies_read} | {right} | {self.render_s:.0f} | {self.replay_s:.0f} | "
                f"{self.footage_s:.0f} |")


def planned(die: Die, first_seed: int, rolls: int, max_plies: int) -> list[RolledGame]:
    """Whole games from `first_seed` on until their dice were rolled `rolls` times."""
    games: list[RolledGame] = []
    seed = first_seed
    while sum(sum(g.face_counts()) for g in games) < rolls:
        game = rolled_game(GAME, seed, die, max_plies)
        if game is not None:
            games.append(game)
        seed += 1
    return games


def rendered(name: str, game: RolledGame, footage: Path, size: str) -> tuple[Path, float]:
    """The game's footage (rendered unless already there) and the seconds it took."""
    width, height = (int(v) for v in size.split("x"))
    video = footage / f"{GAME}-{name}-{game.seed}-{size}.mp4"
    if video.with_suffix(".json").exists():
        return video, 0.0
    started = time.perf_counter()
    render_footage(GAME, video, game.seed, match=game.match,
                   options=RenderOptions(width=width, height=height, pieces="dice"),
                   footage=FootageOptions(plies=len(game.match.moves)), plan=rolled_planner(game))
    return video, time.perf_counter() - started


def referee_one(name: str, game: RolledGame, footage: Path, out: Path, size: str) -> Checked:
    """Render, replay into `out/name/SEED/` (the log and the record kept), check."""
    video, render_s = rendered(name, game, footage, size)
    scratch = footage / f"replay-{name}-{game.seed}"
    shutil.rmtree(scratch, ignore_errors=True)
    rolls = sum(game.face_counts())
    assert game.match.outcome is not None
    result = game.match.outcome.result(game.match.game.player_names)
    try:
        replayed = replay_footage(video, GAME, out=scratch, headers={
            "Event": f"dice_stats: {game.die.name} die, seed {game.seed}"})
    except RefereeError as error:
        return Checked(name, game.seed, len(game.match.moves), rolls, result, 0, (str(error),),
                       render_s, 0.0, 0.0)
    kept = out / name / str(game.seed)
    kept.mkdir(parents=True, exist_ok=True)
    for file in ("game.jsonl", "game.txt"):
        shutil.copyfile(scratch / file, kept / file)
    return Checked(name, game.seed, len(game.match.moves), rolls, result, len(replayed.match.moves),
                   misreads(game, kept / "game.jsonl"), render_s, replayed.seconds,
                   replayed.footage_s)


def misreads(game: RolledGame, log: Path) -> tuple[str, ...]:
    """Where the log's plies and rolls differ from the rolled game's, as `referee stats`
    reads them."""
    seen = read_game(log)
    rolled = list(zip(game.match.ply_texts(), game.rolls, strict=True))
    out = []
    for index, (ply, faces) in enumerate(zip(seen.ply_texts, seen.ply_faces, strict=True)):
        if index >= len(rolled):
            out.append(f"ply {index + 1}: {ply} {faces} not played")
        elif (ply, faces) != rolled[index]:
            out.append(f"ply {index + 1}: read {ply} {faces}, rolled {rolled[index][0]} "
                       f"{rolled[index][1]}")
    if len(seen.ply_texts) < len(rolled):
        out.append(f"plies {len(seen.ply_texts) + 1}-{len(rolled)} not read")
    return tuple(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="tests/data/stats", help="where the logs go")
    parser.add_argument("--footage", default="/tmp/dice-stats", help="the footage, kept and reused")
    parser.add_argument("--plots", help="the stats' PNG figures here")
    parser.add_argument("--rolls", type=int, default=ROLLS)
    parser.add_argument("--max-plies", type=int, default=MAX_PLIES)
    parser.add_argument("--size", default=SIZE)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument("--stats-only", action="store_true")
    args = parser.parse_args()
    cv2.setNumThreads(1)  # one core: the machine is shared
    out, footage = Path(args.out), Path(args.footage)
    footage.mkdir(parents=True, exist_ok=True)
    if not args.stats_only:
        for name, die, first_seed in SETS:
            games = planned(die, first_seed, args.rolls, args.max_plies)
            print(f"{name}: {die.name}, {len(games)} games from seed {first_seed}, "
                  f"{sum(sum(g.face_counts()) for g in games)} rolls, faces rolled "
                  f"{_sum_counts(games)}", flush=True)
            if args.render_only:
                for game in games:
                    print(rendered(name, game, footage, args.size), flush=True)
            else:
                report(name, games, footage, out, args.size)
    if not args.render_only:
        stats(out, args.plots)


def _sum_counts(games: list[RolledGame]) -> tuple[int, ...]:
    return tuple(sum(counts) for counts in zip(*(g.face_counts() for g in games), strict=True))


def report(name: str, games: list[RolledGame], footage: Path, out: Path, size: str) -> None:
    shutil.rmtree(out / name, ignore_errors=True)  # the set's logs, all made afresh
    print("| set | seed | plies | rolls | result | plies read | read right | render s | replay s | "
          "footage s |")
    print("| --- | ---: | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |", flush=True)
    for game in games:
        print(referee_one(name, game, footage, out, size).line(), flush=True)


def stats(out: Path, plots: str | None) -> None:
    for name, _die, _seed in SETS:
        print(f"\n$ referee stats {out / name}", flush=True)
        run_stats([out / name], plots=Path(plots) / name if plots else None)


if __name__ == "__main__":
    main()
