#!/usr/bin/env bash
# A producer among hostile clients: `sluice run examples/events.sql` while
# bench/hostile_soak.mjs holds IDLE idle connections, SLOW header tricklers and BAD
# clients sending malformed and smuggling requests, and one producer POSTs numbered
# events with an Idempotency-Key per batch (retrying until acknowledged). Then
# checks that lake.events holds every acknowledged id exactly once and nothing
# else, and reports the producer's latency percentiles next to a run without the
# hostile clients (the reference, same machine, same run).
#   bench/hostile_soak.sh [build dir]
# Env: IDLE (2000), SLOW (500), BAD (50), BATCHES (2000), BATCH_SIZE (50).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath "${1:-$repo/build}")
sluice=$build/sluice
IDLE=${IDLE:-2000} SLOW=${SLOW:-500} BAD=${BAD:-50} BATCHES=${BATCHES:-2000}
BATCH_SIZE=${BATCH_SIZE:-50}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-soak-XXXXXX")
PID=
trap '[ -z "$PID" ] || kill -9 "$PID" 2>/dev/null; rm -rf "$tmp"' EXIT
ulimit -n "$(ulimit -Hn)"

soak() {  # soak NAME IDLE SLOW BAD
  local port=$(( 20000 + RANDOM % 12000 ))
  rm -rf "$tmp/wh"
  (cd "$repo" && exec "$sluice" --warehouse "$tmp/wh" run examples/events.sql \
    --listen "127.0.0.1:$port" 2> "$tmp/$1.log") & PID=$!
  for _ in $(seq 1 200); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.05; done
  node "$repo/bench/hostile_soak.mjs" "$port" "$2" "$3" "$4" "$BATCHES" "$BATCH_SIZE" \
    > "$tmp/$1.acked" 2> "$tmp/$1.report"
  echo "$1: $(cat "$tmp/$1.report")"
  sleep 2  # one more commit
  local start=$(date +%s.%N)
  kill -TERM "$PID"; wait "$PID" || { cat "$tmp/$1.log"; echo "FAILED: sluice run did not exit 0"; exit 1; }
  PID=
  echo "$1: SIGTERM to exit: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }') s"
  "$sluice" --warehouse "$tmp/wh" scan lake.events --columns id | tr -dc '0-9\n-' | sort -n > "$tmp/$1.ids"
  awk '{ for (i = $2; i <= $3; i++) print i }' "$tmp/$1.acked" | sort -n > "$tmp/$1.want"
  if cmp -s "$tmp/$1.ids" "$tmp/$1.want"; then
    echo "$1: lake.events holds each of the $(wc -l < "$tmp/$1.want") acknowledged events exactly once, nothing else"
  else
    echo "FAILED: $1: table and acknowledgements differ (table $(wc -l < "$tmp/$1.ids") rows," \
      "$(sort -n "$tmp/$1.ids" | uniq -d | wc -l) duplicated, $(grep -c -- '^-' "$tmp/$1.ids" || true) smuggled)"
    exit 1
  fi
}
soak reference 0 0 0
soak hostile "$IDLE" "$SLOW" "$BAD"
