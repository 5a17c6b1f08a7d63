"""Thresholds for localisation, tracking and crops, loaded from `referee/data/vision.toml`
(the defaults below mirror it)."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from referee.errors import VisionSettingsError
from referee.resources import vision_settings_file


@dataclass(frozen=True)
class LocaliseSettings:
    work_width: int = 960
    clahe_clip: float = 0.0
    canny_low_ratio: float = 0.5
    canny_percentile: float = 90.0
    canny_cap_percentile: float = 97.0
    retry_canny_percentile: float = 80.0
    hough_votes: float = 0.10
    max_lines: int = 64
    nms_rho_px: float = 6.0
    nms_theta_deg: float = 3.0
    family_spread_deg: float = 35.0
    max_pair_gap: int = 3
    inlier_tol: float = 0.15
    max_lattices: int = 40
    windows_per_lattice: int = 3
    support_tol_px: float = 2.0
    support_angle_deg: float = 20.0
    samples_per_square: int = 6
    min_support: float = 0.3
    min_contrast: float = 0.2
    max_outside_ratio: float = 0.8
    min_square_px: float = 8.0
    out_of_view: float = 0.5
    cut_off_gap: float = 0.6
    cut_off_band: float = 0.04
    cut_off_crossed: float = 0.8
    cut_off_run: int = 3
    lens_bend_ratio: float = 1.15
    lens_bend_bow: float = 0.035
    chamfer_candidates: int = 4
    chamfer_radii_px: tuple[float, ...] = (8.0, 5.0, 3.0, 2.0)
    refine_bands: tuple[float, ...] = (0.15, 0.08, 0.06)
    refine_outer: tuple[float, ...] = (0.25, 0.25, 0.5)
    refine_outer_small: tuple[float, ...] = (1.0, 1.0, 1.0)
    refine_max_pair: float = 0.0
    refine_outer_shift: float = 0.3
    refine_margin: float = 0.6
    refine_ridges: bool = True
    confirm_candidates: int = 3
    refuse_unconfirmed: bool = True
    adrift_ends: float = 0.3
    adrift_ring: float = 0.3
    small_nudges: tuple[float, ...] = (0.18, 0.09, 0.075)  # shift, spacing, turn; () for none
    ends_slack: float = 0.13
    min_line_ends: float = 0.5
    same_fit_squares: float = 0.03
    ridge_margin: float = 0.1
    checker_bands: tuple[float, ...] = (0.1, 0.06)
    checker_max_dark: float = 1.0
    lattice_reach: float = 20.0
    wide_below_ends: float = 0.7
    wide_pair_gap: int = 6
    wide_reach: float = 4.0
    wide_confirm_ridge: float = 0.5
    few_ends_max_outside: float = 0.3
    third_family_lines: int = 4
    third_family_big: int = 4
    band_floor: float = 0.1
    band_weight: float = 1.0
    outline_quads: int = 60
    outline_min_side: float = 0.5
    outline_margins: tuple[float, float] = (0.1, 1.0)
    outline_candidates: int = 5
    outline_min_ends: float = 0.6
    outline_min_ring: float = 0.5
    outline_confirm_ring: float = 0.75
    tie_ring_margin: float = 0.1
    wide_ring_margin: float = 0.2
    few_ends_min_ring: float = 0.3
    corner_net: str = "corners"
    corner_net_reach: float = 0.2
    corner_net_apart: float = 0.05
    corner_net_big: str = "corners-big"
    corner_net_big_ends: float = 0.5
    corner_refiner: str = "corners-refine"
    corner_refiner_rounds: int = 3
    corner_refiner_turns: int = 4
    corner_refiner_heat: float = 0.7
    corner_refiner_overrule_heat: float = 0.85
    corner_refiner_apart: float = 0.02
    corner_refiner_far: float = 0.05
    corner_grid: str = "corners-grid"
    corner_grid_turns: int = 4
    corner_grid_rounds: int = 2
    corner_grid_heat: float = 0.3
    corner_grid_near_px: float = 1.5
    corner_grid_seen: float = 0.625
    corner_grid_big: bool = True
    corner_grid_big_keep_px: float = 0.5
    corner_grid_settle: float = 0.2
    corner_grid_settle_spread: float = 0.04
    corner_grid_settle_share: float = 0.3
    edge_centre_rise: float = 0.1
    edge_centre_window: float = 0.05
    edge_centre_stretches: int = 3
    edge_centre_max_move: float = 0.15

    def __post_init__(self) -> None:
        for name in ("refine_outer", "refine_outer_small"):
            if len(getattr(self, name)) != len(self.refine_bands):
                raise VisionSettingsError(f"[localise] {name} needs one weight per refine band "
                                          f"({len(self.refine_bands)})")
        if len(self.small_nudges) not in (0, 3):
            raise VisionSettingsError("[localise] small_nudges needs three numbers (shift, spacing, "
                                      "turn) or none")
        if self.max_pair_gap < 1 or self.wide_pair_gap < 1:
            raise VisionSettingsError("[localise] max_pair_gap and wide_pair_gap must be at least 1")
        if self.ridge_margin < 0:
            raise VisionSettingsError("[localise] ridge_margin must be 0 (off) or more")
        if any(not 0 < band <= 0.5 for band in self.checker_bands):
            raise VisionSettingsError("[localise] checker_bands must lie above 0 and at most 0.5 "
                                      "square (or be [] for off)")
        if self.checker_max_dark < 0:
            raise VisionSettingsError("[localise] checker_max_dark must be 0 or more")
        if self.lattice_reach <= 1.0 or self.wide_reach <= 1.0:
            raise VisionSettingsError("[localise] lattice_reach and wide_reach must be more than one "
                                      "square")
        if not 0 <= self.wide_confirm_ridge <= 1 or not 0 <= self.few_ends_max_outside <= 1:
            raise VisionSettingsError("[localise] wide_confirm_ridge and few_ends_max_outside must lie "
                                      "between 0 and 1 (0: off, 1: off)")
        if self.third_family_lines < 0:
            raise VisionSettingsError("[localise] third_family_lines must be 0 (off) or more")
        if self.third_family_big < 0:
            raise VisionSettingsError("[localise] third_family_big must be 0 (off) or more")
        if not 0 <= self.band_floor <= 1 or self.band_weight < 0:
            raise VisionSettingsError("[localise] band_floor must lie between 0 (off) and 1, band_weight "
                                      "must be 0 or more")
        if self.outline_quads < 0 or self.outline_candidates < 1 or not 0 < self.outline_min_side <= 1:
            raise VisionSettingsError("[localise] outline_quads must be 0 (off) or more, outline_candidates "
                                      "at least 1, outline_min_side above 0 and at most 1")
        if not all(0 <= v <= 1 for v in (self.outline_min_ends, self.outline_min_ring,
                                          self.outline_confirm_ring)):
            raise VisionSettingsError("[localise] outline_min_ends, outline_min_ring and "
                                      "outline_confirm_ring must lie between 0 and 1 "
                                      "(outline_confirm_ring 0: off)")
        if not 0 <= self.corner_net_big_ends <= 1:
            raise VisionSettingsError("[localise] corner_net_big_ends must lie between 0 and 1")
        if not 0 < self.corner_net_reach <= 1 or not 0 <= self.corner_net_apart <= 1:
            raise VisionSettingsError("[localise] corner_net_reach must lie above 0 and at most 1, "
                                      "corner_net_apart between 0 and 1 (squares)")
        if (self.corner_refiner_rounds < 1 or self.corner_refiner_turns not in (1, 2, 4)
                or not all(0 < v <= 1 for v in (self.corner_refiner_heat, self.corner_refiner_overrule_heat,
                                                self.corner_refiner_apart, self.corner_refiner_far))):
            raise VisionSettingsError("[localise] corner_refiner_rounds must be at least 1, "
                                      "corner_refiner_turns 1, 2 or 4, corner_refiner_heat, "
                                      "corner_refiner_overrule_heat, corner_refiner_apart and "
                                      "corner_refiner_far above 0 and at most 1")
        if (self.corner_grid_turns not in (1, 2, 4) or self.corner_grid_rounds < 1
                or not 0 < self.corner_grid_heat <= 1 or not 0 < self.corner_grid_near_px <= 8
                or not 0 < self.corner_grid_seen <= 1 or not 0 <= self.corner_grid_big_keep_px <= 8
                or not 0 <= self.corner_grid_settle < 0.5 or not 0 < self.corner_grid_settle_spread <= 0.5
                or not 0 < self.corner_grid_settle_share <= 1):
            raise VisionSettingsError("[localise] corner_grid_turns must be 1, 2 or 4, corner_grid_rounds "
                                      "at least 1, corner_grid_heat and corner_grid_seen above 0 and at "
                                      "most 1, corner_grid_near_px above 0 and at most 8 (canvas "
                                      "pixels), corner_grid_big_keep_px 0 to 8 (canvas pixels), "
                                      "corner_grid_settle 0 to under 0.5 and corner_grid_settle_spread "
                                      "above 0 and at most 0.5 (squares), corner_grid_settle_share "
                                      "above 0 and at most 1")
        for name in ("corner_net", "corner_net_big", "corner_refiner", "corner_grid"):
            model = getattr(self, name)
            bare = model.replace("-", "").replace("_", "") if isinstance(model, str) else None
            if bare is None or (model and not bare.isalnum()):
                raise VisionSettingsError(f"[localise] {name} {model!r} is not a model name "
                                          "(models/NAME.onnx), nor \"\" (off)")
        if not 0 <= self.adrift_ends <= 1 or not 0 <= self.adrift_ring <= 1:
            raise VisionSettingsError("[localise] adrift_ends and adrift_ring must lie between 0 and 1 "
                                      "(adrift_ends 0: off)")
        if not 0 <= self.few_ends_min_ring <= 1:
            raise VisionSettingsError("[localise] few_ends_min_ring must lie between 0 (off) and 1")
        if not 0 <= self.tie_ring_margin <= 1 or not 0 <= self.wide_ring_margin <= 1:
            raise VisionSettingsError("[localise] tie_ring_margin and wide_ring_margin must lie between 0 "
                                      "(off) and 1")
        if not 0 <= self.edge_centre_rise <= 1 or not 0 < self.edge_centre_window <= 0.5:
            raise VisionSettingsError("[localise] edge_centre_rise must lie between 0 (off) and 1, "
                                      "edge_centre_window above 0 and at most 0.5 square")
        if not 2 <= self.edge_centre_stretches <= 6 or self.edge_centre_max_move <= 0:
            raise VisionSettingsError("[localise] edge_centre_stretches must lie between 2 and 6 (a side's "
                                      "stretches), edge_centre_max_move above 0")
        if len(self.outline_margins) != 2 or not 0 <= self.outline_margins[0] <= self.outline_margins[1]:
            raise VisionSettingsError("[localise] outline_margins needs two margins (squares), the least "
                                      "first, neither negative")


@dataclass(frozen=True)
class TrackSettings:
    bands: tuple[float, ...] = (0.2, 0.06)
    iterations: int = 1
    along: int = 4
    step: float = 0.015
    min_support: float = 0.3
    min_contrast: float = 0.2
    max_outside_ratio: float = 0.8
    max_move: float = 0.3
    refit_bands: tuple[float, ...] = (0.2, 0.1, 0.06)
    refit_iterations: int = 2
    # A refit moving a corner farther than this (squares) must show its lines better than
    # the pose it started from: a refit corrects tracking's drift of a pixel or two, and a
    # piece's edge can pull its widest band a third of a square off the board's line.
    refit_trusted_move: float = 0.2


@dataclass(frozen=True)
class CropSettings:
    size: tuple[int, int] = (64, 64)
    pad: float = 0.1
    height_ratio: float = 0.8
    max_extension: float = 1.5
    # focal length / image width where the pose cannot tell it (a board tilted about one of
    # its own edges, as a camera at the players' side sees it): the Raspberry Pi Camera
    # Module 3's published 66 degrees across, 0.5 / tan(33 degrees). 1.0 is a third
    # too long for it and for the renderer's 50-72 degrees: the top faces fall up to a third of
    # a square off (benchmarks/dice_real.md).
    default_focal: float = 0.77


@dataclass(frozen=True)
class ArucoSettings:
    dictionary: str = "DICT_4X4_50"
    ids: tuple[int, ...] = (0, 1, 2, 3)
    marker_squares: float = 0.8
    gap_squares: float = 0.25
    min_markers: int = 3
    # The referee looks for the markers when it searches for the board (the whole frame),
    # then follows them in small regions round where they were: `track_pad` marker sides of
    # margin each side (about the largest move followed from one frame to the next).
    search: bool = True
    track_pad: float = 0.6
    # While following, two markers move the last pose (an affine move of the image); fewer
    # leave the frame to the line tracker.
    track_min_markers: int = 2
    # A fit whose markers' corners lie farther than this (squares) from where it puts them is
    # refused: a marker misread, or the board bent.
    max_residual: float = 0.1

    def __post_init__(self) -> None:
        if not 1 <= self.min_markers <= 4 or not 2 <= self.track_min_markers <= 4:
            raise VisionSettingsError("[aruco] min_markers must lie between 1 and 4, track_min_markers "
                                      "between 2 and 4")
        if not 0 < self.track_pad <= 2 or not 0 < self.max_residual <= 0.5:
            raise VisionSettingsError("[aruco] track_pad must lie above 0 and at most 2 (marker sides), "
                                      "max_residual above 0 and at most 0.5 (squares)")


@dataclass(frozen=True)
class VisionSettings:
    localise: LocaliseSettings = field(default_factory=LocaliseSettings)
    track: TrackSettings = field(default_factory=TrackSettings)
    crops: CropSettings = field(default_factory=CropSettings)
    aruco: ArucoSettings = field(default_factory=ArucoSettings)


T = TypeVar("T")


def _section(cls: type[T], values: dict[str, Any], name: str) -> T:
    known = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise VisionSettingsError(f"[{name}] has unknown key(s): {', '.join(unknown)}")
    converted: dict[str, Any] = {}
    for key, value in values.items():
        default = getattr(cls(), key)
        if isinstance(default, tuple):
            if not isinstance(value, list):
                raise VisionSettingsError(f"[{name}] {key} must be a list")
            value = tuple(value)
        elif isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if type(value) is not type(default):
            raise VisionSettingsError(
                f"[{name}] {key} must be {type(default).__name__}, not {type(value).__name__}")
        converted[key] = value
    return cls(**converted)


def load_settings(path: Path | str) -> VisionSettings:
    """Settings from a TOML file; keys it omits keep their defaults."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise VisionSettingsError(f"cannot read vision settings {path}: {exc}") from exc
    sections = {"localise": LocaliseSettings, "track": TrackSettings, "crops": CropSettings,
                "aruco": ArucoSettings}
    unknown = sorted(set(data) - set(sections))
    if unknown:
        raise VisionSettingsError(f"{path}: unknown section(s): {', '.join(unknown)}")
    parts: dict[str, Any] = {name: _section(cls, data.get(name, {}), name) for name, cls in sections.items()}
    return VisionSettings(**parts)


@lru_cache(maxsize=1)
def default_settings() -> VisionSettings:
    """The settings that ship with the package (`referee/data/vision.toml`)."""
    return load_settings(vision_settings_file())
