"""The footage writer: H.264 .mp4 that OpenCV's own reader decodes frame for frame, a clear
fallback without imageio-ffmpeg, and ffmpeg's failures as one-line errors."""

from __future__ import annotations

import logging
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

import referee_lab.synth.video as video_module
from referee.errors import OutputError, RenderError
from referee_lab.synth import RenderOptions, render_frame
from referee_lab.synth.video import Encoding, FFmpegWriter, ffmpeg_exe, open_video

Frames = list[npt.NDArray[np.uint8]]


@pytest.fixture(scope="module")
def frames() -> Frames:
    """A rendered frame (with sensor noise), panning a little from frame to frame."""
    image, _ = render_frame("rinne", seed=4, options=RenderOptions(width=160, height=120))
    return [np.ascontiguousarray(np.roll(image, k, axis=1)) for k in range(12)]


def _write(path: Path, frames: Frames) -> None:
    writer = open_video(path, 30.0, (160, 120))
    for frame in frames:
        writer.write(frame)
    writer.close()


def _read(path: Path) -> Frames:
    capture = cv2.VideoCapture(str(path))
    out = []
    while True:
        ok, frame = capture.read()
        if not ok:
            return out
        out.append(frame)


def test_h264_reads_back_frame_for_frame(tmp_path: Path, frames: Frames) -> None:
    if ffmpeg_exe() is None:
        pytest.skip("imageio-ffmpeg is not installed")
    path = tmp_path / "v.mp4"
    _write(path, frames)
    assert path.read_bytes()[4:8] == b"ftyp"
    back = _read(path)
    assert len(back) == len(frames)
    # Each decoded frame is the frame written there (not a neighbour), up to the coding loss.
    for k, frame in enumerate(back):
        scores = [cv2.PSNR(frame, source) for source in frames]
        assert int(np.argmax(scores)) == k and scores[k] > 28
    again = tmp_path / "again.mp4"
    _write(again, frames)
    assert again.read_bytes() == path.read_bytes()  # the same frames give the same bytes


def test_without_imageio_ffmpeg_mp4v_with_a_warning(tmp_path: Path, frames: Frames,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(video_module, "ffmpeg_exe", lambda: None)
    path = tmp_path / "v.mp4"
    with caplog.at_level(logging.WARNING, logger="referee_lab.synth.video"):
        _write(path, frames)
    assert "imageio-ffmpeg" in caplog.text
    assert len(_read(path)) == len(frames)


def test_bad_sizes_and_a_failing_encoder_are_one_line_errors(tmp_path: Path) -> None:
    if ffmpeg_exe() is None:
        pytest.skip("imageio-ffmpeg is not installed")
    with pytest.raises(RenderError, match="even width and height"):
        open_video(tmp_path / "odd.mp4", 30.0, (161, 120))
    with pytest.raises(RenderError, match=r"\.mp4 or \.avi"):
        open_video(tmp_path / "x.mkv", 30.0, (160, 120))
    writer = FFmpegWriter(tmp_path / "f.mp4", "false", 30.0, (160, 120), Encoding())
    with pytest.raises(OutputError, match="ffmpeg"):
        for _ in range(50):
            writer.write(np.zeros((120, 160, 3), np.uint8))
        writer.close()
