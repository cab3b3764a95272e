#!/usr/bin/env bash
# The demo as a newcomer meets it: `demo-check.sh first|again DIR COMMAND…` starts COMMAND (`make
# run` in a fresh clone, or the executable's `demo` in an empty directory) in DIR with no
# --data-dir, so on ./data, and holds it to what the README promises:
#   first: both "listening" lines appear; the dispatch /healthz and the engine /health/live and
#          /health/ready answer 200; the printed tracking URL, /console/ and /app/ answer 200; the
#          printed "Try it" commands, run as printed from DIR, succeed;
#   again: (roads, tiles and chain cached) both "listening" lines within 30 s, /healthz 200;
# then SIGINT stops it with exit status 0 within 10 s. It prints how long the start took.
# The ports are the defaults (8080, 8081) unless APPLIANCE_DISPATCH_PORT / APPLIANCE_ENGINE_PORT
# are set, as for any appliance command.
set -euo pipefail
set -m # the demo in its own process group, with the signals a terminal would give it
mode=$1 dir=$2
shift 2
DP=${APPLIANCE_DISPATCH_PORT:-8080}
EP=${APPLIANCE_ENGINE_PORT:-8081}
LOG=$(mktemp /tmp/appliance-demo.XXXXXX)
PID=""
finish() {
  local status=$?
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -TERM -- "-$PID" 2>/dev/null || true; fi
  if [ "$status" != 0 ]; then
    echo "--- the demo's output"
    cat "$LOG"
  fi
  rm -f "$LOG" "$LOG.try"
}
trap finish EXIT
fail() {
  echo "FAILED ($mode start): $*"
  exit 1
}
# URL answers 200 (else the answer is shown: /healthz names the failing checks; without Debian's
# tilemaker, which CI's system packages stage installs, the map tiles are not built).
expect_200() {
  local body code
  body=$(curl -s --max-time 30 -w '\n%{http_code}' "$1" || true)
  code=${body##*$'\n'}
  [ "$code" = 200 ] || fail "$1 answered $code, not 200: $(head -c 2000 <<<"${body%$'\n'*}")"
  echo "  $1: 200"
}

started=$SECONDS
(cd "$dir" && exec "$@") >"$LOG" 2>&1 &
PID=$!
limit=$([ "$mode" = again ] && echo 30 || echo 1800)
until [ "$(grep -c ' listening on ' "$LOG" || true)" -ge 2 ]; do
  kill -0 "$PID" 2>/dev/null || fail "$* ended before both services listened"
  [ $((SECONDS - started)) -le "$limit" ] || fail "not listening within $limit s"
  sleep 0.5
done
took=$((SECONDS - started))
echo "$mode start ($*): both services listening after $took s"
grep ' listening on ' "$LOG" | sed 's/^/  /'

expect_200 "http://127.0.0.1:$DP/healthz"
expect_200 "http://127.0.0.1:$EP/health/live"
expect_200 "http://127.0.0.1:$EP/health/ready"
if [ "$mode" = first ]; then
  tracking=$(sed -n 's/^Tracking page of an order on its way: \([^ ]*\).*/\1/p' "$LOG")
  [ -n "$tracking" ] || fail "no tracking URL printed"
  expect_200 "$tracking"
  expect_200 "$(sed -n 's/^Dispatcher console: \([^ ]*\).*/\1/p' "$LOG")"
  expect_200 "$(sed -n 's/^Courier app: \([^ ]*\).*/\1/p' "$LOG")"
  # The "Try it" block as printed: its indented lines, run in order from DIR.
  {
    echo "set -euo pipefail"
    sed -n '/^Try it:$/,/ listening on /p' "$LOG" | sed -n 's/^  //p'
  } >"$LOG.try"
  [ "$(wc -l <"$LOG.try")" -eq 4 ] || fail "the Try it block is not three commands: $(cat "$LOG.try")"
  out=$(cd "$dir" && bash "$LOG.try" 2>&1) || fail "a Try it command failed: $out"
  grep -q '"orders"' <<<"$out" || fail "the orders listing of Try it answered: $out"
  grep -q 'pyo_demo00000001' <<<"$out" || fail "the signed payouts listing of Try it answered: $out"
  echo "  the three Try it commands ran as printed and answered (orders, payouts)"
fi

# Ctrl-C: SIGINT to the appliance itself (under make, make's child: make ends with its status).
target=$PID
while [ "$(ps -o comm= -p "$target")" = make ]; do
  target=$(ps -o pid= --ppid "$target" | head -n1 | tr -d ' ')
  [ -n "$target" ] || fail "make has no child to stop"
done
stop_started=$SECONDS
kill -INT "$target"
while kill -0 "$PID" 2>/dev/null && [ $((SECONDS - stop_started)) -le 10 ]; do sleep 0.2; done
kill -0 "$PID" 2>/dev/null && fail "still running 10 s after SIGINT"
status=0
wait "$PID" || status=$?
PID=""
[ "$status" = 0 ] || fail "exit status $status after SIGINT, not 0"
echo "  SIGINT: stopped with exit status 0 in $((SECONDS - stop_started)) s"
echo "$mode start: $took s"
