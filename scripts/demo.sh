#!/usr/bin/env bash
# The main job on the embedded default (for now): generate a file of JSON
# events, convert it to a zstd Parquet file with sluice, inspect it and read it
# back. Later issues grow this into the full ingest -> Iceberg pipeline.
# Usage: scripts/demo.sh [ROWS]   (default 200000); output goes to ./warehouse/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-200000}

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build sluice

OUT=warehouse/demo
mkdir -p "$OUT"
rm -f "$OUT/events.parquet"
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
