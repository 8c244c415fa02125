#!/usr/bin/env bash
# The columns kernel's lab (lab.cu says what it times): bin/lab_new from the working tree's csrc,
# bin/lab_old from OLD_REV's (default HEAD). Compiles here (no GPU needed): about ten minutes for the two on two
# cores, two minutes a build with LAB_DEFS="-DLAB_4BYTE" (float32 and int32) or "-DLAB_2BYTE" (bfloat16 and float16):
#   bash benchmarks/columns_lab/build.sh [OLD_REV]       # LAB_TREES="name=DIR ...": more builds; LAB_DEFS="-DLAB_4BYTE": float32 and int32 alone
#   (device) bash benchmarks/columns_lab/run.sh    # carry benchmarks/columns_lab/bin; LAB_BINS, LAB_CASES, LAB_REPS, LAB_VARIANTS
#   (device) NCU_CASES="op dtype B R C;..." bash benchmarks/columns_lab/ncu_lab.sh   # Nsight Compute on lab_new
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=benchmarks/columns_lab/bin
mkdir -p "$OUT"
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
F="-DRK_WITH_CUDA -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr -O3 -gencode=arch=compute_90a,code=sm_90a -std=c++17 -lineinfo -Xptxas=-warn-spills ${LAB_DEFS:-}"
rm -rf "$OUT/old" && mkdir -p "$OUT/old" && git archive "${1:-HEAD}" csrc | tar -x -C "$OUT/old"
"$NVCC" $F -Icsrc benchmarks/columns_lab/lab.cu csrc/cuda/engine/shapes.cu -o "$OUT/lab_new" 2>&1 | grep -v "div_rn" &
"$NVCC" $F -I"$OUT/old/csrc" benchmarks/columns_lab/lab.cu "$OUT/old/csrc/cuda/engine/shapes.cu" -o "$OUT/lab_old" 2>&1 | grep -v "div_rn" &
# LAB_TREES: more builds, "name=DIR ..." (DIR holds a csrc/ tree: an experiment's variant).
for t in ${LAB_TREES:-}; do
  "$NVCC" $F -I"${t#*=}/csrc" benchmarks/columns_lab/lab.cu "${t#*=}/csrc/cuda/engine/shapes.cu" -o "$OUT/lab_${t%%=*}" 2>&1 | grep -v "div_rn" &
done
wait
rm -rf "$OUT/old"
ls -la "$OUT"/lab_new "$OUT"/lab_old
