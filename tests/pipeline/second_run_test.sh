#!/usr/bin/env bash
# One warehouse, two `sluice run`: the second is refused before it can acknowledge
# anything (the stream log and the pipeline journal are locked by the first), with
# an error naming the holder's pid; the first keeps every acknowledged record. The
# locks die with their process: after SIGTERM and after kill -9 a new run starts.
# Usage: second_run_test.sh SLUICE_BINARY
set -euo pipefail
SLUICE=$(realpath "$1")
W=$(mktemp -d /tmp/sluice-second.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
fail() { echo "FAILED: $*"; exit 1; }
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }
P1=$(( 20000 + RANDOM % 12000 )); P2=$(( P1 + 1 ))

start() {  # start PORT LOG: sluice run in the background; sets PID
  "$SLUICE" --warehouse "$W/wh" run examples/events.sql --listen "127.0.0.1:$1" 2> "$W/$2" &
  PID=$!; PIDS+=("$PID")
}
wait_healthy() {  # wait_healthy PORT
  for _ in $(seq 1 200); do curl -s -o /dev/null "http://127.0.0.1:$1/healthz" && return 0; sleep 0.05; done
  return 1
}
post() {  # post PORT ID: prints the HTTP status
  curl -s -o /dev/null -w '%{http_code}' -XPOST --data-binary \
    "{\"id\":$2,\"user_id\":1,\"kind\":\"k\",\"ts\":\"2024-01-01T00:00:00Z\"}" \
    "http://127.0.0.1:$1/v1/streams/events_in/records" || true
}

start "$P1" first.log; FIRST=$PID
wait_healthy "$P1" || { cat "$W/first.log"; fail "first run did not start"; }
[ "$(post "$P1" 1)" = 200 ] || fail "first run did not acknowledge"

start "$P2" second.log; SECOND=$PID
status=0
for _ in $(seq 1 200); do kill -0 "$SECOND" 2>/dev/null || break; sleep 0.05; done
kill -0 "$SECOND" 2>/dev/null && fail "the second run is still running"
wait "$SECOND" || status=$?
[ "$status" != 0 ] || fail "the second run exited 0"
grep -q "in use by another process (pid $FIRST on host" "$W/second.log" ||
  { cat "$W/second.log"; fail "the second run's error does not name the holder (pid $FIRST)"; }
curl -s -o /dev/null "http://127.0.0.1:$P2/healthz" && fail "the second run served HTTP"
echo "second run refused: $(grep -m1 'in use' "$W/second.log")"

[ "$(post "$P1" 2)" = 200 ] || fail "first run stopped acknowledging"
kill -TERM "$FIRST"; wait "$FIRST" || { cat "$W/first.log"; fail "first run did not exit 0"; }
[ "$(S scan lake.events --columns id | tr -dc '0-9\n' | sort -n | tr '\n' ' ')" = "1 2 " ] ||
  fail "lake.events does not hold exactly ids 1 and 2: $(S scan lake.events --columns id)"

# SIGTERM released the locks; so does kill -9.
start "$P2" third.log; THIRD=$PID
wait_healthy "$P2" || { cat "$W/third.log"; fail "a run after SIGTERM did not start"; }
[ "$(post "$P2" 3)" = 200 ] || fail "third run did not acknowledge"
kill -9 "$THIRD"; wait "$THIRD" 2>/dev/null || true
start "$P1" fourth.log; FOURTH=$PID
wait_healthy "$P1" || { cat "$W/fourth.log"; fail "a run after kill -9 did not start"; }
[ "$(post "$P1" 4)" = 200 ] || fail "fourth run did not acknowledge"
sleep 1.5
kill -TERM "$FOURTH"; wait "$FOURTH" || { cat "$W/fourth.log"; fail "fourth run did not exit 0"; }
[ "$(S scan lake.events --columns id | tr -dc '0-9\n' | sort -n | tr '\n' ' ')" = "1 2 3 4 " ] ||
  fail "lake.events does not hold exactly ids 1-4: $(S scan lake.events --columns id)"
echo "1 passed, 0 failed"
