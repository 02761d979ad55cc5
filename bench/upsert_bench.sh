#!/usr/bin/env bash
# Upsert cost: KEYS distinct BIGINT keys written by one bounded pipeline run
# (one thread, one checkpoint) into a table without a key and into a
# primary-key table, in the same run; then restarts of the primary-key
# pipeline with one change: one takes the key index of KEYS keys as the
# clean stop before kept it (a spilled index's store), one reads it from its
# state files (as after a kill), one (the state's property cleared) loads it
# from the table;
# then UPDATES changes of existing keys into a running pipeline, uniform over
# the keys and skewed (80 % of them on 1 % of the keys), whose rows replace
# rows of every file. Prints wall, CPU and peak RSS of each, upserts per
# CPU-second (updates: from the restored index to the last commit, with the
# process's page faults in that time) and the
# CPU ratio against the append; then read amplification: the CPU of a full
# scan of the upserted table (its deletes applied on read) against the same
# table compacted (sluice table compact folds the deletes). The table's
# maintenance is off (unless MAINTENANCE=on), so that no run also compacts
# it (and the index follows the compaction): the runs measure upserts. See
# docs/upserts.md.
#   bench/upsert_bench.sh [path/to/sluice] [KEYS] [UPDATES]
#   (defaults build/sluice, 1000000, KEYS; STATE_MEMORY=SIZE sets the
#   pipeline's state.memory, default sluice's own, 256MiB: an index past
#   half of it spills to disk, docs/state.md "The key index";
#   UPDATE_COMMIT_INTERVAL=INTERVAL the update runs' commit_interval,
#   default 10s: 1s makes checkpoints of fewer changed keys;
#   UNIFORM_ROUNDS=N runs the uniform updates N times, each over the delete
#   files the ones before left, default 1; MAINTENANCE=on leaves the table's
#   maintenance on, so that the update runs also compact the table and the
#   index follows, their CPU counted). Last, a restart after compacting
#   the table: reading the index and following the compaction.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
sluice=$(realpath "${1:-$repo/build/sluice}")
keys=${2:-1000000}
updates=${3:-$keys}
[ -x "$sluice" ] || { echo "upsert_bench: no sluice binary at $sluice" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-upsert-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"
awk -v n="$keys" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":%d,\"name\":\"n%d\"}\n", i, i }' \
  > "$tmp/in/a.jsonl"
memory_option=
[ -z "${STATE_MEMORY:-}" ] || memory_option=", state.memory = '$STATE_MEMORY'"
maintenance="'false'"
[ "${MAINTENANCE:-off}" != on ] || maintenance="'true'"
script() {  # script NAME KEY_CLAUSE
  cat > "$tmp/$1.sql" <<SQL
CREATE TABLE lake.t (id BIGINT NOT NULL, name STRING $2) WITH ('sluice.maintenance.enabled' = $maintenance);
CREATE SOURCE s (id BIGINT, name STRING) WITH (connector = 'file', path = '$tmp/in') FORMAT JSON;
CREATE PIPELINE p WITH (commit_interval = '1h', parallelism = '1'$memory_option) AS
  INSERT INTO lake.t SELECT id, name FROM s;
SQL
}
script plain ""
script pk ", PRIMARY KEY (id)"
measure() {  # measure LABEL WAREHOUSE SCRIPT: prints "wall cpu rss_kib"
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" \
    "$sluice" --warehouse "$2" run "$3" --bounded > "$tmp/measured.log" 2>&1
  read -r wall user sys rss < "$tmp/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  printf '%-44s %7.2f s wall %7.2f s CPU %7d MiB peak RSS\n' "$1" "$wall" "$cpu" $((rss / 1024))
  echo "$cpu" > "$tmp/cpu"
}
measure "append $keys rows (no key)" "$tmp/wh-plain" "$tmp/plain.sql"
plain=$(cat "$tmp/cpu")
measure "upsert $keys keys (primary key)" "$tmp/wh-pk" "$tmp/pk.sql"
pk=$(cat "$tmp/cpu")
# Each run stopped cleanly keeps its spilled index's store for the next
# (keys-kept beside it): a restart takes it; without the file (a run that was
# killed) the restart reads the index from its state files.
printf '{"id":4,"name":"x"}\n' > "$tmp/in/a2.jsonl"
measure "restart: take the index of $keys keys as kept" "$tmp/wh-pk" "$tmp/pk.sql"
reopen=$(cat "$tmp/cpu")
[ -n "$(find "$tmp/wh-pk/_sluice" -name keys-kept)" ] ||
  echo "upsert_bench: note: no key index store was kept (the index is in memory)"
