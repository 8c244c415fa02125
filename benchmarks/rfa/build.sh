#!/usr/bin/env bash
# Builds benchmarks/rfa/librk_rfa.so (CUB's RFA for bench_exact.py) against CCCL's main-branch
# headers: CCCL_DIR holds cub/cub, libcudacxx/include and thrust/thrust (default: .cccl at the
# repository root, an ignored copy of github.com/NVIDIA/cccl; .cccl/COMMIT names its commit).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CCCL_DIR=${CCCL_DIR:-$ROOT/.cccl}
ARCH=${RFA_ARCH:-sm_90}
[ -d "$CCCL_DIR/cub/cub" ] || { echo "no CCCL headers in $CCCL_DIR (cub/cub)"; exit 2; }
${NVCC:-nvcc} -O3 -std=c++17 -arch="$ARCH" --shared -Xcompiler -fPIC \
  -I"$CCCL_DIR/cub" -I"$CCCL_DIR/libcudacxx/include" -I"$CCCL_DIR/thrust" \
  "$ROOT/benchmarks/rfa/rfa.cu" -o "${RFA_LIB:-$ROOT/benchmarks/rfa/librk_rfa.so}"
echo "built ${RFA_LIB:-$ROOT/benchmarks/rfa/librk_rfa.so} (CCCL $(cat "$CCCL_DIR/COMMIT" 2>/dev/null || echo 'commit unknown'))"
