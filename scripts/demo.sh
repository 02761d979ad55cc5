#!/usr/bin/env bash
# The main job on the embedded default: `sluice run examples/metrics.sql` (a
# local warehouse folder, the SQLite catalog, the built-in log) ingests
# generated events over HTTP and commits them exactly once, every second, into
# the Iceberg table lake.events, and from the same source per-minute metrics
# into lake.metrics_per_minute, each minute committed once its watermark
# passes, and running totals per kind into lake.totals_by_kind (one row per
# kind, replaced at each commit); malformed events land in lake.events__dlq. Live metrics and the
# metrics table filling in are shown while it runs, then the maintenance
# service compacting lake.events (its files per partition falling); at the
# end both tables are scanned.
# Then the table tools: a batch table with pruning, deletes, compaction and
# time travel, and a standalone Parquet file.
# Usage: scripts/demo.sh [ROWS]   (default 200000); DEMO_PORT (default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-200000}
PORT=${DEMO_PORT:-8080}

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build sluice

rm -rf warehouse
mkdir -p warehouse
S="build/sluice --warehouse warehouse"
echo "== sluice run examples/metrics.sql --listen 127.0.0.1:$PORT"
cat examples/metrics.sql
$S run examples/metrics.sql --listen "127.0.0.1:$PORT" 2> warehouse/run.log &
RUN_PID=$!
trap 'kill -9 $RUN_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.05; done
metrics() {
  curl -s "http://127.0.0.1:$PORT/metrics" |
    grep -E '^sluice_(stream_records_in_total|pipeline_(records_committed_total|dead_letters_total|commits_total|freshness_seconds|source_lag_records)|table_data_files\{table="lake.events")' |
    sed 's/^/    /'
}
echo "== posting $ROWS events in batches of 10000, one a second (Idempotency-Key per batch; every 50000th event is malformed)"
# Event time advances 30 ms per event (up to 3 s out of order) from 2024-01-01T00:00Z.
awk -v n="$ROWS" 'BEGIN {
  srand(7); split("click view purchase signup", kinds, " ");
  for (i = 1; i <= n; i++) {
    if (i % 50000 == 0) { printf "{\"id\":\"not-a-number-%d\"}\n", i; continue }
    ms = i * 30 + int(rand() * 3000); s = int(ms / 1000);
    printf "{\"id\":%d,\"user_id\":%d,\"kind\":\"%s\",\"ts\":\"2024-01-%02dT%02d:%02d:%02d.%03dZ\"}\n", \
      i, int(rand() * 1000), kinds[1 + int(rand() * 4)], 1 + int(s / 86400), int(s / 3600) % 24, \
      int(s / 60) % 60, s % 60, ms % 1000;
  }
}' | split -l 10000 -d -a 4 - warehouse/batch-
b=0
for f in warehouse/batch-*; do
  b=$((b + 1))
  until curl -sf -o /dev/null -H "Idempotency-Key: demo-$b" -H 'Content-Type: application/x-ndjson' \
      --data-binary "@$f" "http://127.0.0.1:$PORT/v1/streams/events_in/records"; do sleep 0.2; done
  sleep 1  # a batch a second: each commit writes a small file, for the maintenance service to merge
  if [ $((b % 5)) -eq 0 ]; then
    echo "  after $b batches: $($S scan lake.metrics_per_minute --columns minute | wc -l) metric rows committed"
    metrics
  fi
done
rm -f warehouse/batch-*
echo "== waiting for the last checkpoint"
for _ in $(seq 1 100); do
  st=$(curl -s "http://127.0.0.1:$PORT/v1/status")
  c=$(echo "$st" | sed -n 's/.*"committed_offset":\([0-9]*\).*/\1/p')
  e=$(echo "$st" | sed -n 's/.*"end_offset":\([0-9]*\).*/\1/p')
  [ -n "$c" ] && [ "$c" = "$e" ] && break
  sleep 0.2
done
metrics
# The maintenance service inside `sluice run` merges the small files the
# one-second commits made (it counts them every 5 s, and right after each
# compaction): the data files of lake.events' partition, falling.
echo "== maintenance: data files per partition of lake.events (one small file per commit), every 2 s"
for _ in $(seq 1 8); do
  curl -s "http://127.0.0.1:$PORT/metrics" |
    grep -E '^sluice_(table_data_files|table_manifests|maintenance_compactions_total)\{table="lake.events"' |
    tr '\n' ' ' | sed 's/^/    /'
  echo
  sleep 2
