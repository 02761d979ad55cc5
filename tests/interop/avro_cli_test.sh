#!/usr/bin/env bash
# Smoke test of `sluice avro cat|schema|meta` on the Java Iceberg fixtures.
# Usage: avro_cli_test.sh path/to/sluice   (run from the repo root)
set -euo pipefail
SLUICE=$1
F=../shared/fixtures/avro
LIST=$F/snap-8656952484400131532-1-a85973e4-4009-4cba-875e-5278a2c6027d.avro
MANIFEST=$F/a85973e4-4009-4cba-875e-5278a2c6027d-m0.avro
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$SLUICE" avro cat "$LIST")
[[ $(wc -l <<<"$out") -eq 1 ]] || fail "cat: expected 1 record, got: $out"
[[ $out == *'"manifest_length":7211'* ]] || fail "cat: manifest_length: $out"
[[ $out == *'"added_snapshot_id":8656952484400131532'* ]] || fail "cat: snapshot id: $out"
[[ $("$SLUICE" avro cat --limit 0 "$MANIFEST" | wc -l) -eq 0 ]] || fail "cat --limit 0"

meta=$("$SLUICE" avro meta "$MANIFEST")
for want in '"codec": "deflate"' '"records": 1' '"blocks": 1' '"format-version": "2"' \
            '"content": "data"' '"partition-spec"'; do
  [[ $meta == *"$want"* ]] || fail "meta lacks $want: $meta"
done
[[ $meta != *'"avro.schema"'* ]] || fail "meta prints avro.schema"

schema=$("$SLUICE" avro schema "$LIST")
[[ $schema == *'"field-id": 500'* && $schema == *'"element-id": 508'* ]] || fail "schema: $schema"

for cmd in cat schema meta; do
  "$SLUICE" avro $cmd --help >/dev/null || fail "$cmd --help"
done

if err=$("$SLUICE" avro cat CMakeLists.txt 2>&1); then fail "cat of a non-Avro file succeeded"; fi
[[ $err == *"bad magic"* && $err == *"CMakeLists.txt"* ]] || fail "error message: $err"
if "$SLUICE" avro meta /nonexistent.avro 2>/dev/null; then fail "meta of a missing file"; fi
echo "avro cli: ok"
