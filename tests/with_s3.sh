#!/usr/bin/env bash
# Runs a command against a throwaway S3-protocol server (s3rver from npm, see
# ../shared/reference/test-tools.md): a fresh data dir, 127.0.0.1 at a free port,
# a bucket named "lake", exports SLUICE_TEST_S3_ENDPOINT and the AWS settings
# that reach it (keys S3RVER/S3RVER, path-style), runs "$@", stops the server
# and cleans up. (s3rver checks the access key id but not SigV4 signatures.)
#
# With SLUICE_S3_FAULT_RATE (and SLUICE_S3_FAULT_PROXY, the path of
# sluice-s3-fault-proxy) sluice reaches the server through that proxy, which
# fails that fraction of requests (503 SlowDown, 500, reset connections, cut
# bodies); SLUICE_TEST_S3_ENDPOINT still names the server itself, for the
# test's own checks.
# Fails (never skips) when the server cannot start.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
S3RVER="$ROOT/tests/interop/node_modules/s3rver/bin/s3rver.js"
[ -f "$S3RVER" ] || { echo "with_s3: no s3rver (run scripts/install-deps.sh)"; exit 1; }
D=$(mktemp -d /tmp/sluice-s3.XXXXXX)
PID=
PROXY_PID=
cleanup() {
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  wait 2>/dev/null || true
  [ -n "$PROXY_PID" ] && cat "$D/proxy.log" >&2
  rm -rf "$D"
}
trap cleanup EXIT
for attempt in 1 2 3 4 5; do
  PORT=$(( 20000 + RANDOM % 12000 ))
  # (the legacy OpenSSL provider: s3rver's ListObjectsV2 pagination needs it)
  NODE_OPTIONS=--openssl-legacy-provider node "$S3RVER" -d "$D/data" -a 127.0.0.1 -p "$PORT" \
    --configure-bucket lake --silent > "$D/log" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do
    if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then break; fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$PID" 2>/dev/null && curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
    export SLUICE_TEST_S3_ENDPOINT="http://127.0.0.1:$PORT"
    export AWS_ENDPOINT_URL="$SLUICE_TEST_S3_ENDPOINT" AWS_ENDPOINT_URL_S3="$SLUICE_TEST_S3_ENDPOINT"
    # (nothing of the developer's own AWS setup may reach the tests)
    unset AWS_PROFILE AWS_SESSION_TOKEN AWS_DEFAULT_REGION
    export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
    export AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER AWS_REGION=us-east-1
    if [ -n "${SLUICE_S3_FAULT_RATE:-}" ]; then
      "${SLUICE_S3_FAULT_PROXY:?SLUICE_S3_FAULT_RATE needs SLUICE_S3_FAULT_PROXY}" \
        "$SLUICE_TEST_S3_ENDPOINT" "$SLUICE_S3_FAULT_RATE" "$RANDOM" > "$D/proxy" 2> "$D/proxy.log" &
      PROXY_PID=$!
      for _ in $(seq 1 100); do [ -s "$D/proxy" ] && break; sleep 0.05; done
      AWS_ENDPOINT_URL=$(head -n1 "$D/proxy")
      AWS_ENDPOINT_URL_S3=$AWS_ENDPOINT_URL
      [ -n "$AWS_ENDPOINT_URL" ] || { echo "with_s3: the fault proxy did not start"; exit 1; }
      echo "with_s3: through a proxy failing ${SLUICE_S3_FAULT_RATE} of requests at $AWS_ENDPOINT_URL"
    fi
    status=0
    "$@" || status=$?
    exit $status
  fi
  kill "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  PID=
done
echo "with_s3: s3rver did not start:"; cat "$D/log"; exit 1
