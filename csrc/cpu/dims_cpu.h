// CPU execution of the dims engine's plan steps (engine/plan.h) and the whole-tensor CPU sum.
// Deterministic whatever the thread count: work is cut into pieces whose size depends only on the
// extents, and pieces are combined in index order. A slice's bits depend only on its values and
// its reduced shape, as on CUDA (the CPU order itself differs from the CUDA one).
#pragma once

#include <cstdint>

#include "engine/plan.h"
#include "core/methods.h"

namespace rk {

// One step of sum's plan on the CPU: values of in_dtype at `in` (dense), accumulated in acc_dtype,
// written as out_dtype: the triples of engine/op_desc.h's sum_step_types, with acc Int64 meaning a
// wrapping 64-bit integer sum.
void cpu_dims_step(StepKind kind, int64_t outer, int64_t extent, int64_t inner, const void* in, DType in_dtype,
                   DType acc_dtype, void* out, DType out_dtype);

// Whether the CPU's AVX2 build of the hot loops runs (AVX2, FMA and F16C present, and
// REDUCEKIT_CPU_ISA is not "baseline"): read once per process.
bool cpu_avx2();

// Whether the operators' AVX-512 loops run as well (cpu_avx2() and AVX-512F with the OS's ZMM
// state, and REDUCEKIT_CPU_ISA is neither "baseline" nor "avx2"): read once per process. They keep
// the AVX2 loops' order, so the same bits (tests/test_invariants.py compares the three builds).
bool cpu_avx512();

// The whole-tensor CPU sum (dim=None) of n values: written as int64 for bool and integers, as the
// input dtype for floats (float32 accumulates in float64, 16-bit floats in float32).
void cpu_full_sum(const void* in, int64_t n, DType dtype, void* out);

}  // namespace rk
