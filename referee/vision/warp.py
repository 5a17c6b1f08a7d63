"""Top-down view of the board and one crop per square, the same functions for training crops
and at run time.

A standing piece leans away from the camera in the image: its top, seen from the camera
centre C, falls on the board plane at P + (P - F) h / (Hc - h), where F is the foot of the
camera on the board and Hc its height (both recovered from the pose's homography and a
focal length). Each square's crop is therefore cut along that lean: a region of the board
plane, one square wide (plus `pad` each side), reaching from the near side of the square to
past its far side by the lean of a piece `height_ratio` squares tall. Far squares get taller
regions, the crop's top is where a piece's top shows, and every crop comes out upright. All
crops are cut from the original frame with a single cv2.remap."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from referee.calibration.undistort import Frame, LensImage
from referee.vision.pose import BoardPose, FloatArray, board_corners
from referee.vision.settings import CropSettings, default_settings


def warp_board(frame_bgr: Frame, pose: BoardPose, px_per_square: int, *,
               margin: float = 0.0) -> NDArray[np.uint8]:
    """The board seen from straight above, a1 at the bottom left, `margin` squares of
    surroundings on each side: (ranks + 2m) x (files + 2m) squares of `px_per_square`."""
    (width, height), view_to_image = _view_geometry(pose, px_per_square, margin)
    if isinstance(frame_bgr, LensImage):
        return np.asarray(frame_bgr.grid(view_to_image, (width, height)), dtype=np.uint8)
    top = cv2.warpPerspective(frame_bgr, view_to_image, (width, height),
                              flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_CONSTANT)
    return np.asarray(top, dtype=np.uint8)


def view_outside_frame(pose: BoardPose, px_per_square: int, frame_size: tuple[int, int], *,
                       margin: float = 0.0) -> NDArray[np.bool_]:
    """Which pixels of `warp_board`'s view fall outside the frame (`frame_size`: width,
    height): there the view is blank, and what enters the view there comes from outside."""
    (width, height), view_to_image = _view_geometry(pose, px_per_square, margin)
    corners = np.array([[0, width - 1, width - 1, 0], [0, 0, height - 1, height - 1]], float)
    if _inside(view_to_image, corners, frame_size).all():  # the usual case: all of it
        return np.zeros((height, width), bool)
    xs, ys = np.meshgrid(np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64))
    inside = _inside(view_to_image, np.stack([xs.ravel(), ys.ravel()]), frame_size)
    return np.asarray(~inside.reshape(height, width))


def _inside(view_to_image: FloatArray, points: FloatArray, frame_size: tuple[int, int]
            ) -> NDArray[np.bool_]:
    """Which view pixels (a 2 x N array) map into the frame."""
    mapped = view_to_image @ np.vstack([points, np.ones(points.shape[1])])
    x, y = mapped[0] / mapped[2], mapped[1] / mapped[2]
    return np.asarray((mapped[2] > 0) & (x >= 0) & (y >= 0) & (x <= frame_size[0] - 1)
                      & (y <= frame_size[1] - 1))


def _view_geometry(pose: BoardPose, px_per_square: int, margin: float
                   ) -> tuple[tuple[int, int], FloatArray]:
    """The top-down view's size (width, height) and the map from its pixels to the image."""
    if px_per_square < 1:
        raise ValueError(f"px_per_square must be at least 1, not {px_per_square}")
    files, ranks = pose.files, pose.ranks
    width = round((files + 2 * margin) * px_per_square)
    height = round((ranks + 2 * margin) * px_per_square)
    px = float(px_per_square)
    # output pixel centre (X, Y) -> board point: x = (X + 0.5) / px - m, y = R + m - (Y + 0.5) / px
    out_to_board = np.array([[1 / px, 0, 0.5 / px - margin], [0, -1 / px, ranks + margin - 0.5 / px],
                             [0, 0, 1.0]])
    return (width, height), np.asarray(pose.h @ out_to_board, dtype=np.float64)


@dataclass(frozen=True)
class CameraOverBoard:
    """Where the camera is, in board units: its foot on the board plane and its height."""

    foot: tuple[float, float]
    height: float
    focal: float  # pixels


