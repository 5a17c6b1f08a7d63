"""Frame sources on real files: videos written with cv2.VideoWriter, folders of images."""

from __future__ import annotations

import types
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.errors import CameraLost, SourceError
from referee.hardware.sources import (
    ImageFolderSource,
    OpenCVDeviceSource,
    PacedSource,
    Picture,
    PictureWatch,
    VideoFileSource,
    frame_level,
    open_source,
    quiet_opencv,
)


def picture(n: int, size: tuple[int, int] = (160, 120), level: int = 120) -> np.ndarray:
    """A frame that names its own number: a grey level that grows with n, and a bright bar at n."""
    width, height = size
    image = np.full((height, width, 3), (level, level // 2 + n, 200 - n), np.uint8)
    cv2.rectangle(image, (4 * n % (width - 10), 30), (4 * n % (width - 10) + 10, 90), (255, 255, 255), -1)
    return image


def write_video(path: Path, frames: list[np.ndarray], fps: float = 25.0, fourcc: str = "mp4v") -> Path:
    height, width = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), fps, (width, height))
    assert writer.isOpened(), f"OpenCV cannot write {fourcc}"
    for frame in frames:
        writer.write(frame)
    writer.release()
    return path


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_video(tmp_path_factory.mktemp("video") / "game.mp4", [picture(n) for n in range(40)])


def test_a_video_file_yields_every_frame_in_order_with_its_time(video: Path):
    with open_source(video) as source:
        assert isinstance(source, VideoFileSource) and source.fps == 25.0
        frames = list(source)
    assert [frame.index for frame in frames] == list(range(40))
    assert [frame.timestamp_s for frame in frames] == pytest.approx([n / 25 for n in range(40)])
    for n, frame in enumerate(frames):
        assert frame.frame_bgr.shape == (120, 160, 3) and frame.frame_bgr.dtype == np.uint8
        assert not frame.frame_bgr.flags.writeable
        # lossy, but each decoded frame is closest to the frame written at that place
        errors = [np.abs(frame.frame_bgr.astype(int) - picture(m)).mean() for m in range(40)]
        assert int(np.argmin(errors)) == n


def test_a_video_can_be_read_once(video: Path):
    source = VideoFileSource(video)
    assert len(list(source)) == 40
    with pytest.raises(SourceError, match="read once"):
        list(source)
    source.close()
    source.close()  # twice is fine


def test_a_missing_file(tmp_path: Path):
    with pytest.raises(SourceError, match=r"nope\.mp4: no such video file$"):
        open_source(tmp_path / "nope.mp4")


def test_an_empty_file(tmp_path: Path):
    (tmp_path / "empty.mp4").write_bytes(b"")
    with pytest.raises(SourceError, match="the file is empty"):
        open_source(tmp_path / "empty.mp4")


def test_a_file_that_is_not_a_video(tmp_path: Path):
    (tmp_path / "notes.mp4").write_text("1. King e2 - e3 = Knight\n" * 50)
    with pytest.raises(SourceError, match="cannot open it as a video"):
        open_source(tmp_path / "notes.mp4")