find "$tmp/wh-pk/_sluice" -name keys-kept -delete
printf '{"id":5,"name":"x"}\n' > "$tmp/in/b.jsonl"
measure "restart: read the index of $keys keys" "$tmp/wh-pk" "$tmp/pk.sql"
load=$(cat "$tmp/cpu")
# The state files now: the base and a delta of one key. (Measured before the
# property is cleared: the load from the table below writes a base of its
# own, and the old files stay behind as orphans until orphan cleanup.)
state_files=$(find "$tmp/wh-pk" -name '*-keys-*.state' -printf '%s\n' | awk -v k="$keys" '
  { b += $1 } END { printf "key index state files: %.1f MiB, %.1f bytes a key", b / 1048576, b / k }')
printf '{"id":6,"name":"x"}\n' > "$tmp/in/c.jsonl"
"$sluice" --warehouse "$tmp/wh-pk" table alter lake.t --property 'sluice.keys.p={}' > /dev/null
measure "restart: load the index of $keys keys (scan)" "$tmp/wh-pk" "$tmp/pk.sql"
scan=$(cat "$tmp/cpu")
awk -v k="$reopen" -v r="$load" -v s="$scan" 'BEGIN {
  printf "restart CPU: kept store %.2f s, state files %.2f s, table scan %.2f s\n", k, r, s }'
echo "$state_files"
rows=$("$sluice" --warehouse "$tmp/wh-pk" scan lake.t --columns id | wc -l)
[ "$rows" = "$keys" ] || { echo "upsert_bench: FAILED: $rows rows, want $keys" >&2; exit 1; }
awk -v k="$keys" -v p="$pk" -v a="$plain" 'BEGIN {
  printf "inserts per CPU-second: %.0f K; insert CPU / append CPU: %.1fx\n", k / p / 1000, p / a }'

# Updates of existing keys: uniform, then skewed (a fixed seed each), into a
# running pipeline (commit_interval UPDATE_COMMIT_INTERVAL): its CPU is read
# once its index is restored and it is idle, and again once the updates are
# committed, so the rate holds no restart (a restart's cost depends on the
# state chain the previous run left). The file is renamed into the source
# folder, after the files read, and its rows replace rows of every data file.
sed "s/commit_interval = '1h'/commit_interval = '${UPDATE_COMMIT_INTERVAL:-10s}'/" "$tmp/pk.sql" \
  > "$tmp/pk-stream.sql"
