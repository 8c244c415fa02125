#!/usr/bin/env bash
# Builds bin/launch_cost (launch_cost.cu says what it measures); run it on the device.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p bin
${NVCC:-/usr/local/cuda/bin/nvcc} -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I../../csrc -D__CUDA_NO_HALF_OPERATORS__ -D__CUDA_NO_HALF_CONVERSIONS__ -D__CUDA_NO_BFLOAT16_CONVERSIONS__ -D__CUDA_NO_HALF2_OPERATORS__ --expt-relaxed-constexpr launch_cost.cu -o bin/launch_cost
