"""Pictures for people: a contact sheet of varied renders, and a frame with its ground truth
drawn over it (grid, corners, square labels, hand-covered squares) to check alignment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from referee_lab.synth import render_frame
from referee_lab.synth.scene import RenderOptions
from referee_lab.synth.truth import FrameTruth

Image = npt.NDArray[np.uint8]


def contact_sheet(renders: Sequence[tuple[str, int, tuple[float, float]]], *, columns: int = 4,
                  size: tuple[int, int] = (1280, 720), thumb: int = 480,
                  hands: float = 0.0) -> Image:
    """Render each (game, seed, tilt range) at `size` and tile the frames, `thumb` pixels
    wide each."""
    tiles = []
    for game, seed, tilt in renders:
        options = RenderOptions(width=size[0], height=size[1], hands=hands, tilt=tilt)
        frame, _ = render_frame(game, seed=seed, options=options)
        height = round(thumb * size[1] / size[0])
        tiles.append(np.asarray(cv2.resize(frame, (thumb, height),
                                           interpolation=cv2.INTER_AREA), dtype=np.uint8))
    while len(tiles) % columns:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i:i + columns]) for i in range(0, len(tiles), columns)]
    return np.asarray(np.vstack(rows), dtype=np.uint8)


def overlay_truth(frame: Image, truth: FrameTruth) -> Image:
    """The frame with its truth drawn on: grid lines through the recorded intersections,
    the four corners, each square's label at its centre, hand-covered squares in red."""
    out = frame.copy()
    f, r = truth.files, truth.ranks

    def pt(p: tuple[float, float]) -> tuple[int, int]:
        return round(p[0] * 16), round(p[1] * 16)

    for rank in range(r + 1):
        for file in range(f):
            cv2.line(out, pt(truth.grid_point(file, rank)), pt(truth.grid_point(file + 1, rank)),
                     (0, 255, 255), 1, cv2.LINE_AA, 4)
    for file in range(f + 1):
        for rank in range(r):
            cv2.line(out, pt(truth.grid_point(file, rank)), pt(truth.grid_point(file, rank + 1)),
                     (0, 255, 255), 1, cv2.LINE_AA, 4)
    for i, corner in enumerate(truth.corners):
        cv2.circle(out, pt(corner), 6 * 16, (0, 0, 255) if i == 0 else (255, 0, 255), 2,
                   cv2.LINE_AA, 4)
    contents = truth.contents()
    occluded = set(truth.occluded)
    for rank in range(r):
        for file in range(f):
            name = f"{chr(97 + file)}{rank + 1}"
            corners = [truth.grid_point(file + dx, rank + dy) for dx, dy in
                       ((0, 0), (1, 0), (1, 1), (0, 1))]
            cx = sum(p[0] for p in corners) / 4
            cy = sum(p[1] for p in corners) / 4
            label = contents[name].label().replace("/", " ")
            colour = (0, 0, 255) if name in occluded else (255, 255, 255)
            for text, dy in ((name, -4), (label if label != "empty" else "", 9)):
                if not text:
                    continue
                org = (round(cx - 3.2 * len(text)), round(cy + dy))
                cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.33, (0, 0, 0), 3,
                            cv2.LINE_AA)
                cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.33, colour, 1,
                            cv2.LINE_AA)
    for _, top in truth.tops:
        cv2.drawMarker(out, (round(top[0]), round(top[1])), (0, 255, 0), cv2.MARKER_CROSS, 8, 1)
    return out


def overlay_example(seed: int = 21, size: tuple[int, int] = (1280, 720)) -> Image:
    """A Tensei frame with a hand reaching over the board, its truth drawn on."""
    from referee_lab.synth.games import game_spec, start_contents
    from referee_lab.synth.hands import HandPose, sample_hand_look
    from referee_lab.synth.placement import place_all
    from referee_lab.synth.scene import FrameState, Scene

    spec = game_spec("tensei")
    scene = Scene(spec, seed, RenderOptions(width=size[0], height=size[1], tilt=(25, 35),
                                            pieces="dice"))
    rng = np.random.default_rng(seed)
    contents = start_contents(spec, rng, "dice")
    poses = place_all(contents, rng, scene.style, scene.layout)
    layout = scene.layout
    grip = layout.centre("c4") + np.array([0.0, 0.0, 35.0])
    shoulder = (layout.width_mm / 2 + 150, -layout.margin_mm - 330, 380.0)
    hand = HandPose((float(grip[0]), float(grip[1]), float(grip[2])), shoulder,
                    sample_hand_look(rng), 0.3)
    frame, truth = scene.render(FrameState(contents, poses, hand=hand, steady=False), rng)
    return overlay_truth(frame, truth)


def main(folder: str = "docs") -> None:
    """Regenerate the pictures in docs/: `python -m referee_lab.synth.gallery [FOLDER]`."""
    import sys
    from pathlib import Path

    from referee_lab.synth.footage import FootageOptions, render_footage

    out = Path(sys.argv[1] if len(sys.argv) > 1 else folder)
    games = ["tensei", "rinne", "rinne-5x5", "flipflop-3x3", "tensei", "zensu", "renaissance",
             "rinne", "tensei-5x5", "flipflop-5x5", "rinne", "tensei"]
    tilts = [(0.0, 12.0), (28.0, 40.0), (15.0, 28.0), (30.0, 40.0)]
    renders = [(g, 100 + i, tilts[i % 4]) for i, g in enumerate(games)]
    sheet = contact_sheet(renders, thumb=400, hands=0.25)
    cv2.imwrite(str(out / "renders-contact-sheet.png"), sheet)
    cv2.imwrite(str(out / "truth-overlay.png"), overlay_example())
    from referee.rules.core import Match
    from referee.rules.records import parse_record, read_record, replay

    match, _ = replay(parse_record("Game: Rinne\n\n1. King e2 - e3 = Knight\n"))
    render_footage("rinne", out / "footage-sample.mp4", 19, match=match,
                   options=RenderOptions(width=512, height=288, pieces="dice", tilt=(20, 35)),
                   footage=FootageOptions())
    # Zensū: two captures; Renaissance: a marker that completes a domino, which is taken.
    records = Path(__file__).resolve().parents[2] / "tests" / "data" / "records"
    for game, first, last in (("zensu", 9, 12), ("renaissance", 17, 19)):
        full, _ = replay(read_record(records / f"{game}-sample.txt"))
        excerpt: Match[Any, Any] = Match(full.game, full.positions[first])
        for move in full.moves[first:last]:
            excerpt.push(move)
        render_footage(game, out / f"footage-{game}.mp4", 21, match=excerpt,
                       options=RenderOptions(width=512, height=288, tilt=(15, 30)),
                       footage=FootageOptions())


if __name__ == "__main__":
    main()
