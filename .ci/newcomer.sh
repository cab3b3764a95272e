#!/usr/bin/env bash
# CI's newcomer stage: the README's first command on a clean clone of HEAD with nothing prepared
# (its own .venv, from pip's cache; the default data directory ./data): `make run` until both
# services listen, everything it prints answers and its "Try it" commands work as printed, Ctrl-C
# stops it with exit status 0; then `make run` again (roads, tiles, chain cached) listens within
# 30 s (.ci/demo-check.sh). Prints the first and the second start's times.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/appliance-newcomer.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
git clone --quiet "$ROOT" "$WORK/appliance"
echo "clean clone of $(git -C "$WORK/appliance" rev-parse --short HEAD) in $WORK/appliance"
bash "$ROOT/.ci/demo-check.sh" first "$WORK/appliance" make run | tee "$WORK/first.log"
bash "$ROOT/.ci/demo-check.sh" again "$WORK/appliance" make run | tee "$WORK/again.log"
echo "newcomer: first start (install included) $(sed -n 's/^first start: //p' "$WORK/first.log"), second start $(sed -n 's/^again start: //p' "$WORK/again.log")"
