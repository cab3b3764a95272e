#!/usr/bin/env bash
# Start a throwaway PostgreSQL server on a loopback port, run the given command with
# APPLIANCE_TEST_POSTGRES pointing at it, then stop the server. Installs Debian's postgresql
# when it is missing.
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq postgresql >/dev/null
fi
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
# In memory when the host has a tmpfs at /dev/shm (CI's stages also put TMPDIR there): on this VM's
# disk a CREATE DATABASE from a template took 0.25-0.45 s once the run's writes had piled up, and
# 15-25 ms in memory; every test of the PostgreSQL run makes two. The server is made for tests, not
# for keeping data: no fsync, no full-page writes, commits not waited for, WAL kept small.
PARENT=${TMPDIR:-/tmp}
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then PARENT=/dev/shm; fi
PGROOT=$(mktemp -d "$PARENT/appliance-pg.XXXXXX")
# Below the kernel's ephemeral range (32768-60999 here): a port in it can be taken at any moment by
# the local end of some client connection, and the server then cannot bind it. CI's two-node stage
# once failed to start its server on 55442 while the binary and newcomer stages ran beside it (the
# log was removed with the folder; it is printed now): such a collision is the likely cause.
PORT=${APPLIANCE_PG_PORT:-25432}
chown postgres "$PGROOT"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
as_pg "$PGBIN/initdb" -D "$PGROOT/data" -A trust -U appliance >/dev/null
# The server's CPU (its own and its finished backends'), printed when it stops: CI's stage times
# count only the test processes.
server_cpu() {
  local pid ticks
  pid=$(head -n 1 "$PGROOT/data/postmaster.pid" 2>/dev/null) || return 0
  ticks=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null) || return 0
  echo "PostgreSQL server (port $PORT) CPU: $((ticks / $(getconf CLK_TCK))) s"
}
cleanup() { server_cpu; as_pg "$PGBIN/pg_ctl" -D "$PGROOT/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$PGROOT"; }
trap cleanup EXIT
if ! as_pg "$PGBIN/pg_ctl" -D "$PGROOT/data" -l "$PGROOT/log" -w \
  -o "-p $PORT -k $PGROOT -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_wal_size=512MB -c min_wal_size=64MB" start >/dev/null; then
  echo "PostgreSQL did not start on port $PORT; its log:" >&2
  cat "$PGROOT/log" >&2 || true
  exit 1
fi
"$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U appliance appliance_test
export APPLIANCE_TEST_POSTGRES="postgresql://appliance@127.0.0.1:$PORT/appliance_test"
"$@"
