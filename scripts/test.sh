#!/usr/bin/env bash
# Runs every sluice test on a fresh Debian 12 machine:
#   1. installs dependencies (scripts/install-deps.sh, idempotent),
#   2. builds and runs the whole suite (unit, fixture, interop) with ctest,
#   3. builds and runs the suite again under AddressSanitizer + UBSan (but
#      the interop suites, Kafka crash loops, torture and concurrency tests),
#   4. builds the threaded tests under ThreadSanitizer and runs them
#      (scripts/tsan.sh: task pool, serial queue, sharded windows, pipelines
#      on several lanes),
#   5. builds the libFuzzer targets with clang and runs each briefly.
# Environment: SLUICE_SKIP_ASAN=1, SLUICE_SKIP_TSAN=1, SLUICE_SKIP_FUZZ=1 skip
# steps 3/4/5;
# SLUICE_UNITY=OFF compiles each source alone (default ON: unity builds);
# SLUICE_FUZZ_SECONDS (default 15) per fuzz target; JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}

bash scripts/install-deps.sh

failed=0
passed=0
summary=()  # a line per step (and per build), printed again at the end
run_step() {  # run_step NAME COMMAND...
  local name=$1 start=$SECONDS; shift
  echo "=== $name"
  if "$@"; then
    passed=$((passed + 1)); summary+=("passed  $((SECONDS - start)) s  $name")
  else
    echo "=== $name FAILED"; failed=$((failed + 1)); summary+=("FAILED  $((SECONDS - start)) s  $name")
  fi
}
timed() {  # timed NAME COMMAND...: a build, its time in the summary (fails the script if it fails)
  local name=$1 start=$SECONDS; shift
  "$@"
  summary+=("built   $((SECONDS - start)) s  $name")
}
# failed_tests DIR: the tests the last ctest run in DIR failed, for the summary.
failed_tests() {
  local f=$1/Testing/Temporary/LastTestsFailed.log
  [ ! -s "$f" ] || sed "s|^|        failed in $1: |" "$f"
}

# The randomized interop suite takes its seed from here (fixed, so a CI run is
# reproducible; set SLUICE_INTEROP_SEED to explore other data).
export SLUICE_INTEROP_SEED=${SLUICE_INTEROP_SEED:-20261130}

# Unity builds (a target's sources compiled a few at a time, CMakeLists.txt)
# halve CI's compile time, most of its run; SLUICE_UNITY=OFF builds each
# source alone, as the default developer build does.
UNITY=-DCMAKE_UNITY_BUILD=${SLUICE_UNITY:-ON}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $UNITY >/dev/null
timed "build" ninja -C build -j "$JOBS"
rm -f build/Testing/Temporary/LastTestsFailed.log build-asan/Testing/Temporary/LastTestsFailed.log
run_step "tests" ctest --test-dir build --output-on-failure --timeout 900 -j "$JOBS"

if [ "${SLUICE_SKIP_ASAN:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=ON \
    -DSLUICE_BENCH=OFF $UNITY >/dev/null
  timed "build-asan" ninja -C build-asan -j "$JOBS"
  # Under the sanitizers: every unit and fixture test, the docs' SQL, and the
  # HTTP crash loops (pipeline, windows, CDC) with 15 kills each, and the S3
  # client against s3rver. The interop suites (which mostly time DuckDB and
  # node), the Kafka, S3 and REST twins of the crash loops, the torture test and the table concurrency tests run
  # only in the plain build above, at full size: under ASan they took two
  # thirds of CI's time for code paths the rest reach too. The state spill
  # test runs 100,000 keys (300,000 plain), without its RSS bound.
  run_step "tests under ASan+UBSan" env SLUICE_CRASH_KILLS=15 \
    SLUICE_SPILL_KEYS=100000 SLUICE_SPILL_RSS_MARGIN_MIB=2000 \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure --timeout 1200 -j "$JOBS" \
    -E '^(interop_.*|.*_kafka|.*_s3|.*_rest|pipeline_torture|table_concurrency_.*)$'
fi

if [ "${SLUICE_SKIP_TSAN:-0}" != 1 ]; then
  run_step "threaded tests under TSan" env SLUICE_UNITY=${SLUICE_UNITY:-ON} bash scripts/tsan.sh
fi

if [ "${SLUICE_SKIP_FUZZ:-0}" != 1 ]; then
  CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLUICE_FUZZ=ON -DSLUICE_TESTS=OFF -DSLUICE_BENCH=OFF $UNITY >/dev/null
  timed "build-fuzz" ninja -C build-fuzz -j "$JOBS" fuzzers
  run_fuzzer() {  # run_fuzzer FUZZER CORPUS: runs it briefly; prints its log if it fails
    if "$1" -max_total_time="${SLUICE_FUZZ_SECONDS:-15}" -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 "$2" > "$2.log" 2>&1; then
      grep -E '^(Done|stat::)' "$2.log" || true; rm -f "$2.log"
    else
      cat "$2.log"; rm -f "$2.log"; return 1
    fi
  }
  # seed_corpus FUZZER: a temporary corpus seeded with the small files of that
  # format among the fixtures (copied: libFuzzer extends it); prints its path.
  seed_corpus() {
    local corpus ext
    corpus=$(mktemp -d)
    ext=$(basename "$1"); ext=${ext%_fuzz}
    # (find is cut short by head: its SIGPIPE must not fail the step under pipefail)
    { find ../shared/fixtures -name "*.$ext" -size -64k 2>/dev/null || true; } | head -100 |
      while read -r f; do cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-16)"; done
    echo "$corpus"
  }
  # wait_fuzzer PID CORPUS: the result of a fuzzer started in the background
  # (its output, then its corpus, removed).
  wait_fuzzer() {
    local status=0
    wait "$1" || status=$?
    cat "$2.out"; rm -rf "$2" "$2.out"
    return "$status"
  }
  # Each fuzzer is one process on one core: they run JOBS at a time (the
  # time the summary shows for a fuzzer is the wait for it).
  mapfile -t fuzzers < <(find build-fuzz -maxdepth 3 -type f -name '*_fuzz' -perm -u+x | sort)
  for ((i = 0; i < ${#fuzzers[@]}; i += JOBS)); do
    batch=("${fuzzers[@]:i:JOBS}") pids=() corpora=()
    for fuzzer in "${batch[@]}"; do
      corpus=$(seed_corpus "$fuzzer")
      run_fuzzer "$fuzzer" "$corpus" > "$corpus.out" 2>&1 &
      pids+=($!) corpora+=("$corpus")
    done
    for k in "${!batch[@]}"; do
      run_step "fuzz $(basename "${batch[$k]}")" wait_fuzzer "${pids[$k]}" "${corpora[$k]}"
    done
  done
fi

echo
echo "summary:"
for line in "${summary[@]}"; do echo "  $line"; done
failed_tests build
failed_tests build-asan
echo "steps: $passed passed, $failed failed (in $SECONDS s)"
[ "$failed" -eq 0 ]
