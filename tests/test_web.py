"""The live view (`referee/app/web.py`): its server against a hub filled by hand, and its page in
a headless Chromium, following a real `referee replay --web` and showing a tournament's boards.

The browser tests need Debian's `chromium` and `chromium-driver` (CI installs them); without
them they fail, naming the packages. `REFEREE_SCREENSHOT=docs/live-view-phone.png` makes the
replay's test save its phone-sized screenshot there (the picture in docs/)."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.app.events import Event, EventKind
from referee.app.spectate import BoardFeed, Happening, Picture, Spectators
from referee.app.web import WebView, parse_address, record_file_name
from referee.errors import RefereeError
from referee.rules import find_game
from referee.rules.core import Match
from referee.rules.records import parse_record
from tests import DATA, ROOT

MOVES = ("King e2 - d2 = Knight", "King b4 - c3 = Knight", "Knight d2 - e4 = Bishop")
BROWSER_PACKAGES = "chromium chromium-driver"


def refereed_board(hub: Spectators, name: str, plies: int) -> BoardFeed:
    """A board of Rinne in `hub` with the first `plies` plies of `MOVES` played and a picture."""
    feed = BoardFeed(hub, name, Match(find_game("rinne")), headers={"White": "Ada", "Black": "Bo"})
    hub.publish(feed.view())
    for _ in range(plies):
        play(feed)
    picture = np.full((120, 160, 3), (40, 120, 200), np.uint8)
    hub.show_picture(name, Picture(picture, 1.0))
    return feed


def play(feed: BoardFeed) -> None:
    """The next ply of `MOVES` accepted on `feed`'s board."""
    ply = len(feed.match.moves) + 1
    move = MOVES[ply - 1]
    feed.match.push_text(move)
    feed.on_event(Event(EventKind.ACCEPTED, ply * 30, ply * 4.0, ply, move))


@pytest.fixture
def two_boards() -> Iterator[tuple[Spectators, WebView]]:
    hub = Spectators()
    refereed_board(hub, "table-1", 2)
    refereed_board(hub, "table 2/β", 1)
    with WebView(hub, "127.0.0.1", 0) as view:
        yield hub, view


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]  # by lower-case name
    body: bytes


def get(view: WebView, path: str) -> Reply:
    """GET `path` exactly as written (http.client neither normalises nor quotes it)."""
    connection = http.client.HTTPConnection(view.host, view.port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()},
                     response.read())
    finally:
        connection.close()


@contextmanager
def event_stream(view: WebView) -> Iterator[Iterator[tuple[str, Any]]]:
    """The server-sent events of `/events`, as (name, data) while the block runs."""
    connection = http.client.HTTPConnection(view.host, view.port, timeout=10)
    try:
        connection.request("GET", "/events")
        response = connection.getresponse()
        assert response.getheader("Content-Type") == "text/event-stream"
        yield server_sent_events(response)
    finally:
        connection.close()


def server_sent_events(response: http.client.HTTPResponse) -> Iterator[tuple[str, Any]]:
    name, data = "message", ""
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: "):
            data += line[len("data: "):]
        elif not line and data:
            yield name, json.loads(data)
            name, data = "message", ""


# ---- the address ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "address"), [
    ("127.0.0.1:8080", ("127.0.0.1", 8080)), ("0.0.0.0:80", ("0.0.0.0", 80)),
    (":8080", ("127.0.0.1", 8080)), ("[::1]:8080", ("::1", 8080)),
    ("referee.local:65535", ("referee.local", 65535))])
def test_an_address_is_host_and_port(text, address):
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["8080", "localhost", "host:", "host:http", "host:0",
                                  "host:65536", "::1:8080", "[nope]:8080", ""])
def test_a_bad_address_is_one_clear_line(text):
    with pytest.raises(RefereeError, match=r"HOST:PORT|IPv6") as error:
        parse_address(text)
    assert "\n" not in str(error.value)


def test_a_busy_port_is_a_referee_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RefereeError, match=f"127.0.0.1:{port}: .*in use"):
            WebView(Spectators(), "127.0.0.1", port).__enter__()


# ---- the server -------------------------------------------------------------------------------

def test_state_lists_every_board(two_boards):
    _, view = two_boards
    reply = get(view, "/state.json")
    assert reply.status == 200
    boards = {entry["view"]["board"]: entry for entry in json.loads(reply.body)["boards"]}
    assert sorted(boards) == ["table 2/β", "table-1"]
    assert boards["table-1"]["view"]["ply"] == 2
    assert [h["text"] for h in boards["table-1"]["happenings"]] == [
        "White played King e2 - d2 = Knight", "Black played King b4 - c3 = Knight"]
    assert boards["table-1"]["view"]["diagram_svg"].startswith("<svg")


