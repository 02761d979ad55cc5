#!/usr/bin/env bash
# The main job on the embedded default (for now): generate JSON events, load
# them into an Iceberg table in ./warehouse (SQLite catalog, Parquet files) in
# several commits, query it, delete rows, compact, time travel; also convert
# the events to a standalone Parquet file and inspect it. Later issues grow
# this into the continuous ingest pipeline.
# Usage: scripts/demo.sh [ROWS]   (default 200000); output goes to ./warehouse/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-200000}

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build sluice

OUT=warehouse/demo
rm -rf "$OUT" warehouse/catalog.db* warehouse/demo_lake
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
