"""Labelled squares for training and measuring classifiers.

Every source of training data yields `Sample`s: an image, the quadrilateral of one square in
it and the label's index. Cropping happens later (with jitter when training), through
`crops.crop_square`, so a sample taken from a whole photo can be turned and shifted without
black corners. Sources that plug in:

- the real dice photographs (`RealDice`): one sample a labelled die, plus empty squares of
  the grey tray between the dice;
- a folder of crops with a `labels.csv` (`folder_samples`): how renders or any other set of
  cut squares come in;
- any other iterable of `Sample`s, such as `(crop, label)` pairs through `crop_samples`.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from referee.errors import ImageError, ModelError
from referee.vision.crops import (
    DIE_TO_SQUARE,
    CropSpec,
    ImageBGR,
    Quad,
    as_quad,
    box_square,
    crop_square,
)
from referee.vision.images import read_image
from referee_lab import LAB_DATA

REAL_DICE_ENV = "REFEREE_REAL_DICE"
DICE_LABELS: tuple[str, ...] = ("empty", "1", "2", "3", "4", "5", "6")
DICE_FACES: tuple[int | None, ...] = (None, 1, 2, 3, 4, 5, 6)
EMPTY = 0
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


def real_dice_dir() -> Path:
    """`$REFEREE_REAL_DICE`, else the photographs that come with the lab (`data/real-dice-byler`)."""
    env = os.environ.get(REAL_DICE_ENV)
    if env:
        return Path(env)
    return LAB_DATA / "real-dice-byler"


@dataclass(frozen=True, eq=False)
class Sample:
    """One labelled square: `quad` (TL, TR, BR, BL) in `image`, label index `label`.
    `group` names where it came from (a photo), for splitting without leaks."""

    image: ImageBGR
    quad: Quad
    label: int
    group: str = ""
    # For cutting it at other sizes: the die's width as a share of the quad's side (0: no
    # die, or unknown), and how many times the quad may grow and still show only its own die.
    width: float = 0.0
    room: float = 1.0


def crop_samples(
    pairs: Iterable[tuple[ImageBGR, int]], *, margin: float, group: str = "",
    die_width: float = 0.0,
) -> Iterator[Sample]:
    """Samples from already-cut crops (a square with `margin` around it, any size); a die
    in them `die_width` of the square wide (0: unknown). The square may grow into its margin."""
    for image, label in pairs:
        height, width = image.shape[:2]
        inset_x, inset_y = (width * margin / (1 + 2 * margin), height * margin / (1 + 2 * margin))
        quad = as_quad(
            [
                [inset_x, inset_y],
                [width - inset_x, inset_y],
                [width - inset_x, height - inset_y],
                [inset_x, height - inset_y],
            ]
        )
        width = die_width if label != EMPTY else 0.0
        yield Sample(image, quad, label, group, width=width, room=1.0 + 2.0 * margin)


def crop_folder_margin(folder: str | Path, default: float) -> float:
    """The margin a folder's crops were cut with, from its `crops.json` if it has one."""
    meta = Path(folder) / "crops.json"
    if not meta.is_file():
        return default
    try:
        return float(json.loads(meta.read_text(encoding="utf-8"))["margin"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ModelError(f"{meta}: unreadable ({error})") from None


def folder_samples(
    folder: str | Path, *, labels: tuple[str, ...] = DICE_LABELS, margin: float,
    die_width: float = 0.0,
) -> list[Sample]:
    """Crops in `folder` listed in its `labels.csv` (columns `file,label`; `label` one of
    `labels`), each a square with `margin` around it: how rendered squares plug in. Dice
    `die_width` of their square wide, as far as known (0: not)."""
    folder = Path(folder)
    table = folder / "labels.csv"
    if not table.is_file():
        raise ImageError(f"no labels.csv in {folder}")
    index = {name: i for i, name in enumerate(labels)}
    pairs: list[tuple[ImageBGR, int]] = []
    with table.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            if row["label"] not in index:
                raise ImageError(f"{table}: unknown label {row['label']!r}")
            pairs.append((read_image(folder / row["file"]), index[row["label"]]))
    return list(crop_samples(pairs, margin=margin, group=folder.name, die_width=die_width))


@dataclass(frozen=True)
class Die:
    """One labelled die of the real photographs."""

    file: str
    face: int
    box: tuple[float, float, float, float]  # xmin, ymin, xmax, ymax in photo pixels

    @property
    def side(self) -> float:
        return max(self.box[2] - self.box[0], self.box[3] - self.box[1])


@dataclass
class RealDice:
    """The real dice photographs (`referee_lab/data/real-dice-byler`), one split of them.
    Photos are read once and kept (200 photos of 640x640: about 250 MB)."""

    root: Path
    split: str  # "train" or "test"
    dice: list[Die] = field(default_factory=list)
    _photos: dict[str, ImageBGR] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, split: str, root: str | Path | None = None) -> RealDice:
        if split not in ("train", "test"):
            raise ValueError(f"split must be train or test, not {split!r}")
        folder = Path(root) if root is not None else real_dice_dir()
        table = folder / f"{split}_labels.csv"
        if not table.is_file():
            raise ImageError(f"real dice labels not found: {table} (set ${REAL_DICE_ENV})")
        dice = []
        with table.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                box = tuple(float(row[k]) for k in ("xmin", "ymin", "xmax", "ymax"))
                dice.append(Die(row["filename"], _WORDS[row["class"]], box))  # type: ignore[arg-type]
        return cls(folder, split, dice)

    @cached_property
    def files(self) -> list[str]:
        return sorted({die.file for die in self.dice})

    def photo(self, file: str) -> ImageBGR:
        if file not in self._photos:
            self._photos[file] = read_image(self.root / "images" / file)
        return self._photos[file]

    def die_samples(
        self, files: Iterable[str] | None = None, *, cut: float = DIE_TO_SQUARE
    ) -> list[Sample]:
        """One sample a die: its box widened `cut` times to the board square it would stand
        in (a die `1 / cut` of its square wide)."""
        keep = set(self.files if files is None else files)
        return [
            Sample(self.photo(d.file), box_square(d.box, scale=cut), d.face, d.file, width=1 / cut)
            for d in self.dice
            if d.file in keep
        ]

    def room(self, samples: Sequence[Sample], *, limit: float = 4.0,
             intrude: float = 0.1) -> NDArray[np.float64]:
        """For each die sample (of `die_samples`), how many times its square may grow, up to
        `limit`, before another die's box lies more than `intrude` inside it: how far a crop
        can zoom out and still show its die as the one in the middle (neighbours may reach
        into the margin, as on a board, or a little further, as on the tray)."""
        grows = np.geomspace(1.0, limit, 24)
        out = np.ones(len(samples), np.float64)
        for i, sample in enumerate(samples):
            boxes = np.array([d.box for d in self.dice if d.file == sample.group], np.float64)
            cx, cy = (float(v) for v in sample.quad.mean(axis=0))
            side = float(np.linalg.norm(sample.quad[1] - sample.quad[0]))
            centres = (boxes[:, :2] + boxes[:, 2:]) / 2
            own = np.argmin(np.hypot(centres[:, 0] - cx, centres[:, 1] - cy))
            others = np.delete(boxes, own, axis=0)
            for grow in grows:
                if _inside_fraction(others, cx, cy, side * grow).max(initial=0.0) > intrude:
                    break
                out[i] = grow
        return out

    def empty_samples(
        self, rng: np.random.Generator, per_photo: int, files: Iterable[str] | None = None,
        *, cut: float = DIE_TO_SQUARE,
    ) -> list[Sample]:
        """Squares of bare tray: squares `cut` times a die's side placed at random where no
        die's box lies more than 10% inside the square (a neighbour may reach into the
        margin, as on a board)."""
        samples = []
        for file in sorted(set(self.files if files is None else files)):
            boxes = np.array([d.box for d in self.dice if d.file == file], np.float64)
            side = float(
                np.median(np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]))
            )
            photo = self.photo(file)
            height, width = photo.shape[:2]
            found, tries = 0, 0
            while found < per_photo and tries < per_photo * 50:
                tries += 1
                square = side * cut * float(rng.uniform(0.85, 1.2))
                cx = float(rng.uniform(square / 2, width - square / 2))
                cy = float(rng.uniform(square / 2, height - square / 2))
                if _inside_fraction(boxes, cx, cy, square).max(initial=0.0) > 0.1:
                    continue
                quad = as_quad(
                    [
                        [cx - square / 2, cy - square / 2],
                        [cx + square / 2, cy - square / 2],
                        [cx + square / 2, cy + square / 2],
                        [cx - square / 2, cy + square / 2],
                    ]
                )
                samples.append(Sample(photo, quad, EMPTY, file))
                found += 1
        return samples


