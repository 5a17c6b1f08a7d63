"""The named sets of rendered frames the board finder is measured on, and the bookkeeping of
a run over them: one JSON-lines file a set (`i`, `game`, `hand`, `error` in per cent of the
diagonal or null where the board was refused, `ms`), its summary and the frames whose
verdict changed between two runs. `benchmarks/localise_sets.py` runs the finder over them.

Sets (distortion 0; 240 frames of the six Rinne-family games in turn, or 120 of 3x3 only;
a hand in a third of each game's frames, every third frame for the `legacy` ones):
- `held-out`: the five all-games sets the headline figure counts, 90000+ 100000+ 170000+
  190000+ 200000+;
- `development`: 20000+ 40000+ 60000+ (legacy hands) and 80000+, where the finder's rules
  were read off;
- `x3-held-out`: 3x3-only sets 100000+ to 160000+ and 190000+;
- `x3-development`: 3x3-only sets 230000+ 240000+ 250000+;
- `development-2`: all-games sets 400000+ 410000+ 420000+, to read the bigger boards'
  corner-network rule off more frames;
- `fresh`: all-games sets 500000+ to 540000+, to settle what the development frames leave
  open without reading it off `held-out`, and to check the headline on frames no rule has
  seen."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

RINNE_FAMILY_GAMES = ("rinne", "rinne-5x5", "flipflop-3x3", "tensei", "flipflop-5x5", "tensei-5x5")


@dataclass(frozen=True)
class FrameSet:
    name: str
    seed: int
    frames: int
    games: tuple[str, ...]
    legacy_hands: bool = False

    @property
    def cache_folder(self) -> str:
        """Cache subfolder: `localise_accuracy.py` names a set by seed alone, so sets of the
        same seed but other games or hands are kept apart here."""
        kind = "x3" if self.games == ("flipflop-3x3",) else "all"
        return kind + ("-legacy" if self.legacy_hands else "")


def _all(seed: int, legacy: bool = False) -> FrameSet:
    return FrameSet(f"a{seed}" if not legacy else f"l{seed}", seed, 240, RINNE_FAMILY_GAMES, legacy)


def _x3(seed: int) -> FrameSet:
    return FrameSet(f"x{seed}", seed, 120, ("flipflop-3x3",))


SETS: dict[str, tuple[FrameSet, ...]] = {
    "held-out": tuple(_all(s) for s in (90000, 100000, 170000, 190000, 200000)),
    "development": (_all(20000, True), _all(40000, True), _all(60000, True), _all(80000)),
    "x3-held-out": tuple(_x3(s) for s in (100000, 110000, 120000, 130000, 140000, 150000, 160000, 190000)),
    "x3-development": tuple(_x3(s) for s in (230000, 240000, 250000)),
    "development-2": tuple(_all(s) for s in (400000, 410000, 420000)),
    "fresh": tuple(_all(s) for s in (500000, 510000, 520000, 530000, 540000)),
}

WITHIN = 1.0  # per cent of the diagonal


def load(folder: Path) -> dict[str, dict[int, dict[str, object]]]:
    return {p.stem: {int(r["i"]): r for r in map(json.loads, p.read_text().splitlines())}
            for p in sorted(folder.glob("*.jsonl"))}


def verdict(row: dict[str, object]) -> str:
    error = row["error"]
    if error is None:
        return "refused"
    return "within" if float(error) < WITHIN else "wrong"  # type: ignore[arg-type]


def _counts(rows: dict[int, dict[str, object]]) -> tuple[int, int, int, int]:
    verdicts = [verdict(r) for r in rows.values()]
    return len(verdicts), verdicts.count("within"), verdicts.count("refused"), verdicts.count("wrong")


def summary(results: dict[str, dict[int, dict[str, object]]]) -> str:
    lines = ["| set | frames | within 1% | refused | wrong | ms a frame |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    total = [0, 0, 0, 0]
    for name, rows in results.items():
        counts = _counts(rows)
        ms = sum(float(str(r.get("ms", 0.0))) for r in rows.values()) / max(len(rows), 1)
        lines.append(f"| {name} | {counts[0]} | {counts[1]} ({counts[1] / counts[0]:.1%}) | {counts[2]} | "
                     f"{counts[3]} | {ms:.0f} |")
        total = [a + b for a, b in zip(total, counts, strict=True)]
    if total[0]:
        lines.append(f"| all | {total[0]} | {total[1]} ({total[1] / total[0]:.2%}) | {total[2]} | "
                     f"{total[3]} | |")
    return "\n".join(lines)


def _error_text(row: dict[str, object]) -> str:
    return "refused" if row["error"] is None else f"{float(row['error']):.2f}%"  # type: ignore[arg-type]


def compare(before: Path, after: Path) -> str:
    old, new = load(before), load(after)
    # the frames both runs read, set by set (a run may have read only the 3x3 boards)
    both = {n: sorted(set(old[n]) & set(new[n])) for n in sorted(set(old) & set(new))}
    lines = [f"before: {before}", summary({n: {i: old[n][i] for i in both[n]} for n in both}), "",
             f"after: {after}", summary({n: {i: new[n][i] for i in both[n]} for n in both}), "", "changed:"]
    for name, frames in both.items():
        for i in frames:
            a, b = old[name][i], new[name][i]
            if verdict(a) != verdict(b) or (verdict(a) == "wrong" and a["error"] != b["error"]):
                hand = " hand" if b["hand"] else ""
                lines.append(f"  {name} {i} {b['game']}{hand}: {_error_text(a)} -> {_error_text(b)}")
    return "\n".join(lines)
