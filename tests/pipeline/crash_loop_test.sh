#!/usr/bin/env bash
# Crash loop: a producer streams numbered events over HTTP (each batch with an
# Idempotency-Key, retried until acknowledged) while `sluice run` is killed
# with SIGKILL at random moments and at each named kill point, and restarted.
# The maintenance service compacts the table all along (a partition with 2
# small files is due), killed with the rest, also at its kill point.
# At the end the table must hold every acknowledged event exactly once (count,
# distinct ids, sum of ids), every snapshot must be readable, no data file may
# exist that no snapshot references but a crashed compaction's output, and
# expiry and orphan cleanup then leave exactly the current files, the same rows.
#
# With a third argument, the path of sluice-kafka-mock, the events go through
# Kafka instead: kcat produces them into librdkafka's mock cluster (a process
# that outlives every sluice run) and the pipeline reads the topic, its
# positions kept in the table. That run also expires snapshots all along
# (3 s retention, every 0.5 s; killed at its kill point too), so files of
# expired snapshots may be left by a kill: only the exact check after orphan
# cleanup applies to it.
#
# With SLUICE_CRASH_S3=1 (under tests/with_s3.sh) the warehouse is on S3
# (s3://lake/crash-PID on the test's s3rver, the catalog and state on local
# disk), and the checks of files list the bucket instead of the folder.
# With SLUICE_CRASH_REST=1 every run commits through a REST catalog
# (`sluice serve`, which outlives the runs).
#
# Usage: crash_loop_test.sh SLUICE_BINARY [KILLS [KAFKA_MOCK]]  (KILLS empty or
# "-": $SLUICE_CRASH_KILLS, else 120; the on-demand soak is
# `crash_loop_test.sh build/sluice 10000`)
set -euo pipefail
source "$(dirname "$0")/lib/crash.sh"
SLUICE=$(realpath "$1")
KILLS=${2:-}
[ "$KILLS" != - ] || KILLS=
KILLS=${KILLS:-${SLUICE_CRASH_KILLS:-120}}
KAFKA_MOCK=${3:-}
PER=25  # events per HTTP batch
W=$(mktemp -d /tmp/sluice-crash.XXXXXX)
SERVER_PID=
MOCK_PID=
CATALOG_PID=
cleanup() {
  kill_all "$SERVER_PID" "$MOCK_PID" "$CATALOG_PID"
  rm -rf "$W"
}
trap cleanup EXIT
PORT=$(( 20000 + RANDOM % 12000 ))
URL=http://127.0.0.1:$PORT
CONNECTOR="connector = 'http'"
PROPS="'sluice.maintenance.min-input-files' = '2'"
if [ -n "$KAFKA_MOCK" ]; then
  start_kafka_mock "$KAFKA_MOCK" "$W" events:4
  CONNECTOR="connector = 'kafka', brokers = '$BOOTSTRAP', topic = 'events'"
  PROPS="$PROPS, 'history.expire.max-snapshot-age-ms' = '3000',
    'sluice.maintenance.expire-interval-ms' = '500', 'sluice.maintenance.orphan-interval-ms' = '1000'"
  echo "source: Kafka (mock cluster at $BOOTSTRAP)"
else
  echo "source: HTTP"
fi
cat > "$W/crash.sql" <<SQL
CREATE TABLE lake.events (id BIGINT NOT NULL, batch BIGINT, kind STRING)
  PARTITIONED BY (bucket(4, id)) WITH ($PROPS);
CREATE SOURCE events_in (id BIGINT, batch BIGINT, kind STRING) WITH ($CONNECTOR) FORMAT JSON;
CREATE PIPELINE load_events WITH (commit_interval = '100ms') AS
  INSERT INTO lake.events SELECT id, batch, kind FROM events_in;
SQL
if [ "${SLUICE_CRASH_S3:-0}" = 1 ]; then
  [ -n "${SLUICE_TEST_S3_ENDPOINT:-}" ] || { echo "SLUICE_CRASH_S3=1 needs tests/with_s3.sh"; exit 1; }
  WH=(--warehouse "s3://lake/crash-$$" --catalog "sqlite:$W/catalog.db" --state-dir "$W/state")
  DATA_PREFIX="s3://lake/crash-$$/lake/events/data/"
  echo "warehouse: s3://lake/crash-$$ on $SLUICE_TEST_S3_ENDPOINT"
