#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server: initdb in a temp dir,
# start on 127.0.0.1 at a free port as the `postgres` user (PostgreSQL refuses
# to run as root), export SLUICE_TEST_POSTGRES_URI, run "$@", stop and clean up.
# Fails (never skips) when the server cannot start.
set -euo pipefail
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/initdb" ] || { echo "with_postgres: no PostgreSQL server (run scripts/install-deps.sh)"; exit 1; }
id postgres >/dev/null 2>&1 || useradd --system --home /nonexistent --shell /usr/sbin/nologin postgres
D=$(mktemp -d /tmp/sluice-pg.XXXXXX)
chown postgres:postgres "$D"; chmod 700 "$D"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() { as_pg "$PGBIN/pg_ctl" -D "$D/data" -m immediate -w stop >/dev/null 2>&1 || true; rm -rf "$D"; }
trap cleanup EXIT
as_pg "$PGBIN/initdb" -D "$D/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-instructions >/dev/null
for attempt in 1 2 3 4 5; do
  PORT=$(( 20000 + RANDOM % 12000 ))
  if as_pg "$PGBIN/pg_ctl" -D "$D/data" -l "$D/log" -w -t 30 \
      -o "-c listen_addresses=127.0.0.1 -p $PORT -k $D -c fsync=off" start >/dev/null; then
    export SLUICE_TEST_POSTGRES_URI="postgresql://postgres@127.0.0.1:$PORT/postgres"
    "$@"
    exit $?
  fi
done
echo "with_postgres: server did not start:"; cat "$D/log"; exit 1
