#!/usr/bin/env bash
# Upsert cost: KEYS distinct BIGINT keys written by one bounded pipeline run
# (one thread, one checkpoint) into a table without a key and into a
# primary-key table, in the same run; then a restart of the primary-key
# pipeline with one change, which loads the key index of KEYS keys. Prints
# wall, CPU and peak RSS of each, upserts per CPU-second and the CPU ratio
# against the append. See docs/upserts.md "Limits".
#   bench/upsert_bench.sh [path/to/sluice] [KEYS]   (default build/sluice, 1000000)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sluice=$(realpath "${1:-$repo/build/sluice}")
keys=${2:-1000000}
[ -x "$sluice" ] || { echo "upsert_bench: no sluice binary at $sluice" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-upsert-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"
awk -v n="$keys" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":%d,\"name\":\"n%d\"}\n", i, i }' \
  > "$tmp/in/a.jsonl"
script() {  # script NAME KEY_CLAUSE
  cat > "$tmp/$1.sql" <<SQL
CREATE TABLE lake.t (id BIGINT NOT NULL, name STRING $2);
CREATE SOURCE s (id BIGINT, name STRING) WITH (connector = 'file', path = '$tmp/in') FORMAT JSON;
CREATE PIPELINE p WITH (commit_interval = '1h', parallelism = '1') AS
  INSERT INTO lake.t SELECT id, name FROM s;
SQL
}
script plain ""
script pk ", PRIMARY KEY (id)"
measure() {  # measure LABEL WAREHOUSE SCRIPT: prints "wall cpu rss_kib"
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" \
    "$sluice" --warehouse "$2" run "$3" --bounded > /dev/null 2>&1
  read -r wall user sys rss < "$tmp/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  printf '%-44s %7.2f s wall %7.2f s CPU %7d MiB peak RSS\n' "$1" "$wall" "$cpu" $((rss / 1024))
  echo "$cpu" > "$tmp/cpu"
}
measure "append $keys rows (no key)" "$tmp/wh-plain" "$tmp/plain.sql"
plain=$(cat "$tmp/cpu")
measure "upsert $keys keys (primary key)" "$tmp/wh-pk" "$tmp/pk.sql"
pk=$(cat "$tmp/cpu")
printf '{"id":5,"name":"x"}\n' > "$tmp/in/b.jsonl"
measure "restart: load the index of $keys keys" "$tmp/wh-pk" "$tmp/pk.sql"
rows=$("$sluice" --warehouse "$tmp/wh-pk" scan lake.t --columns id | wc -l)
[ "$rows" = "$keys" ] || { echo "upsert_bench: FAILED: $rows rows, want $keys" >&2; exit 1; }
awk -v k="$keys" -v p="$pk" -v a="$plain" 'BEGIN {
  printf "upserts per CPU-second: %.0f K; upsert CPU / append CPU: %.1fx\n", k / p / 1000, p / a }'
