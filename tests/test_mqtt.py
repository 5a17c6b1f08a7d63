"""The tournament broadcast against a real Mosquitto broker (`tests/broker.py`): every ply
arrives once and in order, through a broker stopped and started again mid-game and a broker
missing at the start; the tournament keeps each board's record and shows them all."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.app.events import Event, EventKind
from referee.app.mqtt import Broadcaster, BroadcastError, BrokerUrl, Delivery, Ply, Receiver
from referee.app.spectate import BoardFeed, BoardView, Happening, Spectators
from referee.app.tournament import RecordKeeper, Tournament, continues, folder_name, run_tournament
from referee.errors import RefereeError
from referee.rules.core import Match
from referee.rules.records import parse_record, read_record
from tests import DATA
from tests import broker as broker_helpers
from tests.broker import Collector, Mosquitto, once_in_order

RINNE = DATA / "records" / "rinne-sample.txt"
QUICK = (1, 1)  # reconnect every second: the tests wait less


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    mosquitto = Mosquitto(tmp_path / "broker")
    mosquitto.start()
    yield mosquitto
    mosquitto.stop()


class SampleGame:
    """The designer's game of Rinne (31 plies, White wins) told to a hub as the referee tells
    it, ply by ply."""

    def __init__(self, hub: Spectators, board: str, record: Path = RINNE) -> None:
        self.record = read_record(record)
        self.match: Match[Any, Any] = Match(self.record.game())
        self.feed = BoardFeed(hub, board, self.match, headers={"Source": record.name})
        self.texts: list[str] = []
        hub.publish(self.feed.view())
        self.feed.on_event(Event(EventKind.STARTED, 0, 0.0, 0))

    def play(self, plies: int | None = None) -> None:
        """The next `plies` plies (all that are left: None), and the end once the game is over."""
        left = self.record.plies[len(self.texts):]
        for line in left[:plies]:
            before = self.match.position
            move = self.match.push_text(line.text)
            self.texts.append(self.match.game.move_text(before, move))
            ply = len(self.texts)
            self.feed.on_event(Event(EventKind.ACCEPTED, ply, float(ply), ply, self.texts[-1]))
            if self.match.outcome is not None:
                self.feed.on_event(Event(EventKind.GAME_OVER, ply, float(ply), ply))

    def view(self) -> BoardView:
        return self.feed.view()


def plies_of(messages: list[tuple[str, dict[str, Any]]], board: str = "table-1"
             ) -> tuple[list[str], int]:
    """The moves of the `ply` messages of `board`, each once, and how many were duplicates."""
    kept, duplicates = once_in_order([m for topic, m in messages if topic == f"club/{board}/ply"])
    assert [m["ply"] for m in kept] == list(range(1, len(kept) + 1)), "out of order or missing"
    return [m["move"] for m in kept], duplicates


def retained_position(broker: Mosquitto, board: str = "table-1") -> dict[str, Any]:
    with Collector(broker.port, f"club/{board}/position", f"late-{time.monotonic_ns()}") as late:
        return late.wait_for(lambda messages: bool(messages), 10)[0][1]


# --- URLs and names --------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "host", "port", "prefix"), [
    ("mqtt://192.168.1.10/club", "192.168.1.10", 1883, "club"),
    ("mqtt://broker.local:1884/club/2025/", "broker.local", 1884, "club/2025"),
    ("mqtt://[::1]:1885/club", "::1", 1885, "club"),
])
def test_a_broker_url_gives_host_port_and_prefix(url: str, host: str, port: int, prefix: str):
    broker = BrokerUrl.parse(url)
    assert (broker.host, broker.port, broker.prefix) == (host, port, prefix)
    assert broker.topic("table-3") == f"{prefix}/table-3"


@pytest.mark.parametrize(("url", "why"), [
    ("http://192.168.1.10/club", "not an MQTT broker's URL"),
    ("192.168.1.10/club", "not an MQTT broker's URL"),
    ("mqtt://192.168.1.10", "no prefix"),
    ("mqtt://192.168.1.10/", "no prefix"),
    ("mqtt://192.168.1.10:port/club", "the port must be a number"),
    ("mqtt://192.168.1.10:70000/club", "the port must be a number"),
    ("mqtt://192.168.1.10:0/club", "the port must be a number"),
    ("mqtt:///club", "no broker host"),
    ("mqtt://user:secret@host/club", "only a host, a port and a prefix"),
    ("mqtt://host/club/+", "cannot be an MQTT topic level"),
    ("mqtt://host/club//x", "cannot be an MQTT topic level"),
])
def test_a_bad_broker_url_is_one_clear_line(url: str, why: str):
    with pytest.raises(RefereeError) as raised:
        BrokerUrl.parse(url)
    assert why in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("name", ["", "table/3", "table+3", "table#3", "$SYS"])
def test_a_board_name_must_be_a_topic_level(name: str):
    broker = BrokerUrl.parse("mqtt://host/club")
    with pytest.raises(BroadcastError, match="cannot be an MQTT topic level"):
        Broadcaster(Spectators(), broker, name)


def test_a_board_name_is_a_safe_folder_name():
    assert folder_name("table-3") == "table-3"
    assert folder_name("..") == "%2E."
    assert folder_name("a\\b") == "a%5Cb"


def test_no_mosquitto_fails_and_names_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setattr(broker_helpers, "MOSQUITTO", str(tmp_path / "none"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match="apt install mosquitto"):
        broker_helpers.mosquitto_binary()


# --- the broadcast ---------------------------------------------------------------------------


def test_every_ply_arrives_once_in_order_and_the_position_is_retained(broker: Mosquitto):
    hub = Spectators()
    url = BrokerUrl.parse(broker.url())
    with Collector(broker.port, "club/#", "watcher") as watcher:
        with Broadcaster(hub, url, "table-1", reconnect_s=QUICK):
            game = SampleGame(hub, "table-1")
            game.play()
        # The broker has taken the offline message when the broadcaster closes; the watcher
        # may get it a moment later.
        messages = watcher.wait_for(lambda ms: len(plies_of(ms)[0]) == 31 and said_offline(ms))
    moves, duplicates = plies_of(messages)
    assert moves == game.texts and duplicates == 0
    events, _ = once_in_order([m for topic, m in messages if topic == "club/table-1/event"])
    assert [m["kind"] for m in events] == ["STARTED", *["ACCEPTED"] * 31, "GAME_OVER"]
    position = retained_position(broker)
    assert BoardView.from_json({k: v for k, v in position.items() if k not in ("run", "seq")}) \
        == game.view()
    assert next(p["online"] for t, p in messages if t == "club/table-1/online") is True


def said_offline(messages: list[tuple[str, dict[str, Any]]], board: str = "table-1") -> bool:
    """Whether the last `online` message of `board` says it is offline."""
    said = [m["online"] for topic, m in messages if topic == f"club/{board}/online"]
    return bool(said) and said[-1] is False


def test_a_broker_restarted_mid_game_loses_no_ply(broker: Mosquitto):
    hub, url = Spectators(), BrokerUrl.parse(broker.url())
    plies: list[Delivery] = []
    receiver = Receiver(url, lambda d: plies.append(d) if isinstance(d.update, Ply) else None,
                        "tournament-test", reconnect_s=QUICK, say=lambda line: None)
    with Collector(broker.port, "club/#", "watcher") as watcher, receiver, \
            Broadcaster(hub, url, "table-1", reconnect_s=QUICK):
        assert receiver.subscribed.wait(10)
        game = SampleGame(hub, "table-1")
        game.play(10)
        broker.stop()  # whatever paho has not had acknowledged yet is re-sent
        game.play(5)  # the broker is away: these wait
        broker.start()
        game.play()
        messages = watcher.wait_for(lambda ms: len(plies_of(ms)[0]) == 31)
        _wait(lambda: len(plies) == 31)
    moves, raw_duplicates = plies_of(messages)
    assert moves == game.texts
    received = [d.update for d in plies]
    assert [p.ply for p in received] == list(range(1, 32))  # in order, none twice
    assert [p.move for p in received] == game.texts
    print(f"\nbroker restarted after ply 10: {len(messages)} raw messages, {raw_duplicates} raw "
          f"duplicate plies at a plain subscriber, {receiver.duplicates} dropped by the receiver")
    position = retained_position(broker)
    assert (position["ply"], position["result"]) == (31, "White wins")


def test_a_broker_missing_at_the_start_stops_nothing(broker: Mosquitto):
    hub, url = Spectators(), BrokerUrl.parse(broker.url())
    said: list[str] = []
    with Collector(broker.port, "club/#", "watcher") as watcher:
        broker.stop()
        started = time.perf_counter()
        with Broadcaster(hub, url, "table-1", reconnect_s=QUICK, say=said.append):
            game = SampleGame(hub, "table-1")
            game.play()
            refereed_s = time.perf_counter() - started
            _wait(lambda: bool(said))
            broker.start()
            messages = watcher.wait_for(lambda ms: len(plies_of(ms)[0]) == 31)
    assert refereed_s < 2.0  # the whole game told while the broker was away: nobody waited
    assert said[0] == (f"broadcast: cannot reach the broker at 127.0.0.1:{broker.port}; the "
                       "referee goes on, keeps every update and tries again")
    assert said[1].startswith("broadcast: connected to the broker")
    assert plies_of(messages)[0] == game.texts


def test_a_stranger_s_message_is_said_and_dropped(broker: Mosquitto):
    url = BrokerUrl.parse(broker.url())
    said: list[str] = []
    delivered: list[Delivery] = []
    with Receiver(url, delivered.append, "tournament-test", say=said.append) as receiver:
        assert receiver.subscribed.wait(10)
        with Collector(broker.port, "nothing", "sender") as sender:
            sender.client.publish("club/table-9/event", b"not json", qos=1).wait_for_publish(5)
            sender.client.publish("club/table-9/weather", b"{}", qos=1).wait_for_publish(5)
        _wait(lambda: bool(said))
    assert said[0].startswith("tournament: club/table-9/event: not a referee's message")
    assert delivered == []


# --- the tournament --------------------------------------------------------------------------


def test_the_tournament_shows_two_boards_and_keeps_their_records(broker: Mosquitto, tmp_path: Path):
    url, out = BrokerUrl.parse(broker.url()), tmp_path / "records"
    said: list[str] = []
    stop = threading.Event()
    thread = threading.Thread(target=run_tournament, args=(url, ("127.0.0.1", 0), out),
                              kwargs={"stop": stop, "say": said.append})
    thread.start()
    try:
        _wait(lambda: any(line.startswith("tournament: http://") for line in said))
        page = next(line for line in said if line.startswith("tournament: http://")).split()[1]
        page = page.rstrip(";")
        hubs = {board: Spectators() for board in ("table-1", "table-2")}
        with Broadcaster(hubs["table-1"], url, "table-1", reconnect_s=QUICK), \
                Broadcaster(hubs["table-2"], url, "table-2", reconnect_s=QUICK):
            games = {board: SampleGame(hub, board) for board, hub in hubs.items()}
            for _ in range(8):  # both boards at once, four plies each at a time
                for game in games.values():
                    game.play(4)
        _wait(lambda: sum("White wins" in line for line in said) == 2)
        _wait(lambda: sum("the referee is offline" in line for line in said) == 2)
        state = json.loads(urllib.request.urlopen(page + "state.json", timeout=10).read())
    finally:
        stop.set()
        thread.join(10)
    assert [board["view"]["board"] for board in state["boards"]] == ["table-1", "table-2"]
    for board, game in games.items():
        assert (out / board / "game-1.txt").read_text() == game.view().record
        lines = [json.loads(line) for line in (out / board / "game-1.jsonl").read_text().splitlines()]
        assert [line["kind"] for line in lines] == ["STARTED", *["ACCEPTED"] * 31, "GAME_OVER"]
        assert [line["seq"] for line in lines] == sorted({line["seq"] for line in lines})
    assert sorted(line for line in said if "at ply" in line) == [
        f"{board}: Rinne (5x6 standard), White v Black, at ply 0: {out / board / 'game-1.txt'}"
        for board in ("table-1", "table-2")]


def test_the_tournament_away_mid_game_catches_up(broker: Mosquitto, tmp_path: Path):
    """Its persistent session: what the boards publish while it is away reaches it after."""
    url, out, hub = BrokerUrl.parse(broker.url()), tmp_path / "records", Spectators()

    def tournament() -> Tournament:
        return Tournament(url, out, client_id="tournament-test", reconnect_s=QUICK,
                          say=lambda line: None)

    with Broadcaster(hub, url, "table-1", reconnect_s=QUICK):
        with tournament() as first:
            assert first.receiver.subscribed.wait(10)
            game = SampleGame(hub, "table-1")
            game.play(12)
            _wait(lambda: getattr(first.spectators.views().get("table-1"), "ply", 0) == 12)
        game.play()
    with tournament() as again:
        _wait(lambda: again.spectators.views().get("table-1") == game.view())
    assert (out / "table-1" / "game-1.txt").read_text() == game.view().record
    lines = (out / "table-1" / "game-1.jsonl").read_text().splitlines()
    assert [json.loads(line)["ply"] for line in lines if '"ACCEPTED"' in line] == list(range(1, 32))
    assert sorted(p.name for p in (out / "table-1").iterdir()) == ["game-1.jsonl", "game-1.txt"]


def test_a_new_game_on_a_board_gets_its_own_files(tmp_path: Path):
    keeper = RecordKeeper(tmp_path, say=lambda line: None)
    first, second = SampleGame(Spectators(), "table-1"), SampleGame(Spectators(), "table-1")
    first.play()
    keeper.keep(Delivery("run-1", 40, first.view()))
    told = Happening("table-1", "STARTED", "Game started", 0.0, 0)
    keeper.keep(Delivery("run-2", 1, told))  # before its process's first view: held back
    keeper.keep(Delivery("run-2", 2, second.view()))  # the next game, from a new process
    second.play(3)
    keeper.keep(Delivery("run-2", 9, second.view()))
    assert (tmp_path / "table-1" / "game-1.txt").read_text() == first.view().record
    assert (tmp_path / "table-1" / "game-2.txt").read_text() == second.view().record
    assert json.loads((tmp_path / "table-1" / "game-2.jsonl").read_text()) == \
        {**told.to_json(), "run": "run-2", "seq": 1}
    again = RecordKeeper(tmp_path, say=lambda line: None)  # the tournament started again
    again.keep(Delivery("run-2", 9, second.view()))  # the retained position, handed again
    second.play(2)
    again.keep(Delivery("run-3", 1, second.view()))  # the Pi rebooted: `live --resume`
    assert sorted(p.name for p in (tmp_path / "table-1").iterdir()) == [
        "game-1.txt", "game-2.jsonl", "game-2.txt"]
    assert (tmp_path / "table-1" / "game-2.txt").read_text() == second.view().record


def test_two_referees_under_one_name_are_told_once(tmp_path: Path):
    """Two Pis written from one image both call their board `raspberrypi`: their views take
    turns. A process that a later one took over from speaking again is the sign; a referee
    restarted (`live --resume`, a new process) is not."""
    said: list[str] = []
    tournament = Tournament(BrokerUrl.parse("mqtt://localhost/club"), tmp_path, say=said.append)
    happenings: list[Happening] = []
    tournament.spectators.subscribe(lambda u: happenings.append(u) if isinstance(u, Happening) else None)
    one, two = SampleGame(Spectators(), "raspberrypi"), SampleGame(Spectators(), "raspberrypi")
    for run, game, seq in (("run-1", one, 1), ("run-2", two, 1), ("run-3", two, 2)):
        game.play(1)
        tournament._deliver(Delivery(run, seq, game.view()))  # restarted twice: nothing said
    told = [line for line in said if "--name" in line]
    assert told == [] and happenings == []
    for seq in (2, 3):
        one.play(1)
        tournament._deliver(Delivery("run-1", seq, one.view()))
        two.play(1)
        tournament._deliver(Delivery("run-3", seq + 1, two.view()))
    told = [line for line in said if "--name" in line]
    assert told == ["raspberrypi: two referees broadcast under this board's name: give each its "
                    "own --name"]
    assert [h.kind for h in happenings] == ["SAME_NAME"]


def test_a_record_continues_only_its_own_unfinished_game():
    game = SampleGame(Spectators(), "t")
    game.play(4)
    four = game.view().record
    game.play(2)
    assert continues(four, game.view().record)
    assert not continues(game.view().record, four)  # a take-back is no later process's game
    other = four.replace("Source: rinne-sample.txt", "Source: another.mp4")
    assert not continues(four, other) and not continues("not a record\x00", four)
    game.play()
    over = game.view().record
    assert continues(over, over) and parse_record(over).headers["Result"] == "White wins"
    assert not continues(over, SampleGame(Spectators(), "t").view().record)


# --- the referee's own pipeline --------------------------------------------------------------


@pytest.mark.slow
def test_the_demo_game_reaches_the_tournament_through_a_broker_restart(broker: Mosquitto,
                                                                        tmp_path: Path):
    """The bundled footage refereed as `referee demo --mqtt` does; the broker stopped after
    ply 10 and started again after ply 13."""
    from referee.app.replay import replay_footage
    from referee.resources import demo_footage

    url, out, hub = BrokerUrl.parse(broker.url()), tmp_path / "records", Spectators()

    def restart(event: Event, match: Match[Any, Any]) -> None:
        if event.kind is EventKind.ACCEPTED and event.ply == 10:
            broker.stop()
        if event.kind is EventKind.ACCEPTED and event.ply == 13:
            broker.start()

    started = time.perf_counter()
    with Tournament(url, out, client_id="tournament-test", reconnect_s=QUICK,
                    say=lambda line: None) as tournament, \
            Collector(broker.port, "club/#", "watcher") as watcher:
        assert tournament.receiver.subscribed.wait(10)
        with Broadcaster(hub, url, "table-1", reconnect_s=QUICK):
            result = replay_footage(demo_footage("rinne"), "rinne", out=tmp_path / "demo",
                                    spectators=hub, board_name="table-1", on_event=restart)
        expected = list(result.match.ply_texts())
        messages = watcher.wait_for(lambda ms: len(plies_of(ms)[0]) == len(expected))
        _wait(lambda: tournament.spectators.views()["table-1"].result == "White wins")
    moves, raw_duplicates = plies_of(messages)
    assert len(expected) == 31 and moves == expected
    kept = parse_record((out / "table-1" / "game-1.txt").read_text())
    assert [line.text for line in kept.plies] == expected
    print(f"\ndemo through a broker restart: {time.perf_counter() - started:.1f} s, "
          f"{raw_duplicates} raw duplicate plies at a plain subscriber, "
          f"{tournament.receiver.duplicates} dropped by the tournament")


def _wait(done: Any, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)

