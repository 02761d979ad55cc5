#!/usr/bin/env bash
# Chained pipelines through a table source: raw events (a file source) ->
# per-minute metrics -> per-hour metrics read FROM TABLE lake.per_minute, next
# to per-hour metrics computed from the raw events directly. The two per-hour
# tables must be equal:
#   1. after a bounded run (the chained pipeline starts once its upstream has
#      ended and reads all it committed);
#   2. after bounded runs killed with SIGKILL at random moments, then a clean
#      one (the table source's position, snapshot id and row, is committed
#      with the data: nothing is read twice or skipped);
#   3. after more events arrive and a second bounded run resumes (only new
#      windows, none twice).
# Also: start = 'latest' reads none of what was there before, and a streaming
# run fills the chained table as events arrive.
# Usage: chain_test.sh SLUICE_BINARY [KILLS]  (default 12)
set -euo pipefail
SLUICE=$(realpath "$1")
KILLS=${2:-12}
W=$(mktemp -d /tmp/sluice-chain.XXXXXX)
RUN_PID=
cleanup() {
  [ -z "$RUN_PID" ] || kill -9 "$RUN_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/in"
gen() {  # gen FIRST COUNT FILE: events every 300 ms from 10:00 on 2024-03-05, 7 keys
  awk -v first="$1" -v n="$2" 'BEGIN {
    for (i = first; i < first + n; i++) {
      ms = i * 300; s = int(ms / 1000)
      printf "{\"id\":%d,\"k\":\"k%d\",\"v\":%d,\"ts\":\"2024-03-%02dT%02d:%02d:%02d.%03dZ\"}\n",
        i, i % 7, i % 100, 5 + int((36000 + s) / 86400), int((36000 + s) / 3600) % 24,
        int(s / 60) % 60, s % 60, ms % 1000
    }
  }' > "$3"
}
gen 1 1000000 "$W/in/a.jsonl"  # (a complete run takes about a second: kills land in it)
cat > "$W/chain.sql" <<SQL
CREATE TABLE lake.per_minute (minute TIMESTAMPTZ NOT NULL, k STRING, n BIGINT, total BIGINT);
CREATE TABLE lake.per_hour (hour TIMESTAMPTZ NOT NULL, k STRING, n BIGINT, total BIGINT);
CREATE TABLE lake.per_hour_direct (hour TIMESTAMPTZ NOT NULL, k STRING, n BIGINT, total BIGINT);
CREATE SOURCE ev (id BIGINT, k STRING, v BIGINT, ts TIMESTAMPTZ,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'file', path = '$W/in') FORMAT JSON;
CREATE SOURCE minutes FROM TABLE lake.per_minute (WATERMARK FOR minute AS minute);
CREATE PIPELINE to_minutes WITH (commit_interval = '50ms') AS INSERT INTO lake.per_minute
  SELECT window_start, k, count(*), sum(v) FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE)
  GROUP BY window_start, window_end, k;
CREATE PIPELINE to_hours WITH (commit_interval = '50ms') AS INSERT INTO lake.per_hour
  SELECT window_start, k, sum(n), sum(total) FROM TUMBLE(minutes, minute, INTERVAL '1' HOUR)
  GROUP BY window_start, window_end, k;
CREATE PIPELINE direct_hours AS INSERT INTO lake.per_hour_direct
  SELECT window_start, k, count(*), sum(v) FROM TUMBLE(ev, ts, INTERVAL '1' HOUR)
  GROUP BY window_start, window_end, k;
SQL
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }
failed=0
same() {  # same WHAT: per_hour equals per_hour_direct
  S scan lake.per_hour | sort > "$W/chained"
  S scan lake.per_hour_direct | sort > "$W/direct"
  local n
  n=$(wc -l < "$W/direct")
  if [ "$n" -gt 10 ] && cmp -s "$W/chained" "$W/direct"; then
    echo "ok   $1: $n hour rows, chained = direct"
  else
    echo "FAIL $1: chained $(wc -l < "$W/chained") rows, direct $n"
    diff "$W/chained" "$W/direct" | head -5
    failed=$((failed + 1))
  fi
}

