// One step of a reduction operator (engine/op_impl.h) over a dense operand, as the CPU
// (cpu/reduce_cpu.cpp) and the CUDA engine (cuda/launchers.h, OpStep) both take it: the one step
// type of every operator, sum included.
//   rows:    `outer` rows of `extent` contiguous values -> out[outer]
//   columns: `outer` batches of an extent x inner matrix reduced over extent -> out[outer][inner]
//   gather:  `outer` rows of `extent` values each, read through `gather`'s dims (engine/plan.h) -> out[outer]
// A full reduction is one row. The output types are OpImpl's for in_dtype (Out0, Out1; with
// `wide`, the sum accumulator for the first). Integer inputs reach the float-only ops only after a
// cast (torch's promotion), so those ops take float dtypes (op_supported). Torch-free, CUDA-free.
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
  Gather gather;  // kind == Gather (CUDA only): outer = gather.K rows of extent = gather.N values, read through the dims
  const void* in = nullptr;
  DType in_dtype = DType::Float32;
  void* out0 = nullptr;
  void* out1 = nullptr;  // the second output of var_mean, std_mean and aminmax
  OutMap out_map;        // where output i goes (engine/plan.h; CUDA only, Backend::maps_outputs)
  bool wide = false;
  red::Params params;
};

inline bool op_supported(red::OpKind op, DType in) {
  if (op == red::OpKind::Count || in == DType::Count) return false;
  return !op_float_only(op) || is_floating(in);
}

// The step's (read, accumulate, write) dtypes when the op is sum: the CPU runs sum's steps on its
// own vector kernels (cpu/dims_cpu.h), which take them as dtypes. The accumulator: float32 for
// 16-bit floats, float64 for float32 and float64, a wrapping int64 for bool and integers (the
// CUDA types: OpImpl<Sum>).
struct SumStepTypes {
  DType in, acc, out;
};
inline SumStepTypes sum_step_types(const OpDesc& d) {
  const DType src = d.in_dtype;
  const DType acc = !is_floating(src) ? DType::Int64 : (dtype_bytes(src) == 2 ? DType::Float32 : DType::Float64);
  const DType out = !is_floating(src) ? DType::Int64 : (d.wide ? acc : src);
  return {src, acc, out};
}

// Whether the CPU runs a sum step of this input dtype on its own vector sum kernels
// (cpu/dims_cpu.cpp: 16 strided lanes in chunks of 2^16 values) rather than the operators' loops
// in the engine's order, CUDA's: integers (wrapping int64: every order gives the same bits), and
// float32 and 16-bit floats summed into their own dtype, whose float64 (float32) accumulator is
// rounded to a narrower output (the two orders' results differ only where that rounding falls
// between them; the operators' loops transpose each lane, which took float32 rows at 2x the
// kernels' time, session 46). float64 sums and dtype= widened sums, whose output is the
// accumulator, take the engine's order: the CPU's bits are CUDA's.
inline bool cpu_sum_kernels(DType in, bool wide) { return !is_floating(in) || (in != DType::Float64 && !wide); }

}  // namespace rk
