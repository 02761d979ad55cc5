#!/usr/bin/env bash
# sluice-kafka-mock serves kcat: 100 records produced with `kcat -P` come back
# exactly once with `kcat -C`, and SIGTERM stops the mock with exit code 0.
# usage: tests/kafka/mock_kcat_test.sh path/to/sluice-kafka-mock
set -euo pipefail
mock=${1:?usage: $0 path/to/sluice-kafka-mock}
command -v kcat >/dev/null || { echo "SKIP: kcat not installed"; exit 0; }

work=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$mock" --topic events:4 >"$work/bootstrap" 2>"$work/mock.log" &
pid=$!
for _ in $(seq 100); do [[ -s $work/bootstrap ]] && break; sleep 0.05; done
bootstrap=$(head -n1 "$work/bootstrap")
[[ $bootstrap == *:* ]] || { echo "FAIL: no bootstrap address"; cat "$work/mock.log"; exit 1; }

# Keyed ("key:value"), so that the key hash spreads records over the partitions
# (keyless records would all go to one sticky partition).
seq 0 99 | sed 's/.*/k&:&/' | kcat -b "$bootstrap" -P -t events -K:
# Every partition from the beginning to its end (-e), one value per line.
kcat -b "$bootstrap" -C -t events -o beginning -e -q -f '%p %s\n' >"$work/got"

count=$(wc -l <"$work/got")
unique=$(cut -d' ' -f2 "$work/got" | sort -n | uniq | wc -l)
partitions=$(cut -d' ' -f1 "$work/got" | sort -u | wc -l)
if [[ $count -ne 100 || $unique -ne 100 ]]; then
  echo "FAIL: read $count records ($unique distinct), want 100"; exit 1
fi
if ! diff <(cut -d' ' -f2 "$work/got" | sort -n) <(seq 0 99) >/dev/null; then
  echo "FAIL: records differ from 0..99"; exit 1
fi
[[ $partitions -ge 2 ]] || { echo "FAIL: all records in $partitions partition(s)"; exit 1; }

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[[ $rc -eq 0 ]] || { echo "FAIL: mock exited with $rc after SIGTERM"; exit 1; }
echo "PASS: 100 records over $partitions partitions"
