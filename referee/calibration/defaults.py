"""Default intrinsics of the Raspberry Pi Camera Module 3 (Sony IMX708), from its datasheet.

These are a starting point, not a calibration: the lens has some distortion and each unit
differs, so the files say "calibrate me" (`referee calibrate camera`). The physics:
fx = fy = focal length / pixel pitch on the full sensor, scaled by binning and ISP scaling;
a crop keeps the scale and narrows the field. Principal point at the image centre.

The camera adapter (`referee/hardware/picamera.py`) chooses the sensor mode, and these
files assume its choice: a size that is a sensor mode's own gets that mode unscaled (so
1536x864 is the 2x2-binned *centre crop* mode, 3072x1728 sensor pixels); any other size gets
the smallest *full-field* mode that holds it, 2304x1296 (the whole sensor 2x2-binned) up to
that size and 4608x2592 above, scaled by the ISP. So 1920x1080 and 1280x720 show the whole
sensor, and 640x480 its full height and the centre 4:3 of its width (square pixels). Left to
itself picamera2 would pick the mode nearest the output size, for 1280x720 and 640x480 the
1536x864 crop, a narrower view than these files assume.

Run `python -m referee.calibration.defaults referee/data/calibration` to rewrite the files.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from referee.calibration.files import CameraCalibration, save_camera

SENSOR_PX = (4608, 2592)
PIXEL_PITCH_MM = 0.0014
FOCAL_MM = 4.74
PUBLISHED_FOV_DEG = (66.0, 41.0)  # horizontal, vertical (Raspberry Pi product brief)
CAMERA_NAME = "pi-camera-module-3"


@dataclass(frozen=True)
class SensorWindow:
    """An output size and the sensor region (full-resolution pixels) it shows."""

    width: int
    height: int
    sensor_width: float
    sensor_height: float
    how: str


def window(width: int, height: int) -> SensorWindow:
    """The sensor region behind an output size: the centre crop for 1536x864 (a sensor mode
    of its own), else the largest centred region of the output's aspect ratio."""
    full_w, full_h = SENSOR_PX
    if (width, height) == (1536, 864):
        return SensorWindow(width, height, 3072, 1728, "2x2-binned centre crop, a sensor mode")
    scale = min(full_w / width, full_h / height)
    how = "full field" if abs(full_w / width - full_h / height) < 1e-9 else "full height, centre"
    return SensorWindow(width, height, width * scale, height * scale, f"{how}, scaled")


def pi_camera_module_3(width: int, height: int) -> CameraCalibration:
    win = window(width, height)
    scale = width / win.sensor_width  # output pixels per sensor pixel
    f = FOCAL_MM / PIXEL_PITCH_MM * scale
    # OpenCV puts pixel centres at integer coordinates, so the centre is (w - 1) / 2.
    k = ((f, 0.0, (width - 1) / 2), (0.0, f, (height - 1) / 2), (0.0, 0.0, 1.0))
    source = (
        f"computed from the Pi Camera Module 3 (IMX708) datasheet: f {FOCAL_MM} mm, "
        f"{PIXEL_PITCH_MM * 1000:g} um pixels; shows {win.sensor_width:g}x{win.sensor_height:g} "
        f"sensor px ({win.how}); no distortion assumed"
    )
    return CameraCalibration((width, height), k, (0.0, 0.0, 0.0, 0.0, 0.0), None, source)


HEADER = (
    "Default intrinsics computed from the datasheet by referee/calibration/defaults.py.",
    "Not a calibration: the real lens has distortion and each unit differs. Calibrate yours:",
    "  referee calibrate camera --images DIR --pattern 9x6 --square-mm 25 --out FILE",
)
COMMON_SIZES = ((4608, 2592), (2304, 1296), (1920, 1080), (1536, 864), (1280, 720), (640, 480))


def default_path(folder: Path, width: int, height: int) -> Path:
    return folder / f"{CAMERA_NAME}-{width}x{height}.yaml"


def write_defaults(folder: Path) -> list[Path]:
    paths = []
    for width, height in COMMON_SIZES:
        path = default_path(folder, width, height)
        save_camera(pi_camera_module_3(width, height), path, header=HEADER)
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_defaults(Path(sys.argv[1] if len(sys.argv) > 1 else "referee/data/calibration")):
        print(written)
