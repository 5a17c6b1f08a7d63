"""Replay rendered footage through the real pipeline and compare it with the truth the
renderer wrote beside it: the plies accepted against the sidecar's (or a committed
`.expected.json`), and any move accepted while a hand was in view. One line a file (OK or
WRONG, plies read of plies played, the event kinds seen), then what differs. A quick check
of a candidate model on a few games; `replay_games.py` is the whole benchmark.

Run: PYTHONPATH=. python benchmarks/check_footage.py [--model CAND.onnx] FOOTAGE.mp4 ...
(`--model`: the classifier to read with instead of the piece set's committed one)"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from referee.app.pipeline import camera_game, own_pieces
from referee.app.replay import replay_footage
from referee.errors import RefereeError
from referee_lab.footage_check import Expected, accepted_plies, moves_during_hands


def expected_of(video: Path) -> Expected:
    committed = video.with_suffix(".expected.json")
    if committed.exists():
        return Expected.load(committed)
    return Expected.from_sidecar(video.with_suffix(".json"))


def check(video: Path, model: str | None) -> bool:
    try:
        expected = expected_of(video)
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"{video.name} ERROR no readable truth beside it ({video.with_suffix('.json').name}: "
              f"{type(error).__name__})")
        return False
    # A sidecar does not name the Rinne family's piece set; the benchmark's file names do.
    with tempfile.TemporaryDirectory() as tmp:
        try:
            own = own_pieces(camera_game(expected.game)) is not None
            pieces = "penta" if "penta" in video.name else None if own else expected.pieces
            result = replay_footage(video, expected.game, pieces=pieces, out=Path(tmp),
                                    model=model)
        except RefereeError as error:
            print(f"{video.name} ERROR {error}")
            return False
    read, played = accepted_plies(result.events), list(expected.plies)
    under_hand = moves_during_hands(result.events, expected)
    right = read == played and not under_hand
    kinds = sorted({event.kind.name for event in result.events})
    print(f"{video.name} {'OK' if right else 'WRONG'} {len(read)}/{len(played)} "
          f"hands: {len(under_hand)} {kinds}")
    if read != played:
        print(f"  played {played}\n  read   {read}")
    for event in under_hand:
        print(f"  accepted under a hand: frame {event.frame_index} {event.move}")
    return right


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("footage", nargs="+", type=Path)
    parser.add_argument("--model", help="a model file to read the squares with")
    args = parser.parse_args()
    results = [check(video, args.model) for video in args.footage]
    print(f"{sum(results)} of {len(results)} right")
    if not all(results):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
