#!/usr/bin/env bash
# On the device (carry benchmarks/columns_lab/bin): Nsight Compute on the new build's columns kernel
# (NCU_KERNEL: another kernel regex, e.g. rows_kernel with LAB_KIND=rows),
# one case at a time. NCU_CASES: ';'-separated case lines (op dtype B R C), e.g.
#   NCU_CASES="argmax f16 224523 7 77;sum f16 224523 7 77" bash benchmarks/columns_lab/ncu_lab.sh
# Writes $OUT/ncu.txt (the lab's first call of each case is skipped: its output is hashed).
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
IFS=';' read -ra cases <<<"${NCU_CASES:?NCU_CASES: case lines separated by ;}"
for c in "${cases[@]}"; do
  echo "$c" >"$OUT/case.txt"
  echo "### $c" >>"$OUT/ncu.txt"
  timeout 120 ncu -k regex:${NCU_KERNEL:-columns_kernel} --launch-skip 1 --launch-count 1 --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    bin/lab_new "$OUT/case.txt" 3 >>"$OUT/ncu.txt" 2>&1
done
grep -E "^### |columns_kernel<|rows_kernel<|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occ|Grid Size|Block Size|No Eligible|Warp Cycles Per Issued|L2 Hit|L1/TEX Hit|Mem Busy|Max Bandwidth|Compute \(SM\)|Eligible Warps" "$OUT/ncu.txt" | cut -c1-140
