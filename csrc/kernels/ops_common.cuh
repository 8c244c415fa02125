// What the operator families (ops_*.cu) share: the value and accumulator types per input dtype,
// and one engine step of an operator with its output types.
#pragma once

#include "launchers.h"
#include "reduce.cuh"

namespace rk {
namespace ops {

template <class In>
inline constexpr bool kHalfLike = std::is_same_v<In, __half> || std::is_same_v<In, __nv_bfloat16>;

template <class In>
using Val = red::ValueOf<In, kHalfLike<In>>;
template <class In>
using SumAcc = red::SumAccOf<kHalfLike<In>>;
template <class In>
using Wide = SumAcc<In>;  // the `wide` output

template <class In, class Op, class Out0, class Out1 = Out0>
cudaError_t run(const OpStep& a, size_t* ws) {
  // Several lanes per thread only pay for batched operators (Welford, logsumexp, argmax) on 16-bit
  // input (benchmarks/tune_ops.py; the others lose occupancy to the register stack and gain nothing).
  const int rows_lpt = Op::kBatched ? ops_rows_lanes_per_thread(static_cast<int>(sizeof(In))) : 1;
  if (ws) {
    *ws = eng::step_workspace<typename Op::Acc>(a.kind, a.outer, a.extent, a.inner, static_cast<int>(sizeof(In)), a.num_sms,
                                                rows_lpt);
    return cudaSuccess;
  }
  return eng::run_step<In, Op, Out0, Out1>(a.kind, a.outer, a.extent, a.inner, static_cast<const In*>(a.in),
                                           eng::Outs<Out0, Out1>{static_cast<Out0*>(a.out0), static_cast<Out1*>(a.out1)},
                                           a.workspace, a.params, a.stream, a.cc, a.num_sms, a.pdl, rows_lpt, a.counter);
}

// Output In or Wide<In>, by a.wide.
template <class In, class Op>
cudaError_t run_in_or_wide(const OpStep& a, size_t* ws) {
  return a.wide ? run<In, Op, Wide<In>>(a, ws) : run<In, Op, In>(a, ws);
}

template <class F>
cudaError_t dispatch_float(DType d, F&& f) {
  switch (d) {
    case DType::Float16: return f(eng::InType<__half>{});
    case DType::BFloat16: return f(eng::InType<__nv_bfloat16>{});
    case DType::Float32: return f(eng::InType<float>{});
    case DType::Float64: return f(eng::InType<double>{});
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace ops
}  // namespace rk
