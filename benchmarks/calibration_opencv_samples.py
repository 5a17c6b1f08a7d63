"""Calibrate OpenCV's 13 sample photos (left01..left14.jpg) several ways and compare with
OpenCV's published intrinsics (samples/data/left_intrinsics.yml); draw the corner that
the published 11x11 refinement window gets wrong.

    PYTHONPATH=. /work/venv/bin/python benchmarks/calibration_opencv_samples.py

Prints a Markdown table (the figures in calibration_opencv_samples.md) and writes
docs/calibration-corners.png.
"""

from __future__ import annotations

import time
from pathlib import Path

import cv2
import numpy as np

from referee.calibration.intrinsics import (
    Chessboard,
    calibrate,
    detect_all,
    draw_detection,
    find_images,
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "tests" / "data" / "calibration" / "opencv-left"


def imread(path: Path, flags: int = cv2.IMREAD_COLOR) -> np.ndarray:
    image = cv2.imread(str(path), flags)
    assert image is not None, path
    return image


BOARD = Chessboard(9, 6, 25.0)


def published() -> tuple[dict[str, float], float]:
    storage = cv2.FileStorage(str(SAMPLES / "left_intrinsics.yml"), cv2.FILE_STORAGE_READ)
    k = storage.getNode("camera_matrix").mat()
    rms = storage.getNode("avg_reprojection_error").real()
    return {"fx": k[0, 0], "fy": k[1, 1], "cx": k[0, 2], "cy": k[1, 2]}, rms


def run(window: int | None, fix_aspect: bool) -> tuple[dict[str, float], float, float, float]:
    start = time.perf_counter()
    detections, refused = detect_all(find_images(SAMPLES), BOARD, subpix_window=window)
    result = calibrate(detections, refused=refused, fix_aspect_ratio=fix_aspect)
    seconds = time.perf_counter() - start
    k = result.camera_matrix
    found = {"fx": k[0, 0], "fy": k[1, 1], "cx": k[0, 2], "cy": k[1, 2]}
    worst = max(v.rms_px for v in result.views)
    return found, result.rms_px, worst, seconds


def corner_figure(out: Path) -> None:
    """left02.jpg with its corners, and a 6x zoom of one corner: published window (red)
    against the referee's two-pass refinement (green)."""
    photo = imread(SAMPLES / "left02.jpg")
    fixed, _ = detect_all([SAMPLES / "left02.jpg"], BOARD, subpix_window=11)
    adaptive, _ = detect_all([SAMPLES / "left02.jpg"], BOARD)
    a, b = fixed[0].image_points.reshape(-1, 2), adaptive[0].image_points.reshape(-1, 2)
    worst = int(np.argmax(np.linalg.norm(a - b, axis=1)))
    overlay = draw_detection(photo, adaptive[0], BOARD)
    x, y = b[worst]
    half, zoom = 20, 6
    x0, y0 = round(x) - half, round(y) - half
    crop = cv2.resize(photo[y0 : y0 + 2 * half, x0 : x0 + 2 * half], None, fx=zoom, fy=zoom,
                      interpolation=cv2.INTER_NEAREST)  # fmt: skip
    for point, colour in ((a[worst], (0, 0, 255)), (b[worst], (0, 200, 0))):
        centre = (round((point[0] - x0 + 0.5) * zoom), round((point[1] - y0 + 0.5) * zoom))
        cv2.drawMarker(crop, centre, colour, cv2.MARKER_CROSS, 28, 2)
    cv2.rectangle(overlay, (x0, y0), (x0 + 2 * half, y0 + 2 * half), (255, 255, 255), 1)
    panel = cv2.resize(crop, (240, 240), interpolation=cv2.INTER_NEAREST)
    text = np.full((240, 240, 3), 255, np.uint8)
    apart = np.linalg.norm(a[worst] - b[worst])
    lines = [f"corner {worst} of left02.jpg", "red: 11x11 window", "(OpenCV sample)",
             "green: two-pass", "adaptive window", f"apart {apart:.1f} px"]  # fmt: skip
    for i, line in enumerate(lines):
        cv2.putText(text, line, (8, 30 + 34 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1,
                    cv2.LINE_AA)  # fmt: skip
    side = np.vstack([panel, text])
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), np.hstack([overlay, side]), [cv2.IMWRITE_PNG_COMPRESSION, 9])


def main() -> None:
    reference, reference_rms = published()
    print("| settings | fx | fy | cx | cy | worst diff | RMS px | worst view px | time s |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        "| OpenCV published (left_intrinsics.yml) | "
        + " | ".join(f"{reference[n]:.2f}" for n in ("fx", "fy", "cx", "cy"))
        + f" | — | {reference_rms:.3f} | 1.182 | — |"
    )
    settings = [
        ("referee default: two-pass adaptive window, fx, fy free", None, False),
        ("referee, fx = fy (CALIB_FIX_ASPECT_RATIO)", None, True),
        ("OpenCV sample settings: 11x11 window, fx = fy", 11, True),
        ("11x11 window, fx, fy free", 11, False),
    ]
    for label, window, fix in settings:
        found, rms, worst_view, seconds = run(window, fix)
        diffs = {n: abs(found[n] - reference[n]) / reference[n] * 100 for n in reference}
        worst = max(diffs, key=lambda n: diffs[n])
        print(
            f"| {label} | "
            + " | ".join(f"{found[n]:.2f}" for n in ("fx", "fy", "cx", "cy"))
            + f" | {diffs[worst]:.2f}% ({worst}) | {rms:.3f} | {worst_view:.3f} | {seconds:.2f} |"
        )
    sb_only(reference)
    corner_figure(ROOT / "docs" / "calibration-corners.png")


def sb_only(reference: dict[str, float]) -> None:
    """OpenCV's sector-based finder alone (the referee's fallback), for comparison."""
    start = time.perf_counter()
    images, missed = [], []
    for path in find_images(SAMPLES):
        gray = imread(path, cv2.IMREAD_GRAYSCALE)
        found, corners = cv2.findChessboardCornersSB(
            gray, (9, 6), flags=cv2.CALIB_CB_NORMALIZE_IMAGE
        )
        if found:
            images.append(np.asarray(corners, np.float32).reshape(-1, 1, 2))
        else:
            missed.append(path.name)
    objects = [BOARD.object_points().reshape(-1, 1, 3)] * len(images)
    rms, k, _, _, _, _, _, per_view = cv2.calibrateCameraExtended(
        objects, images, (640, 480), np.eye(3), np.zeros(5)
    )
    seconds = time.perf_counter() - start
    found_k = {"fx": k[0, 0], "fy": k[1, 1], "cx": k[0, 2], "cy": k[1, 2]}
    diffs = {n: abs(found_k[n] - reference[n]) / reference[n] * 100 for n in reference}
    worst = max(diffs, key=lambda n: diffs[n])
    print(
        f"| findChessboardCornersSB only ({len(images)} photos; not found: {', '.join(missed)}) | "
        + " | ".join(f"{found_k[n]:.2f}" for n in ("fx", "fy", "cx", "cy"))
        + f" | {diffs[worst]:.2f}% ({worst}) | {rms:.3f} | {per_view.max():.3f} | {seconds:.2f} |"
    )


if __name__ == "__main__":
    main()
