#!/usr/bin/env bash
# On the device (carry benchmarks/exact_lab/bin): the lab's timings, old build against new, and
# optionally Nsight Compute on chosen kernels. Writes $OUT/lab${LAB_TAG}.txt and $OUT/ncu.txt.
#   LAB_BINS   builds to run (default "old new")
#   LAB_ARGS   DTYPES LOG2S FAMILIES REPS, e.g. "f32,bf16,f16,f64 24,26,28 0,1,2,3,4 20"
#              (families: 0 normal, 1 gradient, 2 whole exponent range, 3 cancelling 1e30 pairs,
#              4 a NaN every 4096, 5 zeros and subnormals, 6 equal values, 7 integers x 2^20)
#   LAB_FORCE  set: the value-independent path forced at any size (configuration 128 x 4)
#   LAB_CFG    "B,U": the value-independent path forced into configuration (B, U)
#   LAB_PDL    set: launches allow programmatic dependent launch (the extension's default on sm_90)
#   LAB_FOREIGN set: a small foreign kernel before each timed call, its own time subtracted (the graph timer's setup)
#   LAB_CLOCKS set: SM clock, power, temperature and throttle reasons sampled meanwhile
#   NCU_RUNS   ';'-separated "kernel-regex|command" pairs; NCU_EXTRA more ncu arguments
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
BIN=benchmarks/exact_lab/bin
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee "$OUT/lab${LAB_TAG:-}.txt"
# LAB_CLOCKS set: nvidia-smi samples the SM clock, power and temperature every 100 ms meanwhile
# ($OUT/clocks${LAB_TAG}.csv; each case's line in the lab's output carries its time for matching).
if [ -n "${LAB_CLOCKS:-}" ]; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 100 >"$OUT/clocks${LAB_TAG:-}.csv" 2>&1 &
  SMI=$!
fi
for b in ${LAB_BINS-old new}; do
  echo "## lab_$b" | tee -a "$OUT/lab${LAB_TAG:-}.txt"
  timeout 200 "$BIN/lab_$b" ${LAB_ARGS:-f32,bf16,f16,f64 24,26,28 0,1,2,3,4 20} 2>&1 | tee -a "$OUT/lab${LAB_TAG:-}.txt"
done
[ -n "${SMI:-}" ] && kill $SMI
if [ -n "${NCU_RUNS:-}" ]; then
  IFS=';' read -ra runs <<<"$NCU_RUNS"
  for r in "${runs[@]}"; do
    echo "### $r" >>"$OUT/ncu.txt"
    timeout 150 ncu -k "regex:${r%%|*}" --launch-skip 2 --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy \
      --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --section ComputeWorkloadAnalysis ${NCU_EXTRA:-} ${r#*|} >>"$OUT/ncu.txt" 2>&1
  done
  grep -E "^### |Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|Warp Cycles Per Issued|No Eligible|Stall|stalled|Theoretical Occ|Block Limit" "$OUT/ncu.txt" | head -120
fi