elif [ "${SLUICE_CRASH_REST:-0}" = 1 ]; then
  # Every run commits through a REST catalog (`sluice serve` over the
  # warehouse's SQLite catalog, never killed): kills land between a commit's
  # request and its answer too.
  "$SLUICE" --warehouse "$W/wh" serve --listen 127.0.0.1:0 2> "$W/catalog.log" &
  CATALOG_PID=$!
  for _ in $(seq 100); do grep -q serving "$W/catalog.log" 2>/dev/null && break; nap 0.05; done
  CATALOG_URL=$(grep -o 'http://[0-9.:]*' "$W/catalog.log" | head -1)
  [ -n "$CATALOG_URL" ] || { echo "sluice serve did not start"; exit 1; }
  WH=(--warehouse "$W/wh" --catalog "$CATALOG_URL")
  DATA_PREFIX="$W/wh/lake/events/data/"
  echo "catalog: REST at $CATALOG_URL"
else
  WH=(--warehouse "$W/wh")
  DATA_PREFIX="$W/wh/lake/events/data/"
fi
S() { "$SLUICE" "${WH[@]}" "$@"; }
# The data files in storage, one location per line, sorted.
stored_data_files() {
  if [ "${SLUICE_CRASH_S3:-0}" = 1 ]; then list_objects "$DATA_PREFIX"; else find "$DATA_PREFIX" -type f; fi | sort
}

KILL_POINTS=(pipeline.after_data_files catalog.after_metadata catalog.before_swap
             catalog.after_swap pipeline.after_commit pipeline.mid_recovery
             maintenance.compact.before_commit)
[ -z "$KAFKA_MOCK" ] || KILL_POINTS+=(maintenance.expire.before_delete)
start_server() {  # start_server [KILL_POINT]
  SLUICE_KILL_POINT=${1:-} "$SLUICE" "${WH[@]}" run "$W/crash.sql" \
    --listen "127.0.0.1:$PORT" >>"$W/server.log" 2>&1 &
  SERVER_PID=$!
}

# The producer: batch b holds ids (b-1)*PER+1 .. b*PER; it moves on only once
# the batch is acknowledged, and keeps going until the killer is done.
producer() {
  local b=0
  while [ ! -f "$W/kills-done" ] || [ "$b" -lt 20 ]; do
    b=$((b + 1))
    seq $(( (b - 1) * PER + 1 )) $(( b * PER )) |
      awk -v b="$b" '{printf "{\"id\":%d,\"batch\":%d,\"kind\":\"k%d\"}\n", $1, b, $1 % 5}' \
      > "$W/body"
    # A malformed record in some batches: it must end in the dead-letter table.
    [ $((b % 50)) -ne 0 ] || echo '{"id":"not a number"}' >> "$W/body"
    if [ -n "$KAFKA_MOCK" ]; then
      kcat -b "$BOOTSTRAP" -P -t events < "$W/body"  # one message per line
      echo "$b" > "$W/acked"
      continue
    fi
    post_until_acked "$URL" events_in "batch-$b" "$W/body"
    echo "$b" > "$W/acked"
    nap 0.05  # (as fast as acked, it kept a core busy starting processes)
  done
}
producer & PRODUCER=$!

