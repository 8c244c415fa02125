#!/usr/bin/env bash
# method="exact"'s lab (NOTES.md, issue 22 part 4): a standalone program that includes
# csrc/cuda/engine/exact.cu and times its default path for a dtype, size and data family beside a
# plain read of the same bytes, and checks its bits against the checked path of the same build.
# Compiles in about 20 s here (no torch, no extension build), so that a kernel change costs one
# short device call:
#   bash benchmarks/exact_lab/build.sh [OLD_REV]   # bin/lab_new (working tree), bin/lab_old (OLD_REV's exact.cu, default HEAD)
#   (device) bash benchmarks/exact_lab/run.sh      # carry benchmarks/exact_lab/bin; LAB_BINS, LAB_ARGS, NCU_RUNS, LAB_TAG
#   python3 benchmarks/exact_lab/summary.py OUT/lab_TAG.txt   # a traced run, one line a case
#   python3 benchmarks/exact_lab/table.py OUT/lab_TAG.txt     # several builds: exact us / ratio a case and build
# LAB_DEFS: more nvcc flags for both builds, e.g. LAB_DEFS=-DRK_EXACT_TRACE (each case then also
# prints its kernel's timeline: exact.cu's RK_TRACE points; both revisions must have them).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=benchmarks/exact_lab/bin
mkdir -p "$OUT"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
F="${LAB_DEFS:-} -Icsrc -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -lineinfo"
# The old build compiles against its own revision's csrc (its headers may differ).
rm -rf "$OUT/old" && mkdir -p "$OUT/old" && git archive "${1:-HEAD}" csrc | tar -x -C "$OUT/old"
"$NVCC" $F -DEXACT_CU='"cuda/engine/exact.cu"' -DNEWAPI -DLAB_CHUNKED_SCALE benchmarks/exact_lab/lab.cu -o "$OUT/lab_new" &
"$NVCC" ${F/-Icsrc/-I$OUT/old/csrc} -DEXACT_CU='"cuda/engine/exact.cu"' \
  $(grep -q "long long\* acc" "$OUT/old/csrc/cuda/launchers.h" && echo -DNEWAPI) \
  $(grep -q "kExactChunkedUnrollScale" "$OUT/old/csrc/tuning/tuning.h" && echo -DLAB_CHUNKED_SCALE) benchmarks/exact_lab/lab.cu -o "$OUT/lab_old" &
# LAB_VARIANTS="name:flags ...": more builds of the working tree, bin/lab_name, each with its own nvcc
# flags, commas between flags (e.g. "s2:-DRK_LAB_CHUNKED_UNROLL_SCALE=2 ab:-DA,-DB"): a kernel's
# variants A/B in one device call.
for v in ${LAB_VARIANTS:-}; do
  "$NVCC" $F $(tr ',' ' ' <<<"${v#*:}") -DEXACT_CU='"cuda/engine/exact.cu"' -DNEWAPI -DLAB_CHUNKED_SCALE benchmarks/exact_lab/lab.cu -o "$OUT/lab_${v%%:*}" &
done
wait
ls -la "$OUT"/lab_*