def test_an_mp4_cut_short_cannot_be_opened(tmp_path: Path, video: Path):
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(video.read_bytes()[: video.stat().st_size // 2])  # the index is at the end
    with pytest.raises(SourceError, match=r"cannot open it as a video .*truncated"):
        open_source(cut)


def test_a_truncated_avi_yields_what_it_has_then_says_so(tmp_path: Path):
    whole = write_video(tmp_path / "whole.avi", [picture(n) for n in range(50)], fourcc="MJPG")
    cut = tmp_path / "cut.avi"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    seen: list[int] = []
    with pytest.raises(SourceError, match=r"ends after \d+ of its 50 frames \(the file is truncated"), \
            open_source(cut) as source:
        seen.extend(frame.index for frame in source)
    assert 10 < len(seen) < 40 and seen == list(range(len(seen)))


def test_an_image_folder_in_natural_order(tmp_path: Path):
    for n in (10, 2, 1):
        cv2.imwrite(str(tmp_path / f"frame{n}.png"), picture(n))
    cv2.imwrite(str(tmp_path / "frame3.jpg"), cv2.cvtColor(picture(3), cv2.COLOR_BGR2GRAY))  # grey
    cv2.imwrite(str(tmp_path / "frame4.png"), cv2.cvtColor(picture(4), cv2.COLOR_BGR2BGRA))  # alpha
    (tmp_path / "notes.txt").write_text("not an image")
    with open_source(tmp_path, fps=2.0) as source:
        assert isinstance(source, ImageFolderSource)
        frames = list(source)
    assert [path.name for path in source.paths] == [
        "frame1.png", "frame2.png", "frame3.jpg", "frame4.png", "frame10.png"]
    assert [frame.timestamp_s for frame in frames] == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert all(frame.frame_bgr.shape == (120, 160, 3) for frame in frames)
    np.testing.assert_array_equal(frames[0].frame_bgr, picture(1))
    np.testing.assert_array_equal(frames[4].frame_bgr, picture(10))


def test_image_folder_faults(tmp_path: Path):
    with pytest.raises(SourceError, match="no images"):
        open_source(tmp_path)
    (tmp_path / "a.png").write_bytes(b"\x89PNG broken")
    with pytest.raises(SourceError, match=r"a\.png: not a readable image"):
        list(ImageFolderSource(tmp_path))
    with pytest.raises(SourceError, match="frame rate must be a positive number"):
        ImageFolderSource(tmp_path, fps=0.0)


def test_a_usb_camera_that_is_not_there():
    with pytest.raises(SourceError, match=r"no camera at /dev/video9: is it plugged in"):
        open_source("9")


class Clock:
    def __init__(self, step: float = 0.04) -> None:
        self.now, self.step = 50.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_usb_camera_unplugged_mid_game_raises_camera_lost(video: Path):
    # The camera is played by OpenCV itself on a real video: when the file ends, read()
    # fails as it does when a USB camera is pulled out.
    opened: list[int | str] = []

    def capture(device: int | str) -> cv2.VideoCapture:
        opened.append(device)
        return cv2.VideoCapture(str(video))

    seen: list[int] = []
    with pytest.raises(CameraLost, match=r"camera /dev/video0 stopped delivering frames after frame 40"), \
            OpenCVDeviceSource(0, clock=Clock(), capture_factory=capture) as source:
        for frame in source:
            seen.append(frame.index)
            assert frame.timestamp_s == pytest.approx(0.04 * (frame.index + 1))
    assert opened == [0] and seen == list(range(40))


class StalledCapture:
    """A capture whose reads fail slowly, as V4L2 does when frames stop arriving."""

    def __init__(self, clock: Clock) -> None:
        self.clock, self.released = clock, False

    def isOpened(self) -> bool:  # OpenCV's name
        return True

    def set(self, prop: int, value: float) -> bool:
        return True

    def read(self) -> tuple[bool, None]:
        self.clock.now += 1.5
        return False, None

    def release(self) -> None:
        self.released = True


def test_a_camera_whose_reads_time_out_is_lost_after_timeout_s():
    clock = Clock(step=0.0)
    stalled = StalledCapture(clock)
    source = OpenCVDeviceSource("/dev/video2", clock=clock, timeout_s=2.0, max_failures=100,
                                capture_factory=lambda device: stalled)
    with pytest.raises(CameraLost, match=r"/dev/video2 .*after frame 0 \(2 failed reads\)"):
        next(iter(source))
    source.close()
    assert stalled.released


def test_black_frames_are_reported_after_a_second_and_recovery_too(tmp_path: Path):
    frames = [picture(n) for n in range(20)] + [np.zeros((120, 160, 3), np.uint8)] * 40 \
        + [picture(n) for n in range(20)]
    frames[30] = picture(1)  # one bright frame inside the dark spell restarts the count
    path = write_video(tmp_path / "cap.mp4", frames)
    watch = PictureWatch(after_s=1.0)
    changes: list[tuple[int, Picture]] = []
    with open_source(path) as source:
        for frame in source:
            change = watch.update(frame)
            if change is not None:
                changes.append((frame.index, change))
    # dark from frame 31 (after the bright one); 1 s at 25 fps later is frame 56
    assert changes == [(56, Picture.DARK), (60, Picture.OK)]


def test_a_hand_over_the_lens_is_not_a_black_picture():
    watch = PictureWatch(after_s=1.0)
    from referee.hardware.frames import make_frame

    dark = np.full((120, 160, 3), 4, np.uint8)
    assert frame_level(dark) == 4.0
    assert [watch.update(make_frame(dark.copy(), n, n / 30, "t")) for n in range(29)] == [None] * 29
    assert watch.update(make_frame(picture(0), 29, 29 / 30, "t")) is None


def test_footage_can_start_part_way_in_with_the_same_frames_and_times(video: Path):
    with open_source(video, start_s=0.5) as source:  # 0.5 s at 25 fps: frame 12.5, so 13
        frames = list(source)
    assert [frame.index for frame in frames] == list(range(13, 40))
    assert [frame.timestamp_s for frame in frames] == pytest.approx([n / 25 for n in range(13, 40)])
    for frame in frames[:3]:
        errors = [np.abs(frame.frame_bgr.astype(int) - picture(m)).mean() for m in range(40)]
        assert int(np.argmin(errors)) == frame.index  # decoded up to it, not sought near it
    with open_source(video, start_s=0.48) as source:  # exactly on frame 12
        assert next(iter(source)).index == 12


def test_a_start_past_the_end_or_before_the_beginning(tmp_path: Path, video: Path):
    with pytest.raises(SourceError, match=r"game\.mp4: the video ends before 9 s$"):
        open_source(video, start_s=9.0)
    with pytest.raises(SourceError, match=r"the start must be 0 s or later, not -1"):
        open_source(video, start_s=-1.0)
    for n in range(4):
        cv2.imwrite(str(tmp_path / f"{n}.png"), picture(n))
    with open_source(tmp_path, fps=2.0, start_s=1.0) as source:
        assert [(f.index, f.timestamp_s) for f in source] == [(2, 1.0), (3, 1.5)]
    with pytest.raises(SourceError, match=r"its 4 images end before 2 s"):
        open_source(tmp_path, fps=2.0, start_s=2.0)


def test_paced_footage_is_delivered_at_its_frame_rate_and_never_skips(video: Path):
    clock = Clock(step=0.0)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(round(seconds, 6))
        clock.now += seconds

    paced = PacedSource(VideoFileSource(video), speed=2.0, clock=clock, sleep=sleep)
    seen = []
    with paced:
        for frame in paced:
            seen.append(frame.index)
            if frame.index == 20:
                clock.now += 0.5  # a slow reading: the next frames are late
    assert seen == list(range(40))  # none skipped
    due = [(n / 25) / 2 for n in range(40)]  # twice real time
    assert sleeps[:20] == [pytest.approx(0.02)] * 20  # frames 1-20 waited for
    # After the slow frame (0.5 s: 25 frames' worth at 2x) frames 21-39 are late: no waiting.
    assert len(sleeps) == 20 and clock.now == pytest.approx(50.0 + due[20] + 0.5)


def test_a_start_or_a_speed_is_for_footage_only(video: Path):
    with pytest.raises(SourceError, match=r"camera 0: a start time and a playing speed are for footage"):
        open_source("0", start_s=1.0)
    with pytest.raises(SourceError, match="the playing speed must be a positive number, not -1"):
        open_source(video, speed=-1.0)
    with open_source(video, speed=4.0) as source:
        assert isinstance(source, PacedSource) and source.description == f"video {video} at 4x"


def test_footage_opens_with_the_opencv_4_a_pi_gets(monkeypatch: pytest.MonkeyPatch, video: Path):
    """OpenCV 4.11 (hardware/setup-pi.sh with numpy 1) has cv2.getLogLevel and cv2.setLogLevel
    and no cv2.utils.logging (OpenCV 5's): both are used as they come."""
    levels = [3]  # LOG_LEVEL_WARNING, OpenCV's default
    monkeypatch.setattr(cv2, "utils", types.SimpleNamespace())
    monkeypatch.setattr(cv2, "getLogLevel", lambda: levels[-1], raising=False)
    monkeypatch.setattr(cv2, "setLogLevel", levels.append, raising=False)
    with quiet_opencv():
        assert levels[-1] == 2  # LOG_LEVEL_ERROR while opening
    assert levels[-1] == 3
    with open_source(video) as source:
        assert len(list(source)) == 40
    assert levels[1:] == [2, 3, 2, 3]
    monkeypatch.delattr(cv2, "getLogLevel")  # a build with neither: opened all the same
    with open_source(video) as source:
        assert next(iter(source)).index == 0