kills=0 at_points=0
while [ "$kills" -lt "$KILLS" ]; do
  # Every third run dies at a named kill point (the N-th time it passes it);
  # the run before one armed at mid_recovery dies with staged files, so that
  # the recovery has some to delete.
  next=${KILL_POINTS[$(( (kills / 3) % ${#KILL_POINTS[@]} ))]}
  kp=
  case $((kills % 3)) in
    1) [ "$next" != pipeline.mid_recovery ] || kp=pipeline.after_data_files:1 ;;
    # Recovery and a compaction (the service assesses every 5 s) pass their
    # points once in an armed run's 3 s: armed at the first pass.
    2) case $next in
         pipeline.mid_recovery | maintenance.compact.before_commit) kp=$next:1 ;;
         *) kp=$next:$((1 + RANDOM % 3)) ;;
       esac ;;
  esac
  start_server "$kp"
  wait_up "$URL" "$SERVER_PID" || true
  if [ -n "$kp" ]; then
    # Armed: give it up to 3 s to die at its kill point; 12 s at the
    # maintenance service's (its first assessment, expiry, then a compaction's
    # plan and files come after the restart: on a loaded machine 3 s let the
    # compaction's point go unreached in all five armed runs, as the torture
    # test once saw).
    tries=150
    [[ $kp != maintenance.* ]] || tries=600
    for _ in $(seq 1 "$tries"); do kill -0 "$SERVER_PID" 2>/dev/null || break; nap 0.02; done
  else
    nap "0.$(printf '%03d' $(( 50 + RANDOM % 400 )))"  # live 50..450 ms
  fi
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -9 "$SERVER_PID" 2>/dev/null || true
  else
    at_points=$((at_points + 1))
  fi
  { wait "$SERVER_PID"; } 2>/dev/null || true
  SERVER_PID=
  kills=$((kills + 1))
done
touch "$W/kills-done"

# A clean run: the producer finishes, the pipeline catches up, SIGTERM.
start_server
wait_up "$URL" "$SERVER_PID" 120 || { cat "$W/server.log"; echo "FAILED: the server does not start after the crashes"; exit 1; }
wait_producer "$PRODUCER"
echo "kills and producer done after $SECONDS s"
acked=$(cat "$W/acked")
want=$(( acked * PER ))
# Records in the source: every event plus one malformed record per 50 batches
# (the log's end offset; for Kafka the sum of the partitions' next offsets).
records=$(( want + acked / 50 ))
# On S3 through the fault proxy, /metrics shows the S3 client's retries.
if [ "${SLUICE_CRASH_S3:-0}" = 1 ] && [ -n "${SLUICE_S3_FAULT_RATE:-}" ]; then
  retried=
  for _ in $(seq 1 200); do
    retried=$(curl -s "$URL/metrics" | sed -n 's/^sluice_s3_retries_total \([0-9]*\).*/\1/p')
    [ "${retried:-0}" -gt 0 ] && break
    nap 0.1
  done
  echo "S3 retries of the clean run (sluice_s3_retries_total): ${retried:-none}"
  [ "${retried:-0}" -gt 0 ] || { echo "FAILED: no S3 retries on /metrics through the fault proxy"; exit 1; }
fi
# The clean run also lets the maintenance service compact at least once (the
# killed runs may all have been too short for it, under ASan).
compacted() {  # (grep -c reads it all: an early exit would fail the pipe)
  [ "$(S table snapshots lake.events --json | grep -c '"operation":"replace"' || true)" -gt 0 ]
}
drain_and_stop "$URL" "$SERVER_PID" "$records" lake.events compacted || { tail -20 "$W/server.log"; exit 1; }
SERVER_PID=

ids=$(S scan lake.events --columns id)
rows=$(echo "$ids" | grep -c . || true)
distinct=$(echo "$ids" | sort -u | grep -c . || true)
sum=$(echo "$ids" | sed 's/[^0-9]//g' | awk '{s += $1} END {printf "%.0f", s}')
want_sum=$(( want * (want + 1) / 2 ))
dead=$(S scan lake.events__dlq --columns payload | grep -c 'not a number' || true)
want_dead=$(( acked / 50 ))
snapshots=$(S table snapshots lake.events --json | grep -o '"snapshot_id":"\{0,1\}[0-9]*' | grep -o '[0-9]*$')
nsnap=$(echo "$snapshots" | grep -c . || true)
echo "kill points reached:"
grep -o 'kill point [a-z_.]* reached' "$W/server.log" | sort | uniq -c || true
echo "kills=$kills (at kill points: $at_points) batches=$acked rows=$rows distinct=$distinct sum=$sum dead=$dead snapshots=$nsnap"
[ "$rows" = "$want" ] && [ "$distinct" = "$want" ] && [ "$sum" = "$want_sum" ] ||
  { echo "FAILED: want $want rows, distinct ids and sum $want_sum"; exit 1; }
[ "$dead" = "$want_dead" ] || { echo "FAILED: $dead dead letters, want $want_dead"; exit 1; }
[ "$at_points" -gt 0 ] || { echo "FAILED: no run ended at a kill point"; exit 1; }
if [ "$KILLS" -ge 100 ]; then
  for kp in "${KILL_POINTS[@]}"; do
    grep -q "kill point $kp reached" "$W/server.log" || { echo "FAILED: kill point $kp never reached"; exit 1; }
  done
fi
# Every snapshot reads (`table verify --read-data`: its manifests, and every
# file decoded, each once however many snapshots hold it), and the rows each
# holds (records less deletes) never decrease.
t0=$SECONDS
S table verify lake.events --read-data --json > "$W/verify.json" 2> "$W/verify.err" ||
  { cat "$W/verify.err"; echo "FAILED: the table's snapshots do not all read"; exit 1; }
echo "$(tail -1 "$W/verify.err") (in $((SECONDS - t0)) s)"
grep -o '"snapshot_id":"\{0,1\}[0-9]*\|"records":[0-9]*,"deletes":[0-9]*' "$W/verify.json" | tr -d '"' |
  paste -d, - - | awk -F'[:,]' -v want="$nsnap" -v out="$W/counts" '
    { n = $4 - $6; if (n < prev) { printf "FAILED: snapshot %s has %d rows, the one before %d\n", $2, n, prev; bad = 1; exit 1 }
      prev = n; seen++; print $2, n > out }
    END { if (!bad && seen != want) { printf "FAILED: %d snapshots verified, the table has %d\n", seen, want; exit 1 } }' ||
  exit 1
# A scan of some of them (the first, the last, every 40th: planning and
# reading as a reader does) reads the rows the verified counts say.
awk -v last="$nsnap" 'NR == 1 || NR == last || NR % 40 == 0' "$W/counts" | while read -r id n; do
  got=$(S scan lake.events --snapshot "$id" --columns id | wc -l) ||
    { echo "FAILED: snapshot $id does not scan"; exit 1; }
  [ "$got" = "$n" ] || { echo "FAILED: snapshot $id scans $got rows, table verify counts $n"; exit 1; }
done
# Compactions: the replace snapshots still held, and (the Kafka run expires
# snapshots) live files that compaction wrote.
# (Through a REST catalog each run's new epoch is an empty replace snapshot:
# not a compaction.)
compactions=$(S table snapshots lake.events --json | grep '"operation":"replace"' |
  grep -vc 'sluice.epoch-of' || true)
compacted_live=$(S table files lake.events --json | grep -c '/compact-' || true)
echo "compactions committed: $compactions in the history; live compaction output: $compacted_live files"
compactions=$((compactions + compacted_live))
[ "$compactions" -gt 0 ] || { echo "FAILED: the maintenance service never compacted"; exit 1; }
# Expiry down to the current snapshot: what only older snapshots reached goes.
# Then no data file may exist that the table does not reference, but the
# output of a compaction killed before its commit (staged files of crashed
# checkpoints were deleted by recovery, temporary files too); orphan cleanup
# (no margin: nothing is in flight now) takes those, and nothing else.
S table expire-snapshots lake.events --older-than 0s --retain-last 1 > /dev/null
referenced() {
  S table files lake.events --json | grep -o '"file_path":"[^"]*"' |
    sed 's/"file_path":"//; s/^file:\/\///; s/"$//' | sort > "$W/referenced"
  stored_data_files > "$W/on_disk"
}
referenced
# (its files and their temporary forms: compaction keeps no journal)
if [ -z "$KAFKA_MOCK" ] && comm -23 "$W/on_disk" "$W/referenced" | grep -Ev '/compact-[^/]*\.parquet(\.tmp-[0-9-]+)?$'; then
  echo "FAILED: data files on disk that no snapshot references (not compaction output)"
  exit 1
fi
if comm -13 "$W/on_disk" "$W/referenced" | grep .; then
  echo "FAILED: referenced data files missing"
  exit 1
fi
S table remove-orphans lake.events --older-than 0s
referenced
if ! diff "$W/referenced" "$W/on_disk" > "$W/diff"; then
  cat "$W/diff"
  echo "FAILED: after orphan cleanup, data files on disk differ from the referenced ones"
  exit 1
fi
[ "$(S scan lake.events --columns id | wc -l)" = "$want" ] ||
  { echo "FAILED: maintenance changed the row count"; exit 1; }
echo "1 passed, 0 failed"