done
echo "== GET /v1/status"
curl -s "http://127.0.0.1:$PORT/v1/status"; echo
kill -TERM $RUN_PID; wait $RUN_PID; trap - EXIT
cat warehouse/run.log
echo "== the table: rows, a few of them, its snapshots"
echo "rows in lake.events: $($S scan lake.events --columns id | wc -l)"
$S scan lake.events --where "kind = 'purchase'" --limit 5 --format table
$S table snapshots lake.events | tail -5
echo "== the per-minute metrics (the first minutes; one row per minute and kind)"
$S scan lake.metrics_per_minute --limit 8 --format table
echo "== the running totals per kind (one row per kind, replaced as the kind's events arrive)"
$S scan lake.totals_by_kind --format table
echo "== what the last commits changed in them (sluice table changes)"
$S table changes lake.totals_by_kind --format table | tail -8
echo "== dead letters"
$S scan lake.events__dlq --columns offset,error,payload --format table

echo
echo "== the table tools on a batch table"
OUT=warehouse/demo
mkdir -p "$OUT"
echo "== generating $ROWS JSON events into $OUT/events.jsonl"
awk -v n="$ROWS" 'BEGIN {
  srand(42); split("click view purchase signup logout search share scroll", kinds, " ");
  for (i = 1; i <= n; i++) {
    kind = kinds[1 + int(rand() * 8)];
    note = (rand() < 0.5) ? "null" : sprintf("\"note-%d\"", int(rand() * 1000));
    printf "{\"id\":%d,\"user_id\":%d,\"kind\":\"%s\",\"url\":\"https://example.com/p/%d\",", \
      i, int(rand() * 100000), kind, int(rand() * 50000);
    printf "\"amount\":\"%.2f\",\"ts\":\"2024-01-%02dT%02d:%02d:%02d.%06dZ\",\"note\":%s}\n", \
      rand() * 500, 1 + i % 28, int(rand() * 24), int(rand() * 60), int(rand() * 60), \
      int(rand() * 1000000), note;
  }
}' > "$OUT/events.jsonl"

SCHEMA="id BIGINT NOT NULL, user_id BIGINT, kind STRING, url STRING, amount DECIMAL(10,2), ts TIMESTAMPTZ, note STRING"
echo "== sluice parquet write --codec zstd"
time build/sluice parquet write --schema "$SCHEMA" --codec zstd "$OUT/events.jsonl" "$OUT/events.parquet"
ls -l "$OUT/events.jsonl" "$OUT/events.parquet"
echo "== sluice parquet schema"
build/sluice parquet schema "$OUT/events.parquet"
echo "== sluice parquet meta (first lines)"
build/sluice parquet meta "$OUT/events.parquet" | head -40
echo "== sluice parquet cat --limit 5"
build/sluice parquet cat --limit 5 "$OUT/events.parquet"
echo "== row count read back"
build/sluice parquet cat "$OUT/events.parquet" | wc -l

echo
echo "== an Iceberg table in ./warehouse (embedded SQLite catalog)"
S="build/sluice --warehouse warehouse"
$S namespace create demo_lake
$S table create demo_lake.events --schema "$SCHEMA" --partition "day(ts), bucket(8, id)"
split -n l/3 -d "$OUT/events.jsonl" "$OUT/part-"
for part in "$OUT"/part-*; do $S append demo_lake.events "$part"; done
$S table snapshots demo_lake.events
echo "== clicks on 2024-01-05 (partition and statistics pruning, --stats)"
$S scan demo_lake.events --columns id,kind,amount,ts \
  --where "ts >= '2024-01-05' AND ts < '2024-01-06' AND kind = 'click'" --limit 5 --format table --stats
echo "== delete the signups, compact, count"
$S table delete demo_lake.events --where "kind = 'signup'"
$S table rewrite demo_lake.events
echo "rows now: $($S scan demo_lake.events --columns id | wc -l)"
FIRST=$($S table snapshots demo_lake.events --json | grep -o '"snapshot_id":"[0-9]*"' | head -1 | tr -dc 0-9)
echo "rows in the first snapshot (time travel): $($S scan demo_lake.events --snapshot "$FIRST" --columns id | wc -l)"
$S table describe demo_lake.events
