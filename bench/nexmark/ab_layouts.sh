#!/usr/bin/env bash
# Two sluice builds on the same Nexmark bids, alternating, each run in several
# warehouse folders: the folder's path length moves the heap's layout, and with
# it whether two threads' data share cache lines (bench/README.md, "Two lanes'
# decoders on one cache line"). Prints, per query and build, the (lower) medians of the
# one- and two-thread runs' CPU-seconds (user + system) and of each pair's
# speedup (one-thread wall time over two-thread wall time), with their ranges.
#   bench/nexmark/ab_layouts.sh DIR BEFORE_BINARY AFTER_BINARY
# DIR is a folder kept by `NEXMARK_KEEP=1 bench/nexmark/nexmark.sh` (its
# events/ and its QUERY.sql and QUERY-p2.sql scripts).
# Env: AB_QUERIES (default "q0 q1 q2 q5 q7"), AB_ROUNDS (default 3), AB_FOLDERS
# (default "wh-ab wh-abc").
set -euo pipefail
[ $# -eq 3 ] || { sed -n 2,12p "$0" >&2; exit 2; }
dir=$(realpath "$1")
bins=("$(realpath "$2")" "$(realpath "$3")")
read -r -a queries <<< "${AB_QUERIES:-q0 q1 q2 q5 q7}"
read -r -a folders <<< "${AB_FOLDERS:-wh-ab wh-abc}"
rounds=${AB_ROUNDS:-3}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
for q in "${queries[@]}"; do
  if [ ! -f "$dir/$q.sql" ] || [ ! -f "$dir/$q-p2.sql" ]; then
    echo "no $q.sql or $q-p2.sql in $dir" >&2
    exit 1
  fi
done

times=$(mktemp)
trap 'rm -f "$times"' EXIT
run() {  # BUILD(0|1) SQL FOLDER: prints "wall cpu"
  rm -rf "${dir:?}/$3"
  /usr/bin/time -f '%e %U %S' -o "$times.t" "${bins[$1]}" --warehouse "$dir/$3" \
    run "$dir/$2.sql" --bounded > /dev/null 2> "$times.err" ||
    { echo "${bins[$1]} failed on $2:" >&2; cat "$times.err" >&2; exit 1; }
  rm -rf "${dir:?}/$3"
  awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$times.t"
}
for q in "${queries[@]}"; do
  for _ in $(seq "$rounds"); do
    for f in "${folders[@]}"; do
      for b in 0 1; do
        read -r one_wall one_cpu < <(run "$b" "$q" "$f")
        read -r two_wall two_cpu < <(run "$b" "$q-p2" "$f")
        echo "$q $b $one_wall $one_cpu $two_wall $two_cpu" >> "$times"
      done
    done
  done
done
rm -f "$times.t" "$times.err"

median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f (%.2f-%.2f)", v[int((NR + 1) / 2)], v[1], v[NR] }'; }
echo "| query | build | one-thread CPU-s | two-thread CPU-s | speedup per pair |"
echo "|---|---|---|---|---|"
for q in "${queries[@]}"; do
  for b in 0 1; do
    name=$([ "$b" = 0 ] && echo before || echo after)
    rows=$(awk -v q="$q" -v b="$b" '$1 == q && $2 == b' "$times")
    echo "| $q | $name | $(awk '{ print $4 }' <<< "$rows" | median) |" \
      "$(awk '{ print $6 }' <<< "$rows" | median) |" \
      "$(awk '{ print $3 / $5 }' <<< "$rows" | median)x |"
  done
done
