#!/usr/bin/env bash
# CDC crash loop: a producer sends Debezium change events of a database table
# of 200 accounts (MySQL binlog positions; inserts, updates, a delete every
# 7th change, Debezium's tombstone after each delete, and in every batch one
# older event again, as a restarted connector sends them) while `sluice run`
# mirrors them into a primary-key table and is killed with SIGKILL at random
# moments and at named kill points, and restarted. The maintenance service
# compacts the mirror all along (upserts and compaction at once).
# At the end the mirror must equal the model: each account's last change (or
# no row when that was a delete), read by `sluice scan`; events that do not
# fit are dead letters, once each; the service must have compacted; every
# snapshot left must read (`sluice table verify --read-data`).
#
# With a third argument, the path of sluice-kafka-mock, the events go through
# a 4-partition Kafka topic (kcat, keyed by the account: a key's events stay
# in one partition; tombstones are messages without a value).
#
# Usage: cdc_crash_test.sh SLUICE_BINARY [KILLS [KAFKA_MOCK]]  (KILLS empty or
# "-": $SLUICE_CRASH_KILLS, else 100)
set -euo pipefail
source "$(dirname "$0")/lib/crash.sh"
SLUICE=$(realpath "$1")
KILLS=${2:-}
[ "$KILLS" != - ] || KILLS=
KILLS=${KILLS:-${SLUICE_CRASH_KILLS:-100}}
KAFKA_MOCK=${3:-}
PER=40    # changes per batch
KEYS=200  # accounts
W=$(mktemp -d /tmp/sluice-cdc-crash.XXXXXX)
SERVER_PID=
MOCK_PID=
cleanup() {
  kill_all "$SERVER_PID" "$MOCK_PID"
  rm -rf "$W"
}
trap cleanup EXIT
PORT=$(( 20000 + RANDOM % 12000 ))
URL=http://127.0.0.1:$PORT
CONNECTOR="connector = 'http'"
if [ -n "$KAFKA_MOCK" ]; then
  start_kafka_mock "$KAFKA_MOCK" "$W" changes:4
  CONNECTOR="connector = 'kafka', brokers = '$BOOTSTRAP', topic = 'changes'"
  echo "source: Kafka (mock cluster at $BOOTSTRAP)"
else
  echo "source: HTTP"
fi
cat > "$W/cdc.sql" <<SQL
CREATE TABLE lake.accounts (id BIGINT NOT NULL, balance BIGINT, version BIGINT, PRIMARY KEY (id))
  PARTITIONED BY (bucket(4, id)) WITH ('sluice.maintenance.min-input-files' = '2');
CREATE SOURCE changes (id BIGINT, balance BIGINT, version BIGINT) WITH ($CONNECTOR) FORMAT DEBEZIUM;
CREATE PIPELINE mirror WITH (commit_interval = '100ms') AS
  INSERT INTO lake.accounts SELECT id, balance, version FROM changes;
SQL
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }

KILL_POINTS=(pipeline.after_data_files pipeline.after_key_state_file catalog.before_swap catalog.after_swap
             pipeline.after_commit pipeline.mid_recovery maintenance.compact.before_commit)
start_server() {  # start_server [KILL_POINT]
  SLUICE_KILL_POINT=${1:-} "$SLUICE" --warehouse "$W/wh" run "$W/cdc.sql" \
    --listen "127.0.0.1:$PORT" >>"$W/server.log" 2>&1 &
  SERVER_PID=$!
}

# Change c (1, 2, ...) is of account c % KEYS, at binlog position c: a delete
# when c % 7 == 0, else the row (balance c, version c). Printed as
# "KEY|VALUE" lines; a delete is followed by its tombstone ("KEY|").
changes() {  # changes FROM TO
  awk -v from="$1" -v to="$2" -v keys="$KEYS" 'BEGIN {
    for (c = from; c <= to; c++) {
      id = c % keys
      src = sprintf("{\"connector\":\"mysql\",\"name\":\"db\",\"snapshot\":\"false\",\"db\":\"bank\",\"table\":\"accounts\",\"file\":\"mysql-bin.000001\",\"pos\":%d,\"row\":0}", c)
      if (c % 7 == 0) {
        printf "{\"id\":%d}|{\"before\":{\"id\":%d,\"balance\":null,\"version\":null},\"after\":null,\"source\":%s,\"op\":\"d\",\"ts_ms\":1700000000000}\n", id, id, src
        printf "{\"id\":%d}|\n", id
      } else {
        printf "{\"id\":%d}|{\"before\":null,\"after\":{\"id\":%d,\"balance\":%d,\"version\":%d},\"source\":%s,\"op\":\"%s\",\"ts_ms\":1700000000000}\n", id, id, c, c, src, (c <= keys ? "c" : "u")
      }
    }
  }'
}

