#!/usr/bin/env bash
# One call on the GPU machine (the device tool): build, GPU tests, sanitizers, planted faults,
# tuning sweep, benchmark. Everything it writes goes under $OUT (at most 8 files come back, so
# results are tarred into $OUT/res.tgz).
#   STAGES="build test sanitize faults"  bash benchmarks/device_run.sh
# A machine stays warm about 30 s after a call, and the next call finds the last one's build (ignored
# files stay): REUSE_BUILD=1 makes the build stage keep a CUDA build that imports without a planted
# fault (and that no fault_part stage left faulted) instead of building again (chain a second call
# at once; a cold machine builds as usual).
# DEADLINE=<s>: stages that would start later than that many seconds into the call are skipped and
# said so (the tool kills a call at its limit, and then nothing comes back).
# Stages: build, test (whole suite but perf), sanitize (memcheck, racecheck, synccheck and
# initcheck on a subset), sanitize_ops (the same on the operators' tests), sanitize_gather (the same
# on the gather step's tests), sanitize_pick (the same on SAN_FILE's tests matching SAN_K), sanitize_engine (the
# same on the engine's realigned loads, packed columns and float16 exact), sanitize_exact (the same
# on exact's value-independent paths, forced onto short rows), ncu (Nsight Compute on
# benchmarks/ncu_ops.py cases: NCU_CASES, NCU_KERNEL), faults
# (benchmarks/faults.py), tune_columns (benchmarks/tune_columns.py: the columns kernel's vectors
# against one column a thread on the sweep's column shapes; TUNE_COLUMNS_ARGS), corpus (tests/corpus.py: record and compare the bits corpus), fault_patches (benchmarks/fault_patches.py, PATCHES_ARGS), tune,
# fault_part (one planted fault compiled into one source file, FAULT_NAME into FAULT_FILE, the extension
# rebuilt in place, FAULT_TESTS run on the clean build and then expected to fail, the file restored
# and rebuilt; with FAULT_AB_ARGS, sweep.py on FAULT_AB_SEEDS timed clean, faulted and clean again),
# tune_ops (benchmarks/tune_ops.py; TUNE_OPS_ARGS, e.g. --set float64), tune_exact_rows
# (benchmarks/tune_exact_rows.py: method=exact's warp a row against the checked path), quick (benchmark --quick), bench (full sweep into
# $OUT/res/h200), dims (bench.py --dims into $OUT/res/h200), rfa (CUB's RFA library from .cccl),
# exact_families (bench_exact_families.py into $OUT/res/exact_families), misaligned
# (bench_misaligned.py into $OUT/res/misaligned), exact (bench_exact.py into
# $OUT/res/h200), ops (bench_ops.py into $OUT/res/h200), sweep (benchmarks/sweep.py on the GPU into
# $OUT/res/$SWEEP_DIR (default sweep); SWEEP_CASES, SWEEP_TIMEOUT, SWEEP_ARGS), sweep_hook_ab (sweep.py on AB_SEEDS's
# draws with the rule and with each of AB_B's hook flags, AB_ARGS on all, paired by sweep_pair.py into $OUT/res/ab), host_cost (benchmarks/host_cost.py:
# where eager calls' host time goes; HOST_COST_SWEEP, HOST_COST_WORST), fused_pair (benchmarks/fused_pair.py:
# named cases with the one-launch and the two-launch finish; FUSED_PAIR_CASES), rows_fill (benchmarks/rows_fill.py: rows
# against their lane count, short lanes by vectors and by elements; ROWS_FILL_ARGS), notebook (benchmarks/notebooks/tour.ipynb
# executed into $OUT/res/tour.ipynb; nbclient, nbformat and ipykernel installed offline from
# .whl/notebook/ when missing), distributed (tests/test_distributed.py with NCCL at world size 1 and
# benchmarks/bench_distributed.py into $OUT/res/h200), distributed2 (the same tests on 2 GPUs and
# bench_distributed.py --world 2 at 2^30 into $OUT/res/dist2, NVLink multicast off), perf (timing tests, figures into
# $OUT/res/perf.json), swap_ab (the tree's build against SWAP_DIR's former headers, rebuilt into
# SWAP_PARTS alone: FAULT_AB_ARGS's sweeps, as fault_part's A/B).
# The exit status is non-zero if ANY stage that ran failed: a failed build, a failing or empty
# test run, any sanitizer error, a missed fault or failed control, a tune or bench error, a
# missed perf target. $OUT/summary.txt lists each stage's verdict.
set -u -o pipefail
export PYTHONUNBUFFERED=1 MAX_JOBS=${MAX_JOBS:-16} TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0}
OUT=${OUT:-/tmp/reducekit-out}
STAGES=${STAGES:-"build test"}
# One data seed for the whole call (the test stage and the fault campaign see the same data).
export REDUCEKIT_SEED=${REDUCEKIT_SEED:-$(( $(od -An -N4 -tu4 /dev/urandom) & 0x7fffffff ))}
# The whole special-value matrix here (CI checks half of it, tests/test_special_values.py).
export REDUCEKIT_MATRIX_FRACTION=${REDUCEKIT_MATRIX_FRACTION:-1}
mkdir -p "$OUT/res"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/summary.txt"; }
T0=$(date +%s)
has() {
  [[ " $STAGES " == *" $1 "* ]] || return 1
  if [ -n "${DEADLINE:-}" ] && [ $(( $(date +%s) - T0 )) -ge "$DEADLINE" ]; then
    log "$1: skipped (past DEADLINE=$DEADLINE s)"
    return 1
  fi
}
status=0
# verdict STAGE RC: record a stage's result; any non-zero rc fails the whole call.
verdict() {
  if [ "$2" = 0 ]; then log "$1: ok"; else log "$1: FAILED (exit $2)"; status=1; fi
}
finish() {
  log "done (status $status, REDUCEKIT_SEED=$REDUCEKIT_SEED)"
  cp "$OUT/summary.txt" "$OUT/res/"
  tar -C "$OUT" -czf "$OUT/res.tgz" res && rm -rf "$OUT/res"
  exit $status
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv >"$OUT/res/nvidia-smi.csv" 2>&1
if has build; then
  log "build"
  start=$(date +%s)
  built_ok() {
    # A build that silently fell back to CPU, or carries a planted fault, is a failed build here.
    python3 -c "import reducekit as r, torch; assert torch.cuda.is_available(), 'no GPU'; \
assert r._C.cuda_built, 'extension built without CUDA'; assert r._C.fault == 'none', 'planted fault ' + r._C.fault"
  }
  if [ "${REUSE_BUILD:-0}" = 1 ] && [ ! -f build/fault_part.marker ] && ls reducekit/_C.cpython-*.so >/dev/null 2>&1 &&
    built_ok >"$OUT/res/build.log" 2>&1; then
    log "build: the last call's build kept (REUSE_BUILD=1, a warm machine)"
    rc=0
  else
    python3 setup.py build_ext --inplace >"$OUT/res/build.log" 2>&1
    rc=$?
  fi
  if [ $rc = 0 ]; then
    built_ok >>"$OUT/res/build.log" 2>&1 || rc=$?
  fi
  verdict "build ($(( $(date +%s) - start )) s)" $rc
  # ninja's start and end of each job (ms), for the build's critical path
  cp build/temp.*/.ninja_log "$OUT/res/ninja_log.txt" 2>/dev/null
  # ptxas spill warnings, by function (not the command lines, whose -Xptxas=-warn-spills matched a plain "spill")
  grep -E "ptxas warning|warning:" "$OUT/res/build.log" | sort | uniq -c | sort -rn | head -20 >>"$OUT/summary.txt"
  [ $rc = 0 ] || { tail -40 "$OUT/res/build.log"; finish; }
fi
if has rfa; then
  # CUB's RFA for bench_exact_families.py: needs CCCL main's headers in .cccl (carried: an ignored
  # copy of github.com/NVIDIA/cccl) or CCCL_DIR.
  log "CUB RFA library (benchmarks/rfa/build.sh)"
  bash benchmarks/rfa/build.sh >"$OUT/res/rfa_build.log" 2>&1
  verdict rfa_build $?
  tail -3 "$OUT/res/rfa_build.log"
fi
if has test; then
  log "tests"
  # eval: TEST_ARGS may quote (-k 'a or b'), as FAULTS_ARGS does; unquoted, such a -k was split.
  (cd tests && eval "timeout ${TEST_TIMEOUT:-600} python3 -m pytest -q -p no:cacheprovider -m \"not perf\" --durations=15 ${TEST_ARGS:-}" 2>&1) \
    | tee "$OUT/res/tests.log" | tail -40
  verdict tests "${PIPESTATUS[0]}"
  tail -3 "$OUT/res/tests.log" >>"$OUT/summary.txt"
fi
# sanitize_suite NAME FILE SELECTION: the four compute-sanitizer tools over FILE's tests matching
# SELECTION; a nonzero error count fails the stage even if the exit code was lost. With
# SAN_OURS=1 only errors in reducekit's kernels count: memcheck, racecheck and synccheck check
# the engine's kernels alone (--kernel-name) and skip host API errors; initcheck must see every
# kernel (it learns which bytes are written from the kernels that write them, torch's included),
# so it runs unfiltered and fails on an error whose device frames are reducekit's.
sanitize_suite() {
  for tool in memcheck racecheck synccheck initcheck; do
    echo "-- $1 $tool" | tee -a "$OUT/res/sanitizer.log"
    local filter=""
    [ "${SAN_OURS:-0}" = 1 ] && filter="--print-limit 1000000"  # every error printed: initcheck's are attributed below
    [ "${SAN_OURS:-0}" = 1 ] && [ $tool != initcheck ] && filter="--kernel-name kns=2rk3eng --report-api-errors no"
    (cd tests && timeout ${SANITIZE_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 9 $filter python3 -m pytest -q \
      -p no:cacheprovider $2 -k "$3" 2>&1) >"$OUT/res/sanitizer_$1_$tool.log"
    rc=${PIPESTATUS[0]}
    log_="$OUT/res/sanitizer_$1_$tool.log"
    if [ "${SAN_OURS:-0}" = 1 ] && [ $tool = initcheck ]; then
      ours=$(grep -c -E "Device Frame:.*rk::|^=========     at .*rk::" "$log_")
      echo "errors in reducekit kernels: $ours (of all: $(grep -o -E 'ERROR SUMMARY: [0-9]+' "$log_" | head -1))" | tee -a "$OUT/res/sanitizer.log"
      if [ "$ours" != 0 ]; then rc=9; elif [ $rc = 9 ]; then rc=0; fi
    else
      grep -q -E "ERROR SUMMARY: [1-9]|RACECHECK SUMMARY: [1-9]" "$log_" && [ $rc = 0 ] && rc=9
    fi
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed|failed" "$log_" | tail -3 | tee -a "$OUT/res/sanitizer.log"
    verdict "sanitize $1 $tool" $rc
  done
}
if has sanitize; then
  log "compute-sanitizer: every method and dtype at sizes 33 and 1025, the multi-block methods at 65537"
  sanitize_suite methods test_cuda.py "test_matrix and (33 or 1025 or (65537 and (auto or single_pass or two_pass or vectorized or cub_device or exact)))"
  log "compute-sanitizer: the dims engine (rows, columns, split rows and columns, two-step plans)"
  sanitize_suite dims test_dims.py "cuda and (rows_accuracy or columns_accuracy or general_dims_accuracy or rows_equal_columns) and not 131077 and not 65539"
  log "compute-sanitizer: method=exact (rows, shard words, rounding edges, spills of wide data)"
  sanitize_suite exact test_exact.py "cuda and (test_dims or partial_format or rounding_edges or (correctly_rounded and not large))"
fi
if has sanitize_pick; then
  # One selection of the four tools: SAN_FILE's tests matching SAN_K (e.g. one method's kernels
  # after a change to them alone).
  log "compute-sanitizer: ${SAN_FILE:?SAN_FILE} -k '${SAN_K:?SAN_K}'"
  sanitize_suite "${SAN_NAME:-pick}" "$SAN_FILE" "$SAN_K"
fi
if has sanitize_exact; then
  log "compute-sanitizer: method=exact's value-independent paths (binned, chunked, float16 counts) forced onto short rows, its columns paths and the warp ends of short rows"
  sanitize_suite exact_paths test_exact.py "value_independent_paths_small or columns_specials or binned_ends_rounding"
fi
if has sanitize_ops; then
  log "compute-sanitizer: the operators (rows with one and several lanes per thread, shared-memory trees, columns, finishes)"
  # Errors in reducekit's kernels only (SAN_OURS): these tests call torch's own reductions as
  # references (initcheck flags their staging reads) and cuda-python's driver lookups report
  # failed cuGetProcAddress calls; neither is ours.
  SAN_OURS=1 sanitize_suite ops test_ops.py "cuda and (values_against_float64 or rows_lanes_per_thread or short_lanes)"
fi
if has sanitize_gather; then
  log "compute-sanitizer: the gather step (several reduced dims read through the dims: rows form and columns form)"
  SAN_OURS=1 sanitize_suite gather test_dims.py "cuda and (two_step or (gather_equals_copy and (sum or var_mean or amax or logsumexp)))"
fi
if has sanitize_engine; then
  log "compute-sanitizer: the engine's realigned loads (misaligned rows and columns at the tensor's ends), packed column batches, float16 exact"
  # One process for the exact and the columns tests: initcheck flagged the realigned granules
  # only when both ran together (bytes next to a tensor that no earlier kernel wrote).
  SAN_OURS=1 sanitize_suite engine "test_exact.py test_dims.py test_ops.py" "float16_specials or chunked_path_worst or \
(correctly_rounded and float16 and cuda) or (columns_accuracy and cuda and (37 or 5)) or (non_contiguous_inputs and cuda) or \
columns_launch_shapes"
fi
if has ncu; then
  # NCU_CASES: ';'-separated argument lists of benchmarks/ncu_ops.py; NCU_KERNEL: the kernel regex.
  NCU_CASES=${NCU_CASES:-mean --shape 5259 519 --dim 0 --dtype bfloat16}
  log "Nsight Compute on the engine's kernels (benchmarks/ncu_ops.py cases: $NCU_CASES)"
  rc=0
  IFS=';' read -ra cases <<<"$NCU_CASES"
  for c in "${cases[@]}"; do
    echo "### $c" >>"$OUT/res/ncu.txt"
    timeout 120 ncu -k "regex:${NCU_KERNEL:-columns_kernel}" --launch-skip 2 --launch-count 1 --section SpeedOfLight \
      --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats ${NCU_EXTRA:-} \
      python3 benchmarks/ncu_ops.py $c >>"$OUT/res/ncu.txt" 2>&1 || rc=1
  done
  grep -E "^### |Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Block Size|Grid Size|Local|Stall|Executed Ipc|Issue Slots|Instructions" "$OUT/res/ncu.txt" | head -120
  verdict ncu $rc
fi
if has corpus; then
  log "bits corpus (tests/corpus.py): CUDA recorded into res/corpus_cuda.json, compared with tests/corpus/cuda.json; CPU compared"
  rc=0
  python3 tests/corpus.py --device cuda --out "$OUT/res/corpus_cuda.json" \
    $( [ -f tests/corpus/cuda.json ] && echo --check tests/corpus/cuda.json ) 2>&1 | tee "$OUT/res/corpus.log" | tail -42
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  python3 tests/corpus.py --device cpu --check tests/corpus/cpu.json 2>&1 | tee -a "$OUT/res/corpus.log" | tail -42
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  verdict corpus $rc
fi
if has faults; then
  log "planted faults (benchmarks/faults.py)"
  # eval: FAULTS_ARGS may quote (--pytest-args '-m "not perf" ...').
  eval "timeout ${FAULTS_TIMEOUT:-1500} python3 benchmarks/faults.py --out \"$OUT/res/faults\" ${FAULTS_ARGS:-}" 2>&1 \
    | tee "$OUT/res/faults.log" | tail -30
  verdict faults "${PIPESTATUS[0]}"
  mkdir -p "$OUT/res/faults/logs" && cp faults-work/*.log "$OUT/res/faults/logs/" 2>/dev/null
fi
# fault_ab_sweep SIDE: with FAULT_AB_ARGS set, sweep.py on FAULT_AB_SEEDS's draws (FAULT_AB_ARGS on
# each) into $OUT/res/fault_ab/SIDE_SEED: fault_part times the clean build, the faulted one and the
# clean one again, where a planted fault is a former kernel (columns_lane_halves: session 62's
# order), so that one build gives a same-machine A/B of the change.
fault_ab_sweep() {
  [ -n "${FAULT_AB_ARGS:-}" ] || return 0
  mkdir -p "$OUT/res/fault_ab"
  for seed in ${FAULT_AB_SEEDS:-21}; do
    timeout -s TERM ${FAULT_AB_TIMEOUT:-120} python3 benchmarks/sweep.py --device cuda --seed $seed --cases ${SWEEP_CASES:-400} \
      --budget ${SWEEP_BUDGET:-0.05} --out "$OUT/res/fault_ab/${1}_$seed" $FAULT_AB_ARGS >"$OUT/res/fault_ab/${1}_$seed.log" 2>&1
    log "fault_ab $1 seed $seed exit $?"
  done
}
fault_ab_pair() {
  [ -n "${FAULT_AB_ARGS:-}" ] || return 0
  for seed in ${FAULT_AB_SEEDS:-21}; do
    for a in clean1 clean2; do
      python3 benchmarks/sweep_pair.py "$OUT/res/fault_ab/${a}_$seed/sweep_cuda.json" "$OUT/res/fault_ab/fault_$seed/sweep_cuda.json" \
        --names "$a" fault --out "$OUT/res/fault_ab/pair_${seed}_$a.md" 2>&1 | tail -8
    done
  done
}
if has fault_part; then
  # A fault (csrc/core/faults.h) compiled into one file only (the build's other objects kept), which
  # the ordinary tests must catch: quicker than a faults.py campaign, which builds a whole copy. It
  # means something only where FAULT_FILE is the one file that instantiates the faulted code (a
  # dtype part of a family, exact.cu): elsewhere the other objects keep the clean code. The same
  # tests first run on the clean build (the control) and must pass. build/fault_part.marker stands
  # while the extension holds the fault, so that REUSE_BUILD never keeps such a build.
  if [ -z "${FAULT_NAME:-}" ] || [ -z "${FAULT_FILE:-}" ] || [ -z "${FAULT_TESTS:-}" ]; then
    verdict "fault_part (FAULT_NAME, FAULT_FILE and FAULT_TESTS must be set)" 1
  else
    idx=$(python3 - "$FAULT_NAME" <<'PY'
import re, sys
names = re.findall(r'^\s*X\(\w+,\s*"([a-z0-9_]+)"', open("csrc/core/faults.h").read(), re.M)
print(names.index(sys.argv[1]) if sys.argv[1] in names else "")
PY
)
    log "planted fault $FAULT_NAME (index $idx) in $FAULT_FILE alone; tests: $FAULT_TESTS"
    if [ -z "$idx" ] || [ ! -f "$FAULT_FILE" ]; then
      verdict "fault_part (no fault $FAULT_NAME or no file $FAULT_FILE)" 1
    else
      eval "(cd tests && timeout ${FAULT_TIMEOUT:-120} python3 -m pytest -q -p no:cacheprovider $FAULT_TESTS)" >"$OUT/res/fault_part_control.log" 2>&1
      control=$?
      log "fault_part control (clean build) exit $control"
      if [ $control != 0 ]; then
        verdict "fault_part control (the tests fail on the clean build)" 1
      else
        fault_ab_sweep clean1
        orig=$(mktemp)
        cp "$FAULT_FILE" "$orig"
        mkdir -p build && echo "$FAULT_NAME $FAULT_FILE" >build/fault_part.marker
        { echo "#define RK_FAULT $idx"; cat "$orig"; } >"$FAULT_FILE"
        python3 setup.py build_ext --inplace >"$OUT/res/fault_part_build.log" 2>&1
        rc=$?
        if [ $rc = 0 ]; then
          eval "(cd tests && timeout ${FAULT_TIMEOUT:-120} python3 -m pytest -q -p no:cacheprovider $FAULT_TESTS)" >"$OUT/res/fault_part.log" 2>&1
          caught=$?
          tail -5 "$OUT/res/fault_part.log"
          log "fault_part tests exit $caught"
          # caught: the tests failed (pytest's 1) or the process died of a signal (128 + N); 0 is a
          # miss, and 2-5 (interrupted, internal or usage error, nothing collected) or 124 (time
          # limit) say nothing
          if [ $caught != 1 ] && { [ $caught -lt 128 ] || [ $caught -gt 165 ]; }; then rc=1; fi
          fault_ab_sweep fault
        fi
        verdict "fault_part $FAULT_NAME caught" $rc
        cp "$orig" "$FAULT_FILE" && touch "$FAULT_FILE" && rm -f "$orig"
        if python3 setup.py build_ext --inplace >"$OUT/res/fault_part_restore.log" 2>&1; then
          rm -f build/fault_part.marker
          verdict "fault_part restore" 0
          fault_ab_sweep clean2
          fault_ab_pair
        else
          rm -f reducekit/_C.cpython-*.so
          verdict "fault_part restore (the clean rebuild failed; the extension removed)" 1
        fi
      fi
    fi
  fi
fi
if has swap_ab; then
  # A same-build A/B of a change to shared headers against its former code, on the files that use it
  # alone: SWAP_DIR holds the B side's files at their repository paths (e.g. .whl/ab_old/csrc/...,
  # carried); they replace the tree's with the tree's modification times kept, so that ninja rebuilds
  # only SWAP_PARTS (touched), not every file including them. sweep.py (FAULT_AB_ARGS,
  # FAULT_AB_SEEDS) times the tree's build (clean1), the swapped one (fault) and the tree's again
  # (clean2); pairs as fault_part's. Run it before any stage that needs the whole tree's build.
  if [ -z "${SWAP_DIR:-}" ] || [ -z "${SWAP_PARTS:-}" ] || [ -z "${FAULT_AB_ARGS:-}" ]; then
    verdict "swap_ab (SWAP_DIR, SWAP_PARTS and FAULT_AB_ARGS must be set)" 1
  else
    log "swap_ab: $(cd "$SWAP_DIR" && find . -type f | tr '\n' ' ') rebuilt into $SWAP_PARTS"
    fault_ab_sweep clean1
    keep=$(mktemp -d)
    files=$(cd "$SWAP_DIR" && find . -type f | sed 's#^\./##')
    for f in $files; do mkdir -p "$keep/$(dirname $f)"; cp -p "$f" "$keep/$f"; cp "$SWAP_DIR/$f" "$f"; touch -r "$keep/$f" "$f"; done
    mkdir -p build && echo "swap_ab" >build/fault_part.marker
    touch $SWAP_PARTS
    python3 setup.py build_ext --inplace >"$OUT/res/swap_ab_build.log" 2>&1
    rc=$?
    log "swap_ab: swapped build exit $rc ($(grep -c '^\[' "$OUT/res/swap_ab_build.log") ninja steps)"
    [ $rc = 0 ] && fault_ab_sweep fault
    for f in $files; do cp -p "$keep/$f" "$f"; done
    rm -rf "$keep"
    touch $SWAP_PARTS
    # SWAP_RESTORE=0: the tree's build is not rebuilt nor timed again (the swap_ab marker stays, so
    # that REUSE_BUILD never keeps the swapped build).
    if [ "${SWAP_RESTORE:-1}" = 0 ]; then
      fault_ab_pair
    elif python3 setup.py build_ext --inplace >"$OUT/res/swap_ab_restore.log" 2>&1; then
      rm -f build/fault_part.marker
      fault_ab_sweep clean2
      fault_ab_pair
    else
      rm -f reducekit/_C.cpython-*.so
      rc=1
    fi
    verdict swap_ab $rc
  fi
fi
if has fault_patches; then
  log "faults planted by another hand (benchmarks/fault_patches.py; PATCHES_ARGS picks them)"
  eval "timeout ${PATCHES_TIMEOUT:-540} python3 benchmarks/fault_patches.py --out \"$OUT/res/fault_patches\" ${PATCHES_ARGS:-}" 2>&1 \
    | tee "$OUT/res/fault_patches.log" | tail -40
  verdict fault_patches "${PIPESTATUS[0]}"
fi
if has tune; then
  log "tune"
  timeout ${TUNE_TIMEOUT:-300} python3 benchmarks/tune.py --out "$OUT/res" ${TUNE_ARGS:-} 2>&1 | tee "$OUT/res/tune.log" | tail -60
  verdict tune "${PIPESTATUS[0]}"
fi
if has tune_columns; then
  log "how the columns kernel reads its columns: vectors against one column a thread (benchmarks/tune_columns.py)"
  timeout ${TUNE_COLUMNS_TIMEOUT:-400} python3 benchmarks/tune_columns.py --json "$OUT/res/tune_columns.json" ${TUNE_COLUMNS_ARGS:-} 2>&1 \
    | tee "$OUT/res/tune_columns.log" | tail -5
  verdict tune_columns "${PIPESTATUS[0]}"
fi
if has tune_ops; then
  log "tune the operators' rows kernel (benchmarks/tune_ops.py)"
  timeout ${TUNE_OPS_TIMEOUT:-400} python3 benchmarks/tune_ops.py --json "$OUT/res/tune_ops.json" ${TUNE_OPS_ARGS:-} 2>&1 | tee "$OUT/res/tune_ops.log" | tail -40
  verdict tune_ops "${PIPESTATUS[0]}"
fi
if has tune_exact_rows; then
  log "method=exact's short rows: a warp a row against the checked path (benchmarks/tune_exact_rows.py)"
  timeout ${TUNE_EXACT_ROWS_TIMEOUT:-400} python3 benchmarks/tune_exact_rows.py --json "$OUT/res/tune_exact_rows.json" 2>&1 | tee "$OUT/res/tune_exact_rows.log" | tail -70
  verdict tune_exact_rows "${PIPESTATUS[0]}"
fi
if has quick; then
  log "benchmark --quick"
  timeout 200 python3 benchmarks/bench.py --quick --no-progress --out "$OUT/res/quick" 2>&1 | tee "$OUT/res/quick.log" | tail -30
  verdict quick "${PIPESTATUS[0]}"
fi
if has bench; then
  log "benchmark (full sweep)"
  timeout ${BENCH_TIMEOUT:-420} python3 benchmarks/bench.py --no-progress --out "$OUT/res/h200" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/res/bench.log" | tail -60
  verdict bench "${PIPESTATUS[0]}"
fi
if has dims; then
  log "benchmark --dims (reductions over dims)"
  timeout ${DIMS_TIMEOUT:-300} python3 benchmarks/bench.py --dims --no-progress --out "$OUT/res/h200" ${DIMS_ARGS:-} 2>&1 \
    | tee "$OUT/res/dims.log" | tail -40
  verdict dims "${PIPESTATUS[0]}"
fi
if has exact; then
  log "benchmark method=exact (benchmarks/bench_exact.py)"
  timeout ${EXACT_TIMEOUT:-500} python3 benchmarks/bench_exact.py --out "$OUT/res/h200" 2>&1 | tee "$OUT/res/exact.log" | tail -70
  verdict exact "${PIPESTATUS[0]}"
fi
if has exact_families; then
  log "method=exact by data family, with CUB's RFA in the same run (benchmarks/bench_exact_families.py)"
  timeout ${EXACT_TIMEOUT:-540} python3 benchmarks/bench_exact_families.py --out "$OUT/res/exact_families" ${EXACT_ARGS:-} 2>&1 \
    | tee "$OUT/res/exact_families.log" | grep -v "^|" | tail -40
  rc=${PIPESTATUS[0]}
  [ $rc = 1 ] && log "exact_families: targets missed (figures written)" && rc=0  # a miss is a finding, not a failure
  verdict exact_families $rc
fi
if has misaligned; then
  log "misaligned rows against their aligned twins and torch (benchmarks/bench_misaligned.py)"
  timeout ${MISALIGNED_TIMEOUT:-300} python3 benchmarks/bench_misaligned.py --out "$OUT/res/misaligned" ${MISALIGNED_ARGS:-} 2>&1 \
    | tee "$OUT/res/misaligned.log" | tail -20
  verdict misaligned "${PIPESTATUS[0]}"
fi
if has sweep; then
  log "random-shape sweep against torch (benchmarks/sweep.py: eager, graph, % of ceiling, same-bytes sum)"
  # SIGTERM at the limit: sweep.py writes the cases timed so far and says it stopped.
  timeout -s TERM ${SWEEP_TIMEOUT:-420} python3 benchmarks/sweep.py --device cuda --cases ${SWEEP_CASES:-400} \
    --budget ${SWEEP_BUDGET:-0.05} --out "$OUT/res/${SWEEP_DIR:-sweep}" ${SWEEP_ARGS:-} 2>&1 | tee "$OUT/res/${SWEEP_DIR:-sweep}.log" | tail -45
  rc=${PIPESTATUS[0]}
  [ $rc = 124 ] && [ -f "$OUT/res/${SWEEP_DIR:-sweep}/sweep_cuda.json" ] && log "sweep: stopped by its time limit (partial results written)" && rc=0
  verdict sweep $rc
fi
if has sweep_hook_ab; then
  # The same build, a hook's settings on the same draws: AB_SEEDS, AB_ARGS for every run (e.g.
  # "--only-ops var_mean"), AB_B the other runs' hook flags, ';' between runs (e.g. "--columns-wide
  # -1;--columns-wide 1"). A seed's runs go back to back, the rule's first on even seeds' turns and
  # last on odd ones; benchmarks/sweep_pair.py pairs each with the rule's (pair_SEED_bK.md).
  log "sweep hook A/B (the rule against: ${AB_B:-}; seeds ${AB_SEEDS:-21}; ${AB_ARGS:-})"
  mkdir -p "$OUT/res/ab"
  IFS=';' read -r -a variants <<<"${AB_B:-}"
  sides="a"
  for k in "${!variants[@]}"; do sides="$sides b$k"; done
  rc=0
  n=0
  [ ${#variants[@]} = 0 ] && { log "sweep_hook_ab: AB_B (the other runs' sweep.py flags) is empty"; rc=1; AB_SEEDS=" "; }
  for seed in ${AB_SEEDS:-21}; do
    order=$sides
    [ $((n % 2)) = 1 ] && order="$(echo $sides | cut -d' ' -f2-) a"
    for side in $order; do
      flags=${AB_ARGS:-}
      [ $side != a ] && flags="$flags ${variants[${side#b}]}"
      # SIGTERM at the limit: sweep.py writes the cases timed so far (sweep_pair.py pairs the cases both runs timed).
      timeout -s TERM ${AB_TIMEOUT:-420} python3 benchmarks/sweep.py --device cuda --seed $seed --cases ${SWEEP_CASES:-400} \
        --budget ${SWEEP_BUDGET:-0.05} --out "$OUT/res/ab/${side}_$seed" $flags >"$OUT/res/ab/${side}_$seed.log" 2>&1
      r=$?
      [ $r = 124 ] && [ -f "$OUT/res/ab/${side}_$seed/sweep_cuda.json" ] && log "sweep_hook_ab: seed $seed $side stopped by its time limit (partial)" && r=0
      [ $r = 0 ] || rc=1
    done
    for k in "${!variants[@]}"; do
      echo "-- seed $seed: the rule against ${variants[$k]}"
      python3 benchmarks/sweep_pair.py "$OUT/res/ab/a_$seed/sweep_cuda.json" "$OUT/res/ab/b${k}_$seed/sweep_cuda.json" \
        --names rule "b$k" --out "$OUT/res/ab/pair_${seed}_b$k.md" 2>&1 | tail -12 || rc=1
    done
    n=$((n + 1))
  done
  verdict sweep_hook_ab $rc
fi
if has fused_pair; then
  log "one-launch against two-launch finish on named cases (benchmarks/fused_pair.py; FUSED_PAIR_CASES)"
  timeout ${FUSED_PAIR_TIMEOUT:-120} python3 benchmarks/fused_pair.py --cases ${FUSED_PAIR_CASES:-welford} \
    --out "$OUT/res/fused_pair_${FUSED_PAIR_CASES:-welford}" 2>&1 | tee "$OUT/res/fused_pair.log" | tail -12
  verdict fused_pair "${PIPESTATUS[0]}"
fi
if has rows_fill; then
  log "rows against their lane count at fixed bytes, short lanes by vectors and by elements (benchmarks/rows_fill.py; ROWS_FILL_ARGS)"
  timeout ${ROWS_FILL_TIMEOUT:-300} python3 benchmarks/rows_fill.py --old-too --out "$OUT/res/rows_fill" ${ROWS_FILL_ARGS:-} 2>&1 \
    | tee "$OUT/res/rows_fill.log" | tail -120
  verdict rows_fill "${PIPESTATUS[0]}"
fi
if has host_cost; then
  log "host cost of eager calls (benchmarks/host_cost.py: the sweep's cases whose eager ratio trails the graph ratio)"
  timeout ${HOST_COST_TIMEOUT:-300} python3 benchmarks/host_cost.py --sweep ${HOST_COST_SWEEP:-benchmarks/results/h100/sweep/sweep_cuda.json} \
    --worst ${HOST_COST_WORST:-24} --out "$OUT/res/${HOST_COST_DIR:-host_cost}" 2>&1 | tee "$OUT/res/${HOST_COST_DIR:-host_cost}.log" | tail -60
  verdict host_cost "${PIPESTATUS[0]}"
fi
if has ops; then
  log "benchmark of every reduction op (benchmarks/bench_ops.py)"
  timeout ${OPS_TIMEOUT:-500} python3 benchmarks/bench_ops.py --out "$OUT/res/h200" 2>&1 | tee "$OUT/res/ops.log" | tail -70
  verdict ops "${PIPESTATUS[0]}"
fi
if has notebook; then
  log "notebook (benchmarks/notebooks/tour.ipynb)"
  python3 -c "import nbclient, nbformat, ipykernel" 2>/dev/null \
    || python3 -m pip install -q --no-index --find-links .whl/notebook nbclient nbformat ipykernel 2>&1 | tail -3
  timeout ${NOTEBOOK_TIMEOUT:-540} python3 benchmarks/run_notebook.py --out "$OUT/res/tour.ipynb" 2>&1 \
    | tee "$OUT/res/notebook.log" | tail -5
  verdict notebook "${PIPESTATUS[0]}"
fi
if has distributed; then
  log "reducekit.distributed on one GPU: NCCL world size 1 tests, then benchmarks/bench_distributed.py"
  (cd tests && NCCL_NVLS_ENABLE=0 timeout ${DIST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider -rA -s test_distributed.py 2>&1) \
    | tee "$OUT/res/distributed_tests.log" | tail -30
  verdict distributed_tests "${PIPESTATUS[0]}"
  NCCL_NVLS_ENABLE=0 timeout ${DIST_TIMEOUT:-300} python3 benchmarks/bench_distributed.py --out "$OUT/res/h200" 2>&1 \
    | tee "$OUT/res/distributed_bench.log" | tail -40
  verdict distributed_bench "${PIPESTATUS[0]}"
fi
if has distributed2; then
  log "reducekit.distributed on 2 GPUs: the whole NCCL test file (test_nccl_two_gpus included), then the 2^30 table"
  export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
  nvidia-smi --query-gpu=name,memory.total --format=csv | tee "$OUT/res/gpus.txt"
  (cd tests && timeout ${DIST_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider -rA -s test_distributed.py 2>&1) \
    | tee "$OUT/res/distributed_tests.log" | tail -30
  verdict distributed2_tests "${PIPESTATUS[0]}"
  timeout ${DIST_TIMEOUT:-300} python3 benchmarks/bench_distributed.py --world 2 --log2 ${DIST_LOG2:-30} \
    --reps ${DIST_REPS:-30} --out "$OUT/res/dist2" 2>&1 | tee "$OUT/res/distributed2_bench.log" | tail -40
  verdict distributed2_bench "${PIPESTATUS[0]}"
fi
if has perf; then
  log "perf tests"
  (cd tests && REDUCEKIT_PERF_JSON="$OUT/res/perf.json" timeout ${PERF_TIMEOUT:-300} python3 -m pytest -q -p no:cacheprovider -m perf -s \
    ${PERF_ARGS:-} 2>&1) | tee "$OUT/res/perf.log" | tail -40
  verdict perf "${PIPESTATUS[0]}"
fi
finish