def test_the_event_stream_sends_a_snapshot_then_each_update_then_its_end():
    hub = Spectators()
    feed = refereed_board(hub, "table-1", 1)
    with WebView(hub, "127.0.0.1", 0) as view, event_stream(view) as events:
        name, first = next(events)
        assert name == "snapshot" and first["boards"][0]["view"]["ply"] == 1
        play(feed)
        assert next(events)[0] == "happening"
        name, update = next(events)
        assert name == "view" and update["ply"] == 2 and update["last_move"].startswith("1... ")
        hub.publish(Happening("table-1", "CAMERA_LOST", "Camera lost", 9.0, 2))
        assert next(events) == ("happening", {"board": "table-1", "kind": "CAMERA_LOST",
                                              "text": "Camera lost", "time_s": 9.0, "ply": 2,
                                              "move": None})
        view.__exit__(None, None, None)
        assert [name for name, _ in events] == ["end"]  # and then the stream is over


def test_the_page_and_its_files(two_boards):
    _, view = two_boards
    page = get(view, "/")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert b'name="viewport"' in page.body
    script = get(view, "/static/app.js")
    assert script.status == 200 and b"EventSource" in script.body


@pytest.mark.parametrize("path", ["/static/../../pyproject.toml", "/static/%2e%2e/%2e%2e/pyproject.toml",
                                  "/static/..%2F..%2Fpyproject.toml", "/static/", "/static",
                                  "/static/nothing.js", "/static/web.py", "/pyproject.toml",
                                  "/board/nobody/record.txt", "/board/nobody/camera.jpg"])
def test_nothing_else_is_served(two_boards, path):
    _, view = two_boards
    assert get(view, path).status == 404


