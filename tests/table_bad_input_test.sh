#!/usr/bin/env bash
# Bad input gives a clear error naming what and where, and leaves the table
# untouched: corrupt manifest, missing data file, unknown format version,
# unknown transform, unsafe names, bad records, bad filters.
# Usage: table_bad_input_test.sh SLUICE_BINARY
set -uo pipefail
SLUICE=$1
W=$(mktemp -d /tmp/sluice-bad.XXXXXX)
trap 'rm -rf "$W"' EXIT
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }
passed=0; failed=0
# expect_error NAME SUBSTRING COMMAND...: the command fails and stderr names SUBSTRING.
expect_error() {
  local name=$1 want=$2; shift 2
  local err
  if err=$("$@" 2>&1 >/dev/null); then
    echo "FAIL $name: succeeded"; failed=$((failed + 1)); return
  fi
  if [[ "$err" != *"$want"* ]]; then
    echo "FAIL $name: error '$err' lacks '$want'"; failed=$((failed + 1)); return
  fi
  echo "ok   $name: $err"; passed=$((passed + 1))
}
expect_same() {  # expect_same NAME A B
  if [ "$2" = "$3" ]; then passed=$((passed + 1)); else echo "FAIL $1: '$2' != '$3'"; failed=$((failed + 1)); fi
}

S namespace create db >/dev/null
S table create db.t --schema "id BIGINT NOT NULL, v STRING" --partition "bucket(2, id)" >/dev/null
printf '{"id":1,"v":"a"}\n{"id":2,"v":"b"}\n' | S append db.t - >/dev/null
T="$W/wh/db/t"
before=$(S table snapshots db.t --json)
files_before=$(find "$T" -type f | sort)

expect_error "bad record" "line 2: field id" S append db.t <(printf '{"id":3}\n{"id":"x"}\n')
expect_error "missing required field" "field id" S append db.t <(printf '{"v":"no id"}\n')
expect_same "bad records commit nothing" "$before" "$(S table snapshots db.t --json)"
expect_same "bad records leave no files" "$files_before" "$(find "$T" -type f | sort)"
expect_error "bad filter column" "no column named 'nope'" S scan db.t --where "nope = 1"
expect_error "bad filter literal" "is not an integer" S scan db.t --where "id = 1.5x"
expect_error "table name with .." "contains '..'" S table create "db..x" --schema "id INT"
expect_error "table name with /" "'/'" S table create "db.a/b" --schema "id INT"
expect_error "unknown transform" "unknown transform 'zorder'" S table create db.z --schema "id INT" --partition "zorder(id)"
expect_error "transform on wrong type" "cannot apply" S table create db.z --schema "id INT" --partition "hour(id)"

# A metadata file of an unknown format version.
m=$(ls "$T"/metadata/*.metadata.json | sort | tail -1)
sed 's/"format-version": *2/"format-version": 4/' "$m" > "$W/v4.metadata.json"
expect_error "format version 4" "format version 4" S table describe "$W/v4.metadata.json"

# A corrupt manifest: the scan names it; the catalog pointer is unchanged.
manifest=$(ls "$T"/metadata/*-m*.avro | head -1)
cp "$manifest" "$W/manifest.bak"
printf 'garbage' | dd of="$manifest" bs=1 seek=40 conv=notrunc 2>/dev/null
expect_error "corrupt manifest" "$(basename "$manifest")" S scan db.t
cp "$W/manifest.bak" "$manifest"
# A missing data file: the scan names it.
data=$(find "$T/data" -name '*.parquet' | head -1)
mv "$data" "$W/data.bak"
expect_error "missing data file" "$(basename "$data")" S scan db.t
# `table verify` exits 1 on a damaged table, naming the file; 2 when it cannot
# verify one at all; 0 on a sound one.
S table verify db.t > /dev/null 2> "$W/verify.err"
expect_same "table verify exits 1 on a missing file" 1 "$?"
expect_same "table verify names the missing file" 1 "$(grep -c "$(basename "$data")" "$W/verify.err")"
mv "$W/data.bak" "$data"
S table verify db.nope > /dev/null 2>&1
expect_same "table verify exits 2 without the table" 2 "$?"
S table verify db.t --read-data > /dev/null 2>&1
expect_same "table verify exits 0 on a sound table" 0 "$?"
expect_same "table untouched" "$before" "$(S table snapshots db.t --json)"
expect_same "rows intact" "2" "$(S scan db.t | wc -l | tr -d ' ')"

# Bad SQL and options: clear errors, no crash, no silent wrap. (Long types go
# through script files: one argv string is limited to 128 KiB.)
script() {  # script INTERVAL: a whole pipeline script with that commit_interval
  cat <<SQL
CREATE TABLE lake.e (id BIGINT NOT NULL);
CREATE SOURCE e_in (id BIGINT) WITH (connector = 'http') FORMAT JSON;
CREATE PIPELINE p WITH (commit_interval = '$1') AS INSERT INTO lake.e SELECT id FROM e_in;
SQL
}
script 99999999999999999999h > "$W/overflow.sql"
expect_error "commit_interval overflow" "out of range" S run --check "$W/overflow.sql"
script 0.1ms > "$W/tiny.sql"
expect_error "commit_interval under 1 ms" "out of range" S run --check "$W/tiny.sql"
script 168h > "$W/week.sql"
expect_same "commit_interval of a week" "$W/week.sql: ok" \
  "$(S run --check "$W/week.sql" | sed 's/ (.*//')"
expect_error "negative --max-lag-records" "max-lag-records" S run "$W/week.sql" --max-lag-records -5
expect_error "negative --limit" "limit" S parquet cat "$(find "$T/data" -name '*.parquet' | head -1)" --limit -1
printf 'CREATE TABLE lake."na\0me" (id BIGINT);\n' > "$W/nul.sql"
cat "$W/week.sql" >> "$W/nul.sql"
expect_error "NUL in a name is shown, not cut" 'na\x00me' S run --check "$W/nul.sql"
{ printf 'CREATE TABLE lake.deep (a '; printf 'ARRAY<%.0s' $(seq 1 20000); printf INT
  printf '>%.0s' $(seq 1 20000); printf ');\n'; cat "$W/week.sql"; } > "$W/array.sql"
expect_error "20,000-deep ARRAY" "nested more than 100 deep" S run --check "$W/array.sql"
{ printf 'CREATE TABLE lake.deep (a '; printf 'STRUCT<x %.0s' $(seq 1 50000); printf INT
  printf '>%.0s' $(seq 1 50000); printf ');\n'; cat "$W/week.sql"; } > "$W/struct.sql"
expect_error "50,000-deep STRUCT" "nested more than 100 deep" S run --check "$W/struct.sql"
{ printf 'CREATE TABLE lake.wide ('; seq 1 40000 | sed 's/.*/c& INT/' | paste -sd, - | tr -d '\n'
  printf ');\n'; cat "$W/week.sql"; } > "$W/wide.sql"
expect_same "40,000 columns" "$W/wide.sql: ok" "$(S run --check "$W/wide.sql" | sed 's/ (.*//')"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
