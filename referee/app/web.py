"""The live view: a web page of a `Spectators` hub's boards (one board, or a tournament's),
served by aiohttp from a thread of its own so that the referee never waits for a browser.

Routes: `/` the page; `/static/NAME` its script and style (`referee/data/web/`); `/events` the
boards as server-sent events, a snapshot first and then every update; `/state.json` the
snapshot; `/board/NAME/camera.jpg` the latest camera picture; `/board/NAME/record.txt` the
record so far, as a download. Only the aiohttp API stable since 3.8 (Bookworm's) is used."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import ipaddress
import json
import os
import re
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from importlib.resources import files
from types import TracebackType
from typing import Any

import cv2
from aiohttp import web

from referee.app.spectate import BoardView, Picture, Spectators, Update
from referee.errors import RefereeError

DEFAULT_HOST = "127.0.0.1"
_PING_S = 15.0  # a comment down each idle stream: a closed browser is noticed, proxies keep it
_BACKLOG = 500  # updates queued for one browser before it is sent everything afresh instead
_START_S = 10.0
_STOP_S = 2.0  # how long open streams get to take their last updates before they are cut
_TYPES = {".html": "text/html", ".css": "text/css", ".js": "text/javascript",
          ".svg": "image/svg+xml"}
# The diagrams come as SVG markup (in a tournament, from the broadcast): no script runs but
# the page's own.
_PAGE_POLICY = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self' "
                "'unsafe-inline'; script-src 'self'; object-src 'none'; base-uri 'none'")


class AddressError(RefereeError, ValueError):
    """A `HOST:PORT` that cannot be served on: malformed, or a port already in use."""


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `:PORT` (127.0.0.1) as (host, port)."""
    host, colon, port = text.strip().rpartition(":")
    if not colon or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise AddressError(f"--web {text!r}: expected HOST:PORT with a port 1-65535, "
                           "e.g. 127.0.0.1:8080")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise AddressError(f"--web {text!r}: {host!r} is not an IPv6 address") from None
    elif ":" in host:
        raise AddressError(f"--web {text!r}: write an IPv6 address in brackets, e.g. [::1]:8080")
    return host or DEFAULT_HOST, int(port)


@dataclass(frozen=True)
class WebFile:
    body: bytes
    content_type: str


def web_files() -> dict[str, WebFile]:
    """The page's files, by name: everything the server will ever send from the package."""
    folder = files("referee").joinpath("data", "web")
    found = {}
    for item in folder.iterdir():
        suffix = "." + item.name.rpartition(".")[2]
        if item.is_file() and suffix in _TYPES:
            found[item.name] = WebFile(item.read_bytes(), _TYPES[suffix])
    return found


def snapshot(spectators: Spectators) -> dict[str, Any]:
    """Every board's view and recent happenings, as the page starts from."""
    return {"boards": [{"view": view.to_json(),
                        "happenings": [h.to_json() for h in spectators.happenings(name)]}
                       for name, view in sorted(spectators.views().items())]}


def record_file_name(board: str) -> str:
    """A file name for `board`'s record that any file system takes."""
    return (re.sub(r"[^A-Za-z0-9._-]+", "-", board).strip("-.") or "board") + ".txt"


class _Mark(enum.Enum):
    RESYNC = "resync"  # the browser fell behind: send it the whole state
    END = "end"  # the view is closing


