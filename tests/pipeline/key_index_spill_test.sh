#!/usr/bin/env bash
# The key index beyond memory: KEYS keys upserted into a primary-key table
# with state.memory = BUDGET, so the pipeline's key index spills to its store
# many times. Bounded runs, each a restart that restores the index from its
# state files (spilling as it goes), or takes the store the clean end of the
# run before kept: the inserts of every key; updates of
# half of them; a compaction of the table (the next restart must follow the
# rows it moved); then two rounds of updates of every key, in files of KEYS
# changes (several checkpoints whatever the machine's speed: the index's
# changes pass state.memory and bring checkpoints early), the first run
# killed at its second commit (kill point pipeline.after_commit:2; a poll from
# outside, 50 ms apart, let a fast run end first), and run again;
# then runs killed
# at the kill points of a clean stop keeping the store. Many keys change
# in several checkpoints of one run, so a row the store remembers wrongly
# deletes the wrong row or none. The table must then hold each key once,
# with its last value. Reports each run's peak RSS.
# Usage: key_index_spill_test.sh SLUICE_BINARY [KEYS] [BUDGET]
#   (defaults: $SLUICE_KEY_SPILL_KEYS or 200000, $SLUICE_KEY_SPILL_BUDGET or 1MiB)
set -euo pipefail
source "$(dirname "$0")/lib/bounded_run.sh"
SLUICE=$(realpath "$1")
KEYS=${2:-${SLUICE_KEY_SPILL_KEYS:-200000}}
BUDGET=${3:-${SLUICE_KEY_SPILL_BUDGET:-1MiB}}
W=$(mktemp -d /tmp/sluice-key-spill.XXXXXX)
trap 'bounded_run_cleanup "$W"' EXIT
mkdir -p "$W/in"
# Run r's changes: key (j * P_r) mod KEYS for j < KEYS / D_r, value
# r * KEYS + j (the primes P_r scatter the keys, distinct within a run).
changes() {  # changes FILE RUN PRIME DIVISOR
  awk -v n="$KEYS" -v r="$2" -v p="$3" -v d="$4" 'BEGIN {
    for (j = 0; j < n / d; j++) printf "{\"id\":%d,\"v\":%d}\n", (j * p) % n, r * n + j }' > "$1"
}
plan=(0:7919:1 1:104729:2 2:15485863:1 3:1299709:1 4:7:8 5:31:8)
for step in "${plan[@]}"; do
  IFS=: read -r r prime divisor <<< "$step"
  changes "$W/changes-$r.jsonl" "$r" "$prime" "$divisor"
done
cat "$W"/changes-{0,1,2,3,4,5}.jsonl | awk -F'[:,}]' '{ v[$2] = $4 } END {
  for (k in v) printf "%d,%d\n", k, v[k] }' | sort > "$W/expected"
cat > "$W/p.sql" <<SQL
CREATE TABLE lake.t (id BIGINT NOT NULL, v BIGINT, PRIMARY KEY (id));
CREATE SOURCE s (id BIGINT, v BIGINT) WITH (connector = 'file', path = '$W/in') FORMAT JSON;
CREATE PIPELINE p WITH (commit_interval = '250ms', parallelism = '1', state.memory = '$BUDGET') AS
  INSERT INTO lake.t SELECT id, v FROM s;
SQL
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }
run() {  # run kill|end: `kill` must die by SIGKILL (at the kill point its caller arms)
  bounded_run "$1" "$SLUICE" "$W/wh" "$W/p.sql" "$W/run.log" \
    "$W/wh/_sluice/pipelines/*/keys-spill/*" false
  echo "run ($1): peak RSS ${PEAK} MiB"
}
# A clean end keeps the spilled index's store for the next run (keys-kept
# beside it), which takes it; a killed run leaves none (docs/state.md "The
# key index").
kept() { compgen -G "$W/wh/_sluice/pipelines/*/keys-kept" > /dev/null; }
expect_kept() {  # expect_kept yes|no
  local k=no
  kept && k=yes
  [ "$k" = "$1" ] || { echo "FAIL: a kept key index store: $k, expected $1"; failed=1; }
}
failed=0
t0=$(date +%s)
add() { mv "$W/changes-$1.jsonl" "$W/in/"; }  # add RUN: its changes into the source
add 0
run end
expect_kept yes
add 1
run end
expect_kept yes
S table compact lake.t --min-input-files 1 > /dev/null
add 2
add 3
SLUICE_KILL_POINT=pipeline.after_commit:2 run kill
expect_kept no
run end
expect_kept yes
grep -q 'kept store is not used' "$W/run.log" && { echo "FAIL: $(grep 'kept store' "$W/run.log")"; failed=1; }
# Killed while a clean stop keeps the store: before keys-kept is written (the
# next run restores from the state files), then after it (the next run takes
# the store).
die_at() {  # die_at KILL_POINT
  local rc=0
  SLUICE_KILL_POINT=$1 S run "$W/p.sql" --bounded > "$W/run.log" 2>&1 || rc=$?
  [ $rc -eq 137 ] || { echo "FAIL: the run with kill point $1 exited $rc"; tail -5 "$W/run.log"; failed=1; }
}
add 4
die_at pipeline.key_index_kept_store
expect_kept no
add 5
die_at pipeline.after_key_index_kept
expect_kept yes
run end
expect_kept yes
t1=$(date +%s)
echo "$((t1 - t0)) s for all runs"
S table snapshots lake.t | grep -q ' replace ' || { echo "FAIL: the table was not compacted"; failed=1; }
S scan lake.t --columns id,v --format csv | tail -n +2 | sort > "$W/got"
if ! cmp -s "$W/got" "$W/expected"; then
  echo "FAIL: $(wc -l < "$W/got") rows, $(wc -l < "$W/expected") expected; first differences:"
  diff "$W/got" "$W/expected" | head -5
  failed=1
fi
if [ "$SPILLED" -eq 0 ]; then
  echo "FAIL: the key index never spilled to disk (no keys-spill store seen)"
  failed=1
fi
[ $failed -eq 0 ] && echo "ok: $KEYS keys, state.memory $BUDGET, each key once with its last value"
exit $failed
