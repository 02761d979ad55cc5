#!/usr/bin/env bash
# Torture (issue 9, section 6): everything that writes a table, at once, and
# kill -9 of any process. Two `sluice run` processes each run one pipeline
# into the same table lake.events (HTTP sources a_in and b_in, a commit every
# 100 ms), each with its maintenance service compacting (a partition with 2
# small files is due), rewriting manifests (above 4), expiring snapshots
# (10 s retention, every 0.5 s) of lake.events and its dead-letter table.
# Meanwhile:
#   - producers stream numbered batches into both (each batch with an
#     Idempotency-Key, retried until acknowledged); some records carry a
#     user_id too big for the sources' INT and go to the dead-letter table,
#     some are malformed for good;
#   - a deleter deletes whole batches (`sluice table delete`), once all their
#     rows are visible, so that no later row of theirs can arrive;
#   - a replayer moves the oversized records from the dead-letter table into
#     lake.events (`sluice dlq replay` with the source widened to BIGINT);
#   - a killer SIGKILLs one of the servers at random moments or has it die
#     at a named kill point, and restarts it; the deleter and the replayer
#     are themselves killed at random moments.
# Audit afterwards (after a clean run of both, a last replay, and the deletes
# whose outcome a kill left unknown done again):
#   - lake.events holds exactly every acknowledged record (good ones and
#     replayed ones) but those of deleted batches: none lost, duplicated or
#     resurrected (a deleted batch coming back is a lost delete);
#   - the dead-letter table holds exactly the malformed records;
#   - every snapshot the table still holds reads, in sluice and in icebird
#     (an independent reader), with the same rows in both;
#   - no data file any snapshot references is missing; after expiry and orphan
#     cleanup, the data files on disk are exactly those referenced.
#
# Usage: torture_test.sh SLUICE_BINARY [KILLS [NODE]]  (KILLS empty or "-":
# $SLUICE_TORTURE_KILLS, else $SLUICE_CRASH_KILLS, else 100: server kills; the deleter's and replayer's
# come on top. NODE: the node binary for the icebird audit, default `node`
# when tests/interop/node_modules is installed.)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/lib/crash.sh"
SLUICE=$(realpath "$1")
KILLS=${2:-}
[ "$KILLS" != - ] || KILLS=
KILLS=${KILLS:-${SLUICE_TORTURE_KILLS:-${SLUICE_CRASH_KILLS:-100}}}
NODE=${3:-node}
PER=20  # records per batch
W=$(mktemp -d /tmp/sluice-torture.XXXXXX)
PID_A= PID_B=
cleanup() {
  kill_all "$PID_A" "$PID_B"
  [ -n "${SLUICE_KEEP_WORKDIR:-}" ] && echo "kept $W" || rm -rf "$W"
}
trap cleanup EXIT
fail() { echo "FAILED: $*"; exit 1; }
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }
PORT_A=$(( 20000 + RANDOM % 6000 ))
PORT_B=$(( PORT_A + 6000 ))

# pipeline.sql NAME USER_ID_TYPE: lake.events and one HTTP pipeline into it.
write_sql() {
  cat <<SQL
CREATE TABLE lake.events (id BIGINT NOT NULL, batch BIGINT, user_id BIGINT, kind STRING)
  PARTITIONED BY (bucket(4, id)) WITH ('sluice.maintenance.min-input-files' = '2',
    'sluice.maintenance.max-manifests' = '4', 'history.expire.max-snapshot-age-ms' = '10000',
    'sluice.maintenance.expire-interval-ms' = '500');
CREATE SOURCE $1_in (id BIGINT, batch BIGINT, user_id $2, kind STRING)
  WITH (connector = 'http') FORMAT JSON;
CREATE PIPELINE load_$1 WITH (commit_interval = '100ms') AS
  INSERT INTO lake.events SELECT id, batch, user_id, kind FROM $1_in;
SQL
}
for p in a b; do
  write_sql $p INT > "$W/$p.sql"
  write_sql $p BIGINT > "$W/${p}_wide.sql"  # the replayer's: the oversized records decode
