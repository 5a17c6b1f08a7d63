#!/usr/bin/env bash
# The referee's run-time tests under the versions a Raspberry Pi gets from Raspberry Pi OS
# Bookworm and hardware/setup-pi.sh: Python 3.11, numpy 1.26 (apt's picamera2 needs numpy 1),
# so opencv-python-headless 4.11 (4.12 and later need numpy 2), the newest onnxruntime the
# project allows that installs beside them, gpiozero 2.0. The project goes in without its
# dependencies, so that nothing pulls in numpy 2 or OpenCV 5; the lab (PyTorch, the renderer's
# OpenCV 5.0) is not installed and its tests are not run here.
#   bash .ci/bookworm.sh            (about 4 minutes on 2 cores; the venv is made afresh)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${BOOKWORM_VENV:-${TMPDIR:-/tmp}/referee-bookworm-venv}
PYTHON=$(command -v python3.11 || command -v python3)
"$PYTHON" - <<'PY'
import sys
if sys.version_info[:2] != (3, 11):
    sys.exit(f"bookworm.sh: Bookworm's Python is 3.11, this is {sys.version.split()[0]}")
PY
"$PYTHON" -m venv --clear "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# setup-pi.sh's constraints where the system numpy is 1.x (Bookworm's), and the run-time
# dependencies of pyproject.toml, with gpiozero from its `pi` extra.
"$VENV/bin/python" -m pip install -q "numpy>=1.26,<2" "opencv-python-headless>=4.8,<4.12" \
    "onnxruntime>=1.22" "gpiozero>=2.0,<2.1" "PyYAML>=6" "imageio-ffmpeg>=0.4.9" \
    "pytest>=8" "hypothesis>=6.100" \
    "aiohttp>=3.8,<3.9" "paho-mqtt>=2.0" "selenium>=4.10"
"$VENV/bin/python" -m pip install -q --no-deps -e .
"$VENV/bin/python" - <<'PY'
import sys
from importlib.metadata import version

import cv2, numpy, onnxruntime
print(f"bookworm: Python {sys.version.split()[0]}, numpy {numpy.__version__}, OpenCV {cv2.__version__}, "
      f"onnxruntime {onnxruntime.__version__}, gpiozero {version('gpiozero')}")
assert numpy.__version__.startswith("1.26") and cv2.__version__.startswith("4.11"), "not Bookworm's"
PY

# The run-time tests, by path: the rules, the hardware adapters, tracking, and the
# application's live, replay, demo, calibration, live view and broadcast tests (aiohttp 3.8:
# Bookworm's python3-aiohttp, which a venv with --system-site-packages keeps).
TESTS=(tests/rules tests/hardware tests/tracking tests/faults
       tests/test_live.py tests/test_live_camera.py tests/test_live_resume.py
       tests/test_replay_cli.py tests/test_replay_faults.py tests/test_footage.py
       tests/test_demo.py tests/test_announce.py tests/test_cli_rules.py tests/test_pipeline.py
       tests/test_calibrated.py tests/test_calibrate_board.py
       tests/test_web.py tests/test_mqtt.py)
SKIP=(
    # the lab's renderer (`referee-lab render`): its frames are drawn with OpenCV 5.0's text
    # engine (pyproject.toml), which the lab pins and a Pi never runs
    --deselect tests/test_calibrated.py::test_render_draws_through_the_camera_file
    --deselect tests/test_calibrated.py::test_with_the_camera_file_the_board_and_squares_land_where_the_truth_says
    --deselect tests/test_calibrated.py::test_render_refuses_a_lens_it_cannot_draw
    # the whole Renaissance demo game (466 s of footage): the main suite replays it
    --deselect tests/test_demo.py::test_the_renaissance_demo_reads_the_constructed_game_through_every_phase
)
# Of the footage, the Zensū and Renaissance faults of the camera and the table (light, bump,
# dropped frames, a knock, a capture half removed) replay under the lab's versions only: the
# same faults of Rinne, the whole games and the games' other faults stand for them here, and
# CI's time is better kept.
for clip in zensu-halftaken zensu-knocked zensu-light zensu-bump zensu-drop \
            renaissance-light renaissance-bump renaissance-drop; do
    SKIP+=(--deselect "tests/test_footage.py::test_footage_replays_to_its_expected_record[$clip]")
done
"$VENV/bin/python" -m pytest -p no:cacheprovider "${TESTS[@]}" "${SKIP[@]}"
