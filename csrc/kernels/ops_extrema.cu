// amax, amin, aminmax, argmax and argmin on the engine (reduce.cuh): every real dtype, values
// compared as float32 (16-bit floats: exact), int32 (bool and integers up to 32 bits), or
// themselves (int64, float32, float64). argmax/argmin reduce runs of 64 bytes batched (the run's
// extreme, then its first offset).
#include "ops_common.cuh"

namespace rk {

cudaError_t ops_extrema(const OpStep& a, size_t* ws) {
  using namespace red;
  return eng::dispatch_in(a.in_dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    // Integers narrower than 64 bits compare as int32 (exact, and a run of them fits registers).
    using V = std::conditional_t<std::is_integral_v<In> && sizeof(In) < 8, int, ops::Val<In>>;
    switch (a.op) {
      case OpKind::Amax: return ops::run<In, MapReduce<V, V, MaxM>, In>(a, ws);
      case OpKind::Amin: return ops::run<In, MapReduce<V, V, MinM>, In>(a, ws);
      case OpKind::AMinMax: return ops::run<In, MinMax<V>, In>(a, ws);
      case OpKind::ArgMax: return ops::run<In, ArgExt<V, true>, int64_t>(a, ws);
      case OpKind::ArgMin: return ops::run<In, ArgExt<V, false>, int64_t>(a, ws);
      default: return cudaErrorInvalidValue;
    }
  });
}

}  // namespace rk
