# A bounded run watched from outside (sourced; bash), for the tests of state
# beyond memory.
#
# bounded_run kill|end SLUICE WAREHOUSE SQL LOG SPILL_GLOB KILLABLE
# Runs `SLUICE --warehouse WAREHOUSE run SQL --bounded` (output to LOG) in the
# background as RUN_PID, polling it: PEAK is its peak RSS (VmHWM) in MiB, and
# SPILLED becomes 1 once a path matches SPILL_GLOB. With `kill` it is killed
# with SIGKILL as soon as the command KILLABLE succeeds, and the test fails if
# it ended before; with `end` the test fails unless it exits 0.
PEAK=0
SPILLED=0
RUN_PID=

# bounded_run_cleanup DIR: kills a run still going and removes DIR (for the
# test's EXIT trap).
bounded_run_cleanup() {
  [ -z "$RUN_PID" ] || kill -9 "$RUN_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$1"
}

bounded_run() {
  local mode=$1 sluice=$2 wh=$3 sql=$4 log=$5 glob=$6 killable=$7
  "$sluice" --warehouse "$wh" run "$sql" --bounded > "$log" 2>&1 &
  RUN_PID=$!
  local hwm=0 h
  while kill -0 "$RUN_PID" 2>/dev/null; do
    h=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$RUN_PID/status" 2>/dev/null || echo 0)
    [ -z "$h" ] || [ "$h" -le "$hwm" ] || hwm=$h
    compgen -G "$glob" > /dev/null && SPILLED=1
    if [ "$mode" = kill ] && $killable; then
      kill -9 "$RUN_PID"
      break
    fi
    sleep 0.05
  done
  local rc=0
  { wait "$RUN_PID"; } 2>/dev/null || rc=$?
  RUN_PID=
  PEAK=$hwm
  if [ "$mode" = kill ] && [ $rc -ne 137 ]; then
    echo "FAIL: the run ended ($rc) before it could be killed: use more keys"
    tail -5 "$log"; exit 1
  fi
  if [ "$mode" = end ] && [ $rc -ne 0 ]; then
    echo "FAIL: the bounded run exited $rc"; tail -20 "$log"; exit 1
  fi
}
