// The dims engine's sum: plan steps (engine/plan.h) run on the engine's kernels
// (cuda/engine/reduce.cuh) with sum's operator, in the accumulation order plan.h promises. This file
// also holds the engine's launch shapes, which every operator shares.
#include "tuning/tuning.h"
#include "cuda/engine/reduce.cuh"

namespace rk {
namespace eng {

// Tuning harness override of the operators' rows lanes per thread (benchmarks/tune_ops.py): 0 = the rule below.
int g_rows_lpt = 0;

Shape rows_shape(int64_t K, int64_t L, int elem, int rows_lpt, int num_sms) {
  Shape s;
  const int64_t lanes = (L + lane_elems(elem) - 1) / lane_elems(elem);
  if (rows_lpt > 0) {  // an operator (sum passes 0: one lane per thread, no hook)
    // Lanes per thread up to rows_lpt while about a wave of threads (1024 per SM) still has work.
    // A single row of at most 256 * 4 lanes (2^14 float32) takes one block whatever the operator:
    // no partials. Longer single rows split over blocks and still take one launch (the last block
    // finishes: FusedFinish in reduce.cuh); one block of 16 lanes a thread read 2^16 float32 at
    // 1.3x torch's eager time (H200, bench_ops). g_rows_lpt (the tuning hook) forces the count.
    const int64_t wave = static_cast<int64_t>(num_sms > 0 ? num_sms : 132) * 1024;
    int64_t lpt = 1;
    while (2 * lpt <= rows_lpt && K * lanes >= 2 * lpt * wave) lpt *= 2;
    if (K == 1 && lanes > kThreads && lanes <= static_cast<int64_t>(kThreads) * 4) lpt = ceil_pow2((lanes + kThreads - 1) / kThreads);
    if (g_rows_lpt > 0) lpt = g_rows_lpt;
    s.LPT = static_cast<int>(std::min<int64_t>({lpt, ceil_pow2(lanes), kMaxRowsLanes}));
  }
  const int64_t groups = (lanes + s.LPT - 1) / s.LPT;  // threads per row
  if (groups <= kThreads) {
    s.W = static_cast<int>(ceil_pow2(groups));
    s.blocks = (K + kThreads / s.W - 1) / (kThreads / s.W);
  } else {
    s.W = kThreads;
    s.nseg = (groups + kThreads - 1) / kThreads;
    s.blocks = K * s.nseg;
    s.partials = s.nseg;
  }
  return s;
}

// Tuning harness override of the columns shape (benchmarks/tune_dims.py): 0 = the rule below.
int g_columns_tx0 = 0, g_columns_lpt = 0;

Shape columns_shape(int64_t B, int64_t R, int64_t C, int elem, int num_sms) {
  Shape s;
  const int V = 16 / elem;
  const int64_t cv = (C + V - 1) / V, lanes = (R + lane_elems(elem) - 1) / lane_elems(elem);
  // 8 threads read 128 contiguous bytes of a row and the rest of the block stacks lane groups (up
  // to 32; when there are fewer the block widens across columns). A thread takes the tuning
  // table's lanes (csrc/tuning/tuning.h, by element size), capped so that there is still about a wave of
  // resident threads (512 per SM) of work.
  {
    const int64_t wave = static_cast<int64_t>(num_sms > 0 ? num_sms : 132) * 512;
    const int64_t cap = ceil_pow2(std::max<int64_t>(1, cv * lanes * B / wave));
    s.LPT = static_cast<int>(std::min<int64_t>(dims_columns_lanes_per_thread(elem), cap));
    if (g_columns_lpt > 0) s.LPT = g_columns_lpt;
    const int64_t groups = (lanes + s.LPT - 1) / s.LPT;
    const int tx0 = static_cast<int>(std::min<int64_t>(ceil_pow2(cv), g_columns_tx0 > 0 ? g_columns_tx0 : 8));
    s.TY = static_cast<int>(std::min<int64_t>(ceil_pow2(groups), kThreads / tx0));
    s.TX = static_cast<int>(std::min<int64_t>(ceil_pow2(cv), kThreads / s.TY));
  }
  const int64_t groups = (lanes + s.LPT - 1) / s.LPT;
  s.tiles_x = (cv + s.TX - 1) / s.TX;
  s.tiles_y = (groups + s.TY - 1) / s.TY;
  s.blocks = s.tiles_x * s.tiles_y * B;
  s.partials = s.tiles_y > 1 ? s.tiles_y : 0;
  return s;
}

Shape finish_shape(int64_t nout, int64_t P, int64_t* g) {
  Shape s;
  s.W = static_cast<int>(std::min<int64_t>(ceil_pow2(P), kThreads));
  *g = ceil_pow2((P + s.W - 1) / s.W);
  s.blocks = (nout + kThreads / s.W - 1) / (kThreads / s.W);
  return s;
}

namespace {

template <class In, class Acc, class Out>
cudaError_t sum_step(const DimsStep& a) {
  return run_step<In, SumRed<Acc>, Out, Out>(a.kind, a.outer, a.extent, a.inner, static_cast<const In*>(a.in),
                                             Outs<Out, Out>{static_cast<Out*>(a.out), nullptr}, a.workspace, red::Params{},
                                             a.stream, a.cc, a.num_sms, a.pdl);
}

}  // namespace
}  // namespace eng

int ops_set_rows_lanes(int lpt) {
  const int old = eng::g_rows_lpt;
  eng::g_rows_lpt = lpt;
  return old;
}

void dims_set_columns_config(int tx0, int lpt, int* old_tx0, int* old_lpt) {
  *old_tx0 = eng::g_columns_tx0;
  *old_lpt = eng::g_columns_lpt;
  eng::g_columns_tx0 = tx0;
  eng::g_columns_lpt = lpt;
}

bool dims_types_supported(DType in, DType acc, DType out) {
  if (in == DType::Count || acc == DType::Count || out == DType::Count) return false;
  if (!is_floating(in)) return acc == DType::Int64 && out == DType::Int64;
  switch (in) {
    case DType::Float16:
      return acc == DType::Float32 && (out == DType::Float16 || out == DType::Float32);
    case DType::BFloat16:
      return acc == DType::Float32 && (out == DType::BFloat16 || out == DType::Float32);
    case DType::Float32:
      return (acc == DType::Float64 && (out == DType::Float32 || out == DType::Float64)) ||
             (acc == DType::Float32 && (out == DType::Float32 || out == DType::Float16 || out == DType::BFloat16));
    case DType::Float64:
      return acc == DType::Float64 && (out == DType::Float64 || out == DType::Float32);
    default: return false;
  }
}

size_t dims_step_workspace(const DimsStep& a) {
  const int elem = dtype_bytes(a.in_dtype);
  // The accumulator's size is all that matters (int64, float or double of acc_dtype).
  switch (dtype_bytes(a.acc_dtype)) {
    case 4: return eng::step_workspace<float>(a.kind, a.outer, a.extent, a.inner, elem, a.num_sms);
    default: return eng::step_workspace<double>(a.kind, a.outer, a.extent, a.inner, elem, a.num_sms);
  }
}

cudaError_t dims_step_launch(const DimsStep& a) {
  using namespace eng;
  if (a.outer <= 0 || a.extent <= 0 || a.inner <= 0 || !a.in || !a.out) return cudaErrorInvalidValue;
  if (!dims_types_supported(a.in_dtype, a.acc_dtype, a.out_dtype)) return cudaErrorInvalidValue;
  return dispatch_cuda(a.in_dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    if constexpr (std::is_integral_v<In>) {
      return sum_step<In, int64_t, int64_t>(a);
    } else if constexpr (std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>) {
      return a.out_dtype == DType::Float32 ? sum_step<In, float, float>(a) : sum_step<In, float, In>(a);
    } else if constexpr (std::is_same_v<In, float>) {
      if (a.acc_dtype == DType::Float64)
        return a.out_dtype == DType::Float64 ? sum_step<float, double, double>(a) : sum_step<float, double, float>(a);
      switch (a.out_dtype) {  // a float32 intermediate of a 16-bit float input
        case DType::Float16: return sum_step<float, float, __half>(a);
        case DType::BFloat16: return sum_step<float, float, __nv_bfloat16>(a);
        default: return sum_step<float, float, float>(a);
      }
    } else {
      return a.out_dtype == DType::Float32 ? sum_step<double, double, float>(a) : sum_step<double, double, double>(a);
    }
  });
}

}  // namespace rk
