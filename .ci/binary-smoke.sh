#!/usr/bin/env bash
# Run the single executable: its size and --version time, init, serve on free ports, both health
# endpoints answer, a payout completes on the embedded chain, and a route plan is suggested; then
# as a newcomer runs it: `appliance demo` in an empty directory, with no --data-dir
# (.ci/demo-check.sh: what it prints answers, its Try it commands work, Ctrl-C exits 0), twice.
set -euo pipefail
BIN=$(realpath "$1")
CI=$(cd "$(dirname "$0")" && pwd)
DATA=$(mktemp -d)
EMPTY=$(mktemp -d)
# The unpacked build goes where a user's would, on disk (/var/tmp), even when CI keeps TMPDIR in
# memory: the first start's figure includes creating its files there.
CACHE=$(mktemp -d /var/tmp/appliance-cache.XXXXXX)
PID=""
trap 'if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; fi; rm -rf "$DATA" "$EMPTY" "$CACHE"' EXIT
# The two figures the lean-binary targets are about (under 100 MB, --version under 1 s): the size,
# the first start of this build (unpacks the bundle into a fresh cache), then --version as every
# later start runs it (best of three).
export XDG_CACHE_HOME="$CACHE"
now_ms() { date +%s%3N; }
MB=$(awk -v bytes="$(stat -c %s "$BIN")" 'BEGIN { printf "%.1f", bytes / 1e6 }')
t0=$(now_ms); "$BIN" --version >/dev/null; FIRST=$(( $(now_ms) - t0 ))
BEST=""
for _ in 1 2 3; do
  t0=$(now_ms); "$BIN" --version >/dev/null; t=$(( $(now_ms) - t0 ))
  if [ -z "$BEST" ] || [ "$t" -lt "$BEST" ]; then BEST=$t; fi
done
"$BIN" --version
echo "binary: size ${MB} MB; first start (unpack) ${FIRST} ms; --version ${BEST} ms"
"$BIN" init --data-dir "$DATA" --json
"$BIN" custody init --data-dir "$DATA" --json
OPERATOR=$("$BIN" operator create op_smoke00001 --data-dir "$DATA" --json)
SECRET=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])' <<<"$OPERATOR")
# The engines' build steps work from inside the bundle (OSRM tools, tilemaker configuration).
"$BIN" routing build --pbf tests/data/monaco.osm.pbf --data-dir "$DATA" --json
if command -v tilemaker >/dev/null; then "$BIN" map build --pbf tests/data/monaco.osm.pbf --data-dir "$DATA" --json; fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
DP=$(free_port); EP=$(free_port)
"$BIN" serve --data-dir "$DATA" --dispatch-port "$DP" --engine-port "$EP" > "$DATA/serve.log" 2>&1 &
PID=$!
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$EP/health/live" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$EP/health/ready"; echo
code=$(curl -s -o "$DATA/healthz.json" -w '%{http_code}' "http://127.0.0.1:$DP/healthz")
cat "$DATA/healthz.json"; echo
case "$code" in 200|503) ;; *) echo "healthz answered $code"; cat "$DATA/serve.log"; exit 1;; esac
# A payout end to end on the embedded chain (the reference client from the project's venv signs).
PYTHON=${SMOKE_PYTHON:-.venv/bin/python}
"$PYTHON" .ci/smoke_payout.py "$BIN" "$DATA" "http://127.0.0.1:$EP" op_smoke00001 "$SECRET" \
  || { cat "$DATA/serve.log"; exit 1; }
# A route plan from the bundle's own solvers (PyVRP's seed, then OR-Tools).
"$PYTHON" .ci/smoke_plan.py "$BIN" "$DATA" "http://127.0.0.1:$DP" "$DATA/serve.log" \
  || { cat "$DATA/serve.log"; exit 1; }
# An .xlsx import through the executable's own reader child (`appliance _read-workbook`, issue 41),
# and the crafted workbook whose reading aborts that child refused in one line.
"$PYTHON" -c 'import sys; from tests.dispatch.import_helpers import HEADER, far_apart_xlsx, row, xlsx_bytes
open(sys.argv[1], "wb").write(xlsx_bytes([HEADER, list(row(1).values())]))
open(sys.argv[2], "wb").write(far_apart_xlsx(dimension=False))' "$DATA/good.xlsx" "$DATA/crafted.xlsx"
COMPANY=$("$BIN" company list --data-dir "$DATA" --json | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["companies"][0]["id"])')
"$BIN" orders import "$DATA/good.xlsx" --company "$COMPANY" --dry-run --data-dir "$DATA" --json \
  | "$PYTHON" -c 'import json,sys; assert json.load(sys.stdin)["created"] == 1'
if "$BIN" orders import "$DATA/crafted.xlsx" --company "$COMPANY" --data-dir "$DATA" > "$DATA/crafted.out" 2>&1; then
  echo "the crafted workbook was read"; exit 1
fi
grep -q "more memory to read" "$DATA/crafted.out" || { cat "$DATA/crafted.out"; exit 1; }
echo "binary: an .xlsx read by the executable's reader child; the crafted workbook refused"
kill -TERM $PID
wait $PID
PID=""
# The demo from an empty directory: ./data there, on free ports (the newcomer stage may hold 8080).
export APPLIANCE_DISPATCH_PORT APPLIANCE_ENGINE_PORT
APPLIANCE_DISPATCH_PORT=$(free_port)
APPLIANCE_ENGINE_PORT=$(free_port)
bash "$CI/demo-check.sh" first "$EMPTY" "$BIN" demo
bash "$CI/demo-check.sh" again "$EMPTY" "$BIN" demo
[ -f "$EMPTY/data/dispatch.db" ] || { echo "the demo did not use ./data of its directory"; exit 1; }
echo "binary smoke test passed"