done

KILL_POINTS=(pipeline.after_data_files catalog.after_metadata catalog.before_swap
             catalog.after_swap pipeline.after_commit maintenance.compact.before_commit
             maintenance.expire.before_delete)
start_server() {  # start_server a|b [KILL_POINT]
  local port=$PORT_A
  [ "$1" = a ] || port=$PORT_B
  SLUICE_KILL_POINT=${2:-} "$SLUICE" --warehouse "$W/wh" run "$W/$1.sql" \
    --listen "127.0.0.1:$port" >>"$W/server_$1.log" 2>&1 &
  if [ "$1" = a ]; then PID_A=$!; else PID_B=$!; fi
}

# The records of batch B of pipeline P (a: ids B*100+i, batches B; b: ids
# 10^9 + B*100+i, batches 10^6 + B), i = 1..PER: record 7 of every third
# batch has a user_id too big for INT (its batch is -batch: never deleted),
# every tenth batch has one malformed record more.
batch_of() { if [ "$1" = a ]; then echo "$2"; else echo $(( 1000000 + $2 )); fi; }
records() {  # records P B
  local base=0 batch
  [ "$1" = a ] || base=1000000000
  batch=$(batch_of "$1" "$2")
  seq 1 $PER | awk -v base=$base -v b="$2" -v batch="$batch" '{
    id = base + b * 100 + $1
    if ($1 == 7 && b % 3 == 0)
      printf "{\"id\":%d,\"batch\":%d,\"user_id\":5000000000,\"kind\":\"big\"}\n", id, -batch
    else
      printf "{\"id\":%d,\"batch\":%d,\"user_id\":%d,\"kind\":\"k%d\"}\n", id, batch, $1, $1 % 3
  }'
  [ $(( $2 % 10 )) -ne 0 ] || echo '{"id":"not a number"}'
}
producer() {  # producer P PORT: batches 1.. until the killer is done (at least 20)
  local b=0
  while [ ! -f "$W/kills-done" ] || [ "$b" -lt 20 ]; do
    b=$((b + 1))
    records "$1" "$b" > "$W/body_$1"
    post_until_acked "http://127.0.0.1:$2" "$1_in" "batch-$b" "$W/body_$1"
    echo "$b" > "$W/acked_$1"
    nap 0.05  # (as fast as acked, they kept a core busy starting processes)
  done
}

# run_killable LOG N CMD...: runs CMD (output to LOG), SIGKILLed after
# 0.2..0.9 s when N is odd, else given 10 s. Prints "ok", "killed", "lost"
# (it gave up on conflicts, or could not tell whether its commit landed) or
# "error" (anything else: the audit fails).
run_killable() {
  local log=$1 limit=10 rc=0
  [ $(($2 % 2)) -eq 0 ] || limit="0.$(( 2 + RANDOM % 8 ))"
  shift 2
  # (a subshell: its shell, not ours, reports the kill, to /dev/null)
  ( timeout -s KILL "$limit" "$@" > "$log.last" 2>&1 ) 2>/dev/null || rc=$?
  cat "$log.last" >> "$log"
  if [ "$rc" = 0 ]; then echo ok
  elif [ "$rc" = 137 ]; then echo killed
  elif grep -qiE 'conflict|gave up after|commit state unknown' "$log.last"; then echo lost
  else echo error; fi
}

