#!/usr/bin/env bash
# Pipeline throughput with the warehouse on S3 against local disk, in one run:
# bench/pipeline_bench.cc (HTTP -> log -> committed Iceberg table, 1 s commits)
# twice on a local warehouse and twice on s3://lake/bench on a local s3rver
# (tests/with_s3.sh; the catalog, log and journal stay on local disk), as fast
# as sluice accepts and paced at BENCH_RATE. Reports events per CPU-second of
# the sluice process (s3rver's own CPU not counted) and freshness, and the S3
# ratios.
#   bench/s3_bench.sh [build dir]   (default build)
# Env: BENCH_SECONDS (default 10), BENCH_RATE (default 300000).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$repo/build}")
export BENCH_SECONDS=${BENCH_SECONDS:-10} BENCH_RATE=${BENCH_RATE:-300000}
bench=$build/bench/pipeline_bench
sluice=$build/sluice
[ -x "$bench" ] && [ -x "$sluice" ] || { echo "build sluice and pipeline_bench first" >&2; exit 1; }
run() {  # run LABEL RATE [WAREHOUSE]
  local out
  out=$(BENCH_WAREHOUSE=${3:-} "$bench" "$sluice" "$BENCH_SECONDS" 20000 2 1s "$2" 2>/dev/null | tail -4)
  echo "== $1"
  echo "$out"
  echo "$out" | sed -n 's/.*events_per_cpu_second=\([0-9]*\).*/\1/p' | head -1 > "$tmp/$1"
  # sustained: events accepted over the time until all were committed
  echo "$out" | sed -n 's/^accepted: \([0-9]*\) events\/s .* over \([0-9.]*\) s; all committed after \([0-9.]*\) s.*/\1 \2 \3/p' |
    awk '{ printf "%.0f", $1 * $2 / $3 }' > "$tmp/$1.sustained"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export -f run
export bench sluice tmp
run local_max 0
run local_paced "$BENCH_RATE"
"$repo/tests/with_s3.sh" bash -c 'run s3_max 0 s3://lake/bench-max; run s3_paced "$BENCH_RATE" s3://lake/bench-paced'
ratio() { awk -v a="$(cat "$tmp/$1")" -v b="$(cat "$tmp/$2")" 'BEGIN { printf "%.2f", a / b }'; }
for mode in max paced; do
  echo "S3 over local, $mode: events per CPU-second $(ratio "s3_$mode" "local_$mode")x," \
    "sustained events/s $(ratio "s3_$mode.sustained" "local_$mode.sustained")x"
done
