#!/usr/bin/env bash
# Parquet write/scan benchmark: sluice against DuckDB (single-threaded), same
# data, same machine, same run. See bench/README.md.
#   bench/parquet_bench.sh [path/to/sluice] [ROWS]   (from anywhere; default build/sluice, 2000000)
# Env: BENCH_RUNS (default 2; the best run counts), BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sluice=$(realpath "${1:-$repo/build/sluice}")
rows=${2:-2000000}
runs=${BENCH_RUNS:-2}
schema='id BIGINT, user_id BIGINT, kind STRING, url STRING, amount DOUBLE, ts TIMESTAMPTZ, note STRING'

[ -x "$sluice" ] || { echo "parquet_bench: no sluice binary at $sluice" >&2; exit 1; }
[ -d "$repo/tests/interop/node_modules/@duckdb/node-api" ] ||
  { echo "parquet_bench: run scripts/install-deps.sh (npm ci in tests/interop) first" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-XXXXXX")
[ "${BENCH_KEEP:-0}" = 1 ] && echo "temp dir: $tmp (kept)" || trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b + 0 < a + 0) ? b : a }'; }
# best_of CMD...: runs CMD $runs times; prints "wall cpu" seconds of the run with
# the smallest wall time (cpu = user + sys, to see whether CMD used >1 core).
best_of() {
  local best="" line
  for _ in $(seq "$runs"); do
    line=$( { TIMEFORMAT='%3R %3U %3S'; time "$@" 2>&4; } 4>&2 2>&1 | tail -1)
    best=$(awk -v b="$best" -v l="$line" 'BEGIN { split(l, t, " "); w = t[1]; c = t[2] + t[3];
      split(b, o, " "); if (b == "" || w < o[1]) printf "%.3f %.3f", w, c; else print b }')
  done
  echo "$best"
}
# best_inner CMD...: like best_of, but CMD prints its own time (DuckDB start-up excluded).
best_inner() {
  local best="" t
  for _ in $(seq "$runs"); do
    t=$("$@" | cut -d' ' -f1)
    best=$(min "$best" "$t")
  done
  echo "$best"
}
rate() { awk -v n="$rows" -v t="$1" 'BEGIN { printf "%.0f", n / t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
size() { stat -c %s "$1"; }

echo "generating $rows events..."
node "$repo/bench/gen_events.mjs" "$rows" "$tmp/events.jsonl"
echo "input: $(size "$tmp/events.jsonl") bytes of JSON lines; best of $runs runs each"

sluice_write() { "$sluice" parquet write --schema "$schema" --codec zstd "$tmp/events.jsonl" "$tmp/sluice.parquet"; }
sluice_cat() { "$sluice" parquet cat "$1" > /dev/null; }
duck() { node "$repo/bench/duckdb_side.mjs" "$@"; }

sluice_write  # untimed: fails the script on an error (timed runs cannot), warms the page cache
read -r t_sw c_sw <<< "$(best_of sluice_write)"
t_dw=$(best_inner duck write "$tmp/events.jsonl" "$tmp/duckdb.parquet")
n_check=$(duck read "$tmp/sluice.parquet" | cut -d' ' -f2)
[ "$n_check" = "$rows" ] || { echo "DuckDB reads $n_check rows from sluice's file, expected $rows" >&2; exit 1; }
sluice_cat "$tmp/sluice.parquet" && sluice_cat "$tmp/duckdb.parquet"  # untimed check
read -r t_sr c_sr <<< "$(best_of sluice_cat "$tmp/sluice.parquet")"
t_dr=$(best_inner duck read "$tmp/sluice.parquet")
t_dj=$(best_inner duck tojson "$tmp/sluice.parquet")
read -r t_sr_d _ <<< "$(best_of sluice_cat "$tmp/duckdb.parquet")"
# Decode-only full scan (all columns into column batches), when built.
scan_bench="$(dirname "$sluice")/bench/parquet_scan_bench"
t_sd=""
if [ -x "$scan_bench" ]; then
  read -r n_sd t_sd <<< "$("$scan_bench" "$tmp/sluice.parquet" "$runs")"
  [ "$n_sd" = "$rows" ] || { echo "parquet_scan_bench read $n_sd rows, expected $rows" >&2; exit 1; }
fi
s_s=$(size "$tmp/sluice.parquet")
s_d=$(size "$tmp/duckdb.parquet")

printf '\n%-48s %12s %14s\n' "measure" "seconds" "rows/s"
printf '%-48s %12.3f %14s\n' "write zstd: sluice parquet write" "$t_sw" "$(rate "$t_sw")"
printf '%-48s %12.3f %14s\n' "write zstd: DuckDB COPY (threads=1)" "$t_dw" "$(rate "$t_dw")"
printf '%-48s %12.3f %14s\n' "scan sluice file: sluice parquet cat" "$t_sr" "$(rate "$t_sr")"
printf '%-48s %12.3f %14s\n' "scan sluice file: DuckDB hash all (thr=1)" "$t_dr" "$(rate "$t_dr")"
printf '%-48s %12.3f %14s\n' "scan sluice file: DuckDB to JSON lines (thr=1)" "$t_dj" "$(rate "$t_dj")"
printf '%-48s %12.3f %14s\n' "scan DuckDB file: sluice parquet cat" "$t_sr_d" "$(rate "$t_sr_d")"
[ -n "$t_sd" ] && printf '%-48s %12.3f %14s\n' "scan sluice file: sluice decode only" "$t_sd" "$(rate "$t_sd")"
echo
echo "sluice CPU time (user+sys): write ${c_sw}s, cat ${c_sr}s (DuckDB runs with threads=1)"
echo "write throughput sluice/DuckDB: $(ratio "$t_dw" "$t_sw")x   (target >= 1.2)"
echo "file size: sluice $s_s bytes, DuckDB $s_d bytes, sluice/DuckDB: $(ratio "$s_s" "$s_d")   (target <= 1.05)"
echo "scan throughput sluice/DuckDB: $(ratio "$t_dr" "$t_sr")x vs hashing, $(ratio "$t_dj" "$t_sr")x vs DuckDB printing JSON lines"
[ -n "$t_sd" ] && echo "full-scan decode sluice/DuckDB hash-all: $(ratio "$t_dr" "$t_sd")x"
