"""`referee stats`: what a set of game logs says. Per game (rules): the results by side, the
game lengths, and for games of chance (Tensei) the faces the referee saw the dice show, tested
against a fair die; as a table, and as PNG figures.

What a log holds of a roll. Every accepted ply of a game of chance ends with its moved die
showing its roll, 1 to 5: the new state (King .. Queen). A 6 is rolled again: the referee
saw the die on its new square showing 6 and logged ROLL_PENDING (its `ply`: the plies
recorded before it), once per reading that showed it. Rolling again takes a hand, after which
the board is read again; but a still board is also read again when something stirred since
its last reading (a hand that was still in the frame leaving it), and that reading logs the
same ROLL_PENDING again. So a ROLL_PENDING for the same move sooner than `REREAD_S`
after the one before it, with nothing logged between, is that 6 read again, not another 6.
A ply's faces are its 6s, then its accepted state.
Only the plies that stand count: a ply taken back (TAKE_BACK) takes its rolls with it, an
illegal move is never accepted, and a 6 still pending when the log ends belongs to no ply.

Dice are told apart by following each from its start square through the plies (a die that
moves from e2 to d2 is the same die, a captured one is gone), and named by its player and
start square (`White a2`); over several games a die is taken to start on the same square."""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.app.events import Event, EventKind
from referee.app.record import LOG_FORMAT, GameLog, load_log, match_from_log
from referee.errors import RecordError, RefereeError
from referee.rules.core import Match

LOG_NAME = "game.jsonl"
FACES = 6
PENDING = 6  # the face rolled again
ALPHA = 0.01  # a die is flagged when a fair die would give counts this far off less often
MIN_ROLLS = 30  # fewer, and some face's expected count is under 5: the chi-square test misleads
# A die picked up, rolled and left still long enough to be read takes longer than this; one
# still board read twice (benchmarks/dice_stats.md: 0.57 s apart; 6s rolled twice in a row:
# 2.9 s and more) does not.
REREAD_S = 1.5
DRAW = "draw"
UNFINISHED = "unfinished"
STATS_EXTRA = "pip install 'referee[stats]'"


class MissingExtraError(RefereeError, ImportError):
    """scipy or matplotlib, which `referee stats` needs for its test and its figures, is not
    installed."""


@dataclass(frozen=True)
class GameStats:
    """One logged game, as the statistics need it."""

    path: Path
    game: str  # the game's name (`tensei`)
    title: str  # `Tensei (5x6 standard)`
    sides: tuple[str, str]  # the players' names, first player first
    result: str  # the winner's name, DRAW or UNFINISHED
    chance: bool  # a game of chance: its dice's rolls are in `ply_faces`
    ply_texts: tuple[str, ...]  # the plies that stand, in the designer's notation
    ply_faces: tuple[tuple[int, ...], ...] = ()  # per ply: the faces seen, its 6s first
    ply_dice: tuple[str, ...] = ()  # per ply: the die moved (`White a2`)

    @property
    def plies(self) -> int:
        return len(self.ply_texts)

    def rolls(self) -> Iterator[tuple[str, int]]:
        """Every roll seen: (die, face)."""
        for die, faces in zip(self.ply_dice, self.ply_faces, strict=True):
            for face in faces:
                yield die, face


