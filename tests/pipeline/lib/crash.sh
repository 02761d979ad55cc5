# Helpers shared by the crash loops (sourced; bash).

# nap SECONDS: sleeps without starting a process (a read that times out on a
# pipe nothing writes to). On these machines a process costs 5-30 ms of CPU
# (`sleep` 8 ms, `curl` 31 ms): loops that poll every 20 ms with them spent
# more CPU than the server they test.
exec {NAP_FD}<> <(:)
nap() { read -rt "$1" -u "$NAP_FD" || true; }

# wait_up URL PID [SECONDS]: returns 0 once URL/healthz answers, 1 if PID died
# or after SECONDS (default 4: the kill loops' short lives). A start the test
# depends on passes 120, as recovery under ASan beside another test can take
# tens of seconds.
# (Until the port accepts a connection it is probed with bash's /dev/tcp: a
# curl per probe, every 20 ms of every start, was a good part of the CPU the
# crash loops took, beside the server they test.)
wait_up() {
  local url=$1 pid=$2 deadline=$((SECONDS + ${3:-4})) address
  address=${url#http://}
  while [ "$SECONDS" -lt "$deadline" ]; do
    if (: < "/dev/tcp/${address%%:*}/${address##*:}") 2>/dev/null; then
      curl -s -o /dev/null --max-time 1 "$url/healthz" && return 0
    fi
    kill -0 "$pid" 2>/dev/null || return 1
    nap 0.02
  done
  return 1
}

# post_until_acked URL STREAM KEY FILE: POSTs FILE (NDJSON) with Idempotency-Key
# KEY until it is acknowledged (200), however often the server dies meanwhile.
# While nothing listens (curl's code 000) it tries every 0.1 s, else every 20 ms.
post_until_acked() {
  local url=$1 stream=$2 key=$3 file=$4 code
  while true; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Idempotency-Key: $key" \
      -H 'Content-Type: application/x-ndjson' --data-binary "@$file" \
      "$url/v1/streams/$stream/records" || true)
    [ "$code" = 200 ] && return 0
    if [ "$code" = 000 ]; then nap 0.1; else nap 0.02; fi
  done
}

# kill_all PID...: SIGKILLs the given processes (empty ones skipped) and every
# background job, and waits for them.
kill_all() {
  local p kids
  for p in "$@"; do [ -z "$p" ] || kill -9 "$p" 2>/dev/null || true; done
  kids=$(jobs -p)
  [ -z "$kids" ] || kill $kids 2>/dev/null || true
  wait 2>/dev/null || true
}

# wait_producer PID: waits until the background producer PID has ended.
# (`wait PID` alone once failed with "pid is not a child of this shell" after
# a crash loop, bash having already collected its status: the producer is
# polled, then waited for if bash still holds it. A producer that stopped
# early shows in the counts the callers check afterwards.)
wait_producer() {
  local pid=$1
  while kill -0 "$pid" 2>/dev/null; do nap 0.05; done
  wait "$pid" 2>/dev/null || true
}

# start_kafka_mock MOCK DIR TOPIC:PARTITIONS: starts sluice-kafka-mock with that
# topic in the background; sets MOCK_PID and BOOTSTRAP (its broker list), or
# exits the test when it does not start.
start_kafka_mock() {
  local mock=$1 dir=$2 topic=$3
  "$mock" --topic "$topic" > "$dir/bootstrap" 2> "$dir/mock.log" & MOCK_PID=$!
  for _ in $(seq 1 100); do [ -s "$dir/bootstrap" ] && break; sleep 0.05; done
  BOOTSTRAP=$(head -n1 "$dir/bootstrap")
  [ -n "$BOOTSTRAP" ] || { cat "$dir/mock.log"; echo "FAILED: the Kafka mock did not start"; exit 1; }
}

# kill_loop KILLS: starts and SIGKILLs the server KILLS times, with the
# caller's start_server [KILL_POINT], URL, SERVER_PID and KILL_POINTS. Every
# third run is armed at a named kill point (its 1st or 2nd pass) and given
# 2 s to die there; the others live 100..500 ms. Sets kills and at_points
# (runs that ended at their kill point).
kill_loop() {
  local n=$1 kp
  kills=0 at_points=0
  while [ "$kills" -lt "$n" ]; do
    kp=
    if [ $((kills % 3)) = 2 ]; then
      kp=${KILL_POINTS[$(( (kills / 3) % ${#KILL_POINTS[@]} ))]}:$((1 + RANDOM % 2))
    fi
    start_server "$kp"
    wait_up "$URL" "$SERVER_PID" || true
    if [ -n "$kp" ]; then
      for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; nap 0.02; done
    else
      nap "0.$(printf '%03d' $(( 100 + RANDOM % 400 )))"
    fi
    if kill -0 "$SERVER_PID" 2>/dev/null; then
      kill -9 "$SERVER_PID" 2>/dev/null || true
    else
      at_points=$((at_points + 1))
    fi
    { wait "$SERVER_PID"; } 2>/dev/null || true
    SERVER_PID=
    kills=$((kills + 1))
  done
}

# drain_and_stop URL PID RECORDS TABLE [COMPACTED]: waits (at most 300 s)
# until the pipeline committed RECORDS source records, failing the test if it
# does not, then (at most 60 s) until the maintenance service compacted TABLE
# once, then SIGTERMs PID and fails the test unless it exits 0. COMPACTED, a
# command, says whether TABLE's history holds a compaction already (of a
# killed run): then there is nothing to wait for.
drain_and_stop() {
  local url=$1 pid=$2 records=$3 table=$4 compacted=${5:-} committed deadline=$((SECONDS + 300))
  local t0=$SECONDS t1 t2
  while :; do
    committed=$(curl -s --max-time 5 "$url/v1/status" |
      sed -n 's/.*"committed_offset":\([0-9]*\).*/\1/p' || true)
    [ "${committed:-0}" -ge "$records" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "FAILED: sluice run died while draining"; return 1; }
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "FAILED: the pipeline committed ${committed:-no} of $records records in 300 s"
      return 1
    fi
    nap 0.1
  done
  t1=$SECONDS
  while [ $((SECONDS - t1)) -lt 60 ]; do
    if [ -n "$compacted" ] && "$compacted"; then break; fi
    # (grep -c reads it all: grep -q could end the pipe early, and under
    # pipefail curl's write error would make a match fail.)
    [ "$(curl -s --max-time 5 "$url/metrics" |
      grep -c "^sluice_maintenance_compactions_total{table=\"$table\"} [1-9]" || true)" -gt 0 ] && break
    sleep 1
  done
  t2=$SECONDS
  kill -TERM "$pid"
  wait "$pid" || { echo "FAILED: sluice run did not exit 0 on SIGTERM"; return 1; }
  echo "clean run: drained $records records in $((t1 - t0)) s, a compaction seen $((t2 - t1)) s" \
    "later, stopped in $((SECONDS - t2)) s"
}

# list_objects s3://BUCKET/PREFIX: every object under the prefix on the test's
# S3 server ($SLUICE_TEST_S3_ENDPOINT, which answers anonymous listings), as
# s3:// locations, one per line, every page.
list_objects() {
  local bucket=${1#s3://}; bucket=${bucket%%/*}
  local prefix=${1#s3://$bucket/} token= page
  while :; do
    page=$(curl -sf -G "$SLUICE_TEST_S3_ENDPOINT/$bucket" --data-urlencode list-type=2 \
      --data-urlencode "prefix=$prefix" ${token:+--data-urlencode "continuation-token=$token"})
    echo "$page" | grep -o '<Key>[^<]*</Key>' | sed "s|<Key>\(.*\)</Key>|s3://$bucket/\1|"
    echo "$page" | grep -q '<IsTruncated>true</IsTruncated>' || break
    token=$(echo "$page" | sed -n 's|.*<NextContinuationToken>\([^<]*\)</NextContinuationToken>.*|\1|p')
  done
}
