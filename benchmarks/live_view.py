"""What the live view and the broadcast cost the referee: each footage replayed as fast as it
can be read, without spectators, then with the web view served to a client that follows its
event stream and fetches the camera picture 4 times a second, and the broadcast to a local
Mosquitto. The figures are the referee thread's CPU time a frame (`time.thread_time`: the
server's and the MQTT client's own threads are not the referee's) and, within it, the time
spent handing the game to the spectators (`BoardFeed.on_event` and `on_frame`); the record
must come out the same each way.

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/live_view.py [FOOTAGE=GAME ...]

Prints a Markdown table. The broadcast needs `mosquitto` (Debian's package) on the PATH or
in /usr/sbin; without it that row is left out."""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from referee.app.replay import ReplayResult, replay_footage
from referee.app.spectate import BoardFeed, Spectators

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = (f"{ROOT}/referee/data/demo/rinne-sample.mp4=rinne",
           f"{ROOT}/tests/data/footage/renaissance-opening.mp4=renaissance")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def timed_feed(spent: list[float]) -> Iterator[None]:
    """`BoardFeed`'s two calls in the referee's thread, timed."""
    originals = BoardFeed.on_event, BoardFeed.on_frame

    def timed(method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent.append(time.thread_time() - start)
        return wrapper

    BoardFeed.on_event, BoardFeed.on_frame = timed(originals[0]), timed(originals[1])  # type: ignore[method-assign]
    try:
        yield
    finally:
        BoardFeed.on_event, BoardFeed.on_frame = originals  # type: ignore[method-assign]


@contextlib.contextmanager
def web_client(spectators: Spectators, board: str) -> Iterator[None]:
    """The web view served, a client on its event stream and fetching the camera picture."""
    from referee.app.web import WebView

    with WebView(spectators, "127.0.0.1", free_port()) as view:
        stop = threading.Event()

        def follow() -> None:
            with contextlib.suppress(OSError), urllib.request.urlopen(view.url + "events") as stream:
                while not stop.is_set() and stream.readline():
                    pass

        def pictures() -> None:
            while not stop.wait(0.25):
                with contextlib.suppress(OSError):
                    urllib.request.urlopen(f"{view.url}board/{board}/camera.jpg").read()

        threads = [threading.Thread(target=f, daemon=True) for f in (follow, pictures)]
        for thread in threads:
            thread.start()
        try:
            yield
        finally:
            stop.set()


@contextlib.contextmanager
def broadcast(spectators: Spectators, board: str) -> Iterator[None]:
    from referee.app.mqtt import Broadcaster, BrokerUrl

    port = free_port()
    broker = subprocess.Popen([mosquitto(), "-p", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        with Broadcaster(spectators, BrokerUrl.parse(f"mqtt://127.0.0.1:{port}/bench"), board):
            yield
    finally:
        broker.terminate()
        broker.wait()


def mosquitto() -> str:
    return shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def replay(footage: Path, game: str, way: str) -> tuple[ReplayResult, float, float]:
    """One replay: the result, the referee thread's CPU seconds, and the feed's."""
    spent: list[float] = []
    spectators = None if way == "none" else Spectators()
    with tempfile.TemporaryDirectory() as out, contextlib.ExitStack() as stack:
        if spectators is not None:
            stack.enter_context(timed_feed(spent))
        if way in ("web", "both"):
            stack.enter_context(web_client(spectators, "bench"))  # type: ignore[arg-type]
        if way in ("mqtt", "both"):
            stack.enter_context(broadcast(spectators, "bench"))  # type: ignore[arg-type]
        start = time.thread_time()
        result = replay_footage(footage, game, out=out, spectators=spectators, board_name="bench")
        return result, time.thread_time() - start, sum(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("footage", nargs="*", default=DEFAULT, metavar="FOOTAGE=GAME")
    args = parser.parse_args()
    ways = ["none", "feed", "web"] + (["mqtt", "both"] if os.path.exists(mosquitto()) else [])
    print(f"{platform.processor() or platform.machine()}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}\n")
    print("| footage | spectators | frames | plies | referee ms/frame | feed ms/frame | "
          "wall speed |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for item in args.footage:
        path, game = item.rsplit("=", 1)
        footage = Path(path)
        plies = None
        for way in ways:
            result, cpu, feed = replay(footage, game, way)
            moves = [str(move) for move in result.match.moves]
            assert plies is None or moves == plies, f"{way}: another record"
            plies = moves
            print(f"| {footage.name} | {way} | {result.frames} | {len(moves)} | "
                  f"{1000 * cpu / result.frames:.2f} | {1000 * feed / result.frames:.3f} | "
                  f"{result.footage_s / result.seconds:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
