#!/usr/bin/env bash
# The package a player installs: `pip install .` (not editable, no extras) into a fresh
# virtual environment, then, from an empty directory, the demo (the bundled footage, models and
# settings are package data) and a record check. Fails when a file the referee needs at run time
# is left out of the wheel or found through the source tree.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q --upgrade pip
# a copy of the tracked files, so that the build leaves nothing in the source tree
mkdir "$work/src"
git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$work/src")
"$work/venv/bin/python" -m pip install -q "$work/src"
mkdir "$work/empty"
cd "$work/empty"
"$work/venv/bin/referee" check "$root/tests/data/records/rinne-sample.txt" | tail -1
"$work/venv/bin/referee" demo > demo.txt
grep -q "^31 plies read; White wins$" demo.txt || { tail -5 demo.txt; echo "wheel smoke: the demo did not read the sample game"; exit 1; }
test -s referee-demo/game.txt && test -s referee-demo/report.html
footage="$root/tests/data/footage/rinne-bump.mp4"
"$work/venv/bin/referee" replay "$footage" --game rinne --out game.txt > replay.txt
"$work/venv/bin/python" - "$footage" <<'PY'
import json, pathlib, sys
expected = json.loads(pathlib.Path(sys.argv[1]).with_suffix(".expected.json").read_text())["plies"]
recorded = [line for line in pathlib.Path("game.txt").read_text().splitlines() if line[:1].isdigit()]
sys.exit(0 if recorded == expected else f"wheel smoke: replay recorded {recorded}, not {expected}")
PY
echo "wheel smoke: from an empty directory the installed referee read the demo's 31 plies and replayed rinne-bump.mp4 to its record"