@dataclass(frozen=True)
class FaceTest:
    """A die's (or dice's) faces seen, against a fair die: a chi-square test, p-value None
    where there are too few rolls to judge."""

    label: str
    counts: tuple[int, ...]  # faces 1..6
    statistic: float | None = None
    p_value: float | None = None

    @property
    def rolls(self) -> int:
        return sum(self.counts)

    @property
    def expected(self) -> float:
        return self.rolls / FACES

    @property
    def flagged(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA

    def verdict(self) -> str:
        if self.p_value is None:
            return f"too few rolls to judge (under {MIN_ROLLS})"
        if self.flagged:
            return f"FLAGGED: not a fair die (p < {ALPHA:g})"
        return f"no sign of loading (p >= {ALPHA:g})"


@dataclass(frozen=True)
class Collected:
    games: tuple[GameStats, ...]
    skipped: tuple[str, ...]  # why each log found in a folder was left out


def run_stats(paths: list[Path], *, plots: Path | None = None) -> int:
    """`referee stats`: read the logs (files, or folders searched for game.jsonl), print the
    table, draw the figures into `plots`; returns the exit status. A log named on the command
    line that cannot be read is an error; one found in a folder is skipped, said on stderr."""
    collected = collect(paths, on_skip=lambda why: print(f"referee: skipped {why}",
                                                          file=sys.stderr))
    if any(game.chance for game in collected.games):
        _need("scipy")
    if plots is not None:
        _need("matplotlib")
    print(table(collected), end="")
    if plots is not None:
        for path in draw_plots(collected.games, plots):
            print(f"figure: {path}")
    return 0


def collect(paths: list[Path], on_skip: Callable[[str], None] | None = None) -> Collected:
    """Every log under `paths`, read; `on_skip(why)` for each one skipped."""
    games: list[GameStats] = []
    skipped: list[str] = []
    for path, named in find_logs(paths):
        try:
            games.append(read_game(path))
        except RecordError as error:
            if named:
                raise
            skipped.append(str(error))
            if on_skip is not None:
                on_skip(str(error))
    if not games:
        raise RecordError(f"no game log could be read ({len(skipped)} skipped)")
    return Collected(tuple(games), tuple(skipped))


def find_logs(paths: list[Path]) -> list[tuple[Path, bool]]:
    """(log, named on the command line) for each file named and each game.jsonl under each
    folder named, each log once."""
    found: dict[Path, tuple[Path, bool]] = {}  # by the file itself, however it is reached
    for path in paths:
        if path.is_dir():
            logs = sorted(path.rglob(LOG_NAME))
            if not logs:
                raise RecordError(f"{path}: no game logs ({LOG_NAME}) in this folder")
            for log in logs:
                found.setdefault(log.resolve(), (log, False))
        elif path.is_file():
            found[path.resolve()] = (path, True)
        else:
            raise RecordError(f"{path}: no such file or folder")
    return list(found.values())


def read_game(path: Path) -> GameStats:
    """One log's game; RecordError for a log that cannot be read or replayed."""
    if not _looks_like_a_log(path):
        raise RecordError(f"{path}: not a game log (its first line is no '{LOG_FORMAT}' header)")
    log = load_log(path)
    match = match_from_log(log)
    game: Any = log.game
    sides = tuple(game.player_names)
    outcome = match.outcome
    result = UNFINISHED if outcome is None else (
        DRAW if outcome.winner is None else sides[outcome.winner])
    chance = bool(getattr(game, "chance", False))
    return GameStats(path, game.name, f"{game.title} ({game.variant})", (sides[0], sides[1]),
                     result, chance, tuple(match.ply_texts()),
                     ply_faces(log, match) if chance else (),
                     ply_dice(match) if chance else ())


def _looks_like_a_log(path: Path) -> bool:
    """Whether the file starts with a log's header line (else it is some other file named
    by mistake, which `load_log` would call corrupt); an unreadable or empty file is left for
    `load_log` to say why."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(64 * 1024)
    except OSError:
        return True
    if not first.strip():
        return True
    try:
        header = json.loads(first.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(header, dict) and header.get("format") == LOG_FORMAT


def ply_faces(log: GameLog, match: Match[Any, Any]) -> tuple[tuple[int, ...], ...]:
    """Per ply that stands: the faces its die showed, each 6 seen first, then its state."""
    sixes: list[int] = []  # per ply accepted and not taken back: the 6s seen for it
    pending: Counter[int] = Counter()  # 6s seen, by the ply they were rolled for
    before: Event | None = None
    for event in log.events:
        if event.kind is EventKind.ROLL_PENDING and not _read_again(before, event):
            pending[event.ply] += 1
        elif event.kind is EventKind.ACCEPTED:
            sixes.append(pending.pop(event.ply - 1, 0))
        elif event.kind is EventKind.TAKE_BACK:
            sixes.pop()
            pending.clear()  # the plies after it are made again
        before = event
    return tuple((PENDING,) * n + (int(move.new_state),)
                 for n, move in zip(sixes, match.moves, strict=True))


def _read_again(before: Event | None, event: Event) -> bool:
    """Whether ROLL_PENDING `event` is the 6 of `before` read again (see the module's text)."""
    return (before is not None and before.kind is EventKind.ROLL_PENDING
            and (before.ply, before.move) == (event.ply, event.move)
            and event.time_s - before.time_s < REREAD_S)


def ply_dice(match: Match[Any, Any]) -> tuple[str, ...]:
    """Per ply: the die moved, named by its player and start square."""
    game: Any = match.game
    start = match.positions[0]
    at: dict[int, str] = {}
    for square in game.geometry.squares():
        piece = start.piece_at(square)
        if piece is not None:
            at[square] = f"{game.player_names[piece.color]} {game.geometry.square_name(square)}"
    dice = []
    for move in match.moves:
        die = at.pop(move.from_square)
        at[move.to_square] = die  # a die captured there is gone
        dice.append(die)
    return tuple(dice)


def face_test(label: str, faces: Iterable[int]) -> FaceTest:
    """The faces `faces` (1..6) against a fair die."""
    tally = Counter(faces)
    counts = tuple(tally[face] for face in range(1, FACES + 1))
    if sum(counts) < MIN_ROLLS:
        return FaceTest(label, counts)
    _need("scipy")
    from scipy.stats import chisquare

    test = chisquare(counts)  # against equal counts: a fair die
    return FaceTest(label, counts, float(test.statistic), float(test.pvalue))


def dice_tests(games: list[GameStats]) -> tuple[FaceTest, tuple[FaceTest, ...]]:
    """All dice together, then each die (in its players' order, then by square)."""
    rolls = [roll for game in games for roll in game.rolls()]
    every = face_test("all dice", (face for _die, face in rolls))
    sides = [side for game in games for side in game.sides]

    def order(die: str) -> tuple[int, int, str]:  # the first player's dice first, by square
        side, _, square = die.rpartition(" ")
        return sides.index(side), int(square[1:]), square[0]

    dice = sorted({die for die, _face in rolls}, key=order)
    return every, tuple(face_test(die, (f for d, f in rolls if d == die)) for die in dice)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def by_game(games: Iterable[GameStats]) -> dict[str, list[GameStats]]:
    out: dict[str, list[GameStats]] = {}
    for game in games:
        out.setdefault(game.game, []).append(game)
    return dict(sorted(out.items()))


# --- the table -------------------------------------------------------------------------


def table(collected: Collected) -> str:
    games = collected.games
    lines = [f"{_plural(len(games), 'game')} read"
             + (f"; {_plural(len(collected.skipped), 'log')} skipped (said above)"
                if collected.skipped else "")]
    for kind in by_game(games).values():
        lines += ["", *game_lines(kind)]
        if kind[0].chance:
            lines += ["", *dice_lines(kind)]
    return "\n".join(lines) + "\n"


def game_lines(games: list[GameStats]) -> list[str]:
    """A game's count, results by side and lengths."""
    results = Counter(game.result for game in games)
    sides = games[0].sides
    wins = ", ".join(f"{side} {results[side]}" for side in sides)
    lengths = [game.plies for game in games]
    return [f"{games[0].title}: {_plural(len(games), 'game')}",
            f"  wins: {wins}; draws {results[DRAW]}; unfinished {results[UNFINISHED]}",
            f"  length in plies: min {min(lengths)}, median {statistics.median(lengths):g}, "
            f"max {max(lengths)}"]


def dice_lines(games: list[GameStats]) -> list[str]:
    """The faces seen, all dice and each die, against a fair die."""
    every, dice = dice_tests(games)
    head = f"  {'dice':<12}" + "".join(f"{face:>5}" for face in range(1, FACES + 1))
    lines = ["  Rolls seen (a 6 is rolled again) against a fair die, 1/6 of the rolls a face:",
             f"  a chi-square test, flagged at p < {ALPHA:g}; under {MIN_ROLLS} rolls too few to judge",
             head + f"{'rolls':>7}{'chi2':>8}{'p':>10}  verdict"]
    lines.append(_test_line(every))
    lines.append(f"  {'expected':<12}" + f"{every.expected:>5.1f}" * FACES)
    lines.append("  each die, by its player and start square:")
    lines += [_test_line(test) for test in dice]
    return lines


def _test_line(test: FaceTest) -> str:
    counts = "".join(f"{count:>5}" for count in test.counts)
    chi2 = "-" if test.statistic is None else f"{test.statistic:.2f}"
    p = "-" if test.p_value is None else f"{test.p_value:.2g}"
    return f"  {test.label:<12}{counts}{test.rolls:>7}{chi2:>8}{p:>10}  {test.verdict()}"


# --- the figures -----------------------------------------------------------------------


def draw_plots(games: tuple[GameStats, ...], folder: Path) -> list[Path]:
    """`lengths.png`, and per game of chance `dice-GAME.png` (all dice) and
    `dice-GAME-each.png` (each die); returns the files written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RecordError(f"{folder}: cannot write the figures there ({error.strerror})") from None
    kinds = by_game(games)
    written = [_save(_lengths_figure(kinds), folder / "lengths.png")]
    for name, kind in kinds.items():
        if kind[0].chance:
            every, dice = dice_tests(kind)
            written.append(_save(_faces_figure(kind[0].title, (every,), 1), folder / f"dice-{name}.png"))
            written.append(_save(_faces_figure(kind[0].title, dice, 5),
                                 folder / f"dice-{name}-each.png"))
    return written


def _figure(width: float, height: float) -> Any:
    """A figure drawn by Agg, without pyplot (no window, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, path: Path) -> Path:
    try:
        figure.savefig(path)
    except OSError as error:
        raise RecordError(f"{path}: cannot be written ({error.strerror})") from None
    return path


def _lengths_figure(kinds: dict[str, list[GameStats]]) -> Any:
    figure = _figure(7, 4)
    axes = figure.subplots()
    lengths = [game.plies for kind in kinds.values() for game in kind]
    bins = [n - 0.5 for n in range(min(lengths), max(lengths) + 2)]
    for kind in kinds.values():
        axes.hist([game.plies for game in kind], bins=bins, histtype="step", linewidth=2,
                  label=f"{kind[0].title}: {_plural(len(kind), 'game')}")
    axes.set_xlabel("plies")
    axes.set_ylabel("games")
    axes.set_title("Game lengths")
    _integer_ticks(axes, x=True)
    axes.legend()
    return figure


def _faces_figure(title: str, tests: tuple[FaceTest, ...], columns: int) -> Any:
    """A bar chart of each test's faces against the fair expectation, its p-value above."""
    columns = min(columns, len(tests))
    rows = -(-len(tests) // columns)
    figure = _figure(3.2 * columns if columns > 1 else 6, 2.6 * rows if columns > 1 else 4)
    grid = figure.subplots(rows, columns, squeeze=False)
    for axes, test in zip(grid.flat, tests, strict=False):
        _faces_axes(axes, test, title if len(tests) == 1 else "")
    for axes in list(grid.flat)[len(tests):]:
        axes.set_visible(False)
    if len(tests) > 1:
        figure.suptitle(f"{title}: each die's rolls against a fair die")
    return figure


def _faces_axes(axes: Any, test: FaceTest, title: str) -> None:
    faces = range(1, FACES + 1)
    colour = "tab:red" if test.flagged else "tab:blue"
    axes.bar(faces, test.counts, color=colour, label="seen")
    axes.axhline(test.expected, color="black", linestyle="--",
                 label=f"fair die: {test.expected:.1f} a face")
    axes.set_xticks(list(faces))
    axes.set_ylim(0, max(*test.counts, test.expected, 1) * 1.3)  # room for the legend
    _integer_ticks(axes)
    axes.set_xlabel("face (6: rolled again)")
    axes.set_ylabel("rolls")
    judged = (f"chi2 {test.statistic:.1f}, p = {test.p_value:.2g}"
              if test.p_value is not None else "too few rolls to judge")
    flag = " FLAGGED" if test.flagged else ""
    head = f"{title}: " if title else ""
    axes.set_title(f"{head}{test.label}, {_plural(test.rolls, 'roll')}\n{judged}{flag}",
                   fontsize=9)
    if title:
        axes.legend(loc="upper right", ncols=2)


def _integer_ticks(axes: Any, *, x: bool = False) -> None:
    from matplotlib.ticker import MaxNLocator

    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    if x:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))


def _need(module: str) -> None:
    """Import `module` (scipy, matplotlib) or say, in one line, how to install it."""
    try:
        __import__(module)
    except ImportError:
        raise MissingExtraError(f"referee stats needs {module} for its "
                                f"{'figures' if module == 'matplotlib' else 'test of the dice'}: "
                                f"{STATS_EXTRA}") from None