# The deleter: a batch acknowledged, not yet deleted, all of whose rows are
# visible goes (`sluice table delete`). Deletes that returned 0 are
# confirmed; a killed or lost one may or may not have committed ("unsure":
# done again after the run).
deleter() {
  local n=0 runs=0 p b batch visible want outcome
  while [ ! -f "$W/kills-done" ]; do
    n=$((n + 1))
    p=a; [ $((n % 2)) -eq 0 ] || p=b
    b=$(cat "$W/acked_$p" 2>/dev/null || true)  # (empty while being written)
    [ "${b:-0}" -gt 2 ] || { nap 0.2; continue; }
    b=$(( 1 + RANDOM % (b - 1) ))
    batch=$(batch_of $p "$b")
    if grep -qx "$batch" "$W/deleted" "$W/unsure"; then continue; fi
    want=$PER; [ $((b % 3)) -ne 0 ] || want=$((PER - 1))
    visible=$(S scan lake.events --where "batch = $batch" --columns id 2>/dev/null | grep -c . || true)
    [ "$visible" = "$want" ] || { nap 0.1; continue; }
    runs=$((runs + 1))
    outcome=$(run_killable "$W/deleter.log" "$runs" "$SLUICE" --warehouse "$W/wh" table delete \
      lake.events --where "batch = $batch")
    case $outcome in
      ok) echo "$batch" >> "$W/deleted" ;;
      error) echo "delete of batch $batch: $(tail -1 "$W/deleter.log")" >> "$W/errors"
             echo "$batch" >> "$W/unsure" ;;
      *) echo "$batch" >> "$W/unsure" ;;
    esac
    nap 0.1
  done
}

# The replayer: moves the decodable dead letters of one pipeline or the
# other into lake.events, at random moments killed.
replayer() {
  local n=0 p outcome
  while [ ! -f "$W/kills-done" ]; do
    n=$((n + 1))
    p=a; [ $((n % 2)) -eq 0 ] || p=b
    outcome=$(run_killable "$W/replayer.log" "$((n / 2))" "$SLUICE" --warehouse "$W/wh" dlq replay \
      "$W/${p}_wide.sql" "load_$p")
    echo "$outcome" >> "$W/replays"
    [ "$outcome" != error ] ||
      echo "replay of load_$p: $(tail -1 "$W/replayer.log")" >> "$W/errors.replay"
    nap 0.3
  done
}

touch "$W/deleted" "$W/unsure" "$W/errors" "$W/errors.replay" "$W/replays"
start_server a
wait_up "http://127.0.0.1:$PORT_A" "$PID_A" 120 || { cat "$W/server_a.log"; fail "server a does not start"; }
start_server b
wait_up "http://127.0.0.1:$PORT_B" "$PID_B" 120 || { cat "$W/server_b.log"; fail "server b does not start"; }
producer a "$PORT_A" & PRODUCER_A=$!
producer b "$PORT_B" & PRODUCER_B=$!
deleter & DELETER=$!
replayer & REPLAYER=$!

