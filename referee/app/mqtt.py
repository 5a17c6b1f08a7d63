"""The tournament broadcast: each board's updates in a `Spectators` hub published to an MQTT
broker (`Broadcaster`), and every board under a prefix read back into a hub (`Receiver`).

Topics, under `PREFIX/BOARD/`, all QoS 1, JSON:

| topic | payload |
| --- | --- |
| `position` (retained) | the `BoardView`'s fields, and `run`, `seq` |
| `event` | the `Happening`'s fields, and `run`, `seq` |
| `ply` | each accepted ply: `board`, `ply` (its number), `move`, `time_s`, `run`, `seq` |
| `online` (retained) | `{"online": true, "run": …}`; false when the referee stops or is lost (its will) |

`run` names one referee process, `seq` counts its messages from 1: QoS 1 may deliver a message
twice (a resend after a lost connection), and receivers drop what they have seen by the two.

The referee's thread never waits on the network: the hub's callback only queues; a sender
thread hands the messages to paho, whose own thread does the I/O, reconnects and re-sends what
the broker had not acknowledged. After a lost connection the sender holds new messages back
until paho's re-sends are acknowledged, so that they arrive in order."""

from __future__ import annotations

import dataclasses
import json
import queue
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from referee.app.events import EventKind
from referee.app.spectate import BoardView, Happening, Spectators, Update
from referee.errors import RefereeError

DEFAULT_PORT = 1883
QOS = 1
KEEPALIVE_S = 15  # a dropped Wi-Fi is noticed within about 1.5 times this
RECONNECT_S = (1, 16)  # paho's back-off between tries, doubling from the first to the second


class BroadcastError(RefereeError, ValueError):
    """A broker URL or a board name that the broadcast cannot use."""


@dataclass(frozen=True)
class BrokerUrl:
    """`mqtt://HOST[:PORT]/PREFIX`: the broker and the topic levels every board goes under."""

    host: str
    port: int
    prefix: str

    @classmethod
    def parse(cls, text: str) -> BrokerUrl:
        usage = "mqtt://HOST[:PORT]/PREFIX, e.g. mqtt://192.168.1.10/club"
        parts = urllib.parse.urlsplit(text)
        if parts.scheme != "mqtt":
            raise BroadcastError(f"{text}: not an MQTT broker's URL ({usage})")
        try:
            port = parts.port
        except ValueError:
            raise BroadcastError(f"{text}: the port must be a number from 1 to 65535") from None
        if port == 0:
            raise BroadcastError(f"{text}: the port must be a number from 1 to 65535")
        if not parts.hostname:
            raise BroadcastError(f"{text}: no broker host ({usage})")
        if parts.username is not None or parts.query or parts.fragment:
            raise BroadcastError(f"{text}: only a host, a port and a prefix may be given ({usage})")
        prefix = parts.path.strip("/")
        if not prefix:
            raise BroadcastError(f"{text}: no prefix, the tournament's topic ({usage})")
        for level in prefix.split("/"):
            _check_level(level, f"{text}: the prefix {prefix!r}")
        return cls(parts.hostname, port or DEFAULT_PORT, prefix)

    def topic(self, board: str) -> str:
        """The board's topic, under which its updates go; a board name that is no valid topic
        level is refused."""
        _check_level(board, f"the board name {board!r}")
        return f"{self.prefix}/{board}"

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def _check_level(level: str, what: str) -> None:
    if not level or any(c in level for c in "/+#\0") or level.startswith("$"):
        raise BroadcastError(f"{what} cannot be an MQTT topic level: it must not be empty, hold "
                             "'/', '+' or '#', or start with '$' (e.g. table-3)")


@dataclass(frozen=True)
class Ply:
    """An accepted ply as the `ply` topic carries it."""

    board: str
    ply: int  # its number in the game, 1 for the first
    move: str  # in the designer's notation
    time_s: float


@dataclass(frozen=True)
class Presence:
    """Whether a board's referee is connected (its `online` topic)."""

    board: str
    online: bool


