"""Reading image files."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from referee.errors import ImageError
from referee.stderr import quiet_stderr
from referee.vision.crops import ImageBGR


def read_image(path: str | Path) -> ImageBGR:
    """A colour image as BGR uint8; ImageError when it is missing or cannot be decoded."""
    path = Path(path)
    if not path.is_file():
        raise ImageError(f"image not found: {path}")
    data = np.fromfile(str(path), dtype=np.uint8)
    # A broken file makes libpng print its own line on stderr: ours below says it.
    with quiet_stderr():
        image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise ImageError(f"{path}: not a readable image")
    return np.asarray(image, np.uint8)
