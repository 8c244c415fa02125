#!/usr/bin/env bash
# On the device (carry benchmarks/columns_lab/bin): the lab's timings, old build against new, on
# LAB_CASES (default cases.txt); LAB_VARIANTS: ';'-separated "LPT LOADS [TX0 [SCALAR_LANES]]" overrides tried with the
# new build too (e.g. "4 2;8 2": 4 and 8 lanes a thread, one column a thread). Writes $OUT/lab.txt.
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
BIN=benchmarks/columns_lab/bin
CASES=${LAB_CASES:-benchmarks/columns_lab/cases.txt}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv | tee "$OUT/lab.txt"
for b in ${LAB_BINS-old new}; do
  echo "## lab_$b" | tee -a "$OUT/lab.txt"
  timeout 200 "$BIN/lab_$b" "$CASES" ${LAB_REPS:-15} 2>&1 | tee -a "$OUT/lab.txt"
done
if [ -n "${LAB_VARIANTS:-}" ]; then
  IFS=';' read -ra vs <<<"$LAB_VARIANTS"
  for v in "${vs[@]}"; do
    echo "## lab_new $v" | tee -a "$OUT/lab.txt"
    timeout 200 "$BIN/lab_new" "$CASES" ${LAB_REPS:-15} $v 2>&1 | tee -a "$OUT/lab.txt"
  done
fi
