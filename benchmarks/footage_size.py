"""How big footage files are, and how faithful: OpenCV's 'mp4v' against H.264 (libx264 through
imageio-ffmpeg's ffmpeg) at CRF 23, 28 and 30, with the sensor's temporal noise at full
and half strength.

For each seed: the first N frames of footage of the designer's Rinne game (a hand at work,
then still board) at 1280x720 and 30 fps, rendered once per noise scale and held in memory;
then each encoder writes them, and OpenCV's own VideoCapture reads the file back.
Reported: bytes per second of footage, encoding speed, frames read back, and two errors
of the decoded frames against the rendered ones: PSNR, and the mean absolute error after a
Gaussian blur (sigma 1.5 px), which ignores the noise and measures what the scene lost.

    PYTHONPATH=. nice /work/venv/bin/python benchmarks/footage_size.py [--frames N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from referee.rules.records import read_record, replay
from referee_lab.synth.director import Director
from referee_lab.synth.footage import FootageOptions, _direct, plan_acts
from referee_lab.synth.games import contents_from_position, game_spec
from referee_lab.synth.scene import RenderOptions, Scene
from referee_lab.synth.video import Encoding, FFmpegWriter, OpenCVWriter, VideoWriter, ffmpeg_exe

Frames = npt.NDArray[np.uint8]
RECORD = Path(__file__).resolve().parent.parent / "tests/data/records/rinne-sample.txt"
FPS = 30.0


def render(seed: int, count: int, noise: float) -> tuple[Frames, str]:
    spec = game_spec("rinne")
    match, _ = replay(read_record(RECORD))
    rng = np.random.default_rng([seed, 6])
    scene = Scene(spec, seed, RenderOptions(width=1280, height=720))
    contents = contents_from_position(spec, match.positions[0], scene.style.pieces)
    director = Director(scene, contents, rng, fps=FPS, noise=noise)
    _direct(director, plan_acts(spec, match, scene.style.pieces, (), rng)[:4],
            FootageOptions(), rng)
    frames = np.zeros((count, 720, 1280, 3), np.uint8)
    for i in range(count):
        frames[i], _ = scene.render(director.frames[i], rng, i)
    s = scene.style.sensor
    return frames, f"read noise {s.noise * noise:.1f}, shot {s.shot * noise:.2f}, jpeg {s.jpeg}"


def measure(frames: Frames, make: Callable[[Path], VideoWriter]) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f.mp4"
        start = time.perf_counter()
        writer = make(path)
        for frame in frames:
            writer.write(frame)
        writer.close()
        speed = len(frames) / (time.perf_counter() - start)
        size = path.stat().st_size
        capture = cv2.VideoCapture(str(path))
        psnr, blurred, count = [], [], 0
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            if count < len(frames):
                source = frames[count]
                psnr.append(cv2.PSNR(frame, source))
                a = cv2.GaussianBlur(frame, (0, 0), 1.5).astype(np.int16)
                b = cv2.GaussianBlur(source, (0, 0), 1.5).astype(np.int16)
                blurred.append(float(np.abs(a - b).mean()))
            count += 1
    per_second = size / (len(frames) / FPS)
    return (f"{per_second / 1e3:8.1f} kB/s | {speed:5.1f} | {count}/{len(frames)} | "
            f"{np.mean(psnr):5.1f} dB | {np.mean(blurred):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=150)
    parser.add_argument("--seeds", default="1,2,3")
    args = parser.parse_args()
    exe = ffmpeg_exe()
    assert exe is not None, "pip install imageio-ffmpeg"
    size = (1280, 720)
    writers: dict[str, Callable[[Path], VideoWriter]] = {
        "cv2 mp4v": lambda p: OpenCVWriter(p, "mp4v", FPS, size),
        "x264 crf 23 fast": lambda p: FFmpegWriter(p, exe, FPS, size, Encoding(23, "fast")),
        "x264 crf 28 fast": lambda p: FFmpegWriter(p, exe, FPS, size, Encoding(28, "fast")),
        "x264 crf 30 fast": lambda p: FFmpegWriter(p, exe, FPS, size, Encoding(30, "fast")),
    }
    print("| seed | noise scale | sensor | writer | size | encode frames/s | frames read "
          "| PSNR | blurred error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for seed in (int(s) for s in args.seeds.split(",")):
        for noise in (1.0, 0.5):
            frames, sensor = render(seed, args.frames, noise)
            for name, make in writers.items():
                print(f"| {seed} | {noise} | {sensor} | {name} | {measure(frames, make)} |",
                      flush=True)


if __name__ == "__main__":
    main()
