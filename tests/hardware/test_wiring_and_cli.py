"""The wiring diagram and parts list agree with the pin map; the bench-check verbs work."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import cv2
import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from referee.cli import main
from referee.hardware.check import play_cues
from referee.hardware.cues import Cue
from referee.hardware.pinmap import DEFAULT_PINS, PinMap, TurnRgb, header_pin, load_pin_map
from referee.hardware.signals import GpioSignals
from referee.hardware.wiring import wiring_svg
from tests import ROOT

HARDWARE = ROOT / "hardware"


def test_the_committed_diagram_is_drawn_from_the_default_pin_map():
    drawn = wiring_svg(load_pin_map(HARDWARE / "pins.toml"))
    assert (HARDWARE / "wiring.svg").read_text(encoding="utf-8") == drawn, \
        "regenerate: python -m referee.hardware.wiring > hardware/wiring.svg"


def test_the_diagram_names_every_pin_it_wires():
    for pins in (DEFAULT_PINS, PinMap(17, 27, 22, turn=TurnRgb(5, 6, 13))):
        root = ET.fromstring(wiring_svg(pins))
        texts = " ".join(node.text or "" for node in root.iter("{http://www.w3.org/2000/svg}text"))
        for gpio in pins.roles().values():
            assert f"GPIO{gpio} (pin {header_pin(gpio)})" in texts


def test_the_parts_list_wiring_table_matches_the_pin_map():
    rows = re.findall(r"^\| ([^|]+?) \| GPIO(\d+) \| (\d+) \|", (HARDWARE / "PARTS.md").read_text(),
                      re.MULTILINE)
    table = {role.strip(): (int(gpio), int(place)) for role, gpio, place in rows}
    expected = {"green LED": DEFAULT_PINS.green, "red LED": DEFAULT_PINS.red,
                "amber LED": DEFAULT_PINS.amber, "first player's LED": 23, "second player's LED": 24,
                "buzzer": 18, "button": 25}
    assert table == {role: (gpio, header_pin(gpio)) for role, gpio in expected.items()}


def test_the_service_unit_and_setup_script():
    unit = (HARDWARE / "referee.service").read_text()
    for line in ("Environment=GPIOZERO_PIN_FACTORY=lgpio", "Restart=on-failure", "StartLimitBurst=",
                 "StartLimitIntervalSec=", "WantedBy=multi-user.target"):
        assert line in unit
    assert re.search(r"^ExecStart=\S+/referee live --game rinne --camera pi .*--resume", unit, re.MULTILINE)
    script = (HARDWARE / "setup-pi.sh").read_text()
    for word in ("python3-picamera2", "python3-libcamera", "python3-gpiozero", "python3-lgpio",
                 "--system-site-packages", ".[pi]"):
        assert word in script
    assert subprocess.run(["bash", "-n", str(HARDWARE / "setup-pi.sh")], check=False).returncode == 0


def test_the_unit_stops_fast_failures_but_keeps_waiting_for_a_camera():
    """systemd refuses a start when StartLimitBurst starts fell within StartLimitIntervalSec.
    A failure within seconds (a bad pin map, a corrupt log) reaches that; a run that waited
    --camera-wait seconds for its camera must not, or a loose camera would stop the service."""
    unit = (HARDWARE / "referee.service").read_text()

    def setting(name: str) -> float:
        found = re.search(rf"^{name}=(\S+)", unit, re.MULTILINE)
        assert found, name
        return float(found.group(1))

    wait = re.search(r"--camera-wait (\d+)", unit)
    assert wait is not None
    shortest_cycle = float(wait.group(1)) + setting("RestartSec")
    assert shortest_cycle * setting("StartLimitBurst") > setting("StartLimitIntervalSec")
    fast_cycle = 10.0 + setting("RestartSec")  # exits within 10 s of starting
    assert fast_cycle * setting("StartLimitBurst") < setting("StartLimitIntervalSec")


def test_referee_camera_reports_footage_and_writes_a_snapshot(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]):
    for n in range(6):
        cv2.imwrite(str(tmp_path / f"{n}.png"), np.full((48, 64, 3), (10, 80, 200), np.uint8))
    snapshot = tmp_path / "snap.png"
    assert main(["camera", "--camera", str(tmp_path), "--frames", "4", "--snapshot", str(snapshot)]) == 0
    assert capsys.readouterr().out == \
        f"images in {tmp_path}: 4 frames of 64x48, 30.0 fps, brightness 97/255\n"
    assert tuple(cv2.imread(str(snapshot))[0, 0]) == (10, 80, 200)


def test_referee_camera_says_black(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    cv2.imwrite(str(tmp_path / "0.png"), np.zeros((48, 64, 3), np.uint8))
    assert main(["camera", "--camera", str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith("brightness 0/255 (black: lens cap on, or no light?)\n")


def test_referee_camera_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["camera", "--camera", str(tmp_path / "none.mp4")]) == 1
    assert capsys.readouterr().err == f"referee: {tmp_path / 'none.mp4'}: no such video file\n"


def test_referee_signals_without_gpio_prints_each_cue():
    # a fresh interpreter, so that no test's pin factory is around
    result = subprocess.run([sys.executable, "-m", "referee", "signals", "illegal", "roll-pending",
                             "new-game"], cwd=ROOT, capture_output=True, text=True, check=False,
                            env={"PATH": "/usr/bin:/bin", "GPIOZERO_PIN_FACTORY": "nonexistent"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[red] illegal move: put the pieces back",
                                          "[amber] roll pending: roll the die", "[new] new game"]
    result = subprocess.run([sys.executable, "-m", "referee", "signals", "--gpio"], cwd=ROOT,
                            capture_output=True, text=True, check=False,
                            env={"PATH": "/usr/bin:/bin", "GPIOZERO_PIN_FACTORY": "nonexistent"})
    assert result.returncode == 1 and result.stderr.startswith("referee: no GPIO here")
    assert main(["signals", "bogus"]) == 1


def test_play_cues_on_gpio_shows_each_and_clears_between():
    factory = MockFactory(pin_class=MockPWMPin)
    now = [0.0]
    said: list[str] = []
    red_at_each_sleep: list[bool] = []

    def sleep(seconds: float) -> None:  # the bench check waits; here the clock jumps instead
        red_at_each_sleep.append(bool(factory.pin(27).state))
        now[0] += seconds

    with GpioSignals(DEFAULT_PINS, pin_factory=factory) as signals:
        play_cues(signals, [Cue.ILLEGAL, Cue.ACCEPTED], seconds=2.0, clock=lambda: now[0],
                  sleep=sleep, say=said.append)
        assert not factory.pin(27).state  # cleared after the last cue
    assert said == ["illegal: illegal move: put the pieces back", "accepted: move accepted"]
    assert red_at_each_sleep == [True, False]


def test_a_broken_video_is_one_line_on_stderr_with_no_ffmpeg_chatter(tmp_path: Path):
    path = tmp_path / "game.mp4"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 25.0, (160, 120))
    rng = np.random.default_rng(1)
    for _ in range(20):
        writer.write(rng.integers(0, 256, (120, 160, 3), dtype=np.uint8))
    writer.release()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # the index is at the end: "moov atom not found"
    result = subprocess.run([sys.executable, "-m", "referee", "camera", "--camera", str(path)],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert result.stderr == f"referee: {path}: cannot open it as a video (not a video, truncated, " \
                            "or a codec OpenCV lacks)\n"


@pytest.mark.parametrize("cancels", [True, False])
def test_the_setup_scripts_import_check(tmp_path: Path, cancels: bool):
    """setup-pi.sh's last check, run here with a stand-in picamera2: it names every version
    (gpiozero has no __version__), and refuses a picamera2 without cancel_all_and_flush."""
    script = (HARDWARE / "setup-pi.sh").read_text()
    check = re.search(r'python" - <<\'PY\'\n(.*?)\nPY\n', script, re.DOTALL)
    assert check is not None
    stand_in = tmp_path / "picamera2"
    stand_in.mkdir()
    method = "    def cancel_all_and_flush(self) -> None: ...\n" if cancels else "    pass\n"
    (stand_in / "__init__.py").write_text(f"class Picamera2:\n{method}")
    result = subprocess.run([sys.executable, "-c", check.group(1)], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)}, check=False)
    if cancels:
        assert result.returncode == 0, result.stderr
        assert re.match(r"numpy \S+, OpenCV \S+, onnxruntime \S+, gpiozero \S+: picamera2 from ",
                        result.stdout)
    else:
        assert result.returncode == 1
        assert "older than 0.3.20 (no cancel_all_and_flush)" in result.stderr
