#!/usr/bin/env bash
# 4 processes x 50 appends each to one table, through the catalog given by
# $SLUICE_TEST_POSTGRES_URI (run under tests/with_postgres.sh), or the REST
# catalog (SLUICE_TEST_REST=1: `sluice serve`), or else the embedded SQLite
# catalog. Checks: 200 snapshots in one ancestry chain, every
# row present exactly once, every metadata file of the table parses.
# Then a race on a second table: appenders, a row-level delete and a
# compaction loop at once; no deleted row may come back, no row may be lost.
# Usage: table_concurrency_test.sh SLUICE_BINARY [WRITERS] [COMMITS]  (COMMITS default
# $SLUICE_CONCURRENCY_COMMITS or 50)
set -euo pipefail
SLUICE=$1
WRITERS=${2:-4}
COMMITS=${3:-${SLUICE_CONCURRENCY_COMMITS:-50}}
W=$(mktemp -d /tmp/sluice-conc.XXXXXX)
# On any exit (a failed check included) stop the background writers and the
# compactor first: a loop left running would keep the test from ever ending.
cleanup() {
  local kids
  kids=$(jobs -p)
  [ -z "$kids" ] || kill $kids 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
CATALOG=()
REST=0
if [ "${SLUICE_TEST_REST:-0}" = 1 ]; then
  # Every writer commits through `sluice serve` (the REST catalog) over the
  # warehouse's SQLite catalog; no writer opens the database itself.
  REST=1
  "$SLUICE" --warehouse "$W/wh" serve --listen 127.0.0.1:0 2> "$W/serve.log" &
  for _ in $(seq 100); do grep -q serving "$W/serve.log" 2>/dev/null && break; sleep 0.05; done
  url=$(grep -o 'http://[0-9.:]*' "$W/serve.log" | head -1)
  [ -n "$url" ] || { echo "sluice serve did not start"; cat "$W/serve.log"; exit 1; }
  CATALOG=(--catalog "$url")
  echo "catalog: REST at $url"
elif [ -n "${SLUICE_TEST_POSTGRES_URI:-}" ]; then
  CATALOG=(--catalog "$SLUICE_TEST_POSTGRES_URI")
  echo "catalog: PostgreSQL"
else
  echo "catalog: SQLite"
fi
S() { "$SLUICE" --warehouse "$W/wh" "${CATALOG[@]}" "$@"; }

S namespace create conc
S table create conc.events --schema "id BIGINT NOT NULL, writer INT, ts TIMESTAMPTZ" \
  --partition "bucket(4, id)" >/dev/null

writer() {
  local w=$1
  for i in $(seq 1 "$COMMITS"); do
    id=$(( w * 100000 + i ))
    printf '{"id":%d,"writer":%d,"ts":"2024-01-01T00:00:%02dZ"}\n' "$id" "$w" $(( i % 60 )) \
      > "$W/in-$w.jsonl"
    S append conc.events "$W/in-$w.jsonl" >/dev/null
  done
}
pids=()
for w in $(seq 1 "$WRITERS"); do writer "$w" & pids+=($!); done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || { echo "a writer failed"; exit 1; }

expected=$(( WRITERS * COMMITS ))
snapshots=$(S table snapshots conc.events --json | grep -c '"snapshot_id"')
rows=$(S scan conc.events --columns id | wc -l)
distinct=$(S scan conc.events --columns id | sort -u | wc -l)
chain=$(S table history conc.events --json | grep -c '"is_current_ancestor":"true"')
echo "snapshots=$snapshots rows=$rows distinct=$distinct ancestors=$chain (expected $expected)"
[ "$snapshots" = "$expected" ] && [ "$rows" = "$expected" ] && [ "$distinct" = "$expected" ] \
  && [ "$chain" = "$expected" ] || { echo "FAILED: lost or duplicated commits"; exit 1; }
# Every metadata file written (including those of lost CAS races, which must
# have been removed) parses; each is a complete table state.
bad=0
for m in "$W"/wh/conc/events/metadata/*.metadata.json; do
  S table describe "$m" >/dev/null 2>&1 || { echo "unreadable: $m"; bad=1; }
done
count=$(ls "$W"/wh/conc/events/metadata/*.metadata.json | wc -l)
# (Through REST the server writes each commit's metadata file; the writer
# deletes the one it staged to compute the change.)
want=$(( expected + 1 ))
[ "$count" = "$want" ] || { echo "FAILED: $count metadata files, want $want (leftovers from lost races?)"; bad=1; }
[ "$bad" = 0 ] || exit 1

# ---- race: appends + delete + rewrites on one table
S table create conc.race --schema "id BIGINT NOT NULL, writer INT, ts TIMESTAMPTZ" >/dev/null
seq 1 100 | awk '{printf "{\"id\":%d,\"writer\":0}\n", $1}' > "$W/seed.jsonl"
S append conc.race "$W/seed.jsonl" >/dev/null
race_writer() {
  local w=$1
  for i in $(seq 1 15); do
    printf '{"id":%d,"writer":%d}\n' $(( w * 100000 + i )) "$w" > "$W/race-$w.jsonl"
    S append conc.race "$W/race-$w.jsonl" >/dev/null
  done
}
# The compactor rewrites until the writers are done; conflicts are expected and
# retried. It pauses 0.1 s between rewrites, as a service does: back to back,
# on a loaded machine, every rewrite could land inside the delete's window and
# the delete would give up after its retries (a starved delete, not a race).
compactor() {
  local ok=0 deadline=$((SECONDS + 600))
  while [ ! -f "$W/writers-done" ] && [ "$SECONDS" -lt "$deadline" ]; do
    if S table rewrite conc.race >/dev/null 2>&1; then ok=$((ok + 1)); fi
    sleep 0.1
  done
  S table rewrite conc.race >/dev/null && ok=$((ok + 1))
  echo "$ok" > "$W/rewrites"
}
compactor & cpid=$!
pids=()
for w in 1 2; do race_writer "$w" & pids+=($!); done
sleep 0.5
S table delete conc.race --where "id <= 50" >/dev/null || { echo "FAILED: delete"; exit 1; }
for p in "${pids[@]}"; do wait "$p" || { echo "FAILED: a race writer failed"; exit 1; }; done
touch "$W/writers-done"
wait "$cpid"
resurrected=$(S scan conc.race --columns id --where "id <= 50" 2>&1 | wc -l)
odds=$(S scan conc.race --columns id --where "id <= 100" | wc -l)
total=$(S scan conc.race --columns id | wc -l)
distinct=$(S scan conc.race --columns id | sort -u | wc -l)
echo "race: rewrites=$(cat "$W/rewrites") resurrected=$resurrected kept=$odds total=$total distinct=$distinct"
[ "$resurrected" = 0 ] && [ "$odds" = 50 ] && [ "$total" = 80 ] && [ "$distinct" = 80 ] \
  && [ "$(cat "$W/rewrites")" -ge 1 ] || { echo "FAILED: the race lost, duplicated or resurrected rows"; exit 1; }
echo "2 passed, 0 failed"
