// mean, nansum, nanmean, var, std, var_mean and std_mean on the engine (reduce.cuh): float
// inputs, accumulated as sum's (float32 for 16-bit floats, float64 otherwise). Welford's runs of at
// most 32 values are two-pass in the value type (float32 for float32 input), only their state and
// merges in float64: a float32 state lost accuracy on data with a large mean, and a float64 run
// ran at a third of the read ceiling (NOTES.md, issue 10).
#include "ops_common.cuh"

namespace rk {

cudaError_t ops_moments(const OpStep& a, size_t* ws) {
  using namespace red;
  return ops::dispatch_float(a.in_dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    using A = ops::SumAcc<In>;
    switch (a.op) {
      case OpKind::Mean: return ops::run_in_or_wide<In, MapReduce<A, A, SumM, MapId, FinMean>>(a, ws);
      case OpKind::NanSum: return ops::run_in_or_wide<In, MapReduce<A, A, SumM, MapNanZero>>(a, ws);
      case OpKind::NanMean: return ops::run_in_or_wide<In, NanMean<A, A>>(a, ws);
      case OpKind::Var:
      case OpKind::Std:
      case OpKind::VarMean:
      case OpKind::StdMean: return ops::run<In, Welford<ops::Val<In>, WelfordAcc>, In, In>(a, ws);
      default: return cudaErrorInvalidValue;
    }
  });
}

}  // namespace rk
