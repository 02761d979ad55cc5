#!/usr/bin/env bash
# End-to-end pipeline benchmark (HTTP -> log -> committed Iceberg), see
# bench/pipeline_bench.cc, with DuckDB as the reference in the same run: DuckDB
# (one thread) converting the same kind of events from JSON lines to zstd
# Parquet. sluice's figure is events per CPU-second of the `sluice run`
# process, which does more (HTTP, a durable log with fsync, Iceberg commits).
#   bench/pipeline_bench.sh [build dir]   (default build)
# Env: BENCH_SECONDS (default 10), BENCH_RATE (events/s for the freshness run,
# default 500000).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$repo/build}")
seconds=${BENCH_SECONDS:-10}
rate=${BENCH_RATE:-500000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-pbench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bench=$build/bench/pipeline_bench
sluice=$build/sluice
[ -x "$bench" ] && [ -x "$sluice" ] || { echo "build sluice and pipeline_bench first" >&2; exit 1; }

echo "== throughput: clients send as fast as sluice accepts"
"$bench" "$sluice" "$seconds" 20000 2 1s 0 "$tmp/events.jsonl" 2>/dev/null | tee "$tmp/max"
echo "== freshness: $rate events/s, 1 s commits"
"$bench" "$sluice" "$seconds" 5000 2 1s "$rate" 2>/dev/null | tee "$tmp/paced"

echo "== reference: DuckDB (threads=1) JSON lines -> zstd Parquet, same events"
n=$(wc -l < "$tmp/events.jsonl")
t=$(node "$repo/bench/duckdb_side.mjs" write "$tmp/events.jsonl" "$tmp/duck.parquet" \
  "{id: 'BIGINT', user_id: 'BIGINT', kind: 'VARCHAR', url: 'VARCHAR', ts: 'TIMESTAMPTZ'}")
duck=$(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.0f", n / t }')
ours=$(sed -n 's/.*events_per_cpu_second=\([0-9]*\).*/\1/p' "$tmp/max")
echo "DuckDB: $n events in ${t}s = $duck events/s"
echo "sluice events/s/core over DuckDB events/s (1 thread): $(awk -v a="$ours" -v b="$duck" 'BEGIN { printf "%.2f", a / b }')x"
