#!/usr/bin/env bash
# Debian packages the tests need: PostgreSQL for the database-layer run, Chromium for the page
# tests, tilemaker for the map tiles, node and npm for anvil (the chain tests' Ethereum node),
# wrk for the HTTP benchmarks, a C compiler, libzstd's static library and the zstd command for the
# executable's launcher and its payload (packaging/launcher.c, packaging/pack.py), redis-server for the two-node tests' shared rate limits. Installed only when
# missing.
set -euo pipefail
need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v tilemaker >/dev/null 2>&1 || need+=(tilemaker)
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
ls /usr/lib/*/libzstd.a /usr/include/zstd.h >/dev/null 2>&1 || need+=(libzstd-dev)
command -v zstd >/dev/null 2>&1 || need+=(zstd)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "system packages present: postgresql chromium tilemaker nodejs npm wrk gcc libzstd-dev zstd redis-server"
