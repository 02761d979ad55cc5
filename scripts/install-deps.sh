#!/usr/bin/env bash
# Installs everything sluice needs to build and test on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped; npm tools install from the
# committed lockfile in tests/interop/.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
  libzstd-dev libsnappy-dev liblz4-dev zlib1g-dev libsimdjson-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libpq-dev postgresql
  python3-avro
  libcpp-httplib-dev libbrotli-dev libssl-dev librdkafka-dev kcat prometheus curl
  libre2-dev librocksdb-dev libcurl4-openssl-dev libpugixml-dev chromium
)
# The base image may bring Node.js (with npm) from another repository; only
# install Debian's when there is none, since Debian's npm conflicts with it.
command -v node >/dev/null 2>&1 || APT_PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(npm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # The tests start their own throwaway PostgreSQL servers: the package must
  # neither create nor start its default cluster, and no service may be
  # started during the install (there may be no init system).
  mkdir -p /etc/postgresql-common
  grep -qs '^create_main_cluster' /etc/postgresql-common/createcluster.conf ||
    echo 'create_main_cluster = false' >> /etc/postgresql-common/createcluster.conf
  policy_rc=/usr/sbin/policy-rc.d
  added_policy=0
  if [ ! -e "$policy_rc" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy_rc" && chmod +x "$policy_rc" && added_policy=1
  fi
  apt-get update -qq
  status=0
  apt-get install -y -qq --no-install-recommends "${missing[@]}" || status=$?
  [ "$added_policy" = 1 ] && rm -f "$policy_rc"
  [ "$status" = 0 ] || exit "$status"
fi

# Node tools for the interop tests (DuckDB, Avro reader). Node itself may come
# from the base image; npm ci uses the committed lockfile.
if [ -f tests/interop/package-lock.json ]; then
  if [ ! -d tests/interop/node_modules ] || \
     [ tests/interop/package-lock.json -nt tests/interop/node_modules/.package-lock.json ]; then
    (cd tests/interop && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi
echo "install-deps: ok"
