#!/usr/bin/env bash
# One call on the GPU machine (the device tool): build, GPU tests, tuning sweep, benchmark.
# Everything it writes goes under $OUT (at most 8 files come back, so results are tarred).
#   STAGES="build test tune quick"  bash benchmarks/device_run.sh
# Stages: build, test (whole suite), sanitize (compute-sanitizer on a subset), tune, quick
# (benchmark --quick), bench (full sweep into benchmarks/results/h200), perf (timing tests).
set -u -o pipefail
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16} TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
OUT=${OUT:-/tmp/reducekit-out}
STAGES=${STAGES:-"build test tune quick"}
mkdir -p "$OUT/res"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/summary.txt"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv >"$OUT/res/nvidia-smi.csv" 2>&1
if has build; then
  log "build"
  start=$(date +%s)
  if ! python3 setup.py build_ext --inplace >"$OUT/res/build.log" 2>&1; then
    tail -40 "$OUT/res/build.log"; log "BUILD FAILED"; tar -C "$OUT" -czf "$OUT/res.tgz" res; exit 1
  fi
  log "build ok in $(( $(date +%s) - start )) s"
  grep -i -E "spill|warning" "$OUT/res/build.log" | sort | uniq -c | head -20 >>"$OUT/summary.txt"
fi
if has test; then
  log "tests"
  (cd tests && timeout ${TEST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider -m "not perf" --durations=15 ${TEST_ARGS:-} 2>&1) | tee "$OUT/res/tests.log" | tail -40
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  tail -3 "$OUT/res/tests.log" >>"$OUT/summary.txt"
fi
if has sanitize; then
  log "compute-sanitizer (memcheck, racecheck, synccheck): every method at sizes 33 and 1025"
  for tool in memcheck racecheck synccheck; do
    echo "-- $tool" | tee -a "$OUT/res/sanitizer.log"
    (cd tests && timeout ${SANITIZE_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider \
      test_cuda.py -k "test_matrix and (1025 or 33) and (float32 or int8 or float16)" 2>&1) | tail -4 | tee -a "$OUT/res/sanitizer.log"
    echo "   exit ${PIPESTATUS[0]}" | tee -a "$OUT/res/sanitizer.log"
  done
  tail -20 "$OUT/res/sanitizer.log" >>"$OUT/summary.txt"
fi
if has tune; then
  log "tune"
  timeout 300 python3 benchmarks/tune.py --out "$OUT/res" ${TUNE_ARGS:-} 2>&1 | tee "$OUT/res/tune.log" | tail -60
fi
if has quick; then
  log "benchmark --quick"
  timeout 200 python3 benchmarks/bench.py --quick --no-progress --out "$OUT/res/quick" 2>&1 | tee "$OUT/res/quick.log" | tail -30
fi
if has bench; then
  log "benchmark (full sweep)"
  timeout ${BENCH_TIMEOUT:-420} python3 benchmarks/bench.py --no-progress --out "$OUT/res/h200" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/res/bench.log" | tail -60
fi
if has perf; then
  log "perf tests"
  (cd tests && timeout 200 python3 -m pytest -q -p no:cacheprovider -m perf -s 2>&1) | tee "$OUT/res/perf.log" | tail -30
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
log "done (status $status)"
cp "$OUT/summary.txt" "$OUT/res/"
tar -C "$OUT" -czf "$OUT/res.tgz" res && rm -rf "$OUT/res"
exit $status
