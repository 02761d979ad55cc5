#!/usr/bin/env bash
# End-to-end checks of `sluice parquet write` (registered with ctest):
# success is silent and readable back, a bad record fails with line/field/reason
# and leaves nothing at OUT, stdin works, --verbose reports.
#   src/cli/parquet_write_test.sh path/to/sluice
set -uo pipefail
sluice=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sluice-pw-test-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
schema='id BIGINT NOT NULL, amount DECIMAL(10,2), tags ARRAY<STRING>, note STRING'

printf '%s\n' '{"id":1,"amount":"12.34","tags":["a","b"],"note":"x"}' \
  '{"id":2,"amount":5,"tags":[],"note":null}' '' '{"id":3}' > "$tmp/good.jsonl"
"$sluice" parquet write --schema "$schema" "$tmp/good.jsonl" "$tmp/good.parquet" \
  > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "good input: exit $rc: $(cat "$tmp/err")"
[ -s "$tmp/out" ] || [ -s "$tmp/err" ] && fail "good input: printed something: $(cat "$tmp/out" "$tmp/err")"
"$sluice" parquet cat "$tmp/good.parquet" > "$tmp/cat" 2>&1 || fail "cat: $(cat "$tmp/cat")"
expected='{"id":1,"amount":"12.34","tags":["a","b"],"note":"x"}
{"id":2,"amount":"5.00","tags":[],"note":null}
{"id":3,"amount":null,"tags":null,"note":null}'
[ "$(cat "$tmp/cat")" = "$expected" ] || fail "read back: got
$(cat "$tmp/cat")"

# Bad record on line 3: error names the line, the field and the reason; no file.
printf '%s\n' '{"id":1}' '{"id":2}' '{"id":3,"amount":"12.345"}' '{"id":4}' > "$tmp/bad.jsonl"
"$sluice" parquet write --schema "$schema" "$tmp/bad.jsonl" "$tmp/bad.parquet" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "bad input: exit $rc, want 1"
grep -q "line 3: field amount: decimal '12.345' has more than 2 fractional digits" "$tmp/err" ||
  fail "bad input: message: $(cat "$tmp/err")"
compgen -G "$tmp/bad.parquet*" > /dev/null && fail "bad input: left $(compgen -G "$tmp/bad.parquet*")"

# A required field missing deep in the input, from stdin, over several read chunks.
awk 'BEGIN { for (i = 1; i <= 30000; i++) printf "{\"id\":%d,\"note\":\"%040d\"}\n", i, i
             print "{\"note\":\"no id\"}" }' > "$tmp/big.jsonl"
"$sluice" parquet write --schema "$schema" - "$tmp/big.parquet" < "$tmp/big.jsonl" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "stdin bad input: exit $rc"
grep -q "line 30001: field id: required field is missing" "$tmp/err" ||
  fail "stdin bad input: message: $(cat "$tmp/err")"
compgen -G "$tmp/big.parquet*" > /dev/null && fail "stdin bad input: left a file"

# The same input without the bad line, from stdin, with options and --verbose.
head -n 30000 "$tmp/big.jsonl" | "$sluice" parquet write --schema "$schema" --codec snappy \
  --row-group-size 7000 --page-size 4096 --no-dictionary --verbose - "$tmp/big.parquet" \
  2> "$tmp/err"
rc=$?
[ $rc -eq 0 ] || fail "stdin: exit $rc: $(cat "$tmp/err")"
grep -q "30000 rows" "$tmp/err" || fail "--verbose: $(cat "$tmp/err")"
n=$("$sluice" parquet cat "$tmp/big.parquet" | wc -l)
[ "$n" = 30000 ] || fail "stdin: read back $n rows"

# --page-rows: pages of 100 rows are 300 pages of each column where the default made 2 (a
# header each), and read back the same; a negative limit is refused.
head -n 30000 "$tmp/big.jsonl" > "$tmp/big30k.jsonl"
for rows in 20000 100; do
  "$sluice" parquet write --schema "$schema" --page-rows "$rows" "$tmp/big30k.jsonl" \
    "$tmp/rows$rows.parquet" 2> "$tmp/err" || fail "--page-rows $rows: $(cat "$tmp/err")"
done
[ "$("$sluice" parquet cat "$tmp/rows100.parquet" | md5sum)" = \
  "$("$sluice" parquet cat "$tmp/rows20000.parquet" | md5sum)" ] || fail "--page-rows 100: rows differ"
[ "$(stat -c %s "$tmp/rows100.parquet")" -gt "$(($(stat -c %s "$tmp/rows20000.parquet") + 300 * 8))" ] ||
  fail "--page-rows 100: $(stat -c %s "$tmp/rows100.parquet") bytes, no more pages than the default"
"$sluice" parquet write --schema "$schema" --page-rows -1 "$tmp/good.jsonl" "$tmp/x.parquet" \
  2> "$tmp/err" && fail "--page-rows -1 accepted"
grep -q -- "--page-rows" "$tmp/err" || fail "--page-rows -1: message: $(cat "$tmp/err")"

# Unknown codec and unreadable input are errors too.
"$sluice" parquet write --schema "$schema" --codec brotli2 "$tmp/good.jsonl" "$tmp/x.parquet" \
  2> /dev/null && fail "unknown codec accepted"
"$sluice" parquet write --schema "$schema" "$tmp/missing.jsonl" "$tmp/x.parquet" 2> /dev/null &&
  fail "missing input accepted"
compgen -G "$tmp/x.parquet*" > /dev/null && fail "error left x.parquet"

[ $failures -eq 0 ] && echo "parquet_write_test: all passed"
exit $((failures > 0))