def camera_over_board(pose: BoardPose, image_size: tuple[int, int], *,
                      default_focal: float = CropSettings.default_focal,
                      camera_matrix: FloatArray | None = None) -> CameraOverBoard:
    """Recover the camera centre from the homography. With the camera's intrinsics
    (`camera_matrix` of the frame as given, i.e. undistorted) they are used as they are;
    without, the principal point is taken at the image centre and the focal length from the
    rotation's orthogonality, or `default_focal` x the image width when the view is too
    frontal to tell."""
    width, height = image_size
    if camera_matrix is not None:
        k = np.asarray(camera_matrix, dtype=np.float64)
        # Square pixels in board units: scale y to x's focal length, then centre.
        shift = np.array([[1.0, 0, -k[0, 2]], [0, k[0, 0] / k[1, 1], -k[1, 2] * k[0, 0] / k[1, 1]],
                          [0, 0, 1.0]])
        focal = float(k[0, 0])
    else:
        shift = np.array([[1.0, 0, -(width - 1) / 2], [0, 1.0, -(height - 1) / 2], [0, 0, 1.0]])
        focal = _steady_focal(pose, shift, width, default_focal * width)
    m = shift @ pose.h
    a = np.diag([1 / focal, 1 / focal, 1.0]) @ m
    scale = (np.linalg.norm(a[:, 0]) + np.linalg.norm(a[:, 1])) / 2
    r1, r2, t = a[:, 0] / scale, a[:, 1] / scale, a[:, 2] / scale
    if t[2] < 0:
        r1, r2, t = -r1, -r2, -t
    rot = np.column_stack([r1, r2, np.cross(r1, r2)])
    centre = -rot.T @ t
    return CameraOverBoard((float(centre[0]), float(centre[1])), float(abs(centre[2])), focal)


def _focal_from_homography(m: FloatArray, width: int) -> float | None:
    """The focal length that makes the homography's first two columns orthogonal rotation
    columns (principal point at the origin), if a plausible one does."""
    h1, h2 = m[:, 0], m[:, 1]
    denom = h1[2] * h2[2]
    if abs(denom) > 1e-12:
        f2 = -(h1[0] * h2[0] + h1[1] * h2[1]) / denom
        if f2 > 0 and 0.3 * width < np.sqrt(f2) < 5.0 * width:
            return float(np.sqrt(f2))
    return None


def _steady_focal(pose: BoardPose, shift: FloatArray, width: int, fallback: float,
                  jitter_px: float = 1.0, tolerance: float = 0.1) -> float:
    """The pose's focal length where the view is tilted enough to tell it: one that a pixel's
    error in any corner changes by under `tolerance`. Seen nearly from above the estimate
    swings from half to twice the true focal length with a pixel, and the top faces with
    it by a fifth of a square, so `fallback` serves better there."""
    focal = _focal_from_homography(shift @ pose.h, width)
    if focal is None:
        return fallback
    corners = pose.corners_array.astype(np.float32)
    board = board_corners(pose.files, pose.ranks).astype(np.float32)
    for corner, axis in np.ndindex(4, 2):
        moved = corners.copy()
        moved[corner, axis] += jitter_px
        other = _focal_from_homography(shift @ cv2.getPerspectiveTransform(board, moved), width)
        if other is None or abs(other / focal - 1.0) > tolerance:
            return fallback
    return focal


def _square_frames(pose: BoardPose, camera: CameraOverBoard, height_ratio: float, pad: float,
                   max_extension: float) -> FloatArray:
    """(S, 3, 3) maps from crop coordinates (a across, b up; both 0..1) to board units."""
    files, ranks = pose.files, pose.ranks
    rank, file = np.divmod(np.arange(files * ranks), files)
    centre = np.column_stack([file + 0.5, rank + 0.5]).astype(np.float64)
    away = centre - np.array(camera.foot)
    dist = np.linalg.norm(away, axis=1)
    default = np.array([0.0, 1.0])
    e = np.where(dist[:, None] > 1e-6, away / np.maximum(dist, 1e-9)[:, None], default)
    n = np.column_stack([e[:, 1], -e[:, 0]])
    lean = dist * height_ratio / max(camera.height - height_ratio, 1e-3)
    ext = np.clip(lean, 0.0, max_extension)
    w = 1 + 2 * pad
    length = 1 + 2 * pad + ext
    origin = centre - n * (0.5 + pad) - e * (0.5 + pad)
    out = np.zeros((len(centre), 3, 3))
    out[:, :2, 0] = n * w
    out[:, :2, 1] = e * length[:, None]
    out[:, :2, 2] = origin
    out[:, 2, 2] = 1.0
    return out


