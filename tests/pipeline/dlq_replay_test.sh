#!/usr/bin/env bash
# Dead letters end to end: records a pipeline cannot decode land in
# <table>__dlq with their reason while the good ones commit; after a fix (the
# source and the table widened) `sluice dlq replay` moves the now-decodable
# ones into the table and keeps the rest, in one transaction, and a second
# replay moves nothing twice. Also: errors in a SQL file name line and column.
# Usage: dlq_replay_test.sh SLUICE_BINARY
set -euo pipefail
SLUICE=$(realpath "$1")
W=$(mktemp -d /tmp/sluice-dlq.XXXXXX)
PID=
cleanup() { [ -z "$PID" ] || kill -9 "$PID" 2>/dev/null || true; rm -rf "$W"; }
trap cleanup EXIT
S() { "$SLUICE" --warehouse "$W/wh" "$@"; }
PORT=$(( 20000 + RANDOM % 12000 ))
fail() { echo "FAILED: $*"; exit 1; }

write_sql() {  # write_sql USER_ID_TYPE
  cat > "$W/p.sql" <<SQL
CREATE TABLE lake.events (id BIGINT NOT NULL, user_id $1, kind STRING);
CREATE SOURCE events_in (id BIGINT, user_id $1, kind STRING) WITH (connector = 'http') FORMAT JSON;
CREATE PIPELINE load WITH (commit_interval = '200ms') AS
  INSERT INTO lake.events SELECT id, user_id, kind FROM events_in;
SQL
}
write_sql INT
"$SLUICE" --warehouse "$W/wh" run "$W/p.sql" --listen "127.0.0.1:$PORT" 2> "$W/run.log" & PID=$!
# (Generous waits: under ASan beside another test a start or a commit can take
# seconds; the test waits for the state it checks, never for a fixed time.)
for _ in $(seq 1 600); do curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.05; done
post_failed() { cat "$W/run.log"; fail "POST to sluice run on port $PORT"; }
curl -sf -XPOST --data-binary @- "http://127.0.0.1:$PORT/v1/streams/events_in/records" > /dev/null <<'EOF2' || post_failed
{"id":1,"user_id":7,"kind":"a"}
{"id":2,"user_id":5000000000,"kind":"too big for INT"}
{"id":3,"kind":["not","a","string"]}
{"id":4,"user_id":8,"kind":"b"}
{"user_id":9}
EOF2
# The runtime's metrics pass promtool and count what happened, once the first
# checkpoint committed every record (at most 60 s; a wrong count fails below).
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$PORT/metrics" > "$W/metrics" || true
  grep -q '^sluice_pipeline_records_committed_total{pipeline="load"} 2$' "$W/metrics" &&
    grep -q '^sluice_pipeline_dead_letters_total{pipeline="load"} 3$' "$W/metrics" && break
  sleep 0.1
done
if command -v promtool > /dev/null; then
  promtool check metrics < "$W/metrics" || fail "promtool rejects /metrics"
fi
grep -q '^sluice_pipeline_records_committed_total{pipeline="load"} 2$' "$W/metrics" || fail "records_committed"
grep -q '^sluice_pipeline_dead_letters_total{pipeline="load"} 3$' "$W/metrics" || fail "dead_letters"
grep -q '^sluice_stream_records_in_total{stream="events_in"} 5$' "$W/metrics" || fail "records_in"
grep -q '^sluice_pipeline_commit_duration_seconds_count{pipeline="load"} [1-9]' "$W/metrics" ||
  fail "commit duration histogram"
curl -sf "http://127.0.0.1:$PORT/v1/status" | grep -q '"dead_letters":3' || fail "/v1/status"
kill -TERM "$PID"; wait "$PID" || { cat "$W/run.log"; fail "sluice run did not exit 0"; }; PID=
[ "$(S scan lake.events --columns id | wc -l)" = 2 ] || fail "want the 2 good rows"
S scan lake.events__dlq --columns offset,error > "$W/dlq"
cat "$W/dlq"
[ "$(wc -l < "$W/dlq")" = 3 ] || fail "want 3 dead letters"
grep -q '"offset":1.*user_id' "$W/dlq" || fail "dead letter 1 does not name user_id"
grep -q '"offset":2.*kind' "$W/dlq" || fail "dead letter 2 does not name kind"
grep -q '"offset":4.*id' "$W/dlq" || fail "dead letter 4 does not name id"

# The fix: user_id becomes BIGINT in the table and in the source.
S table alter lake.events --widen-column user_id=BIGINT > /dev/null
write_sql BIGINT
S dlq replay "$W/p.sql" load --dry-run | tee "$W/out"
grep -q "3 dead letters of pipeline load: 1 would go" "$W/out" || fail "dry run"
[ "$(S scan lake.events__dlq --columns offset | wc -l)" = 3 ] || fail "dry run changed the dead letters"
S dlq replay "$W/p.sql" load --where "offset <= 2" | tee "$W/out"
grep -q "2 dead letters of pipeline load: 1 went into lake.events, 1 still failing" "$W/out" ||
  fail "replay counts"
S scan lake.events --columns id,user_id > "$W/rows"
grep -q '"id":2,"user_id":5000000000' "$W/rows" || fail "the recovered record is not in the table"
[ "$(wc -l < "$W/rows")" = 3 ] || fail "want 3 rows after replay"
S scan lake.events__dlq --columns offset > "$W/dlq"
[ "$(sort "$W/dlq" | tr -d '\n')" = '{"offset":2}{"offset":4}' ] || { cat "$W/dlq"; fail "dead letters after replay"; }
# Replaying again moves nothing twice.
S dlq replay "$W/p.sql" load | tee "$W/out"
grep -q "2 dead letters of pipeline load: 0 went" "$W/out" || fail "second replay"
[ "$(S scan lake.events --columns id | wc -l)" = 3 ] || fail "the second replay duplicated rows"
[ "$(S scan lake.events__dlq --columns id 2>/dev/null | wc -l)" = 0 ] || true

# Errors in the SQL file name the line and column.
printf 'CREATE TABLE lake.t (id BIGINT);\nCREATE PIPELINE p AS\n  INSERT INTO lake.t SELECT nope FROM src;\n' > "$W/bad.sql"
if S run "$W/bad.sql" 2> "$W/err"; then fail "a bad script ran"; fi
cat "$W/err"
grep -q "line 3, column" "$W/err" || fail "the error does not name line 3"
if S table describe lake.t > /dev/null 2>&1; then fail "a script that failed to bind created its table"; fi
printf "CREATE PIPELINE p WITH (delivery = 'at-least-once') AS INSERT INTO lake.t SELECT id FROM s;\n" > "$W/alo.sql"
if S run "$W/alo.sql" 2> "$W/err"; then fail "an at-least-once pipeline ran"; fi
cat "$W/err"
printf "CREATE TABLE lake.t (id BIGINT);\nCREATE PIPELINE p WITH (state.memory = 'lots') AS INSERT INTO lake.t SELECT id FROM s;\n" > "$W/mem.sql"
if S run "$W/mem.sql" 2> "$W/err"; then fail "a pipeline with a bad state.memory ran"; fi
cat "$W/err"
grep -q "line 2, column .*state.memory 'lots' is not a size" "$W/err" || fail "state.memory error"
echo "1 passed, 0 failed"
