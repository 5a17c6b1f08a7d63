"""Whole rendered games refereed through the real pipeline: every ply read right, every
result right, no move recorded while a hand was in view, and the replay speed.

Each game is a random legal game from a seed (styles, boards, dice colours, light and camera
drawn from it, seeds far from the training crops'), rendered as footage, then replayed.

Run: PYTHONPATH=. python benchmarks/replay_games.py [--games 20] [--plies 8] [--size 1280x720]"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from referee.errors import RefereeError
from referee.footage_check import Expected, accepted_plies, moves_during_hands
from referee.replay import replay_footage
from referee.synth import RenderOptions
from referee.synth.footage import FootageOptions, render_footage

GAMES = ("rinne", "tensei")
FIRST_SEED = 700_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--plies", type=int, default=8)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--pieces", default="dice")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    print("| seed | game | plies | read right | plies read | hand moves | replay x real time |")
    print("| ---: | --- | ---: | --- | ---: | ---: | ---: |")
    right = 0
    with tempfile.TemporaryDirectory() as folder:
        for n in range(args.games):
            seed, game = FIRST_SEED + n, GAMES[n % len(GAMES)]
            video = Path(folder) / f"{game}-{seed}.mp4"
            render_footage(game, video, seed,
                           options=RenderOptions(width=width, height=height, pieces=args.pieces),
                           footage=FootageOptions(plies=args.plies))
            expected = Expected.from_sidecar(video.with_suffix(".json"))
            try:
                result = replay_footage(video, game, pieces=args.pieces,
                                        out=Path(folder) / f"out-{seed}")
            except RefereeError as error:
                print(f"| {seed} | {game} | {len(expected.plies)} | NO ({error}) | 0 | - | - |",
                      flush=True)
                continue
            read = accepted_plies(result.events)
            ok = read == list(expected.plies)
            right += ok
            print(f"| {seed} | {game} | {len(expected.plies)} | {'yes' if ok else 'NO'} | "
                  f"{len(read)} | "
                  f"{len(moves_during_hands(result.events, expected))} | "
                  f"{result.footage_s / result.seconds:.1f} |", flush=True)
    print(f"\n{right} of {args.games} games read without an error")


if __name__ == "__main__":
    main()