class _Stream:
    """One browser's event stream: the updates not yet written to it."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Update | _Mark] = asyncio.Queue()
        self.task = asyncio.current_task()

    def offer(self, item: Update | _Mark) -> None:
        if item is not _Mark.END and self.queue.qsize() >= _BACKLOG:
            while not self.queue.empty():
                self.queue.get_nowait()
            item = _Mark.RESYNC
        self.queue.put_nowait(item)


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class WebView:
    """The live view of `spectators` at http://host:port/ while the `with` block runs."""

    def __init__(self, spectators: Spectators, host: str = DEFAULT_HOST, port: int = 8080) -> None:
        self.spectators, self.host, self.port = spectators, host, port
        self._files = web_files()
        self._streams: set[_Stream] = set()
        self._jpegs: dict[str, tuple[Picture, bytes]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._unsubscribe: Callable[[], None] = lambda: None
        self._closing = False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def __enter__(self) -> WebView:
        started: Future[int] = Future()
        self._thread = threading.Thread(target=self._serve, args=(started,), name="web view",
                                        daemon=True)
        self._thread.start()
        try:
            self.port = started.result(timeout=_START_S)
        except OSError as error:
            raise AddressError(f"cannot serve the live view on {self.host}:{self.port}: "
                               f"{_why(error)}") from None
        self._unsubscribe = self.spectators.subscribe(self._on_update)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._unsubscribe()
        loop, self._loop = self._loop, None
        if loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the server's thread has already ended
                loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=_START_S)

    def _on_update(self, update: Update) -> None:
        """In the publisher's thread: hand the update to the server's loop, nothing more."""
        # RuntimeError: the loop has just closed, and nobody is left to tell.
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._fan_out, update)

    def _fan_out(self, item: Update | _Mark) -> None:
        for stream in self._streams:
            stream.offer(item)

    def _serve(self, started: Future[int]) -> None:
        try:
            asyncio.run(self._run(started))
        except BaseException as error:
            if not started.done():  # failed before listening: `__enter__` raises it
                started.set_exception(error)
            raise

    async def _run(self, started: Future[int]) -> None:
        runner = web.AppRunner(self._app(), handle_signals=False, access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
        except OSError as error:
            await runner.cleanup()
            started.set_exception(error)
            return
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        started.set_result(int(runner.addresses[0][1]))  # the system's choice where 0 was asked
        await self._stop.wait()
        await self._end_streams()
        await runner.cleanup()

    async def _end_streams(self) -> None:
        """Each browser gets its last updates and the word that the view is closing."""
        self._closing = True
        self._fan_out(_Mark.END)
        tasks = {stream.task for stream in self._streams if stream.task is not None}
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=_STOP_S)
            for task in late:
                task.cancel()

    def _app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/", self._page)
        app.router.add_get("/static/{name}", self._static)
        app.router.add_get("/events", self._events)
        app.router.add_get("/state.json", self._state)
        app.router.add_get("/board/{board}/camera.jpg", self._camera)
        app.router.add_get("/board/{board}/record.txt", self._record)
        return app

    async def _page(self, request: web.Request) -> web.Response:
        return self._file("index.html")

    async def _static(self, request: web.Request) -> web.Response:
        return self._file(request.match_info["name"])  # a name, never a path

    def _file(self, name: str) -> web.Response:
        found = self._files.get(name)
        if found is None:
            raise web.HTTPNotFound()
        return web.Response(body=found.body, content_type=found.content_type, charset="utf-8",
                            headers={"Content-Security-Policy": _PAGE_POLICY,
                                     "Cache-Control": "no-cache"})

    async def _state(self, request: web.Request) -> web.Response:
        return web.json_response(snapshot(self.spectators))

    async def _events(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-cache",
                                               "X-Accel-Buffering": "no"})
        response.force_close()
        await response.prepare(request)
        # Registered and snapshotted with no await between: no update falls in the gap (one
        # may come twice; the page ignores a happening it has).
        stream = _Stream()
        self._streams.add(stream)
        if self._closing:
            stream.offer(_Mark.END)
        try:
            await response.write(b"retry: 2000\n\n" + _event("snapshot", snapshot(self.spectators)))
            await self._stream(response, stream)
        except ConnectionError:  # the browser went away
            pass
        finally:
            self._streams.discard(stream)
        return response

    async def _stream(self, response: web.StreamResponse, stream: _Stream) -> None:
        while True:
            try:
                item = await asyncio.wait_for(stream.queue.get(), _PING_S)
            except TimeoutError:
                await response.write(b": ping\n\n")
                continue
            if item is _Mark.END:
                await response.write(_event("end", {}))
                return
            if item is _Mark.RESYNC:
                chunk = _event("snapshot", snapshot(self.spectators))
            else:
                chunk = _event("view" if isinstance(item, BoardView) else "happening",
                               item.to_json())
            await response.write(chunk)

    async def _camera(self, request: web.Request) -> web.Response:
        board = request.match_info["board"]
        jpeg = self._jpeg(board)
        if jpeg is None:
            raise web.HTTPNotFound(text=f"no camera picture of {board} yet")
        return web.Response(body=jpeg, content_type="image/jpeg",
                            headers={"Cache-Control": "no-store"})

    def _jpeg(self, board: str) -> bytes | None:
        """The board's latest picture as JPEG, encoded once however many browsers ask."""
        picture = self.spectators.picture(board)
        if picture is None:
            return None
        cached = self._jpegs.get(board)
        if cached is None or cached[0] is not picture:
            done, data = cv2.imencode(".jpg", picture.image_bgr, [cv2.IMWRITE_JPEG_QUALITY, 80])
            if not done:
                return None
            cached = self._jpegs[board] = (picture, data.tobytes())
        return cached[1]

    async def _record(self, request: web.Request) -> web.Response:
        board = request.match_info["board"]
        view = self.spectators.views().get(board)
        if view is None:
            raise web.HTTPNotFound(text=f"no board {board}")
        return web.Response(text=view.record, content_type="text/plain", charset="utf-8",
                            headers={"Content-Disposition":
                                     f'attachment; filename="{record_file_name(board)}"',
                                     "Cache-Control": "no-store"})


def _why(error: OSError) -> str:
    """The system's words for a failed bind, without asyncio's wrapping of them."""
    if error.errno and not isinstance(error, socket.gaierror):
        return os.strerror(error.errno).lower()
    return error.strerror or str(error)