@dataclass(frozen=True)
class Delivery:
    """One message read back, seen for the first time: from referee process `run`, its `seq`th
    (0 for a `Presence`, which has none)."""

    run: str
    seq: int
    update: BoardView | Happening | Ply | Presence


# --- sending ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Message:
    topic: str
    payload: bytes
    retain: bool = False


def _payload(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class _Link:
    """The connection as the sender sees it: up or down, how many times it was lost, and how
    many of the messages handed to paho the broker has acknowledged."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.connected = False
        self.lost = 0  # connections lost so far
        self._lost_at_last_send = 0
        self.handed = 0  # messages given to paho
        self.acked = 0
        self._deadline: float | None = None  # set when closing: stop waiting then

    def update(self, *, connected: bool | None = None, acked: int = 0) -> None:
        with self._changed:
            if connected is not None:
                if self.connected and not connected:
                    self.lost += 1
                self.connected = connected
            self.acked += acked
            self._changed.notify_all()

    def close_by(self, deadline: float) -> None:
        with self._changed:
            self._deadline = deadline
            self._changed.notify_all()

    def claim_send(self) -> bool:
        """Wait until a message may go: connected and, after a lost connection, paho's re-sends
        of the earlier ones acknowledged (so the new one cannot overtake them). False: the
        closing deadline passed first."""
        with self._changed:
            while not (self.connected and (self.lost == self._lost_at_last_send
                                           or self.acked == self.handed)):
                if not self._wait():
                    return False
            self._lost_at_last_send = self.lost
            self.handed += 1
            return True

    def count_handed(self) -> None:
        with self._changed:
            self.handed += 1

    def settle(self) -> bool:
        """Wait until the broker acknowledged everything handed to paho, or the deadline."""
        with self._changed:
            while self.acked < self.handed:
                if not self._wait():
                    return False
            return True

    def _wait(self) -> bool:
        if self._deadline is None:
            self._changed.wait()
            return True
        left = self._deadline - time.monotonic()
        if left <= 0:
            return False
        self._changed.wait(left)
        return True


def _client(client_id: str, *, clean_session: bool, reconnect_s: tuple[int, int]) -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                         clean_session=clean_session, protocol=mqtt.MQTTv311)
    client.reconnect_delay_set(*reconnect_s)
    client.max_queued_messages_set(0)  # unbounded: a game is a few hundred messages
    return client


class Broadcaster:
    """Board `board`'s updates in `spectators` published under `broker`'s prefix, from
    entering until leaving. A broker that cannot be reached is said in one line and tried
    again; the referee never waits for it. Leaving waits up to `flush_s` for what is still
    unsent or unacknowledged."""

    def __init__(self, spectators: Spectators, broker: BrokerUrl, board: str, *,
                 flush_s: float = 5.0, reconnect_s: tuple[int, int] = RECONNECT_S,
                 say: Callable[[str], None] = print) -> None:
        self.spectators, self.broker, self.board = spectators, broker, board
        self.topic = broker.topic(board)
        self._where = broker.address
        self.run = secrets.token_hex(4)
        self.flush_s, self._say = flush_s, say
        self._queue: queue.SimpleQueue[Update | None] = queue.SimpleQueue()
        self._link = _Link()
        self._seq = 0
        self._unsent = 0
        self._outage_said = False
        self._client = _client(f"referee-{board}-{self.run}", clean_session=True,
                               reconnect_s=reconnect_s)
        self._client.will_set(f"{self.topic}/online", self._online(False), qos=QOS, retain=True)
        self._client.on_connect = self._on_connect
        self._client.on_connect_fail = self._on_connect_fail
        self._client.on_disconnect = self._on_disconnect
        self._client.on_publish = self._on_publish
        self._sender = threading.Thread(target=self._send_all, name=f"broadcast-{board}",
                                        daemon=True)
        self._unsubscribe: Callable[[], None] | None = None

    def __enter__(self) -> Broadcaster:
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=KEEPALIVE_S)
        self._client.loop_start()
        self._sender.start()
        if (view := self.spectators.views().get(self.board)) is not None:
            self._queue.put(view)
        self._unsubscribe = self.spectators.subscribe(self._take)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop taking updates, send what is left (up to `flush_s`), say offline, disconnect."""
        if self._unsubscribe is None:
            return
        self._unsubscribe()
        self._unsubscribe = None
        self._link.close_by(time.monotonic() + self.flush_s)
        self._queue.put(None)
        self._sender.join()
        delivered = self._link.settle()
        lost = self._unsent + self._link.handed - self._link.acked
        if delivered and self._link.connected:
            self._link.count_handed()
            self._client.publish(f"{self.topic}/online", self._online(False), qos=QOS, retain=True)
            self._link.settle()
        if lost:
            self._say(f"broadcast: {lost} messages never reached the broker at {self._where} "
                      "(the game's own files have everything)")
        self._client.disconnect()
        self._client.loop_stop()

    def _take(self, update: Update) -> None:
        """The hub's callback, in the referee's thread: only queue."""
        if update.board == self.board:
            self._queue.put(update)

    def _send_all(self) -> None:
        while (update := self._queue.get()) is not None:
            for message in self._messages(update):
                if self._link.claim_send():
                    self._client.publish(message.topic, message.payload, qos=QOS,
                                         retain=message.retain)
                else:
                    self._unsent += 1

    def _messages(self, update: Update) -> Iterator[_Message]:
        if isinstance(update, BoardView):
            yield _Message(f"{self.topic}/position", self._stamped(update.to_json()), True)
            return
        yield _Message(f"{self.topic}/event", self._stamped(update.to_json()))
        if update.kind == EventKind.ACCEPTED.name and update.move and update.ply >= 1:
            ply = Ply(update.board, update.ply, update.move, update.time_s)
            yield _Message(f"{self.topic}/ply", self._stamped(dataclasses.asdict(ply)))

    def _stamped(self, data: dict[str, Any]) -> bytes:
        self._seq += 1
        return _payload({**data, "run": self.run, "seq": self._seq})

    def _online(self, online: bool) -> bytes:
        return _payload({"online": online, "run": self.run})

    # paho's callbacks, in its network thread

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: mqtt.ConnectFlags,
                    reason: ReasonCode, properties: Any) -> None:
        if reason.is_failure:
            self._outage(f"the broker at {self._where} refused the referee ({reason})")
            return
        self._link.count_handed()
        client.publish(f"{self.topic}/online", self._online(True), qos=QOS, retain=True)
        self._link.update(connected=True)
        if self._outage_said:
            self._outage_said = False
            self._say(f"broadcast: connected to the broker at {self._where} again; sending "
                      "what waited")

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        self._outage(f"cannot reach the broker at {self._where}")

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: mqtt.DisconnectFlags,
                       reason: ReasonCode, properties: Any) -> None:
        self._link.update(connected=False)
        if self._unsubscribe is not None:  # not our own disconnect at the end
            self._outage(f"lost the broker at {self._where}")

    def _on_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: ReasonCode,
                    properties: Any) -> None:
        self._link.update(acked=1)

    def _outage(self, what: str) -> None:
        """One line an outage, however many tries it takes."""
        if not self._outage_said:
            self._outage_said = True
            self._say(f"broadcast: {what}; the referee goes on, keeps every update and tries "
                      "again")


