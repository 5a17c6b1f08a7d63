"""`referee tournament`: every board of a tournament on one page, and each game's record kept.

The boards' broadcasts (`mqtt.py`) are read back through a persistent session, so what they
publish while this machine is away reaches it when it is back, into a `Spectators` hub that
the web view serves. Each game is kept in `OUT/BOARD/game-N.txt`, its record, replaced
atomically by each newer one, and `game-N.jsonl`, its happenings, one JSON object a line,
appended and fsynced; both are on disk before the broker hears that the message arrived.

A game is one referee process's (its `run`). A later process on the same board carries the
board's latest game on only where its first view continues that game (`referee live
--resume`, or this tournament started again and handed the retained position); otherwise it
is game N+1: no game's record is ever written over by another's."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from referee.app.mqtt import RECONNECT_S, BrokerUrl, Delivery, Presence, Receiver
from referee.app.record import write_atomically
from referee.app.spectate import BoardView, Happening, Spectators
from referee.errors import OutputError, RecordError
from referee.rules.records import UNFINISHED, Record, parse_record

_CONNECT_S = 5.0
_GAME_FILE = re.compile(r"^game-(\d+)\.txt$")


@dataclass(frozen=True)
class KeptGame:
    """One game of a board: its record and its happenings."""

    folder: Path
    number: int

    @property
    def record(self) -> Path:
        return self.folder / f"game-{self.number}.txt"

    @property
    def happenings(self) -> Path:
        return self.folder / f"game-{self.number}.jsonl"


class RecordKeeper:
    """Each board's games in `out`, from the messages read back (in order, each once)."""

    def __init__(self, out: Path, say: Callable[[str], None] = print) -> None:
        self.out, self._say = out, say
        self._games: dict[tuple[str, str], KeptGame] = {}  # (board, run) -> its game
        self._early: dict[tuple[str, str], list[str]] = {}  # happenings before a first view
        self._written: dict[KeptGame, BoardView] = {}
        self._boards: set[str] = set()

    def keep(self, delivery: Delivery) -> None:
        update = delivery.update
        key = (update.board, delivery.run)
        if isinstance(update, BoardView):
            self._keep_view(key, update)
        elif isinstance(update, Happening):
            line = json.dumps({**update.to_json(), "run": delivery.run, "seq": delivery.seq},
                              ensure_ascii=False)
            game = self._games.get(key)
            if game is None:  # its run's first view comes next: the game is not known yet
                self._early.setdefault(key, []).append(line)
            else:
                append_line(game.happenings, line)

    def _keep_view(self, key: tuple[str, str], view: BoardView) -> None:
        game = self._games.get(key)
        if game is None:
            game = self._games[key] = self._game_for(view)
            self._started(game, view)
            for line in self._early.pop(key, []):
                append_line(game.happenings, line)
        before = self._written.get(game)
        if before is None or before.record != view.record:
            game.folder.mkdir(parents=True, exist_ok=True)
            write_atomically(game.record, view.record.encode("utf-8"))
        self._written[game] = view
        if view.result and (before is None or not before.result):
            self._say(f"{view.board}: {view.result} after {view.ply} plies ({game.record})")

    def _game_for(self, view: BoardView) -> KeptGame:
        """The board's latest game where `view` carries it on, else a new one."""
        folder = self.out / folder_name(view.board)
        numbers = {int(m[1]) for p in folder.glob("game-*.txt") if (m := _GAME_FILE.match(p.name))}
        numbers |= {game.number for game in self._games.values() if game.folder == folder}
        if not numbers:
            return KeptGame(folder, 1)
        latest = KeptGame(folder, max(numbers))
        try:
            text = latest.record.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        return latest if continues(text, view.record) else KeptGame(folder, latest.number + 1)

    def _started(self, game: KeptGame, view: BoardView) -> None:
        again = view.board in self._boards
        self._boards.add(view.board)
        self._say(f"{view.board}: {'a new game, ' if again else ''}{view.title}, "
                  f"{view.players[0]} v {view.players[1]}, at ply {view.ply}: {game.record}")


def continues(old: str, new: str) -> bool:
    """Whether record text `new` is the game of `old`: the same, or `old` unfinished and `new`
    its headers (less `Result`) and its plies and more."""
    if old == new:
        return True
    try:
        before, after = parse_record(old), parse_record(new)
    except RecordError:
        return False
    plies = [line.text for line in before.plies]
    return (before.headers.get("Result") == UNFINISHED and _headers(before) == _headers(after)
            and [line.text for line in after.plies][:len(plies)] == plies)


def _headers(record: Record) -> dict[str, str]:
    return {key: value for key, value in record.headers.items() if key != "Result"}