def test_the_camera_picture_is_a_jpeg(two_boards):
    _, view = two_boards
    reply = get(view, "/board/table-1/camera.jpg")
    assert reply.status == 200 and reply.headers["content-type"] == "image/jpeg"
    image = cv2.imdecode(np.frombuffer(reply.body, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (120, 160, 3)
    assert np.abs(image.astype(int) - (40, 120, 200)).max() < 8


def test_the_record_is_a_download(two_boards):
    _, view = two_boards
    reply = get(view, "/board/table%202%2F%CE%B2/record.txt")
    assert reply.status == 200
    assert reply.headers["content-disposition"] == 'attachment; filename="table-2.txt"'
    record = parse_record(reply.body.decode())
    assert [ply.text for ply in record.plies] == [MOVES[0]]


def test_a_record_file_name_is_safe():
    assert record_file_name("table-1") == "table-1.txt"
    assert record_file_name("../../etc/passwd") == "etc-passwd.txt"
    assert record_file_name("β") == "board.txt"


# ---- the page, in a browser -------------------------------------------------------------------

def chrome(phone: bool = False) -> Any:
    """Debian's Chromium through its chromedriver, headless; a phone's screen where asked."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("the live view's browser tests need selenium: pip install -e '.[dev]'")
    driver_path, browser = shutil.which("chromedriver"), shutil.which("chromium")
    if driver_path is None or browser is None:
        missing = " and ".join(name for name, found in (("chromium", browser),
                                                         ("chromedriver", driver_path)) if not found)
        pytest.fail(f"the live view's browser tests need {missing}: "
                    f"sudo apt-get install {BROWSER_PACKAGES}", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1280,900"):
        options.add_argument(argument)
    if phone:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 2.0, "touch": True}})
    return webdriver.Chrome(options=options, service=Service(executable_path=driver_path))


def test_without_chromium_the_browser_tests_fail_naming_the_packages(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(pytest.fail.Exception, match=f"apt-get install {BROWSER_PACKAGES}"):
        chrome()


def wait_for(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def diagram_ply(driver: Any, board: str) -> int:
    return int(driver.execute_script(
        "const d = document.querySelector(`[data-board=\"${arguments[0]}\"] .diagram`);"
        "return d === null ? -1 : d.dataset.ply;", board))


@pytest.mark.slow
def test_a_tournament_page_shows_every_board_at_once(tmp_path):
    hub = Spectators()
    refereed_board(hub, "table-1", 2)
    second = refereed_board(hub, "table-2", 1)
    driver = chrome()
    try:
        with WebView(hub, "127.0.0.1", 0) as view:
            driver.get(view.url)
            wait_for(lambda: diagram_ply(driver, "table-2") == 1, 10, "both boards")
            play(second)
            wait_for(lambda: diagram_ply(driver, "table-2") == 2, 5, "table-2's next ply")
            wait_for(lambda: driver.execute_script(
                "return [...document.querySelectorAll('img.camera')].every(i => i.naturalWidth)"),
                5, "both camera pictures")
            boards = driver.find_elements("css selector", "[data-board]")
            assert [b.get_attribute("data-board") for b in boards] == ["table-1", "table-2"]
            assert boards[0].rect["y"] == boards[1].rect["y"]  # side by side: a grid
            assert boards[1].rect["x"] > boards[0].rect["x"] + boards[0].rect["width"] / 2
            assert diagram_ply(driver, "table-1") == 2
            driver.save_screenshot(str(tmp_path / "tournament.png"))
    finally:
        driver.quit()


# The page's own clock at each change of a diagram's ply, from before its first script runs.
PLY_WATCH = """
window.plyChanges = [];
new MutationObserver((records) => {
  for (const record of records) {
    window.plyChanges.push([record.target.closest('[data-board]').dataset.board,
                            Number(record.target.dataset.ply), Date.now()]);
  }
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-ply']});
"""


class Lines:
    """A process's output lines, each with the wall-clock time it was read at."""

    def __init__(self, stream: Any) -> None:
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append((time.time(), line.rstrip("\n")))

    def find(self, text: str) -> list[tuple[float, str]]:
        return [(at, line) for at, line in list(self.lines) if text in line]

    def join(self) -> None:
        self._thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def replay_on_the_web(out: Path, port: int) -> Iterator[tuple[subprocess.Popen[str], Lines, Lines]]:
    """`referee replay --web` of footage with 5 plies, its stdout and stderr read as it runs."""
    command = [sys.executable, "-m", "referee.cli", "replay",
               str(DATA / "footage" / "rinne-bump.mp4"), "--game", "rinne",
               "--out", str(out / "game.txt"), "--web", f"127.0.0.1:{port}", "--name", "table-1"]
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}) as process:
        lines = Lines(process.stdout), Lines(process.stderr)
        try:
            yield process, *lines
        finally:
            process.kill()
            for read in lines:
                read.join()


def first_shown(driver: Any, board: str) -> dict[int, float]:
    """The wall-clock time (s) at which the page first showed each ply of `board`."""
    shown: dict[int, float] = {}
    for name, ply, at_ms in driver.execute_script("return window.plyChanges"):
        if name == board:
            shown.setdefault(ply, at_ms / 1000)
    return shown


def downloaded_record(driver: Any, folder: Path) -> str:
    """The record that the page's download link saves (into `folder`)."""
    driver.execute_script("document.querySelector('.download').click()")
    saved = folder / "table-1.txt"
    wait_for(saved.exists, 10, "the record's download")
    return str(wait_for(saved.read_text, 5, "the record's text"))


@pytest.mark.slow
def test_the_live_view_follows_a_replay_on_a_phone(tmp_path):
    driver = chrome(phone=True)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PLY_WATCH})
        driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                               {"behavior": "allow", "downloadPath": str(tmp_path)})
        with replay_on_the_web(tmp_path, free_port()) as (process, out, err):
            _, started = wait_for(lambda: out.find("live view: "), 60, "the view's address")[0]
            driver.get(started.split("live view: ")[1])
            wait_for(lambda: diagram_ply(driver, "table-1") >= 4, 60, "the fourth ply")
            wait_for(lambda: driver.execute_script(
                "return document.querySelector('img.camera').naturalWidth"), 5, "a camera picture")
            driver.save_screenshot(os.environ.get("REFEREE_SCREENSHOT",
                                                  str(tmp_path / "live-view-phone.png")))
            assert process.wait(timeout=90) == 0, "\n".join(line for _, line in err.lines)
        wait_for(lambda: driver.execute_script(
            "return document.body.classList.contains('stopped')"), 5, "the page to see the end")
        accepted = [at for at, _ in out.find("move accepted")]
        assert len(accepted) == 5
        shown = first_shown(driver, "table-1")
        lags = [shown.get(ply, float("inf")) - at for ply, at in enumerate(accepted, start=1)]
        print("seconds from each printed ply to the page:", [round(lag, 3) for lag in lags])
        assert max(lags) <= 1.0, f"seconds from the printed line to the page, by ply: {lags}"
        assert diagram_ply(driver, "table-1") == 5
        assert "stopped" in driver.find_element("id", "connection").text
        record = parse_record(downloaded_record(driver, tmp_path))  # from the page alone now
        assert len(record.plies) == 5
        assert record.plies == parse_record((tmp_path / "game.txt").read_text()).plies
    finally:
        driver.quit()