def _inside_fraction(
    boxes: NDArray[np.float64], cx: float, cy: float, side: float
) -> NDArray[np.float64]:
    """For each box, the fraction of its area inside the square of `side` centred at (cx, cy)."""
    x0, y0, x1, y1 = cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2
    w = np.clip(np.minimum(boxes[:, 2], x1) - np.maximum(boxes[:, 0], x0), 0, None)
    h = np.clip(np.minimum(boxes[:, 3], y1) - np.maximum(boxes[:, 1], y0), 0, None)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return np.asarray(w * h / area, np.float64)


def split_groups(
    groups: Iterable[str], *, fraction: float, seed: int
) -> tuple[list[str], list[str]]:
    """Split group names (photos) into (kept, held out) with `fraction` held out, seeded, so
    no photo gives squares to both sides."""
    names = sorted(set(groups))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(names))
    count = max(1, round(len(names) * fraction))
    held = {names[i] for i in order[:count]}
    return [n for n in names if n not in held], sorted(held)


def fixed_crops(samples: list[Sample], spec: CropSpec) -> NDArray[np.uint8]:
    """The samples cut as at run time: no jitter."""
    batch = np.empty((len(samples), spec.size, spec.size, 3), np.uint8)
    for i, sample in enumerate(samples):
        batch[i] = crop_square(sample.image, sample.quad, spec)
    return batch
