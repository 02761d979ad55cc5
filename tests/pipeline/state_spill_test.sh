#!/usr/bin/env bash
# State beyond memory: a TUMBLE window over KEYS distinct keys (each key once
# or twice, in scattered order) with state.memory = BUDGET, so the window
# operator spills to its store many times; a first bounded run is killed with
# SIGKILL once its state has been checkpointed (state files written from both
# tiers), and a second one restores that state (into the store, as it exceeds
# the budget) and finishes. The committed rows must be exactly the expected
# count and sum of every key, once. Reports the peak RSS of each run; fails
# when a run's peak exceeds BUDGET + 400 MiB (what the pipeline holds besides
# its state: a batch of raw records, decoded lanes, open Parquet files;
# $SLUICE_SPILL_RSS_MARGIN_MIB, larger under ASan, whose shadow memory and
# quarantine count in the RSS).
# Usage: state_spill_test.sh SLUICE_BINARY [KEYS] [BUDGET]
#   (defaults: $SLUICE_SPILL_KEYS or 300000, $SLUICE_SPILL_BUDGET or 8MiB)
set -euo pipefail
source "$(dirname "$0")/lib/bounded_run.sh"
SLUICE=$(realpath "$1")
KEYS=${2:-${SLUICE_SPILL_KEYS:-300000}}
BUDGET=${3:-${SLUICE_SPILL_BUDGET:-8MiB}}
W=$(mktemp -d /tmp/sluice-spill.XXXXXX)
trap 'bounded_run_cleanup "$W"' EXIT
if [[ $BUDGET =~ ^([0-9]+)[Mm] ]]; then
  budget_mib=${BASH_REMATCH[1]}
elif [[ $BUDGET =~ ^([0-9]+)[Gg] ]]; then
  budget_mib=$((BASH_REMATCH[1] * 1024))
else
  echo "BUDGET must be in MiB or GiB, like 16MiB"; exit 2
fi
mkdir -p "$W/in"
# Row i has key (i * 7919) mod KEYS (7919 is prime and KEYS is not one of
# its multiples, so every key comes once; rows past KEYS come again for one
# key in five), value i mod 1000, and times within one minute.
extra=$((KEYS / 5))
awk -v n="$KEYS" -v extra="$extra" 'BEGIN {
  for (i = 0; i < n + extra; i++) {
    j = i < n ? i : (i - n) * 5
    k = (j * 7919) % n
    printf "{\"k\":%d,\"v\":%d,\"ts\":\"2024-03-05T10:00:%02d.%03dZ\"}\n", k, i % 1000,
      int(i * 59 / (n + extra)), i % 1000
  }
}' > "$W/in/events.jsonl"
awk -v n="$KEYS" -v extra="$extra" 'BEGIN {
  for (i = 0; i < n + extra; i++) {
    j = i < n ? i : (i - n) * 5
    k = (j * 7919) % n
    c[k]++; s[k] += i % 1000
  }
  for (k = 0; k < n; k++) printf "%d %d %d\n", k, c[k], s[k]
}' | sort > "$W/expected"
cat > "$W/p.sql" <<SQL
CREATE TABLE lake.per_key (k BIGINT, n BIGINT, total BIGINT);
CREATE SOURCE ev (k BIGINT, v BIGINT, ts TIMESTAMPTZ,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'file', path = '$W/in') FORMAT JSON;
CREATE PIPELINE per_key WITH (commit_interval = '100ms', state.memory = '$BUDGET') AS
  INSERT INTO lake.per_key
  SELECT k, count(*), sum(v) FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) GROUP BY window_start, window_end, k;
SQL
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }
# Killable once the second state file is written: the first one's checkpoint
# is committed, and its state is over the budget.
checkpointed() { [ "$(ls "$W"/wh/lake/per_key/state/per_key/ 2>/dev/null | wc -l)" -ge 2 ]; }
run() {  # run kill|end
  bounded_run "$1" "$SLUICE" "$W/wh" "$W/p.sql" "$W/run.log" \
    "$W/wh/_sluice/pipelines/*/spill/shard-*" checkpointed
}
failed=0
t0=$(date +%s)
run kill
echo "killed run: peak RSS ${PEAK} MiB"
first_peak=$PEAK
run end
t1=$(date +%s)
echo "finishing run: peak RSS ${PEAK} MiB ($((t1 - t0)) s for both runs)"
S scan lake.per_key | tr -d '{}"' | sed -E 's/k://; s/,n:/ /; s/,total:/ /' | sort > "$W/got"
if ! cmp -s "$W/got" "$W/expected"; then
  echo "FAIL: $(wc -l < "$W/got") rows committed, $(wc -l < "$W/expected") expected; first differences:"
  diff "$W/got" "$W/expected" | head -5
  failed=1
fi
if [ "$SPILLED" -eq 0 ]; then
  echo "FAIL: the window state never spilled to disk (no spill folder seen)"
  failed=1
fi
margin=${SLUICE_SPILL_RSS_MARGIN_MIB:-400}
limit=$((budget_mib + margin))
for p in "$first_peak" "$PEAK"; do
  if [ "$p" -gt "$limit" ]; then
    echo "FAIL: a run peaked at ${p} MiB, over ${limit} MiB (budget ${BUDGET} + ${margin} MiB)"
    failed=1
  fi
done
[ $failed -eq 0 ] && echo "ok: $KEYS keys, state.memory $BUDGET, every key's count and sum exactly once"
exit $failed
