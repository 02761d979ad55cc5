#!/usr/bin/env bash
# The window operator over many keys: count/sum/max per key over SESSION (5 s
# gap), TUMBLE (10 s) and HOP (2 s slide, 10 s size), EVENTS events over GROUPS
# keys at 10,000 events per second of event time, one bounded run each (one
# thread, 1 s commits). Prints each run's CPU seconds, events per CPU-second,
# peak RSS and rows. With a second binary (OTHER), runs each kind with both,
# alternating, and checks both wrote the same number of rows: an A/B of two
# builds in one session.
#   bench/window_bench.sh [path/to/sluice] [EVENTS] [GROUPS] [OTHER] [ROUNDS]
#   (defaults build/sluice, 1000000, 100000, none, 1)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sluice=$(realpath "${1:-$repo/build/sluice}")
events=${2:-1000000}
groups=${3:-100000}
other=${4:-}
rounds=${5:-1}
for b in "$sluice" ${other:+"$other"}; do
  [ -x "$b" ] || { echo "window_bench: no sluice binary at $b" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-window-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
awk -v n="$events" -v g="$groups" 'BEGIN { srand(3)
  for (i = 0; i < n; i++) { s = int(i / 10000)
    printf "{\"id\":%d,\"k\":%d,\"v\":%d,\"ts\":\"2024-01-01T%02d:%02d:%02dZ\"}\n", i,
      int(rand() * g), int(rand() * 1000), int(s / 3600) % 24, int(s / 60) % 60, s % 60 } }' \
  > "$tmp/events.jsonl"

run() {  # BIN KIND: prints "cpu_seconds peak_kib rows"
  local bin=$1 kind=$2 from d
  case $kind in
    session) from="SESSION(s, ts, INTERVAL '5' SECOND)" ;;
    tumble) from="TUMBLE(s, ts, INTERVAL '10' SECOND)" ;;
    hop) from="HOP(s, ts, INTERVAL '2' SECOND, INTERVAL '10' SECOND)" ;;
  esac
  d=$(mktemp -d "$tmp/run-XXXX")
  mkdir -p "$d/in"
  ln -s "$tmp/events.jsonl" "$d/in/0001.jsonl"
  cat > "$d/p.sql" <<SQL
CREATE TABLE lake.t (ws TIMESTAMPTZ, we TIMESTAMPTZ, k BIGINT, n BIGINT, total BIGINT, hi BIGINT);
CREATE SOURCE s (id BIGINT, k BIGINT, v BIGINT, ts TIMESTAMPTZ,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'file', path = '$d/in') FORMAT JSON;
CREATE PIPELINE p WITH (commit_interval = '1s', parallelism = '1') AS INSERT INTO lake.t
  SELECT window_start, window_end, k, count(*), sum(v), max(v)
  FROM $from GROUP BY window_start, window_end, k;
SQL
  /usr/bin/time -f "%U %S %M" -o "$d/time" "$bin" --warehouse "$d/wh" run "$d/p.sql" --bounded \
    > /dev/null 2> "$d/err" || { echo "window_bench: $kind failed:" >&2; cat "$d/err" >&2; exit 1; }
  local rows u s m
  rows=$("$bin" --warehouse "$d/wh" table snapshots lake.t --json |
    node -e 'const s = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(s.length ? s[s.length - 1].total_records : 0)')
  read -r u s m < "$d/time"
  rm -rf "$d"
  awk -v u="$u" -v s="$s" -v m="$m" -v r="$rows" 'BEGIN { printf "%.2f %d %d\n", u + s, m, r }'
}

report() {  # LABEL KIND CPU KIB ROWS
  awk -v l="$1" -v k="$2" -v c="$3" -v m="$4" -v r="$5" -v e="$events" \
    'BEGIN { printf "%-8s %-7s %6.2f s CPU %6.0f K events/CPU-s %5d MiB peak %9d rows\n", l, k, c, e / c / 1000, m / 1024, r }'
}

echo "window_bench: $events events over $groups keys"
failed=0
for kind in session tumble hop; do
  for round in $(seq 1 "$rounds"); do
    read -r cpu kib rows < <(run "$sluice" "$kind")
    report this "$kind" "$cpu" "$kib" "$rows"
    if [ -n "$other" ]; then
      read -r o_cpu o_kib o_rows < <(run "$other" "$kind")
      report other "$kind" "$o_cpu" "$o_kib" "$o_rows"
      awk -v a="$o_cpu" -v b="$cpu" 'BEGIN { printf "         other / this CPU: %.2fx\n", a / b }'
      if [ "$rows" != "$o_rows" ]; then
        echo "window_bench: FAILED: $kind wrote $rows rows, the other binary $o_rows" >&2
        failed=1
      fi
    fi
  done
done
exit "$failed"
