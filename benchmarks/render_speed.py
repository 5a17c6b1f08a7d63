"""How fast the renderer makes training frames and footage, on one core.

Single frames: each frame is a new scene (new seed: new style, board, camera, pieces), as
when making training data. Footage: frames of one scene with a hand moving pieces.

    nice /work/venv/bin/python benchmarks/render_speed.py [--frames N] [--threads T]

Whole games (`--whole renaissance,zensu,rinne`): CPU seconds a frame of footage costs to
render and to encode, and so a whole game on one core. Each game is played to its end from
`--seed` as `replay_games.py` plays it (`ended_match`) and its director's frames are made as
`render_footage` makes them; rendering all of a Renaissance game's frames takes most of an
hour, so `--frames` consecutive frames are rendered at each of `--at` points of the game
(shares of its length: an empty board, a full one, hands in and out) and their mean is
applied to the game's frame count. The frames then go through footage's H.264 writer
(ffmpeg, a child process, its CPU time counted apart). CPU time (`time.process_time`,
`RUSAGE_CHILDREN`), not wall time: the machine is shared. `PYTHONPATH=DIR` measures another
checkout's renderer (`git worktree add DIR COMMIT`) on the same machine; `--check FILE`
writes the SHA-1 of every rendered frame, to show that two checkouts render the same pixels.

    OMP_NUM_THREADS=1 PYTHONPATH=. nice python benchmarks/render_speed.py --whole
        renaissance,zensu,rinne [--seed 1] [--frames 40] [--at 0.05,0.3,0.5,0.7,0.95]
        [--check FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee_lab.synth import RenderOptions, render_frame
from referee_lab.synth.footage import FootageOptions, render_footage
from referee_lab.synth.textures import warm_up


def single_frames(width: int, height: int, count: int, game: str) -> float:
    options = RenderOptions(width=width, height=height)
    for seed in range(10_000, 10_004):  # warm the noise bank for this size
        render_frame(game, seed=seed, options=options)
    start = time.perf_counter()
    for seed in range(count):
        render_frame(game, seed=seed, options=options)
    return count / (time.perf_counter() - start)


def footage(width: int, height: int, plies: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "bench.mp4"
        start = time.perf_counter()
        truth = render_footage("tensei", out, 1, options=RenderOptions(width=width, height=height),
                               footage=FootageOptions(plies=plies))
        return len(truth.frames), len(truth.frames) / (time.perf_counter() - start)


@dataclass(frozen=True)
class Cost:
    game: str
    seed: int
    plies: int
    frames: int  # the whole game's
    direct_s: float  # planning the game and its frames (once a game)
    render_s: float  # a frame
    encode_s: float  # a frame

    def line(self) -> str:
        whole = self.direct_s + self.frames * (self.render_s + self.encode_s)
        return (f"| {self.game} | {self.seed} | {self.plies} | {self.frames:,} | "
                f"{self.render_s:.3f} | {self.encode_s:.3f} | {whole / 60:.1f} |")


def _children_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def whole_game(game: str, seed: int, frames: int, at: list[float], check: list[str]) -> Cost:
    from referee_lab.synth.director import Director
    from referee_lab.synth.footage import FootageOptions, _direct, ended_match, plan_acts
    from referee_lab.synth.games import contents_from_position, game_spec
    from referee_lab.synth.scene import RenderOptions, Scene
    from referee_lab.synth.video import Encoding, open_video

    start = time.process_time()
    spec, footage, options = game_spec(game), FootageOptions(), RenderOptions()
    match = ended_match(game, seed, 200)
    if match is None:
        raise SystemExit(f"{game} from seed {seed} does not end within 200 plies")
    rng = np.random.default_rng([seed, 6])
    scene = Scene(spec, seed, options)
    contents = contents_from_position(spec, match.positions[0], scene.style.pieces)
    director = Director(scene, contents, rng, fps=footage.fps, shake=footage.shake,
                        flicker=footage.flicker, noise=footage.noise)
    _direct(director, plan_acts(spec, match, scene.style.pieces, (), rng), footage, rng)
    states = director.frames
    direct_s = time.process_time() - start
    picked = sorted({min(int(share * len(states)) + i, len(states) - 1)
                     for share in at for i in range(frames)})
    rendered: list[Any] = []
    start = time.process_time()
    for index in picked:
        frame, _truth = scene.render(states[index], rng, index)
        rendered.append(frame)
        check.append(f"{game} {seed} {index} {hashlib.sha1(frame.tobytes()).hexdigest()}")
    render_s = (time.process_time() - start) / len(picked)
    with tempfile.TemporaryDirectory() as scratch:
        before = _children_s()
        writer = open_video(Path(scratch) / "speed.mp4", footage.fps,
                            (options.width, options.height), Encoding(crf=footage.crf))
        for frame in rendered:
            writer.write(frame)
        writer.close()
        encode_s = (_children_s() - before) / len(rendered)
    return Cost(game, seed, len(match.moves), len(states), direct_s, render_s, encode_s)


def whole_games(args: argparse.Namespace) -> None:
    at = [float(v) for v in args.at.split(",")]
    print("| game | seed | plies | frames | render s/frame | encode s/frame | whole game, "
          "CPU min |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |", flush=True)
    check: list[str] = []
    for game in args.whole.split(","):
        print(whole_game(game, args.seed, args.frames, at, check).line(), flush=True)
    if args.check:
        Path(args.check).write_text("\n".join(check) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=40,
                        help="single frames; --whole: consecutive frames at each point")
    parser.add_argument("--threads", type=int, default=1, help="OpenCV threads (default 1)")
    parser.add_argument("--plies", type=int, default=2)
    parser.add_argument("--whole", help="games, comma-separated: whole-game footage costs")
    parser.add_argument("--seed", type=int, default=1, help="--whole: the games' seed")
    parser.add_argument("--at", default="0.05,0.3,0.5,0.7,0.95",
                        help="--whole: where in the game, as shares of its frames")
    parser.add_argument("--check", help="--whole: write each rendered frame's SHA-1 here")
    args = parser.parse_args()
    cv2.setNumThreads(args.threads)
    if args.whole:
        whole_games(args)
        return
    print(f"OpenCV {cv2.__version__}, {args.threads} thread(s)")
    start = time.perf_counter()
    warm_up()
    print(f"grain bank, once per process: {time.perf_counter() - start:.1f} s")
    for width, height in ((1280, 720), (640, 480)):
        for game in ("rinne", "renaissance"):
            fps = single_frames(width, height, args.frames, game)
            print(f"single frames {width}x{height} {game}: {fps:.1f} frames/s")
    for width, height in ((1280, 720), (640, 360)):
        frames, fps = footage(width, height, args.plies)
        print(f"footage {width}x{height} tensei, {frames} frames: {fps:.1f} frames/s")


if __name__ == "__main__":
    main()
