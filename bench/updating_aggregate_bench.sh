#!/usr/bin/env bash
# Updating aggregates (GROUP BY without a window into a primary-key table,
# docs/sql.md): EVENTS events over GROUPS keys in CHECKPOINTS bounded runs
# (each one checkpoint, one thread), through three pipelines measured in the
# same run:
#   append  the events themselves into a table without a key (the reference);
#   window  count/sum/max per key over a 1-minute TUMBLE (append-only rows);
#   updating count/sum/max per key without a window: each checkpoint replaces
#           the rows of the keys it changed (their old rows deleted).
# Prints CPU seconds and events per CPU-second of each, and the updating
# pipeline's CPU against the append's; checks the updating table's counts
# sum to EVENTS.
#   bench/updating_aggregate_bench.sh [path/to/sluice] [EVENTS] [GROUPS] [CHECKPOINTS]
#   (defaults build/sluice, 1000000, 10000, 4); STATE_MEMORY (default
#   256MiB, the pipelines' state.memory: past half of it the groups spill).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sluice=$(realpath "${1:-$repo/build/sluice}")
events=${2:-1000000}
groups=${3:-10000}
rounds=${4:-4}
[ -x "$sluice" ] || { echo "updating_aggregate_bench: no sluice binary at $sluice" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-updating-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
script() {  # script NAME TABLE SELECT
  cat > "$tmp/$1.sql" <<SQL
CREATE TABLE lake.t ($2);
CREATE SOURCE s (id BIGINT, k BIGINT, v BIGINT, ts TIMESTAMPTZ,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'file', path = '$tmp/in-$1') FORMAT JSON;
CREATE PIPELINE p WITH (commit_interval = '1h', parallelism = '1',
  state.memory = '${STATE_MEMORY:-256MiB}') AS INSERT INTO lake.t $3;
SQL
  mkdir -p "$tmp/in-$1"
}
script append "id BIGINT, k BIGINT, v BIGINT, ts TIMESTAMPTZ" "SELECT id, k, v, ts FROM s"
script window "ws TIMESTAMPTZ, k BIGINT, n BIGINT, total BIGINT, hi BIGINT" \
  "SELECT window_start, k, count(*), sum(v), max(v) FROM TUMBLE(s, ts, INTERVAL '1' MINUTE) GROUP BY window_start, window_end, k"
script updating "k BIGINT NOT NULL, n BIGINT, total BIGINT, hi BIGINT, PRIMARY KEY (k)" \
  "SELECT k, count(*), sum(v), max(v) FROM s GROUP BY k"
declare -A cpu=([append]=0 [window]=0 [updating]=0)
per=$((events / rounds))
for r in $(seq 1 "$rounds"); do
  awk -v n="$per" -v g="$groups" -v r="$r" 'BEGIN { srand(r)
    for (i = 0; i < n; i++) {
      id = (r - 1) * n + i; s = int(id / 10000)
      printf "{\"id\":%d,\"k\":%d,\"v\":%d,\"ts\":\"2024-01-01T%02d:%02d:%02dZ\"}\n",
        id, int(rand() * g), int(rand() * 1000), int(s / 3600) % 24, int(s / 60) % 60, s % 60
    } }' > "$tmp/batch.jsonl"
  for name in append window updating; do
    cp "$tmp/batch.jsonl" "$tmp/in-$name/$(printf '%04d' "$r").jsonl"
    /usr/bin/time -f "%U %S" -o "$tmp/time" \
      "$sluice" --warehouse "$tmp/wh-$name" run "$tmp/$name.sql" --bounded > /dev/null 2>&1
    read -r user sys < "$tmp/time"
    cpu[$name]=$(awk -v a="${cpu[$name]}" -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", a + u + s }')
  done
done
counted=$("$sluice" --warehouse "$tmp/wh-updating" scan lake.t --columns n |
  grep -o '[0-9]*' | awk '{ s += $1 } END { print s + 0 }')
[ "$counted" = "$((per * rounds))" ] ||
  { echo "updating_aggregate_bench: FAILED: the groups count $counted events, want $((per * rounds))" >&2; exit 1; }
for name in append window updating; do
  awk -v n="$name" -v c="${cpu[$name]}" -v e="$((per * rounds))" \
    'BEGIN { printf "%-9s %7.2f s CPU  %6.0f K events per CPU-second\n", n, c, e / c / 1000 }'
done
awk -v u="${cpu[updating]}" -v a="${cpu[append]}" -v w="${cpu[window]}" \
  'BEGIN { printf "updating / append CPU: %.2fx; updating / window CPU: %.2fx\n", u / a, u / w }'
