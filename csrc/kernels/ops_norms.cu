// vector_norm (every ord) and logsumexp on the engine (reduce.cuh): float inputs. The 0, 1 and
// 2 norms accumulate as sum does; inf and -inf are max/min of |x|; other p and logsumexp use the
// value type (float32 for 16-bit floats and float32: powf and expf, as torch).
#include "ops_common.cuh"

namespace rk {

cudaError_t ops_norms(const OpStep& a, size_t* ws) {
  using namespace red;
  return ops::dispatch_float(a.in_dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    using A = ops::SumAcc<In>;
    using V = ops::Val<In>;
    if (a.op == OpKind::LogSumExp) return ops::run<In, LogSumExp<V, V>, In>(a, ws);
    if (a.op != OpKind::Norm) return cudaErrorInvalidValue;
    switch (a.ord) {
      case NormOrd::Zero: return ops::run_in_or_wide<In, MapReduce<V, A, SumM, MapNonzero>>(a, ws);
      case NormOrd::One: return ops::run_in_or_wide<In, MapReduce<A, A, SumM, MapAbs>>(a, ws);
      case NormOrd::Two: return ops::run_in_or_wide<In, MapReduce<A, A, SumM, MapSq, FinSqrt>>(a, ws);
      case NormOrd::Inf: return ops::run_in_or_wide<In, MapReduce<V, V, MaxM, MapAbs>>(a, ws);
      case NormOrd::NegInf: return ops::run_in_or_wide<In, MapReduce<V, V, MinM, MapAbs>>(a, ws);
      default: return ops::run_in_or_wide<In, MapReduce<V, V, SumM, MapPowAbs, FinPowInv>>(a, ws);
    }
  });
}

}  // namespace rk
