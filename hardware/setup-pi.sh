#!/usr/bin/env bash
# Set up the referee on Raspberry Pi OS (64-bit, Bookworm or later), on a Pi 4 or Pi 5:
#   1. apt: picamera2 and libcamera's Python bindings (pip cannot provide them), gpiozero, lgpio
#   2. a virtual environment in .venv made with --system-site-packages, so that it sees them
#   3. the project with its `pi` extra, with a numpy that apt's picamera2 can live with
#   4. with --service: the systemd unit (hardware/referee.service), started now and at boot
# Run it from the repository, as the user who will run the referee (it uses sudo for apt):
#   bash hardware/setup-pi.sh [--service]
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVICE=0
for arg in "$@"; do
    case "$arg" in
        --service) SERVICE=1 ;;
        -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "setup-pi.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
    esac
done
if [[ $EUID -eq 0 ]]; then
    echo "setup-pi.sh: run it as the user who will run the referee, not as root" >&2
    exit 2
fi
if ! grep -qi "raspberry pi" /proc/device-tree/model 2>/dev/null; then
    echo "setup-pi.sh: warning: this does not look like a Raspberry Pi; going on anyway" >&2
fi

echo "== 1. system packages"
sudo apt-get update
sudo apt-get install -y python3-venv python3-pip python3-picamera2 python3-libcamera \
    python3-gpiozero python3-lgpio
# rpicam-hello --list-cameras is the first check when the camera is not found
sudo apt-get install -y rpicam-apps-lite || echo "(rpicam-apps-lite not found: skipped)"
# the camera needs the video group, the GPIO chips the gpio group
sudo usermod -a -G gpio,video "$USER"

echo "== 2. virtual environment $ROOT/.venv (sees the system's picamera2 and gpiozero)"
python3 -m venv --system-site-packages "$ROOT/.venv"
"$ROOT/.venv/bin/python" -m pip install --quiet --upgrade pip

echo "== 3. the referee with its pi extra"
CONSTRAINTS=$(mktemp)
trap 'rm -f "$CONSTRAINTS"' EXIT
SYSTEM_NUMPY=$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')
if [[ ${SYSTEM_NUMPY%%.*} -lt 2 ]]; then
    # apt's picamera2 imports simplejpeg, built against numpy 1: a numpy 2 in the venv breaks
    # `import picamera2` ("numpy.dtype size changed", picamera2 #1088, #1211), and OpenCV
    # 4.12+ wheels need numpy 2. Keep both on the numpy 1 side.
    printf 'numpy<2\nopencv-python-headless<4.12\n' > "$CONSTRAINTS"
fi
cd "$ROOT"
"$ROOT/.venv/bin/python" -m pip install --constraint "$CONSTRAINTS" -e ".[pi]"

echo "== checking the imports"
# onnxruntime 1.21 stops a Pi 4 with "Illegal instruction" on import: better here than in a game
"$ROOT/.venv/bin/python" - <<'PY'
import sys
from importlib.metadata import version  # gpiozero has no __version__

import cv2, gpiozero, numpy, onnxruntime, picamera2  # picamera2 fails here if numpy clashes

print(f"numpy {numpy.__version__}, OpenCV {cv2.__version__}, onnxruntime {onnxruntime.__version__}, "
      f"gpiozero {version('gpiozero')}: picamera2 from {picamera2.__file__}")
# A camera lost mid-capture can only be closed once its queued capture is cancelled
# (referee/hardware/picamera.py): that needs picamera2 0.3.20 or later.
if not hasattr(picamera2.Picamera2, "cancel_all_and_flush"):
    sys.exit("setup-pi.sh: this python3-picamera2 is older than 0.3.20 (no cancel_all_and_flush): "
             "run `sudo apt full-upgrade`, then this script again")
PY

if [[ $SERVICE -eq 1 ]]; then
    echo "== 4. the referee service"
    sed -e "s|@ROOT@|$ROOT|g" -e "s|@USER@|$USER|g" "$ROOT/hardware/referee.service" \
        | sudo tee /etc/systemd/system/referee.service > /dev/null
    sudo systemctl daemon-reload
    sudo systemctl enable --now referee.service
    echo "started; follow it with: journalctl -u referee -f"
fi

cat <<NEXT

Done. Log out and in once (for the gpio and video groups), then check the hardware:
  $ROOT/.venv/bin/referee camera --camera pi --frames 60 --snapshot snapshot.png
  GPIOZERO_PIN_FACTORY=lgpio $ROOT/.venv/bin/referee signals --gpio
Open snapshot.png: the board's colours must look right (red is red) before a game.
NEXT