update_file() {  # update_file COUNT SKEWED SEED: writes $tmp/uSEED.jsonl
  awk -v n="$1" -v k="$keys" -v skew="$2" -v seed="$3" 'BEGIN { srand(seed)
    for (i = 0; i < n; i++) {
      id = (skew && rand() < 0.8) ? int(rand() * k / 100) : int(rand() * k)
      printf "{\"id\":%d,\"name\":\"u%d\"}\n", id, i } }' > "$tmp/u$3.jsonl"
}
cpu_of() {  # cpu_of PID: user + system CPU seconds of the process
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
    "/proc/$1/stat"
}
faults_of() {  # faults_of PID: page faults (minor + major) of the process so far
  awk '{ sub(/^.*\) /, ""); print $8 + $10 }' "/proc/$1/stat"
}
status_field() {  # status_field PORT NAME: a number of the first pipeline's /v1/status
  curl -sf "http://127.0.0.1:$1/v1/status" | grep -o "\"$2\":[0-9]*" | head -1 | cut -d: -f2
}
update_run() {  # update_run LABEL SKEWED SEED
  update_file "$updates" "$2" "$3"
  local port=$((20000 + RANDOM % 20000))
  "$sluice" --warehouse "$tmp/wh-pk" run "$tmp/pk-stream.sql" --listen "127.0.0.1:$port" \
    > "$tmp/run.log" 2>&1 &
  local pid=$! restored=0 loaded= reopened= before= idle= after= committed= rss
  for _ in $(seq 600); do  # the index restored (up to 5 minutes)
    restored=$(status_field "$port" index_restores || true)
    loaded=$(status_field "$port" index_loads || true)
    reopened=$(status_field "$port" index_reopens || true)
    restored=$((${restored:-0} + ${loaded:-0} + ${reopened:-0}))
    [ "$restored" -ge 1 ] && break
    kill -0 "$pid" 2> /dev/null || { cat "$tmp/run.log" >&2; exit 1; }
    sleep 0.5
  done
  [ "$restored" -ge 1 ] || { echo "upsert_bench: FAILED: no index restored" >&2; exit 1; }
  before=$(cpu_of "$pid")
  for _ in $(seq 120); do  # idle: its store's background work done
    sleep 0.5
    idle=$(cpu_of "$pid")
    awk -v a="$before" -v b="$idle" 'BEGIN { exit !(b - a < 0.02) }' && break
    before=$idle
  done
  local faults
  faults=$(faults_of "$pid")
  mv "$tmp/u$3.jsonl" "$tmp/in/u$3.jsonl"
  local start=$SECONDS
  for _ in $(seq 7200); do  # committed (up to an hour)
    committed=$(status_field "$port" records_committed || true)
    [ "${committed:-0}" -ge "$updates" ] && break
    kill -0 "$pid" 2> /dev/null || { cat "$tmp/run.log" >&2; exit 1; }
    sleep 0.5
  done
  after=$(cpu_of "$pid")
  faults=$(($(faults_of "$pid") - faults))
  rss=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status")
  kill -TERM "$pid"
  wait "$pid" || true
  [ "${committed:-0}" -ge "$updates" ] || { echo "upsert_bench: FAILED: not committed" >&2; exit 1; }
  awk -v l="$1" -v u="$updates" -v a="$before" -v b="$after" -v w=$((SECONDS - start)) \
    -v r="$rss" -v f="$faults" 'BEGIN { printf "%-44s %7d s wall %7.2f s CPU %7d MiB peak RSS\n  updates per CPU-second: %.0f K; page faults: %.1f K\n", l, w, b - a, r, u / (b - a) / 1000, f / 1000 }'
}
update_run "update $updates keys, uniform" 0 1
for round in $(seq 2 "${UNIFORM_ROUNDS:-1}"); do
  update_run "update $updates keys, uniform, round $round" 0 $((10 + round))
done
update_run "update $updates keys, skewed (80 % on 1 %)" 1 2
rows=$("$sluice" --warehouse "$tmp/wh-pk" scan lake.t --columns id | wc -l)
[ "$rows" = "$keys" ] || { echo "upsert_bench: FAILED: $rows rows after updates, want $keys" >&2; exit 1; }

# Read amplification: the same rows, before and after compaction. The
# scans alternate between a copy of the table and the table compacted, and
# the least CPU of five of each counts: this VM's speed swings by up to half
# from one run to the next (bench/README.md).
scan_cpu() {  # scan_cpu WAREHOUSE BEST: prints the lesser of BEST and a full scan's CPU seconds
  /usr/bin/time -f "%U %S" -o "$tmp/time" "$sluice" --warehouse "$1" scan lake.t > /dev/null
  awk -v b="$2" '{ c = $1 + $2; printf "%.2f", (b == "" || c < b) ? c : b }' "$tmp/time"
}
# (The copy is of the catalog alone: it names the table's metadata file by
# its absolute path, so the copy is the table before the compaction, whose
# files stay: the compaction adds files and a snapshot, and expires none.)
mkdir -p "$tmp/wh-upserted"
cp "$tmp/wh-pk/catalog.db" "$tmp/wh-upserted/"
"$sluice" --warehouse "$tmp/wh-pk" table compact lake.t --min-input-files 1 > /dev/null
before='' after=''
for _ in 1 2 3 4 5; do
  before=$(scan_cpu "$tmp/wh-upserted" "$before")
  after=$(scan_cpu "$tmp/wh-pk" "$after")
done
rows=$("$sluice" --warehouse "$tmp/wh-pk" scan lake.t --columns id | wc -l)
[ "$rows" = "$keys" ] || { echo "upsert_bench: FAILED: $rows rows after compaction, want $keys" >&2; exit 1; }
awk -v b="$before" -v a="$after" 'BEGIN {
  printf "scan CPU: upserted %.2f s, compacted %.2f s: read amplification %.2fx\n", b, a, b / a }'

# A restart after that compaction: the index is read from its state files
# (the base and the deltas the updates left), then follows the compaction
# (the keys of every row moved), before its one new row.
printf '{"id":7,"name":"x"}\n' > "$tmp/in/d.jsonl"
measure "restart, then follow the compaction" "$tmp/wh-pk" "$tmp/pk.sql"
! grep -q "loading it from" "$tmp/measured.log" ||
  echo "upsert_bench: note: the index was loaded from the table, not restored and followed"