def folder_name(board: str) -> str:
    """The board's folder: its name where that is a plain file name (not `..`)."""
    name = urllib.parse.quote(board, safe=" -_@,()")
    return "%2E" + name[1:] if name.startswith(".") else name


def append_line(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as file:
        file.write(line + "\n")
        file.flush()
        os.fsync(file.fileno())


class Tournament:
    """While entered, every board under `broker`'s prefix in `spectators`, its games kept in
    `out`. `client_id` names the persistent session (default: this machine's and the prefix's
    own, the same each start)."""

    def __init__(self, broker: BrokerUrl, out: Path, *, client_id: str | None = None,
                 reconnect_s: tuple[int, int] = RECONNECT_S,
                 say: Callable[[str], None] = print) -> None:
        self.out, self._say = out, say
        self.spectators = Spectators()
        self.keeper = RecordKeeper(out, say)
        self.receiver = Receiver(broker, self._deliver, client_id or session_id(broker),
                                 reconnect_s=reconnect_s, say=say)
        self._online: dict[str, bool] = {}
        self._runs: dict[str, str] = {}  # each board's latest referee process
        self._replaced: dict[str, set[str]] = {}  # each board's processes a later one took over from
        self._told_twins: set[str] = set()  # boards told they have two referees

    def __enter__(self) -> Tournament:
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputError(f"{self.out}: cannot keep the records there ({error.strerror})") from None
        self.receiver.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.receiver.__exit__(kind, error, trace)

    def _deliver(self, delivery: Delivery) -> None:
        """In paho's thread: the disk first, then the page."""
        update = delivery.update
        if isinstance(update, Presence):
            self._presence(update, delivery.run)
            return
        if isinstance(update, BoardView):
            self._latest_run(update, delivery.run)
        try:
            self.keeper.keep(delivery)
        except OSError as error:
            self._say(f"{update.board}: cannot write its record ({error}); the next update "
                      "writes the whole record again")
        if isinstance(update, BoardView | Happening):
            self.spectators.publish(update)

    def _latest_run(self, view: BoardView, run: str) -> None:
        """Note `run` as the board's latest process. One that a later process took over from
        and that speaks again is a second referee under the same name (two Pis written from
        one image are both `raspberrypi`): their games would take turns on the page, so it is
        said once, here and on the page."""
        latest = self._runs.get(view.board)
        if latest is not None and latest != run:
            replaced = self._replaced.setdefault(view.board, set())
            if run in replaced and view.board not in self._told_twins:
                self._told_twins.add(view.board)
                text = "Two referees broadcast under this board's name: give each its own --name"
                self._say(f"{view.board}: {text[0].lower()}{text[1:]}")
                self.spectators.publish(Happening(view.board, "SAME_NAME", text, view.time_s,
                                                  view.ply))
            replaced.add(latest)
        self._runs[view.board] = run

    def _presence(self, presence: Presence, run: str) -> None:
        """A line when a board's referee goes away or comes back (not for the first report). An
        earlier process's will, sent once the broker gives up on it, says nothing of the next."""
        if presence.online:
            self._runs[presence.board] = run
        elif self._runs.get(presence.board, run) != run:
            return
        before = self._online.get(presence.board)
        self._online[presence.board] = presence.online
        if before is not None and before != presence.online:
            self._say(f"{presence.board}: the referee is "
                      f"{'back online' if presence.online else 'offline (its broadcast stopped)'}")


def session_id(broker: BrokerUrl) -> str:
    """The same client id at each start on this machine, so that the broker keeps the session."""
    return f"referee-tournament-{socket.gethostname()}-{broker.prefix}"


def run_tournament(broker: BrokerUrl, address: tuple[str, int], out: Path, *,
                   stop: threading.Event | None = None, say: Callable[[str], None] = print) -> int:
    """Serve the tournament's page at `address` and keep its records in `out` until SIGINT or
    SIGTERM (or `stop` is set)."""
    from referee.app.web import WebView

    stop = stop or threading.Event()
    with _stopped_by_signals(stop), Tournament(broker, out, say=say) as tournament, \
            WebView(tournament.spectators, *address) as view:
        tournament.receiver.subscribed.wait(_CONNECT_S)  # the first line after the broker's
        say(f"tournament: {view.url} shows the boards under {broker.prefix}/ at {broker.address}; "
            f"records in {out}/")
        while not stop.wait(1.0):
            pass
    return 0


@contextlib.contextmanager
def _stopped_by_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set `stop` (where this is the main thread, which alone may set them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handle(number: int, frame: Any) -> None:
        stop.set()

    before = {number: signal.signal(number, handle) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