# The producer: batch b holds changes (b-1)*PER+1 .. b*PER, plus the change
# KEYS + 13 before its first again (its account changed since: applied again,
# it would bring back an old row); it moves on once the batch is
# acknowledged, and keeps going until the killer is done.
producer() {
  local b=0 first
  while [ ! -f "$W/kills-done" ] || [ "$b" -lt 20 ]; do
    b=$((b + 1))
    first=$(( (b - 1) * PER + 1 ))
    changes "$first" $(( b * PER )) > "$W/body.kv"
    [ $(( first - KEYS - 13 )) -lt 1 ] || changes $(( first - KEYS - 13 )) $(( first - KEYS - 13 )) >> "$W/body.kv"
    # An event that does not fit the table in some batches: a dead letter.
    [ $((b % 25)) -ne 0 ] || echo '{"id":1}|{"op":"c","after":{"id":"one"}}' >> "$W/body.kv"
    if [ -n "$KAFKA_MOCK" ]; then
      kcat -b "$BOOTSTRAP" -P -t changes -K '|' -Z < "$W/body.kv"  # -Z: an empty value is null
    else
      # HTTP has no message keys: the value alone, a tombstone as null.
      sed 's/^[^|]*|//; s/^$/null/' "$W/body.kv" > "$W/body"
      post_until_acked "$URL" changes "batch-$b" "$W/body"
    fi
    echo $(( $(cat "$W/records" 2>/dev/null || echo 0) + $(wc -l < "$W/body.kv") )) > "$W/records"
    echo "$b" > "$W/acked"
    nap 0.05  # (as fast as acked, it kept a core busy starting processes)
  done
}
producer & PRODUCER=$!

kill_loop "$KILLS"
touch "$W/kills-done"

# A clean run: the producer finishes, the pipeline catches up (and the
# maintenance service compacts at least once), SIGTERM.
start_server
wait_up "$URL" "$SERVER_PID" 120 || { tail -20 "$W/server.log"; echo "FAILED: the server does not start after the crashes"; exit 1; }
wait_producer "$PRODUCER"
echo "kills and producer done after $SECONDS s"
acked=$(cat "$W/acked")
records=$(cat "$W/records")
compacted() {  # (grep -c reads it all: an early exit would fail the pipe)
  [ "$(S table snapshots lake.accounts --json | grep -c '"operation":"replace"' || true)" -gt 0 ]
}
drain_and_stop "$URL" "$SERVER_PID" "$records" lake.accounts compacted || { tail -20 "$W/server.log"; exit 1; }
SERVER_PID=

# The model: each account's last change.
n=$(( acked * PER ))
awk -v n="$n" -v keys="$KEYS" 'BEGIN {
  for (c = 1; c <= n; c++) last[c % keys] = c
  for (id in last) if (last[id] % 7 != 0) printf "{\"id\":%d,\"balance\":%d}\n", id, last[id]
}' | sort > "$W/want"
S scan lake.accounts --columns id,balance | sort > "$W/got"
dead=$(S scan lake.accounts__dlq --columns payload | grep -c 'one' || true)
compactions=$(S table snapshots lake.accounts --json | grep -c '"operation":"replace"' || true)
echo "kill points reached:"
grep -o 'kill point [a-z_.]* reached' "$W/server.log" | sort | uniq -c || true
echo "kills=$kills (at kill points: $at_points) batches=$acked changes=$n records=$records rows=$(wc -l < "$W/got") want=$(wc -l < "$W/want") dead=$dead compactions=$compactions"
if ! diff "$W/want" "$W/got" > "$W/diff"; then
  head -20 "$W/diff"
  echo "FAILED: the mirror differs from the model ($(grep -c '^[<>]' "$W/diff") lines)"
  exit 1
fi
[ "$dead" = $(( acked / 25 )) ] || { echo "FAILED: $dead dead letters, want $(( acked / 25 ))"; exit 1; }
[ "$at_points" -gt 0 ] || { echo "FAILED: no run ended at a kill point"; exit 1; }
[ "$compactions" -gt 0 ] || { echo "FAILED: the maintenance service never compacted"; exit 1; }
# Every snapshot the kills left reads: its manifests, data files and the
# deletes of its upserts, each file decoded.
S table verify lake.accounts --read-data > "$W/verify.out" 2>&1 ||
  { tail -20 "$W/verify.out"; echo "FAILED: a snapshot does not read"; exit 1; }
tail -1 "$W/verify.out"
echo "1 passed, 0 failed"
