#!/usr/bin/env bash
# Windows under crashes equal the batch run: a producer streams a fixed list of
# events over HTTP (batches with an Idempotency-Key, retried until
# acknowledged) into two windowed pipelines (TUMBLE with several aggregates,
# SESSION) and running totals (GROUP BY without a window, into a primary-key
# table), while `sluice run` is killed with SIGKILL at random moments and at
# named kill points (the window state file's among them) and restarted. Then
# the same events, as a file, go through the same pipelines with
# `sluice run --bounded`. The streamed tables must equal the bounded ones row
# for row (the windows the last event closed), and both dead-letter tables must
# hold the same late events. Every window is thus committed exactly once, with
# the state of the committed checkpoint, whatever the kills. Every snapshot of
# the streamed tables must read (`sluice table verify --read-data`).
#
# With a third argument, the path of sluice-kafka-mock, the events go through
# Kafka instead: kcat produces them into a one-partition topic of librdkafka's
# mock cluster (one partition: the order of the events, and so which ones are
# late, is the file's, as in the bounded run).
#
# Usage: window_crash_test.sh SLUICE_BINARY [KILLS [KAFKA_MOCK]]  (KILLS empty
# or "-": $SLUICE_CRASH_KILLS, else 100)
set -euo pipefail
source "$(dirname "$0")/lib/crash.sh"
SLUICE=$(realpath "$1")
KILLS=${2:-}
[ "$KILLS" != - ] || KILLS=
KILLS=${KILLS:-${SLUICE_CRASH_KILLS:-100}}
KAFKA_MOCK=${3:-}
EVENTS=6000
PER=100
W=$(mktemp -d /tmp/sluice-wcrash.XXXXXX)
SERVER_PID=
MOCK_PID=
cleanup() {
  kill_all "$SERVER_PID" "$MOCK_PID"
  rm -rf "$W"
}
trap cleanup EXIT
PORT=$(( 20000 + RANDOM % 12000 ))
URL=http://127.0.0.1:$PORT
mkdir -p "$W/files"

# Events: ids 1..EVENTS, 7 keys (one hot), times 200 ms apart with up to 3 s of
# jitter (inside the 5 s watermark delay), every 97th event 40 s old (late),
# and a last event a day later whose watermark closes every real window.
awk -v n="$EVENTS" 'BEGIN {
  for (i = 1; i <= n; i++) {
    ms = 100000 + i * 200 - (i * 7919 % 3000)  # after 10:00:00 on 2024-03-05
    if (i % 97 == 0) ms -= 40000
    k = (i % 3 == 0) ? "hot" : "k" (i % 7)
    s = 36000 + int(ms / 1000)
    printf "{\"id\":%d,\"k\":\"%s\",\"v\":%d,\"ts\":\"2024-03-05T%02d:%02d:%02d.%03dZ\"}\n",
      i, k, i % 50, int(s / 3600), int(s / 60) % 60, s % 60, ms % 1000
  }
  printf "{\"id\":%d,\"k\":\"end\",\"v\":0,\"ts\":\"2024-03-06T10:00:00Z\"}\n", n + 1
}' > "$W/events.jsonl"
cp "$W/events.jsonl" "$W/files/events.jsonl"

