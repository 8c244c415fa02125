// prod, all, any and count_nonzero on the engine (reduce.cuh): every real dtype. Integer products
// wrap in int64 as torch's do; float products multiply in the value type, as torch's.
#include "ops_common.cuh"

namespace rk {

cudaError_t ops_logic(const OpStep& a, size_t* ws) {
  using namespace red;
  return eng::dispatch_in(a.in_dtype, [&](auto t) -> cudaError_t {
    using In = typename decltype(t)::T;
    using V = ops::Val<In>;
    switch (a.op) {
      case OpKind::Prod:
        if constexpr (std::is_integral_v<In>) {
          return ops::run<In, MapReduce<V, V, ProdM>, int64_t>(a, ws);
        } else {
          return ops::run_in_or_wide<In, MapReduce<V, V, ProdM>>(a, ws);
        }
      case OpKind::All: return ops::run<In, MapReduce<V, int, AndM, MapNonzero>, bool>(a, ws);
      case OpKind::Any: return ops::run<In, MapReduce<V, int, OrM, MapNonzero>, bool>(a, ws);
      case OpKind::CountNonzero: return ops::run<In, MapReduce<V, int64_t, SumM, MapNonzero>, int64_t>(a, ws);
      default: return cudaErrorInvalidValue;
    }
  });
}

}  // namespace rk