# 2 (first, so that the kills land in a long first run), then 1.
kills=0
while [ "$kills" -lt "$KILLS" ]; do
  # Every other run, the first among them, dies at the N-th commit (any pipeline's), the
  # others at a random moment. N <= 3: a complete run of the input makes at least three
  # commits (each pipeline's last), and takes a fraction of a second, so a larger N or a
  # later moment would often find it complete. Once one run completes, the next ones have
  # nothing left to do and complete too.
  kp=
  [ $((kills % 2)) = 1 ] || kp=pipeline.after_commit:$((1 + RANDOM % 3))
  SLUICE_KILL_POINT=$kp "$SLUICE" --warehouse "$W/wh" run --bounded "$W/chain.sql" \
    2>>"$W/run.log" & RUN_PID=$!
  sleep "0.$(printf '%03d' $(( 30 + RANDOM % 300 )))"
  kill -9 "$RUN_PID" 2>/dev/null || true
  { wait "$RUN_PID"; } 2>/dev/null || true
  RUN_PID=
  kills=$((kills + 1))
done
completed=$(grep -c "bounded run complete" "$W/run.log" || true)
echo "kills: $KILLS runs, $completed of them completed before their kill"
[ "$completed" -lt "$KILLS" ] || { echo "FAIL: no run was killed before it completed"; failed=$((failed + 1)); }
S run --bounded "$W/chain.sql" 2>>"$W/run.log" || { tail "$W/run.log"; echo "FAILED: bounded run"; exit 1; }
same "bounded, after $KILLS kills"
snapshots=$(S table snapshots lake.per_hour --json | grep -c '"snapshot_id"' || true)

# 3. More events; the second run resumes.
gen 1000000 40000 "$W/in/b.jsonl"
S run --bounded "$W/chain.sql" 2>>"$W/run.log" || { tail "$W/run.log"; echo "FAILED: second run"; exit 1; }
same "resumed after new events"
dups=$(S scan lake.per_hour --columns hour,k | sort | uniq -d | wc -l)
[ "$dups" = 0 ] || { echo "FAIL: $dups hours committed twice"; failed=$((failed + 1)); }

# start = 'latest': nothing of what the table held when the pipeline started.
cat > "$W/latest.sql" <<SQL
CREATE TABLE lake.late_copy (minute TIMESTAMPTZ NOT NULL, k STRING, n BIGINT, total BIGINT);
CREATE SOURCE new_minutes FROM TABLE lake.per_minute WITH (start = 'latest');
CREATE PIPELINE copy_new AS INSERT INTO lake.late_copy SELECT * FROM new_minutes;
SQL
S run --bounded "$W/latest.sql" 2>>"$W/run.log" || { tail "$W/run.log"; echo "FAILED: latest"; exit 1; }
n=$(S scan lake.late_copy | wc -l)
[ "$n" = 0 ] && echo "ok   start = 'latest': no old rows" ||
  { echo "FAIL start = 'latest': $n rows"; failed=$((failed + 1)); }

# A streaming run: the chained table fills in as events arrive.
gen 1040000 40000 "$W/c.jsonl"
port=$(( 20000 + RANDOM % 12000 ))
before=$(S scan lake.per_hour | wc -l)
"$SLUICE" --warehouse "$W/wh" run "$W/chain.sql" --listen "127.0.0.1:$port" 2>>"$W/run.log" & RUN_PID=$!
sleep 0.5
mv "$W/c.jsonl" "$W/in/c.jsonl"
for _ in $(seq 1 100); do
  [ "$(S scan lake.per_hour | wc -l)" -gt "$before" ] && break
  sleep 0.1
done
kill -TERM "$RUN_PID"; wait "$RUN_PID" || { grep -v "running\|bounded run\|listening" "$W/run.log" | tail -5; echo "FAILED: streaming run"; exit 1; }
RUN_PID=
after=$(S scan lake.per_hour | wc -l)
[ "$after" -gt "$before" ] && echo "ok   streaming: per_hour grew from $before to $after rows" ||
  { echo "FAIL streaming: per_hour stayed at $before rows"; failed=$((failed + 1)); }
echo "per_hour snapshots after the first complete run: $snapshots"
if [ "$failed" = 0 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