script() {  # script CONNECTOR: the two pipelines over source ev
  cat <<SQL
CREATE TABLE lake.per_10s (ws TIMESTAMPTZ, we TIMESTAMPTZ, k STRING, n BIGINT, total BIGINT,
  lo BIGINT, hi BIGINT, distinct_v BIGINT, mean DOUBLE);
CREATE TABLE lake.sessions (ws TIMESTAMPTZ, we TIMESTAMPTZ, k STRING, n BIGINT);
CREATE TABLE lake.totals (k STRING NOT NULL, n BIGINT, total BIGINT, hi BIGINT,
  distinct_v BIGINT, PRIMARY KEY (k));
CREATE SOURCE ev (id BIGINT, k STRING, v BIGINT, ts TIMESTAMPTZ,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ($1) FORMAT JSON;
CREATE PIPELINE tumbling WITH (commit_interval = '100ms') AS INSERT INTO lake.per_10s
  SELECT window_start, window_end, k, count(*), sum(v), min(v), max(v), count(DISTINCT v), avg(v)
  FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start, window_end, k;
CREATE PIPELINE sessions WITH (commit_interval = '150ms') AS INSERT INTO lake.sessions
  SELECT window_start, window_end, k, count(*) FROM SESSION(ev, ts, INTERVAL '1' SECOND)
  GROUP BY window_start, window_end, k;
CREATE PIPELINE totals WITH (commit_interval = '120ms') AS INSERT INTO lake.totals
  SELECT k, count(*), sum(v), max(v), count(DISTINCT v) FROM ev GROUP BY k;
SQL
}
CONNECTOR="connector = 'http'"
if [ -n "$KAFKA_MOCK" ]; then
  start_kafka_mock "$KAFKA_MOCK" "$W" ev:1
  CONNECTOR="connector = 'kafka', brokers = '$BOOTSTRAP', topic = 'ev'"
  echo "source: Kafka (mock cluster at $BOOTSTRAP, one partition)"
else
  echo "source: HTTP"
fi
script "$CONNECTOR" > "$W/stream.sql"
script "connector = 'file', path = '$W/files'" > "$W/batch.sql"

KILL_POINTS=(pipeline.after_state_file pipeline.after_data_files catalog.before_swap
             pipeline.after_commit pipeline.mid_recovery)
start_server() {  # start_server [KILL_POINT]
  SLUICE_KILL_POINT=${1:-} "$SLUICE" --warehouse "$W/stream" run "$W/stream.sql" \
    --listen "127.0.0.1:$PORT" >>"$W/server.log" 2>&1 &
  SERVER_PID=$!
}

batches=$(( (EVENTS + 1 + PER - 1) / PER ))
PACE=$(awk -v k="$KILLS" -v b="$batches" 'BEGIN { printf "%.3f", k * 0.25 / b }')
producer() {
  local b
  for b in $(seq 1 "$batches"); do
    sed -n "$(( (b - 1) * PER + 1 )),$(( b * PER ))p" "$W/events.jsonl" > "$W/body"
    if [ -n "$KAFKA_MOCK" ]; then
      kcat -b "$BOOTSTRAP" -P -t ev < "$W/body"  # one message per line
    else
      post_until_acked "$URL" ev "b-$b" "$W/body"
    fi
    echo "$b" > "$W/acked"
    nap "$PACE"  # spread the events over the kills
  done
}
producer & PRODUCER=$!

kill_loop "$KILLS"

start_server
wait_up "$URL" "$SERVER_PID" 120 || { tail -20 "$W/server.log"; echo "FAILED: no start after the crashes"; exit 1; }
wait_producer "$PRODUCER"
records=$(( EVENTS + 1 ))
for _ in $(seq 1 3000); do  # at most 300 s (ASan beside another test)
  committed=$(curl -s --max-time 5 "$URL/v1/status" | grep -o '"committed_offset":[0-9]*' |
    cut -d: -f2 | sort -n | head -1 || true)
  [ "${committed:-0}" -ge "$records" ] && break
  nap 0.1
done
[ "${committed:-0}" -ge "$records" ] ||
  { tail -20 "$W/server.log"; echo "FAILED: committed ${committed:-no} of $records records"; exit 1; }
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || { tail -20 "$W/server.log"; echo "FAILED: no exit 0 on SIGTERM"; exit 1; }
SERVER_PID=

"$SLUICE" --warehouse "$W/batch" run "$W/batch.sql" --bounded 2>>"$W/batch.log" ||
  { cat "$W/batch.log"; echo "FAILED: the bounded run failed"; exit 1; }

failed=0
compare() {  # compare TABLE: the streamed rows equal the bounded ones (without the last event's window)
  "$SLUICE" --warehouse "$W/stream" scan "lake.$1" | sort > "$W/$1.stream"
  "$SLUICE" --warehouse "$W/batch" scan "lake.$1" | grep -v '"k":"end"' | sort > "$W/$1.batch"
  local n
  n=$(wc -l < "$W/$1.batch")
  if [ "$n" -lt 50 ] || ! cmp -s "$W/$1.stream" "$W/$1.batch"; then
    echo "FAIL $1: streamed $(wc -l < "$W/$1.stream") rows, bounded $n"
    diff "$W/$1.stream" "$W/$1.batch" | head -5
    failed=$((failed + 1))
  else
    echo "ok   $1: $n window rows equal"
  fi
  "$SLUICE" --warehouse "$W/stream" scan "lake.$1__dlq" --columns payload | grep -o '\\"id\\":[0-9]*' |
    sort > "$W/$1.late.stream"
  "$SLUICE" --warehouse "$W/batch" scan "lake.$1__dlq" --columns payload | grep -o '\\"id\\":[0-9]*' |
    sort > "$W/$1.late.batch"
  if [ ! -s "$W/$1.late.batch" ] || ! cmp -s "$W/$1.late.stream" "$W/$1.late.batch"; then
    echo "FAIL $1: late events differ ($(wc -l < "$W/$1.late.stream") streamed, $(wc -l < "$W/$1.late.batch") bounded)"
    failed=$((failed + 1))
  else
    echo "ok   $1: $(wc -l < "$W/$1.late.batch") late events in both dead-letter tables"
  fi
}
compare per_10s
compare sessions
# The running totals (GROUP BY without a window: one row per key, replaced at
# each checkpoint; no event is late): every event counted once.
"$SLUICE" --warehouse "$W/stream" scan lake.totals | sort > "$W/totals.stream"
"$SLUICE" --warehouse "$W/batch" scan lake.totals | sort > "$W/totals.batch"
if [ "$(wc -l < "$W/totals.batch")" -ne 9 ] || ! cmp -s "$W/totals.stream" "$W/totals.batch" ||
    [ "$(grep -o '"n":[0-9]*' "$W/totals.batch" | awk -F: '{ s += $2 } END { print s + 0 }')" -ne "$records" ]; then
  echo "FAIL totals: streamed $(wc -l < "$W/totals.stream") rows, bounded $(wc -l < "$W/totals.batch")"
  diff "$W/totals.stream" "$W/totals.batch" | head -5
  failed=$((failed + 1))
else
  echo "ok   totals: 9 running totals equal, counting all $records events once"
fi
echo "kills=$kills (at kill points: $at_points)"
grep -o 'kill point [a-z_.]* reached' "$W/server.log" | sort | uniq -c || true
[ "$at_points" -gt 0 ] || { echo "FAILED: no run ended at a kill point"; failed=$((failed + 1)); }
if [ "$KILLS" -ge 60 ]; then
  grep -q "kill point pipeline.after_state_file reached" "$W/server.log" ||
    { echo "FAILED: pipeline.after_state_file never reached"; failed=$((failed + 1)); }
fi
# Every snapshot the kills left reads, in each streamed table (the windows,
# the running totals with their deletes): each file decoded.
for t in per_10s sessions totals; do
  if "$SLUICE" --warehouse "$W/stream" table verify "lake.$t" --read-data > "$W/verify.out" 2>&1; then
    echo "ok   $t: $(tail -1 "$W/verify.out")"
  else
    tail -5 "$W/verify.out"; echo "FAIL $t: a snapshot does not read"; failed=$((failed + 1))
  fi
done
if [ "$failed" = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
