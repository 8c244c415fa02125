// One step of a reduction operator (engine/reduce_ops.h) over a dense operand, as the CPU loops
// (cpu/reduce_cpu.cpp) and the CUDA launcher (cuda/launchers.h, OpStep) both take it:
//   rows:    `outer` rows of `extent` contiguous values -> out[outer]
//   columns: `outer` batches of an extent x inner matrix reduced over extent -> out[outer][inner]
// A full reduction is one row. Output dtypes, by op: the input's (or, with `wide`, float32 for
// 16-bit floats and float64 for float32) for mean, nansum, nanmean, vector_norm and float prod;
// int64 for integer prod, count_nonzero, argmax and argmin; bool for all and any; the input's for
// var/std (out0) and their means (out1), logsumexp, amax, amin and aminmax (out0 min, out1 max).
// Integer inputs reach mean, nansum, nanmean, var, vector_norm and logsumexp only after a cast
// (torch's promotion) or as sum, so those ops take float dtypes (op_supported). Torch-free,
// CUDA-free.
#pragma once

#include <cstdint>

#include "core/methods.h"
#include "engine/plan.h"
#include "engine/reduce_ops.h"

namespace rk {

struct OpDesc {
  red::OpKind op = red::OpKind::Mean;
  red::NormOrd ord = red::NormOrd::Two;
  StepKind kind = StepKind::Rows;
  int64_t outer = 1, extent = 1, inner = 1;
  const void* in = nullptr;
  DType in_dtype = DType::Float32;
  void* out0 = nullptr;
  void* out1 = nullptr;  // the second output of var_mean, std_mean and aminmax
  bool wide = false;
  red::Params params;
};

inline bool op_supported(red::OpKind op, DType in) {
  if (op == red::OpKind::Count || in == DType::Count) return false;
  return !op_float_only(op) || is_floating(in);
}

}  // namespace rk