# The killer: one of the servers at a time; every third restart armed at a
# named kill point (the N-th time it passes it), the others killed after
# 100..600 ms.
kills=0 at_points=0
while [ "$kills" -lt "$KILLS" ]; do
  victim=a; [ $((RANDOM % 2)) -eq 0 ] || victim=b
  pid=$PID_A; [ "$victim" = a ] || pid=$PID_B
  kp=
  [ $((kills % 3)) -ne 2 ] ||
    kp=${KILL_POINTS[$(( (kills / 3) % ${#KILL_POINTS[@]} ))]}:$((1 + RANDOM % 3))
  if [ -z "$kp" ]; then
    nap "0.$(printf '%03d' $(( 100 + RANDOM % 500 )))"
    kill -9 "$pid" 2>/dev/null || true
    { wait "$pid"; } 2>/dev/null || true
    start_server "$victim"
  else
    kill -9 "$pid" 2>/dev/null || true
    { wait "$pid"; } 2>/dev/null || true
    start_server "$victim" "$kp"
    pid=$PID_A; [ "$victim" = a ] || pid=$PID_B
    # 4 s to reach it; 12 s for the maintenance service's, whose units
    # begin after the restart's first assessment and wait out a conflict.
    steps=200
    case $kp in maintenance.*) steps=600 ;; esac
    for _ in $(seq 1 "$steps"); do kill -0 "$pid" 2>/dev/null || break; nap 0.02; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null || true
    else
      at_points=$((at_points + 1))
    fi
    { wait "$pid"; } 2>/dev/null || true
    start_server "$victim"
  fi
  kills=$((kills + 1))
done
touch "$W/kills-done"
wait "$DELETER" "$REPLAYER"

# Clean runs: the producers finish, the pipelines catch up, SIGTERM.
for p in a b; do
  kill -9 "$([ $p = a ] && echo "$PID_A" || echo "$PID_B")" 2>/dev/null || true
done
wait "$PID_A" "$PID_B" 2>/dev/null || true
start_server a
start_server b
wait_up "http://127.0.0.1:$PORT_A" "$PID_A" 120 || { tail "$W/server_a.log"; fail "server a does not restart"; }
wait_up "http://127.0.0.1:$PORT_B" "$PID_B" 120 || { tail "$W/server_b.log"; fail "server b does not restart"; }
wait "$PRODUCER_A" "$PRODUCER_B"
acked_a=$(cat "$W/acked_a") acked_b=$(cat "$W/acked_b")
for p in a b; do
  port=$PORT_A acked=$acked_a
  [ $p = a ] || { port=$PORT_B; acked=$acked_b; }
  records=$(( acked * PER + acked / 10 ))  # the log's end offset
  for _ in $(seq 1 600); do
    committed=$(curl -s "http://127.0.0.1:$port/v1/status" | sed -n 's/.*"committed_offset":\([0-9]*\).*/\1/p')
    [ "${committed:-0}" -ge "$records" ] && break
    nap 0.1
  done
  [ "${committed:-0}" -ge "$records" ] || fail "pipeline load_$p committed up to ${committed:-?} of $records"
done
kill -TERM "$PID_A" "$PID_B"
wait "$PID_A" || { tail -20 "$W/server_a.log"; fail "server a did not exit 0 on SIGTERM"; }
wait "$PID_B" || { tail -20 "$W/server_b.log"; fail "server b did not exit 0 on SIGTERM"; }
PID_A= PID_B=
# The last replays and the deletes a kill left unsure (they may have
# committed: deleting again is a no-op then; their batches are complete).
for p in a b; do S dlq replay "$W/${p}_wide.sql" "load_$p" > /dev/null; done
for batch in $(sort -u "$W/unsure"); do
  grep -qx "$batch" "$W/deleted" || S table delete lake.events --where "batch = $batch" > /dev/null
done

# What the table must hold: every acknowledged record but the malformed ones
# and those of deleted batches.
sort -u "$W/deleted" "$W/unsure" > "$W/gone"
for p in a b; do
  acked=$acked_a; [ $p = a ] || acked=$acked_b
  for b in $(seq 1 "$acked"); do records $p "$b"; done
done | grep -v 'not a number' |
  sed 's/.*"id":\([0-9]*\),"batch":\(-\{0,1\}[0-9]*\).*/\1 \2/' |
  awk 'FILENAME == ARGV[1] { gone[$1] = 1; next } !($2 in gone) { print $1 }' "$W/gone" - |
  sort > "$W/want"
S scan lake.events --columns id | sed 's/[^0-9]//g' | sort > "$W/got"
dead=$(S scan lake.events__dlq --columns payload | grep -c 'not a number' || true)
dead_all=$(S scan lake.events__dlq --columns offset | grep -c . || true)
want_dead=$(( acked_a / 10 + acked_b / 10 ))
echo "kill points reached:"
grep -ho 'kill point [a-z_.]* reached' "$W"/server_*.log | sort | uniq -c || true
echo "server kills=$kills (at kill points: $at_points); deleter: $(wc -l < "$W/deleted") deletes" \
  "confirmed, $(wc -l < "$W/unsure") unsure (killed or lost); replayer: $(grep -c ok "$W/replays" || true)" \
  "done, $(grep -c killed "$W/replays" || true) killed, $(grep -c lost "$W/replays" || true) lost"
echo "batches a=$acked_a b=$acked_b; rows want $(wc -l < "$W/want"), got $(wc -l < "$W/got")" \
  "(distinct $(sort -u "$W/got" | wc -l)); dead letters $dead_all (malformed $dead, want $want_dead)"
if ! diff "$W/want" "$W/got" > "$W/diff"; then
  echo "missing (lost): $(grep -c '^<' "$W/diff" || true); extra (duplicated or resurrected):" \
    "$(grep -c '^>' "$W/diff" || true)"
  head -5 "$W/diff"
  fail "lake.events does not hold exactly the acknowledged, undeleted records"
fi
[ "$dead" = "$want_dead" ] && [ "$dead_all" = "$want_dead" ] ||
  fail "want exactly the $want_dead malformed records in the dead-letter table"
[ "$at_points" -gt 0 ] || fail "no run ended at a kill point"
if grep -h . "$W/errors" "$W/errors.replay"; then
  fail "a delete or replay failed (not killed, not a conflict)"
fi
min_done=1; [ "$KILLS" -lt 100 ] || min_done=5
[ "$(wc -l < "$W/deleted")" -ge "$min_done" ] || fail "fewer than $min_done deletes confirmed"
[ "$(grep -c ok "$W/replays" || true)" -ge "$min_done" ] || fail "fewer than $min_done replays completed"
if [ "$KILLS" -ge 100 ]; then
  for kp in "${KILL_POINTS[@]}"; do
    grep -q "kill point $kp reached" "$W"/server_*.log || fail "kill point $kp never reached"
  done
fi
compactions=$(S table snapshots lake.events --json | grep -c 'sluice.maintenance=compact' || true)
compacted_live=$(S table files lake.events --json | grep -c '/compact-' || true)
carried=$(S table snapshots lake.events --json | grep -c 'sluice.carried-deletes' || true)
echo "compaction snapshots held: $compactions ($carried carried deletes onto their output);" \
  "live compaction output: $compacted_live files"
[ $((compactions + compacted_live)) -gt 0 ] || fail "the maintenance services never compacted"

# Every snapshot still held reads, in sluice and icebird alike.
snapshots=$(S table snapshots lake.events --json | grep -o '"snapshot_id":"\{0,1\}[0-9]*' | grep -o '[0-9]*$')
echo "$(echo "$snapshots" | grep -c .) snapshots held"
S table verify lake.events --read-data > "$W/verify.out" 2>&1 ||
  { cat "$W/verify.out"; fail "a snapshot does not read"; }
tail -1 "$W/verify.out"
if [ -d "$HERE/../interop/node_modules/icebird" ] && command -v "$NODE" > /dev/null; then
  "$NODE" "$HERE/../interop/snapshots_icebird.mjs" "$SLUICE" "$W/wh" lake.events ||
    fail "icebird and sluice disagree on a snapshot"
else
  echo "icebird audit skipped: no node or no tests/interop/node_modules"
  [ -z "${CI:-}" ] || fail "CI needs the icebird audit"
fi

# Expiry down to the current snapshot, then orphan cleanup (no margin:
# nothing is in flight now): the data files on disk are then exactly the
# referenced ones, and the rows the same.
S table expire-snapshots lake.events --older-than 0s --retain-last 1 > /dev/null
S table remove-orphans lake.events --older-than 0s > /dev/null
S table files lake.events --json | grep -o '"file_path":"[^"]*"' |
  sed 's/"file_path":"file:\/\///; s/"$//' | sort > "$W/referenced"
find "$W/wh/lake/events/data" -type f | sort > "$W/on_disk"
if comm -13 "$W/on_disk" "$W/referenced" | grep .; then fail "referenced data files missing"; fi
diff "$W/referenced" "$W/on_disk" || fail "after orphan cleanup, unreferenced data files remain"
S scan lake.events --columns id | sed 's/[^0-9]//g' | sort | cmp -s - "$W/want" ||
  fail "expiry or orphan cleanup changed the rows"
echo "1 passed, 0 failed"
