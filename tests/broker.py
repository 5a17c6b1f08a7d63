"""A real Mosquitto broker for the broadcast's tests, on a free localhost port with its own
config and persistence folder, which can be stopped and started again on the same port (its
retained messages and persistent sessions kept, as a club's broker restarted keeps them); and
a plain paho subscriber that collects what arrives."""

from __future__ import annotations

import getpass
import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

MOSQUITTO = "/usr/sbin/mosquitto"


def mosquitto_binary() -> str:
    """Debian's Mosquitto, or one on PATH; a clear failure (never a skip) where there is none."""
    found = MOSQUITTO if Path(MOSQUITTO).exists() else shutil.which("mosquitto")
    if found is None:
        pytest.fail("the MQTT tests need the Mosquitto broker: apt install mosquitto (the Debian "
                    "package; CI installs it)", pytrace=False)
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Mosquitto:
    """A broker in `folder` on `port`: `start()`, `stop()`, `restart()`."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder, self.port = folder, port or free_port()
        self.config = folder / "mosquitto.conf"
        self.log = folder / "mosquitto.log"
        self.process: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)
        # `user`: run as root (CI's containers), Mosquitto would become `mosquitto`, who may
        # not write the persistence folder.
        self.config.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
            f"persistence true\npersistence_location {folder}/\n"
            f"user {getpass.getuser()}\nlog_dest stderr\nlog_type all\n")

    def url(self, prefix: str = "club") -> str:
        return f"mqtt://127.0.0.1:{self.port}/{prefix}"

    def start(self, timeout_s: float = 10.0) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen([mosquitto_binary(), "-c", str(self.config)],
                                            stdout=log, stderr=log)
        deadline = time.monotonic() + timeout_s
        while not self._accepts():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"mosquitto did not start on port {self.port}:\n"
                            f"{self.log.read_text(errors='replace')[-2000:]}", pytrace=False)
            time.sleep(0.05)

    def _accepts(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
        except OSError:
            return False
        return True

    def stop(self) -> None:
        """SIGTERM: Mosquitto saves its database (retained messages, sessions) and exits."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


class Collector:
    """A plain subscriber to `topic` (wildcards allowed) keeping every message as it arrives,
    duplicates included: `(topic, payload as JSON)`. A fixed client id and a persistent session,
    so that what is published while it is cut off reaches it afterwards."""

    def __init__(self, port: int, topic: str, client_id: str) -> None:
        self.messages: list[tuple[str, dict[str, Any]]] = []
        self._arrived = threading.Condition()
        self._subscribed = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                                  clean_session=False)
        self.client.reconnect_delay_set(1, 2)
        self.client.on_connect = lambda client, *_: client.subscribe(topic, qos=1)
        self.client.on_subscribe = lambda *_: self._subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect_async("127.0.0.1", port)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        with self._arrived:
            self.messages.append((message.topic, json.loads(message.payload)))
            self._arrived.notify_all()

    def __enter__(self) -> Collector:
        self.client.loop_start()
        assert self._subscribed.wait(10), "the collector could not subscribe"
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def wait_for(self, done: Callable[[list[tuple[str, dict[str, Any]]]], bool],
                 timeout_s: float = 30.0) -> list[tuple[str, dict[str, Any]]]:
        """The messages once `done(messages)` holds; fails the test after `timeout_s`."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: done(self.messages), timeout_s):
                pytest.fail(f"after {timeout_s} s only these arrived: {self.messages}")
            return list(self.messages)


def once_in_order(payloads: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """`payloads` less those seen before by `(run, seq)`, and how many were dropped."""
    seen: set[tuple[str, int]] = set()
    kept = []
    for payload in payloads:
        key = (payload["run"], payload["seq"])
        if key not in seen:
            seen.add(key)
            kept.append(payload)
    return kept, len(payloads) - len(kept)
