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
PGROOT=$(mktemp -d /tmp/appliance-pg.XXXXXX)
PORT=${APPLIANCE_PG_PORT:-55432}
chown postgres "$PGROOT"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
as_pg "$PGBIN/initdb" -D "$PGROOT/data" -A trust -U appliance >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$PGROOT/data" -l "$PGROOT/log" -w \
  -o "-p $PORT -k $PGROOT -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
cleanup() { as_pg "$PGBIN/pg_ctl" -D "$PGROOT/data" -m fast stop >/dev/null 2>&1 || true; rm -rf "$PGROOT"; }
trap cleanup EXIT
"$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U appliance appliance_test
export APPLIANCE_TEST_POSTGRES="postgresql://appliance@127.0.0.1:$PORT/appliance_test"
"$@"
