#!/usr/bin/env bash
# Micro-batch equals streaming: the same JSON lines files (a file source)
# through `commit_interval = '15m'` (one checkpoint, taken at SIGTERM) and
# through `'100ms'` (many checkpoints) give the same table, row for row.
# Usage: micro_batch_test.sh SLUICE_BINARY
set -euo pipefail
SLUICE=$(realpath "$1")
W=$(mktemp -d /tmp/sluice-mb.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/in" "$W/staged"
for f in 1 2 3 4; do
  seq $(( f * 10000 )) $(( f * 10000 + 4999 )) | awk '{
    printf "{\"id\":%d,\"user_id\":%d,\"kind\":\"k%d\",\"ts\":\"2024-01-%02dT00:00:00Z\"}\n", $1, $1 % 97, $1 % 5, 1 + $1 % 28
  }' > "$W/staged/part-$f.jsonl"
done
echo '{"id":"broken"}' >> "$W/staged/part-2.jsonl"

wait_status() {  # wait_status PORT FIELD N: until /v1/status shows FIELD >= N (at most 60 s)
  local got
  for _ in $(seq 1 1200); do
    got=$( (curl -s "http://127.0.0.1:$1/v1/status" || true) |
      sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p")
    [ "${got:-0}" -ge "$3" ] && return 0
    sleep 0.05
  done
  return 1
}

run() {  # run NAME INTERVAL: the files into lake.<NAME>, then SIGTERM once all is read
  cat > "$W/$1.sql" <<SQL
CREATE TABLE lake.$1 (id BIGINT NOT NULL, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)
  PARTITIONED BY (day(ts));
CREATE SOURCE files_in (id BIGINT, user_id BIGINT, kind STRING, ts TIMESTAMPTZ)
  WITH (connector = 'file', path = '$W/in') FORMAT JSON;
CREATE PIPELINE load_$1 WITH (commit_interval = '$2') AS
  INSERT INTO lake.$1 SELECT * FROM files_in;
SQL
  local port=$(( 20000 + RANDOM % 12000 ))
  "$SLUICE" --warehouse "$W/wh" run "$W/$1.sql" --listen "127.0.0.1:$port" 2> "$W/$1.log" &
  local pid=$!
  # Streaming: the files arrive one by one while the pipeline runs, each once
  # the one before is committed (read, for the micro-batch, which commits only
  # at SIGTERM), so that a slow start (ASan, a loaded machine) cannot make the
  # stream read them all in one checkpoint.
  local field=records_committed n=0 total=20000
  [ "$2" != 15m ] || { field=records_read; total=20001; }
  for f in "$W"/staged/*.jsonl; do
    [ -e "$f" ] || break
    mv "$f" "$W/in/"
    n=$(( n + 5000 ))
    wait_status "$port" "$field" "$n" || { cat "$W/$1.log"; echo "FAILED: $1 never reached $field $n"; exit 1; }
  done
  wait_status "$port" "$field" "$total" || { cat "$W/$1.log"; echo "FAILED: $1 never reached $field $total"; exit 1; }
  sleep 0.3
  kill -TERM "$pid"
  wait "$pid" || { cat "$W/$1.log"; echo "FAILED: $1 did not exit 0"; exit 1; }
}
run streamed 100ms
run batched 15m
"$SLUICE" --warehouse "$W/wh" scan lake.streamed | sort > "$W/streamed.rows"
"$SLUICE" --warehouse "$W/wh" scan lake.batched | sort > "$W/batched.rows"
s=$("$SLUICE" --warehouse "$W/wh" table snapshots lake.streamed --json | grep -c '"snapshot_id"')
b=$("$SLUICE" --warehouse "$W/wh" table snapshots lake.batched --json | grep -c '"snapshot_id"')
echo "streamed: $(wc -l < "$W/streamed.rows") rows in $s snapshots; batched: $(wc -l < "$W/batched.rows") rows in $b snapshots"
[ "$(wc -l < "$W/streamed.rows")" = 20000 ] || { echo "FAILED: want 20000 rows"; exit 1; }
cmp -s "$W/streamed.rows" "$W/batched.rows" || { echo "FAILED: the tables differ"; exit 1; }
[ "$b" = 1 ] || { echo "FAILED: the micro-batch committed $b snapshots, want 1"; exit 1; }
[ "$s" -ge 4 ] || { echo "FAILED: the stream committed only $s snapshots"; exit 1; }
for t in streamed batched; do
  n=$("$SLUICE" --warehouse "$W/wh" scan "lake.${t}__dlq" --columns payload | grep -c broken || true)
  [ "$n" = 1 ] || { echo "FAILED: lake.${t}__dlq has $n dead letters, want 1"; exit 1; }
done
echo "1 passed, 0 failed"
