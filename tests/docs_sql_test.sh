#!/usr/bin/env bash
# The SQL the docs show works as written: every ```sql block of README.md and
# docs/*.md, and every examples/*.sql, passes `sluice run --check` (names,
# options, bindings; nothing is created). A block with CREATE SOURCE but no
# pipeline is a fragment a reader cannot run: refused too.
# Usage: docs_sql_test.sh SLUICE_BINARY (from the repo root)
set -euo pipefail
SLUICE=$(realpath "$1")
W=$(mktemp -d /tmp/sluice-docs.XXXXXX)
trap 'rm -rf "$W"' EXIT
passed=0; failed=0
check() {  # check NAME FILE
  if ! grep -q "CREATE PIPELINE" "$2"; then
    echo "FAIL $1: a CREATE SOURCE without a pipeline (write the whole script)"
    failed=$((failed + 1)); return
  fi
  if out=$("$SLUICE" --warehouse "$W/wh" run --check "$2" 2>&1); then
    passed=$((passed + 1)); echo "ok   $1"
  else
    failed=$((failed + 1)); echo "FAIL $1: $out"
  fi
}
for doc in README.md docs/*.md; do
  # Each ```sql block into its own file, named by the document and its line.
  awk -v dir="$W" -v doc="$(basename "$doc")" '
    /^```sql/ { n = NR; file = dir "/" doc "-" n ".sql"; next }
    /^```/ && file { close(file); file = ""; next }
    file { print > file }' "$doc"
done
for f in "$W"/*.sql; do
  [ -e "$f" ] || continue
  grep -q "CREATE SOURCE" "$f" && check "$(basename "$f" .sql)" "$f"
done
for f in examples/*.sql; do check "$f" "$f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