# --- receiving -------------------------------------------------------------------------------


class Receiver:
    """Every board under `broker`'s prefix: each message seen for the first time is decoded and
    handed to `deliver`, in paho's network thread (which acknowledges it to the broker once
    `deliver` returns). `client_id` names a persistent session: the broker keeps what is
    published while the receiver is away and hands it over when it is back."""

    def __init__(self, broker: BrokerUrl, deliver: Callable[[Delivery], None], client_id: str, *,
                 reconnect_s: tuple[int, int] = RECONNECT_S,
                 say: Callable[[str], None] = print) -> None:
        self.broker, self._deliver, self._say = broker, deliver, say
        self._where = broker.address
        self.duplicates = 0  # messages dropped as seen before (QoS 1 re-sends)
        self.subscribed = threading.Event()
        self._seen: dict[tuple[str, str, str], int] = {}  # (board, kind, run) -> the last seq
        self._outage_said = False
        self._closing = False
        self._client = _client(client_id, clean_session=False, reconnect_s=reconnect_s)
        self._client.on_connect = self._on_connect
        self._client.on_connect_fail = self._on_connect_fail
        self._client.on_disconnect = self._on_disconnect
        self._client.on_subscribe = self._on_subscribe
        self._client.on_message = self._on_message

    def __enter__(self) -> Receiver:
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=KEEPALIVE_S)
        self._client.loop_start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._closing = True
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: mqtt.ConnectFlags,
                    reason: ReasonCode, properties: Any) -> None:
        if reason.is_failure:
            self._outage(f"the broker at {self._where} refused the tournament ({reason})")
            return
        # Subscribing again is harmless where the session kept the subscription, and sends
        # the retained positions again (dropped as seen).
        client.subscribe(f"{self.broker.prefix}/+/+", qos=QOS)
        if self._outage_said:
            self._outage_said = False
            self._say(f"tournament: connected to the broker at {self._where} again")

    def _on_connect_fail(self, client: mqtt.Client, userdata: Any) -> None:
        self._outage(f"cannot reach the broker at {self._where}")

    def _on_disconnect(self, client: mqtt.Client, userdata: Any, flags: mqtt.DisconnectFlags,
                       reason: ReasonCode, properties: Any) -> None:
        if not self._closing:
            self._outage(f"lost the broker at {self._where}")

    def _on_subscribe(self, client: mqtt.Client, userdata: Any, mid: int,
                      reasons: list[ReasonCode], properties: Any) -> None:
        self.subscribed.set()

    def _outage(self, what: str) -> None:
        if not self._outage_said:
            self._outage_said = True
            self._say(f"tournament: {what}; trying again (it keeps the boards' messages meanwhile)")

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        try:
            delivery = self._decode(message.topic, message.payload)
        except (ValueError, KeyError, TypeError) as error:  # someone else's message: said, dropped
            self._say(f"tournament: {message.topic}: not a referee's message ({error})")
            return
        if delivery is None:
            return
        try:
            self._deliver(delivery)
        except Exception as error:  # raised into paho, it would end its thread: no more messages
            self._say(f"tournament: {message.topic}: {type(error).__name__}: {error}")

    def _decode(self, topic: str, payload: bytes | bytearray) -> Delivery | None:
        """The message as a `Delivery`; None for one seen before or an unknown topic."""
        board, _, kind = topic.removeprefix(self.broker.prefix + "/").partition("/")
        if kind not in _DECODERS or not payload:  # an empty payload clears a retained message
            return None
        data = json.loads(payload)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        run, seq = str(data.pop("run")), int(data.pop("seq", 0))
        if kind != "online":
            key = (board, kind, run)
            if seq <= self._seen.get(key, 0):
                self.duplicates += 1
                return None
            self._seen[key] = seq
        return Delivery(run, seq, _DECODERS[kind](board, data))


def _known(cls: type[Any], data: dict[str, Any]) -> dict[str, Any]:
    """`data`'s fields of dataclass `cls`: a newer referee may send more."""
    return {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}


_DECODERS: dict[str, Callable[[str, dict[str, Any]], BoardView | Happening | Ply | Presence]] = {
    "position": lambda board, data: BoardView.from_json({**_known(BoardView, data), "board": board}),
    "event": lambda board, data: Happening.from_json({**_known(Happening, data), "board": board}),
    "ply": lambda board, data: Ply(**{**_known(Ply, data), "board": board}),
    "online": lambda board, data: Presence(board, bool(data["online"])),
}