def square_maps(pose: BoardPose, image_size: tuple[int, int], *, size: tuple[int, int] = (64, 64),
                settings: CropSettings | None = None,
                height_ratio: float | None = None) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """The combined cv2.remap grid of all square crops: (S * height, width) x and y maps."""
    s = settings or default_settings().crops
    ratio = s.height_ratio if height_ratio is None else height_ratio
    cam = camera_over_board(pose, image_size, default_focal=s.default_focal)
    frames = pose.h[None, :, :] @ _square_frames(pose, cam, ratio, s.pad, s.max_extension)
    width, height = size
    a = (np.arange(width) + 0.5) / width
    b = 1.0 - (np.arange(height) + 0.5) / height  # row 0 is the far (top) end
    bb, aa = np.meshgrid(b, a, indexing="ij")
    grid = np.stack([aa.ravel(), bb.ravel(), np.ones(aa.size)])  # (3, H*W)
    mapped = frames @ grid  # (S, 3, H*W)
    xy = mapped[:, :2, :] / mapped[:, 2:3, :]
    squares = len(frames)
    map_x = xy[:, 0, :].reshape(squares * height, width).astype(np.float32)
    map_y = xy[:, 1, :].reshape(squares * height, width).astype(np.float32)
    return map_x, map_y


def square_crops(frame_bgr: NDArray[np.uint8], pose: BoardPose, files: int, ranks: int, *,
                 size: tuple[int, int] = (64, 64), height_ratio: float | None = None,
                 settings: CropSettings | None = None) -> NDArray[np.uint8]:
    """One upright crop per square in rules order (index = rank * files + file, a1 first):
    (squares, height, width, 3) BGR uint8, `size` = (width, height)."""
    if (files, ranks) != (pose.files, pose.ranks):
        raise ValueError(f"the pose is of a {pose.files}x{pose.ranks} board, not {files}x{ranks}")
    rows, cols = frame_bgr.shape[:2]
    map_x, map_y = square_maps(pose, (cols, rows), size=size, settings=settings, height_ratio=height_ratio)
    crops = np.asarray(cv2.remap(frame_bgr, map_x, map_y, cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT), dtype=np.uint8)
    width, height = size
    return crops.reshape(files * ranks, height, width, *frame_bgr.shape[2:])


def square_quads(pose: BoardPose, image_size: tuple[int, int], *, height_ratio: float | None = None,
                 settings: CropSettings | None = None) -> FloatArray:
    """Each square's crop region as an image quadrilateral (S, 4, 2): top-left, top-right,
    bottom-right, bottom-left of the upright crop (for drawing, or for other crop code)."""
    s = settings or default_settings().crops
    ratio = s.height_ratio if height_ratio is None else height_ratio
    cam = camera_over_board(pose, image_size, default_focal=s.default_focal)
    frames = pose.h[None, :, :] @ _square_frames(pose, cam, ratio, s.pad, s.max_extension)
    corners = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]).T
    mapped = frames @ corners
    return np.transpose(mapped[:, :2, :] / mapped[:, 2:3, :], (0, 2, 1))


def top_face_quads(pose: BoardPose, image_size: tuple[int, int], *, height: float,
                   default_focal: float = CropSettings.default_focal,
                   camera_matrix: FloatArray | None = None) -> FloatArray:
    """Each square (rules order) as it shows `height` squares above the board, where a
    piece's top face is: (squares, 4, 2) image points, far-left, far-right, near-right,
    near-left as the first player sees them. A crop there centres a die's top face as a photo
    from straight above would, whatever the tilt. `camera_matrix`: the frame's intrinsics,
    where known (see camera_over_board)."""
    camera = camera_over_board(pose, image_size, default_focal=default_focal,
                               camera_matrix=camera_matrix)
    foot = np.array(camera.foot)
    lift = camera.height / max(camera.height - height, 1e-3)
    rank, file = np.divmod(np.arange(pose.files * pose.ranks), pose.files)
    offsets = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], dtype=np.float64)
    corners = np.stack([file, rank], axis=1)[:, None, :] + offsets[None, :, :]
    lifted = foot + (corners - foot) * lift
    return pose.to_image(lifted.reshape(-1, 2)).reshape(-1, 4, 2)

