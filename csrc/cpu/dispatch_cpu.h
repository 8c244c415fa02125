// core/dtype.h's dispatch with the CPU's 16-bit types (c10::Half, c10::BFloat16): f(TypeTag<In>{}),
// and torch's internal error for a dtype the caller should have refused; the NaN a float result
// leaves as (cuda_nan).
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Exception.h>
#include <c10/util/Half.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/dtype.h"

namespace rk {

template <class F>
decltype(auto) dispatch_cpu(DType d, F&& f) {
  return dispatch_dtype<c10::Half, c10::BFloat16>(d, f, [&]() -> decltype(f(TypeTag<float>{})) {
    TORCH_CHECK(false, "reducekit: internal error: bad dtype id " + std::to_string(static_cast<int>(d)));
  });
}

// The NaN that a float result of type Out leaves the CPU as, whichever NaN the arithmetic made:
// CUDA's, so that the two backends' bits agree on inputs holding NaN and infinities (issue 21,
// item 2). On the GPU, float32 arithmetic returns one canonical NaN, 0x7fffffff, whatever NaN went
// in, and a conversion to a 16-bit float returns 0x7fff from any NaN; float64 arithmetic and the
// conversion of a float64 to float32 keep a NaN's sign and payload, which the CPU does not follow.
// So a 16-bit result is 0x7fff; a float32 result accumulated in float32 (R, the operator's
// accumulator, the same type on both backends: engine/op_impl.h) is 0x7fffffff; the others are the
// quiet NaN. Read from the committed CUDA corpus (tests/corpus/cuda.json) on its input holding NaN
// and infinities: every 16-bit result, var's included (float64 state), and float32's amax, amin,
// aminmax, prod, logsumexp and vector_norm of ord inf, -inf and p (float32 accumulators) hold these
// bits there, and float32's vector_norm of ord 1 and 2 (float64 accumulators) the quiet NaN. One
// fixed NaN also keeps a rebuild from moving a result's NaN: which NaN x86 returns from two NaN
// operands follows the operand order the compiler picked (var's NaN once moved from +NaN to -NaN
// after an unrelated edit).
template <class Out, class R>
inline Out cuda_nan() {
  if constexpr (std::is_same_v<Out, c10::Half> || std::is_same_v<Out, c10::BFloat16>) {
    return Out(static_cast<uint16_t>(0x7fff), typename Out::from_bits_t{});
  } else if constexpr (std::is_same_v<Out, float> && std::is_same_v<R, float>) {
    const uint32_t bits = 0x7fffffffu;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  } else {
    return std::numeric_limits<Out>::quiet_NaN();
  }
}

}  // namespace rk
